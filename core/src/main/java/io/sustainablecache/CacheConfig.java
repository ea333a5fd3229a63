package io.sustainablecache;

import io.sustainablecache.spi.CacheStore;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.Executor;
import java.util.random.RandomGenerator;

/**
 * A cache's configuration with every default resolved: what {@link SustainableCacheBuilder}
 * builds and {@link DefaultSustainableCache} reads. The defaults are here, in one place ({@link
 * #resolve}); the builder holds what was set and the rules for setting it. Immutable.
 *
 * @param executor the caller's refresh executor, or {@code null} for one the cache owns
 * @param nearMaximumSize the near cache's entries at most (bytes, if {@code
 *     nearBoundedByBytes}); 0 without a near cache
 * @param nearBoundedByBytes whether the near cache is bounded by its entries' stored sizes
 * @param nearStaleness the near cache's bound; {@code null} without a near cache
 * @param nearSampling the share of near hits checked against the store
 * @param nearCopy whether a near hit decodes its own copy of the value from the stored bytes
 * @param invalidateAllBound without a near cache, how soon the other instances see {@code
 *     invalidateAll} (the namespace's generation polled every half of it); {@code null}: off
 * @param clock the wall clock: only for what is compared with other hosts' time
 * @param ticker monotonic nanoseconds: every duration and bound measured on this host
 */
record CacheConfig<V>(
    CacheStore store,
    String namespace,
    Duration ttl,
    Duration grace,
    RefreshPolicy policy,
    ValueCodec<V> codec,
    Executor executor,
    int refreshThreads,
    int refreshQueueCapacity,
    InstantSource clock,
    RandomGenerator random,
    KeyPolicy keyPolicy,
    int maxValueSize,
    Duration failureBackoff,
    Duration maxFailureBackoff,
    boolean serveStaleOnError,
    Duration maxClockSkew,
    Duration loadTimeout,
    Duration absentTtl,
    double ttlJitter,
    boolean fleetLease,
    int refreshBatchSize,
    Duration refreshBatchDelay,
    Duration closeTimeout,
    Duration fenceTimeout,
    Scheduler scheduler,
    long nearMaximumSize,
    boolean nearBoundedByBytes,
    Duration nearStaleness,
    double nearSampling,
    boolean nearCopy,
    Duration invalidateAllBound,
    Ticker ticker) {

  /**
   * The smallest grace period chosen by default: the server's one-second expiry tick plus a
   * margin for a refresh started at the logical expiry.
   */
  static final Duration MIN_DEFAULT_GRACE = Duration.ofSeconds(2);

  /** Default number of background refresh threads when the cache owns its executor. */
  static final int DEFAULT_REFRESH_THREADS = 4;

  /** Default capacity of the refresh queue when the cache owns its executor. */
  static final int DEFAULT_REFRESH_QUEUE_CAPACITY = 1024;

  /**
   * Default largest stored value (envelope included), in bytes: memcached's default 1 MiB item
   * size less 1 KiB for the key and the server's item header.
   */
  static final int DEFAULT_MAX_VALUE_SIZE = 1024 * 1024 - 1024;

  /** Default base of the back-off between load attempts of a key whose load failed. */
  static final Duration DEFAULT_FAILURE_BACKOFF = Duration.ofSeconds(1);

  /** The default cap of the failure back-off. */
  static final Duration DEFAULT_MAX_FAILURE_BACKOFF = Duration.ofSeconds(30);

  /** Default bound on a load: after it, waiting callers fail and the key is free again. */
  static final Duration DEFAULT_LOAD_TIMEOUT = Duration.ofSeconds(30);

  /** Default wait for running refreshes when the cache closes its own executor. */
  static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(5);

  /** The default of {@link SustainableCacheBuilder#fenceTimeout}. */
  static final Duration DEFAULT_FENCE_TIMEOUT = Duration.ofSeconds(30);

  /** Default largest number of keys refreshed in one bulk loader call. */
  static final int DEFAULT_REFRESH_BATCH_SIZE = 256;

  /** Default time a bulk refresh waits for more keys of the same loader. */
  static final Duration DEFAULT_REFRESH_BATCH_DELAY = Duration.ofMillis(10);

  /** Default share of near hits checked against the store. */
  static final double DEFAULT_NEAR_SAMPLING = 0.001;

  /** Default bound on how far in the future an envelope's load time may lie. */
  static final Duration DEFAULT_MAX_CLOCK_SKEW = Duration.ofSeconds(30);

  /** The configuration a builder describes, every default resolved. */
  static <T> CacheConfig<T> resolve(SustainableCacheBuilder<?> b, ValueCodec<T> valueCodec) {
    RefreshPolicy resolvedPolicy = b.policy == null ? RefreshPolicy.sustainable() : b.policy;
    Duration resolvedGrace = b.grace;
    if (resolvedGrace == null) {
      Duration tenth = b.ttl.dividedBy(10);
      resolvedGrace = tenth.compareTo(MIN_DEFAULT_GRACE) > 0 ? tenth : MIN_DEFAULT_GRACE;
    }
    return new CacheConfig<>(
        b.store,
        b.namespace == null ? "" : b.namespace,
        b.ttl,
        resolvedGrace,
        resolvedPolicy,
        valueCodec,
        b.executor,
        b.refreshThreads == -1 ? DEFAULT_REFRESH_THREADS : b.refreshThreads,
        b.refreshQueueCapacity == -1 ? DEFAULT_REFRESH_QUEUE_CAPACITY : b.refreshQueueCapacity,
        b.clock == null ? InstantSource.system() : b.clock,
        b.random == null ? ThreadLocalRandomSource.INSTANCE : b.random,
        b.keyPolicy == null ? KeyPolicy.REJECT : b.keyPolicy,
        b.maxValueSize == -1 ? DEFAULT_MAX_VALUE_SIZE : b.maxValueSize,
        b.failureBackoff == null ? DEFAULT_FAILURE_BACKOFF : b.failureBackoff,
        maxFailureBackoff(b),
        b.serveStaleOnError == null || b.serveStaleOnError,
        b.maxClockSkew == null ? DEFAULT_MAX_CLOCK_SKEW : b.maxClockSkew,
        b.loadTimeout == null ? DEFAULT_LOAD_TIMEOUT : b.loadTimeout,
        b.absentTtl == null ? b.ttl : b.absentTtl,
        b.ttlJitter == -1 ? 0.0 : b.ttlJitter,
        b.fleetLease == null ? Policies.modeOf(resolvedPolicy) == Policies.Mode.BACKGROUND
            : b.fleetLease,
        b.refreshBatchSize == -1 ? DEFAULT_REFRESH_BATCH_SIZE : b.refreshBatchSize,
        b.refreshBatchDelay == null ? DEFAULT_REFRESH_BATCH_DELAY : b.refreshBatchDelay,
        b.closeTimeout == null ? DEFAULT_CLOSE_TIMEOUT : b.closeTimeout,
        b.fenceTimeout == null ? DEFAULT_FENCE_TIMEOUT : b.fenceTimeout,
        b.scheduler == null ? Scheduler.systemScheduler() : b.scheduler,
        b.nearMaximumSize == -1 ? 0 : b.nearMaximumSize,
        b.nearBoundedByBytes,
        b.nearStaleness,
        b.nearSampling == -1 ? DEFAULT_NEAR_SAMPLING : b.nearSampling,
        Boolean.TRUE.equals(b.nearCopy),
        b.invalidateAllBound,
        b.ticker == null ? Ticker.systemTicker() : b.ticker);
  }

  /** The back-off cap: as set, or else the TTL, at most 30 s, and at least the base. */
  private static Duration maxFailureBackoff(SustainableCacheBuilder<?> b) {
    if (b.maxFailureBackoff != null) {
      return b.maxFailureBackoff;
    }
    Duration base = b.failureBackoff == null ? DEFAULT_FAILURE_BACKOFF : b.failureBackoff;
    Duration cap = b.ttl.compareTo(DEFAULT_MAX_FAILURE_BACKOFF) < 0 ? b.ttl
        : DEFAULT_MAX_FAILURE_BACKOFF;
    return cap.compareTo(base) < 0 ? base : cap;
  }

  /**
   * A ticker's reading in whole milliseconds, the unit of the cache's local durations (load
   * timeouts, back-off windows, lease waits, refresh pauses). Like the ticker's, only differences
   * of two readings mean anything.
   */
  static long millis(Ticker ticker) {
    return Math.floorDiv(ticker.read(), 1_000_000L);
  }

  /**
   * The bound of the namespace's generation, which entries carry and {@code invalidateAll}
   * changes: the near cache's staleness, else {@code invalidateAllBound}; {@code null} for no
   * generation (entries without one, {@code invalidateAll} a prefix flush where the store has one).
   */
  Duration generationBound() {
    return nearStaleness != null ? nearStaleness : invalidateAllBound;
  }

  /** The item's lifetime on the server: {@code ttl + grace}, milliseconds. */
  long lifetimeMillis() {
    return ttl.toMillis() + grace.toMillis();
  }

  @Override
  public String toString() {
    return "namespace=" + namespace + ", ttl=" + ttl + ", grace=" + grace + ", policy=" + policy
        + ", codec=" + codec + ", absentTtl=" + absentTtl + ", loadTimeout=" + loadTimeout
        + ", fleetLease=" + fleetLease
        + (nearMaximumSize == 0 ? "" : ", nearCache=" + nearMaximumSize
            + (nearBoundedByBytes ? "B" : "") + ":" + nearStaleness
            + (nearCopy ? ", nearCacheCopy=true" : ""))
        + (invalidateAllBound == null ? "" : ", invalidateAllBound=" + invalidateAllBound);
  }
}
