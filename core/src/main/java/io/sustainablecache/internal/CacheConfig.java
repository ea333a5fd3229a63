package io.sustainablecache.internal;

import io.sustainablecache.CacheSettings;
import io.sustainablecache.KeyPolicy;
import io.sustainablecache.RefreshPolicy;
import io.sustainablecache.Scheduler;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.Ticker;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.Executor;
import java.util.random.RandomGenerator;

/**
 * A cache's configuration with every default resolved: what {@link SustainableCacheBuilder}
 * builds and {@link DefaultSustainableCache} reads. Made in one place, {@code
 * SustainableCacheBuilder.config}, from the builder's {@link CacheSettings} (whose rows hold each
 * setting's rules and default) and its objects. Immutable. Public for the API package only; not
 * part of the supported API.
 *
 * @param refreshMode where the policy's refreshes run (resolved from {@code policy})
 * @param executor the caller's refresh executor, or {@code null} for one the cache owns
 * @param nearMaximumSize the near cache's entries at most (bytes, if {@code
 *     nearBoundedByBytes}); 0 without a near cache
 * @param nearBoundedByBytes whether the near cache is bounded by its entries' stored sizes
 * @param nearStaleness the near cache's bound; {@code null} without a near cache
 * @param nearSampling the share of near hits checked against the store; 0 without a near cache
 * @param nearCopy whether a near hit decodes its own copy of the value from the stored bytes
 * @param invalidateAllBound without a near cache, how soon the other instances see {@code
 *     invalidateAll} (the namespace's generation polled every half of it); {@code null}: off
 * @param entryKeys the keys of the entries' keyed tag, the current one first, then those still
 *     accepted on reads; empty: entries carry a checksum only
 * @param failWritesWhenStoreDown whether a change whose invalidation cannot reach the store
 *     throws (fails closed) instead of being owed ({@link OwedInvalidations})
 * @param clock the wall clock: only for what is compared with other hosts' time
 * @param ticker monotonic nanoseconds: every duration and bound measured on this host
 * @param storeProbeInterval how often a store node whose operations fail at once is probed;
 *     zero: no breakers ({@link NodeBreakers})
 * @param outageReuse how long a load may answer reads that failed on the store and began
 *     after it registered ({@link KeyRegistry}); zero: only loads registered after the read began
 */
public record CacheConfig<V>(
    CacheStore store,
    String namespace,
    Duration ttl,
    Duration grace,
    RefreshPolicy policy,
    RefreshMode refreshMode,
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
    java.util.List<byte[]> entryKeys,
    boolean failWritesWhenStoreDown,
    Ticker ticker,
    Duration storeProbeInterval,
    Duration outageReuse) {

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

  /**
   * How long the synchronous API waits for a load: its timeout plus a second's margin for the
   * timer. The near cache refuses a read or load that began longer ago than this (its fence
   * window) and the registry remembers a finished load for as long, so it is one rule.
   */
  Duration syncWait() {
    return loadTimeout.plusSeconds(1);
  }

  /**
   * This configuration over another store: how {@link DefaultSustainableCache} gives the classes
   * that write its {@link PendingWrites}, while the read path keeps the store itself.
   */
  CacheConfig<V> withStore(CacheStore other) {
    return new CacheConfig<>(other, namespace, ttl, grace, policy, refreshMode, codec, executor,
        refreshThreads, refreshQueueCapacity, clock, random, keyPolicy, maxValueSize,
        failureBackoff, maxFailureBackoff, serveStaleOnError, maxClockSkew, loadTimeout,
        absentTtl, ttlJitter, fleetLease, refreshBatchSize, refreshBatchDelay,
        coalesceMaxBatchSize, coalesceMaxWait, closeTimeout, fenceTimeout, scheduler,
        nearMaximumSize, nearBoundedByBytes, nearStaleness, nearSampling, nearCopy,
        invalidateAllBound, entryKeys, failWritesWhenStoreDown, ticker, storeProbeInterval,
        outageReuse);
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
