package io.sustainablecache;

import io.sustainablecache.spi.CacheStore;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.Executor;
import java.util.random.RandomGenerator;

/**
 * A cache's configuration with every default resolved: what {@link SustainableCacheBuilder}
 * builds and {@link DefaultSustainableCache} reads. Made in one place, {@link #of}, from the
 * builder's {@link CacheSettings} (whose rows hold each setting's rules and default) and its
 * objects. Immutable.
 *
 * @param executor the caller's refresh executor, or {@code null} for one the cache owns
 * @param nearMaximumSize the near cache's entries at most (bytes, if {@code
 *     nearBoundedByBytes}); 0 without a near cache
 * @param nearBoundedByBytes whether the near cache is bounded by its entries' stored sizes
 * @param nearStaleness the near cache's bound; {@code null} without a near cache
 * @param nearSampling the share of near hits checked against the store; 0 without a near cache
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
    int coalesceMaxBatchSize,
    Duration coalesceMaxWait,
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
   * The configuration of a cache built with these settings and objects: each setting as its row
   * of {@link CacheSettings} resolves it (the set value, or the row's default), each object as
   * given or, if {@code null}, its default. The one place a configuration is made.
   */
  static <V> CacheConfig<V> of(CacheSettings settings, CacheStore store, String namespace,
      ValueCodec<V> codec, Executor executor, InstantSource clock, Ticker ticker,
      RandomGenerator random, KeyPolicy keyPolicy, Scheduler scheduler) {
    SettingText.FailureBackoff backoff = settings.resolved(CacheSettings.FAILURE_BACKOFF);
    SettingText.RefreshBatch batch = settings.resolved(CacheSettings.REFRESH_BATCH);
    SettingText.Coalesce coalesce = settings.resolved(CacheSettings.COALESCE);
    SettingText.NearCache near = settings.resolved(CacheSettings.NEAR_CACHE);
    return new CacheConfig<>(
        store,
        namespace == null ? "" : namespace,
        settings.resolved(CacheSettings.TTL),
        settings.resolved(CacheSettings.GRACE),
        settings.resolved(CacheSettings.REFRESH_POLICY),
        codec,
        executor,
        settings.resolved(CacheSettings.REFRESH_THREADS),
        settings.resolved(CacheSettings.REFRESH_QUEUE_CAPACITY),
        clock == null ? InstantSource.system() : clock,
        random == null ? ThreadLocalRandomSource.INSTANCE : random,
        keyPolicy == null ? KeyPolicy.REJECT : keyPolicy,
        settings.resolved(CacheSettings.MAX_VALUE_SIZE),
        backoff.base(),
        backoff.max(),
        settings.resolved(CacheSettings.SERVE_STALE_ON_ERROR),
        settings.resolved(CacheSettings.MAX_CLOCK_SKEW),
        settings.resolved(CacheSettings.LOAD_TIMEOUT),
        settings.resolved(CacheSettings.ABSENT_TTL),
        settings.resolved(CacheSettings.TTL_JITTER),
        settings.resolved(CacheSettings.FLEET_LEASE),
        batch.maxKeys(),
        batch.maxDelay(),
        coalesce.maxBatchSize(),
        coalesce.maxWait(),
        settings.resolved(CacheSettings.CLOSE_TIMEOUT),
        settings.resolved(CacheSettings.FENCE_TIMEOUT),
        scheduler == null ? Scheduler.systemScheduler() : scheduler,
        near == null ? 0 : near.maximumSize(),
        near != null && near.bytes(),
        near == null ? null : near.staleness(),
        near == null ? 0 : near.sampling(),
        settings.resolved(CacheSettings.NEAR_CACHE_COPY),
        settings.resolved(CacheSettings.INVALIDATE_ALL_BOUND),
        ticker == null ? Ticker.systemTicker() : ticker);
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
