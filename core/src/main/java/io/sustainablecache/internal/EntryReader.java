package io.sustainablecache.internal;

import io.sustainablecache.ValueCodec;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.StoreItem;
import org.slf4j.Logger;

/**
 * Decodes store items into {@link Entry entries}: where untrusted bytes under a cache key are
 * checked, used by every read ({@code get}, {@code getIfPresent}, {@code getAll}, the polls of a
 * fleet wait). (Values under a fleet-lease key are checked by {@link LeaseValues}.) Thread-safe.
 *
 * <p>Bytes that are not a readable envelope, and payloads the codec rejects (any {@link
 * RuntimeException}, or {@code null}), become {@link Entry.Kind#CORRUPT} entries, counted, with a
 * rate-limited warning: the read is a miss and the next load overwrites them. An {@link Error}
 * thrown by the codec propagates to the one caller whose read hit it; no state is left behind.
 * Envelope times are not trusted beyond this cache's own configuration: a value never counts as
 * fresh for longer than the TTL (an absence for longer than the no-value TTL) after its load time,
 * and an entry loaded further in the future than the allowed clock skew counts as expired. In a
 * cache with a near cache or {@code invalidateAllBound}, an entry of another {@linkplain
 * Generation generation} than the namespace's (of the key's node) reads as a tombstone; a write fence reads as a fence in every
 * generation. An entry written by an instance configured otherwise (with a near cache when this
 * one has none, or the reverse) draws a rate-limited warning: such a
 * fleet has no staleness bound. A cache without a namespace (never near-cached) whose key
 * starts with a near-cached namespace's prefix addresses that namespace's item, and is warned
 * of the same way, on both sides.
 */
final class EntryReader<V> {

  private static final Logger log = Log.LOGGER;

  private final ValueCodec<V> codec;
  private final long ttlMillis;
  private final long noValueTtlMillis;
  private final long maxSkewMillis;
  private final long fenceMillis;
  private final StatsCounter stats;
  private final RateLimitedLog corruptLog;
  private final RateLimitedLog clockSkewLog;
  private final RateLimitedLog mixedLog;

  /**
   * Warned when a cache with generations (a near cache, or {@code invalidateAllBound}) reads an
   * entry without one.
   */
  static final String WITHOUT_NEAR_CACHE = "an entry of this namespace was written without a near"
      + " cache or invalidateAllBound (by an instance with invalidateAllBound 0 and no near"
      + " cache, a pre-release build, or by a cache without a namespace through a key that starts with this namespace's"
      + " prefix; their invalidations do not reach the near tiers, nor their entries"
      + " invalidateAll); treating it as a miss: turn the same one on for every instance of a"
      + " namespace, and keep caches without a namespace off its keys";

  /** Warned when a cache without generations reads an entry with one. */
  static final String WITH_NEAR_CACHE = "an entry was written by an instance with a near cache"
      + " or invalidateAllBound, and this one has neither (invalidateAllBound 0, or no"
      + " namespace or counters): it ignores invalidateAll's"
      + " generations, and its invalidate and put do not reach near tiers (they serve the old"
      + " value until it is refreshed); turn the same one on for every instance of a namespace"
      + " (a cache without a namespace meets this when its key starts with such a namespace's"
      + " prefix: \"<namespace>:\")";

  /**
   * The generation an entry must carry to count; {@code null} without a near cache or {@code
   * invalidateAllBound}.
   */
  private final Generation generation;

  /** What an envelope must carry to be read: a checksum, or a keyed tag too. */
  private final EntrySeal seal;

  EntryReader(CacheConfig<V> config, StatsCounter stats, Generation generation, EntrySeal seal) {
    this.seal = seal;
    this.corruptLog = new RateLimitedLog(log, config.ticker());
    this.clockSkewLog = new RateLimitedLog(log, config.ticker());
    this.mixedLog = new RateLimitedLog(log, config.ticker());
    this.generation = generation;
    this.codec = config.codec();
    this.ttlMillis = config.ttl().toMillis();
    this.noValueTtlMillis = config.noValueTtl().toMillis();
    this.maxSkewMillis = config.maxClockSkew().toMillis();
    this.fenceMillis = config.fenceTimeout().toMillis();
    this.stats = stats;
  }

  /**
   * Decodes the item of {@code storeKey} read at {@code now}.
   *
   * @return the entry, never {@code null}
   */
  Entry<V> read(String storeKey, StoreItem item, long now) {
    byte[] bytes = item.value();
    if (!seal.isValid(bytes)) {
      stats.increment(Counter.CORRUPT_ENTRY);
      corruptLog.warn("an item is not an envelope this version can read (foreign, truncated or"
          + " another format version); treating it as a miss");
      return corrupt(item);
    }
    byte kind = Envelope.kind(bytes);
    long fetchedAt = Envelope.fetchedAt(bytes);
    long written = Envelope.generation(bytes); // 0: written without a near cache
    if ((written == 0) != (generation == null)) {
      mixedLog.warn(generation != null ? WITHOUT_NEAR_CACHE : WITH_NEAR_CACHE);
    }
    if (kind == Envelope.KIND_FENCE) {
      return fence(storeKey, bytes, fetchedAt, now, item);
    }
    if (kind == Envelope.KIND_TOMBSTONE
        || (generation != null && written != generation.current(storeKey))) {
      // An entry of another generation (an invalidateAll since it was written; or before the
      // first poll, any entry) is a miss that fences out older loads as a tombstone does.
      return new Entry<>(Entry.Kind.TOMBSTONE, null, fetchedAt, fetchedAt, 0, item.casToken());
    }
    long expiresAt = trustedExpiry(bytes, fetchedAt, now,
        kind == Envelope.KIND_ABSENT ? noValueTtlMillis : ttlMillis);
    int loadMillis = Envelope.loadMillis(bytes);
    if (kind == Envelope.KIND_ABSENT) {
      return new Entry<>(Entry.Kind.ABSENT, null, fetchedAt, expiresAt, loadMillis,
          item.casToken());
    }
    V value;
    try {
      value = codec.decode(bytes, Envelope.payloadOffset(bytes), Envelope.payloadLength(bytes));
    } catch (RuntimeException e) {
      stats.increment(Counter.CORRUPT_ENTRY);
      corruptLog.warn("the codec could not decode a stored value; treating it as a miss", e);
      return corrupt(item, fetchedAt);
    }
    if (value == null) {
      stats.increment(Counter.CORRUPT_ENTRY);
      corruptLog.warn(codec + " decoded a stored value as null; treating it as a miss");
      return corrupt(item, fetchedAt);
    }
    return new Entry<>(Entry.Kind.VALUE, value, fetchedAt, expiresAt, loadMillis,
        item.casToken());
  }

  /**
   * A write fence, in any generation (a transaction's change is pending whatever {@code
   * invalidateAll} did since), judged by what an instance configured as this one could have
   * written: one that claims to stand longer than {@code fenceTimeout} (plus the skew) from now is
   * planted (counted as corrupt), and one whose end passed more than {@code maxClockSkew} ago is
   * outlived (its writer died, and the server has not expired it yet); both read as a tombstone,
   * so the next load replaces them and the key is never stuck. A standing fence that carries a
   * prior (the value or absence it replaced) which this cache would still answer with, judged as
   * if it stood alone under the key, reads as {@link Entry.Kind#PRIOR}, unless the fence is marked
   * committing (a holder's {@code beforeCommit()}: its commit may have happened) and its mark is
   * outside the commit window ({@link #inCommitWindow}). Any other standing fence reads as {@link
   * Entry.Kind#FENCE}.
   */
  private Entry<V> fence(String storeKey, byte[] bytes, long fetchedAt, long now,
      StoreItem item) {
    long until = Envelope.expiresAt(bytes);
    if (until - now > fenceMillis + maxSkewMillis) {
      stats.increment(Counter.CORRUPT_ENTRY);
      corruptLog.warn("a write fence claims to stand longer than fenceTimeout from now, which no"
          + " instance configured as this one writes; treating it as a miss");
      return new Entry<>(Entry.Kind.TOMBSTONE, null, fetchedAt, fetchedAt, 0, item.casToken());
    }
    if (now - until > maxSkewMillis) {
      return new Entry<>(Entry.Kind.TOMBSTONE, null, fetchedAt, fetchedAt, 0, item.casToken());
    }
    byte[] prior = Envelope.fencePrior(bytes);
    byte priorKind = prior != null && seal.isValid(prior) ? Envelope.kind(prior) : 0;
    boolean whole = priorKind == Envelope.KIND_VALUE || priorKind == Envelope.KIND_ABSENT;
    if (prior != null && !whole) {
      stats.increment(Counter.CORRUPT_ENTRY);
      corruptLog.warn("a write fence carries a prior that is not a value nor an absence this"
          + " version reads (truncated or planted); treating it as a fence without one");
    } else if (whole && (!Envelope.fenceCommitting(bytes) || inCommitWindow(fetchedAt, now))) {
      Entry<V> replaced = read(storeKey, new StoreItem(prior, item.casToken()), now);
      if (replaced.cached() && now < replaced.expiresAt()) {
        return new Entry<>(Entry.Kind.PRIOR, replaced.value(), replaced.fetchedAt(),
            replaced.expiresAt(), replaced.loadMillis(), item.casToken());
      }
    }
    return new Entry<>(Entry.Kind.FENCE, null, fetchedAt, fetchedAt, 0, item.casToken());
  }

  /**
   * Whether a fence marked committing at {@code markedAt} (its time: the mark's swap, by the
   * writer's clock) still answers with its prior at {@code now}: for {@link
   * WriteFences#COMMIT_WINDOW_MILLIS} after the mark, and never for a mark further ahead of this
   * clock than {@code maxClockSkew}. So a prior is answered at most the window plus the skew
   * between the writer's and the reader's clocks after the mark, whether or not the writer's
   * release lands.
   */
  private boolean inCommitWindow(long markedAt, long now) {
    return now - markedAt < WriteFences.COMMIT_WINDOW_MILLIS && markedAt - now <= maxSkewMillis;
  }

  private static <V> Entry<V> corrupt(StoreItem item) {
    return corrupt(item, 0);
  }

  /**
   * A valid envelope whose value does not decode here (another version of the value's type, a
   * planted payload): its envelope's time is kept, for {@link CallerWrites#putLoaded}.
   */
  private static <V> Entry<V> corrupt(StoreItem item, long fetchedAt) {
    return new Entry<>(Entry.Kind.CORRUPT, null, fetchedAt, 0, 0, item.casToken());
  }

  /**
   * The logical expiry as this host trusts it: never later than {@code fetchedAt + ttl}, and now
   * for an entry loaded further in the future than {@code maxClockSkew} (a writer whose clock
   * runs ahead).
   */
  private long trustedExpiry(byte[] bytes, long fetchedAt, long now, long ttl) {
    if (fetchedAt - now > maxSkewMillis) {
      clockSkewLog.warn("an entry was loaded " + (fetchedAt - now) + " ms in the future by this"
          + " host's clock, more than maxClockSkew; treating it as expired. Check clock"
          + " synchronization");
      return now;
    }
    return Math.min(Envelope.expiresAt(bytes), fetchedAt + ttl);
  }
}
