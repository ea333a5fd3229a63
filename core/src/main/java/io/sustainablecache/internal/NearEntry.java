package io.sustainablecache.internal;

import java.util.concurrent.atomic.AtomicLongFieldUpdater;

/**
 * An entry held by the near cache: the decoded entry (with the stored bytes, if the near cache
 * decodes a copy of the value for every near hit), and when a near hit may next start a refresh
 * of it. A refresh that a near hit starts can lose the fleet lease to another instance;
 * without a pause the next near hit would try again at once, costing the store a lease attempt
 * per round trip until this instance polls the other's write. So near hits start at most one
 * refresh of an entry per pause (half the near cache's bound, its poll interval). Thread-safe.
 */
final class NearEntry<V> {

  private static final AtomicLongFieldUpdater<NearEntry<?>> NEXT_REFRESH =
      newUpdater();

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static AtomicLongFieldUpdater<NearEntry<?>> newUpdater() {
    return (AtomicLongFieldUpdater) AtomicLongFieldUpdater.newUpdater(NearEntry.class,
        "refreshNotBefore");
  }

  private final Entry<V> entry;
  private final int storedBytes;
  /** Before this time, epoch milliseconds, a read of it is fresh ({@link Decision#freshUntil}). */
  private final long freshUntil;
  /** Whether it is held under a caller's plain key, not under a hashed key's store key. */
  private final boolean plainKey;
  /** The index of its key's node when it was read ({@link NearTier#nodeOf}); 0 for one log. */
  private final int node;
  /** The stored bytes a near hit decodes its copy from; {@code null} if hits share the value. */
  private final byte[] copyFrom;
  /** No refresh claimed yet. */
  private static final long UNCLAIMED = Long.MIN_VALUE;

  /**
   * The ticker's nanoseconds before which a near hit starts no refresh of this entry, or {@link
   * #UNCLAIMED}.
   */
  private volatile long refreshNotBefore = UNCLAIMED;

  /**
   * @param storedBytes the size of the entry's item in the store: its weight in a near cache
   *     bounded by bytes
   * @param copyFrom the entry's stored bytes (never modified), to decode a copy of the value for
   *     every near hit; {@code null} to share the decoded value
   * @param node the index of its key's node in the near tier's layout ({@link NearTier#nodeOf})
   * @param freshUntil the entry's {@link Decision#freshUntil} under the cache's policy
   * @param plainKey whether it is held under a caller's plain key ({@link Keys#nearKey}), not
   *     under a hashed key's store key
   */
  NearEntry(Entry<V> entry, int storedBytes, byte[] copyFrom, int node, long freshUntil,
      boolean plainKey) {
    this.entry = entry;
    this.plainKey = plainKey;
    this.freshUntil = freshUntil;
    this.storedBytes = storedBytes;
    this.copyFrom = copyFrom;
    this.node = node;
  }

  /** The index of its key's node in the near tier's layout when it was read. */
  int node() {
    return node;
  }

  Entry<V> entry() {
    return entry;
  }

  /**
   * A time before which a read of the entry is fresh without deciding ({@link
   * Decision#freshUntil}), epoch milliseconds.
   */
  long freshUntil() {
    return freshUntil;
  }

  /**
   * Whether it is held under a caller's plain key, which was checked when it entered ({@link
   * NearCache#get} then skips the check), not under a hashed key's store key.
   */
  boolean plainKey() {
    return plainKey;
  }

  /** The stored bytes to decode a copy of the value from, or {@code null} (shared). */
  byte[] copyFrom() {
    return copyFrom;
  }

  /** The size of the entry's item in the store, in bytes. */
  int storedBytes() {
    return storedBytes;
  }

  /**
   * Whether a near hit at {@code now} (ticker nanoseconds) may start a refresh of this entry; if
   * so, the next may not before {@code now + pauseNanos}. One caller wins each pause.
   */
  boolean claimRefresh(long now, long pauseNanos) {
    long notBefore = refreshNotBefore;
    return (notBefore == UNCLAIMED || now - notBefore >= 0)
        && NEXT_REFRESH.compareAndSet(this, notBefore, now + pauseNanos);
  }
}
