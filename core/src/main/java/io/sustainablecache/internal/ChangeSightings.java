package io.sustainablecache.internal;

import io.sustainablecache.Ticker;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Changes this instance saw in the store, and when it first saw each, on the ticker: the items
 * (a tombstone, an absence, an entry of another version) that kept a {@code putLoaded} out by
 * their time alone (written less than {@code maxClockSkew} before its read began). A later {@code
 * putLoaded} whose read began, on the same ticker, after this instance saw that very item (same
 * CAS token, same time, and the namespace's generation unchanged since: an {@code invalidateAll}
 * changes no item) may write over it: the item was in the store before that read began, so the
 * change it marks was made, and its commit returned, before the read. One item per key, the first
 * sighting of it kept.
 *
 * <p>Forgetting a sighting is always safe (the next {@code putLoaded} is kept out by the item's
 * time and sees it again), so the record is bounded: a sighting is kept {@code keepNanos}, for at
 * most {@code maxKeys} keys at once (beyond that, new items are not recorded until old ones are
 * forgotten). Reclaimed in recording order, a few entries per call, as the key registry's forget
 * queues are. Thread-safe.
 */
final class ChangeSightings {

  /** At most this many keys' sightings at once. */
  static final int MAX_KEYS = 10_000;

  /**
   * The item seen: its CAS token and time (epoch ms, the writer's), the namespace's generation
   * this instance knew then, and the ticker then.
   */
  private record Seen(long casToken, long writtenAt, long generation, long tick) {

    boolean of(long otherCasToken, long otherWrittenAt, long otherGeneration) {
      return casToken == otherCasToken && writtenAt == otherWrittenAt
          && generation == otherGeneration;
    }
  }

  /** A sighting to look at once it is due (ticker nanoseconds). */
  private record Due(String storeKey, Seen seen) {}

  private final ConcurrentHashMap<String, Seen> seen = new ConcurrentHashMap<>();
  private final ConcurrentLinkedQueue<Due> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger size = new AtomicInteger();
  private final Ticker ticker;
  private final long keepNanos;
  private final int maxKeys;

  /**
   * @param ticker the cache's ticker: sightings and read starts are compared on it
   * @param keepNanos how long a sighting is kept
   * @param maxKeys at most this many keys' sightings at once
   */
  ChangeSightings(Ticker ticker, long keepNanos, int maxKeys) {
    this.ticker = ticker;
    this.keepNanos = keepNanos;
    this.maxKeys = maxKeys;
  }

  /**
   * Whether this instance saw the key hold the item ({@code casToken}, {@code writtenAt}) in
   * {@code generation} (the one it knows now) at a ticker reading before {@code readStartTick}.
   */
  boolean seenBefore(String storeKey, long casToken, long writtenAt, long generation,
      long readStartTick) {
    Seen first = seen.get(storeKey);
    return first != null && first.of(casToken, writtenAt, generation)
        && readStartTick - first.tick() > 0;
  }

  /**
   * The key holds the item ({@code casToken}, {@code writtenAt}) now, in {@code generation} as
   * this instance knows it, as a read that returned found it: recorded, unless this item's
   * earlier sighting is (a different item, or generation, replaces it).
   */
  void saw(String storeKey, long casToken, long writtenAt, long generation) {
    long now = ticker.read();
    sweep(now);
    Seen sighting = new Seen(casToken, writtenAt, generation, now);
    Seen[] added = new Seen[1];
    seen.compute(storeKey, (k, first) -> {
      if (first != null && first.of(casToken, writtenAt, generation)) {
        return first;
      }
      if (first == null && size.get() >= maxKeys) {
        return null; // full: not recorded (the next read of the key tries again)
      }
      if (first == null) {
        size.incrementAndGet();
      }
      added[0] = sighting;
      return sighting;
    });
    if (added[0] != null) {
      queue.add(new Due(storeKey, added[0]));
    }
  }

  /** How many keys have a sighting; for tests. */
  int size() {
    return size.get();
  }

  /** Forgets up to two sightings that have been kept long enough by {@code now}. */
  private void sweep(long now) {
    for (int i = 0; i < 2; i++) {
      Due head = queue.peek();
      if (head == null || now - head.seen().tick() < keepNanos || !queue.remove(head)) {
        return;
      }
      if (seen.remove(head.storeKey(), head.seen())) {
        size.decrementAndGet();
      }
    }
  }
}
