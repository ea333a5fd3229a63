package io.sustainablecache;

import io.sustainablecache.spi.CacheStore;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.Executor;
import java.util.random.RandomGenerator;

/**
 * A cache's configuration with every default resolved: what {@link SustainableCacheBuilder}
 * builds and {@link DefaultSustainableCache} reads. Immutable.
 *
 * @param executor the caller's refresh executor, or {@code null} for one the cache owns
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
    Scheduler scheduler) {

  /** The item's lifetime on the server: {@code ttl + grace}, milliseconds. */
  long lifetimeMillis() {
    return ttl.toMillis() + grace.toMillis();
  }

  @Override
  public String toString() {
    return "namespace=" + namespace + ", ttl=" + ttl + ", grace=" + grace + ", policy=" + policy
        + ", codec=" + codec + ", absentTtl=" + absentTtl + ", loadTimeout=" + loadTimeout
        + ", fleetLease=" + fleetLease;
  }
}
