package io.sustainablecache.micrometer;

import static io.sustainablecache.micrometer.SustainableCacheMeters.TAG_RESULT;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.cache.CacheMeterBinder;
import io.sustainablecache.CacheStats;
import io.sustainablecache.SustainableCache;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * Binds a {@link SustainableCache}'s meters to a {@link MeterRegistry}: Micrometer's cache
 * conventions ({@link CacheMeterBinder}: {@code cache.gets{result=hit|miss}}, {@code cache.puts},
 * {@code cache.evictions}, each tagged {@code cache=<name>}) and the library's own meters listed
 * in {@link SustainableCacheMeters}.
 *
 * <pre>{@code
 * SustainableCacheMetrics.monitor(registry, cache, "books");
 * }</pre>
 *
 * <p>Every meter is a function over {@link SustainableCache#stats()}, evaluated when the registry
 * publishes or is read, as Micrometer's Caffeine binder does: the cache's hit path is unchanged.
 * The binder holds the cache weakly (as {@link CacheMeterBinder} does): a cache that is garbage
 * collected reports {@code NaN}. {@code cache.size} is not registered: a memcached client cannot
 * count one cache's items.
 *
 * <p>Thread-safe. Binding the same cache and tags twice returns the meters registered first.
 */
public final class SustainableCacheMetrics extends CacheMeterBinder<SustainableCache<?>> {

  /**
   * Creates a binder; {@link #bindTo} registers its meters.
   *
   * @param cache the cache; never {@code null}
   * @param cacheName the value of the {@code cache} tag; never {@code null}
   * @param tags further tags of every meter; never {@code null}
   */
  public SustainableCacheMetrics(SustainableCache<?> cache, String cacheName, Iterable<Tag> tags) {
    super(cache, cacheName, tags);
  }

  /**
   * Registers the meters of a cache.
   *
   * @param registry the registry; never {@code null}
   * @param cache the cache; never {@code null}
   * @param cacheName the value of the {@code cache} tag; never {@code null}
   * @param tags further tags, as key-value pairs
   * @param <C> the cache type
   * @return the cache, for chaining
   */
  public static <C extends SustainableCache<?>> C monitor(MeterRegistry registry, C cache,
      String cacheName, String... tags) {
    new SustainableCacheMetrics(cache, cacheName, Tags.of(tags)).bindTo(registry);
    return cache;
  }

  private CacheStats stats() {
    SustainableCache<?> cache = getCache();
    return cache == null ? CacheStats.empty() : cache.stats();
  }

  /** Not known: memcached cannot count one namespace's items. */
  @Override
  protected Long size() {
    return null;
  }

  @Override
  protected long hitCount() {
    return stats().hitCount();
  }

  @Override
  protected Long missCount() {
    return stats().missCount();
  }

  /** The explicit invalidations; see {@link SustainableCacheMeters#EVICTIONS}. */
  @Override
  protected Long evictionCount() {
    return stats().invalidationCount();
  }

  /**
   * Entries added to the cache, as Micrometer's cache conventions count them (Caffeine's binder
   * reports its loads here): the caller's {@code put}s and the loaded values written.
   */
  @Override
  protected long putCount() {
    CacheStats stats = stats();
    return stats.putCount() + stats.loadWrittenCount();
  }

  @Override
  protected void bindImplementationSpecificMetrics(MeterRegistry registry) {
    SustainableCache<?> cache = getCache();
    if (cache == null) {
      return;
    }
    counter(registry, cache, SustainableCacheMeters.LOADS, "success",
        CacheStats::loadSuccessCount, "Keys loaded (with or without a value)");
    counter(registry, cache, SustainableCacheMeters.LOADS, "failure",
        CacheStats::loadFailureCount, "Keys whose load failed or timed out");
    counter(registry, cache, SustainableCacheMeters.LOADER_CALLS, null,
        CacheStats::loaderCallCount, "Loader calls (a bulk call counts once)");
    FunctionTimer.<SustainableCache<?>>builder(SustainableCacheMeters.LOAD_DURATION, cache,
            c -> c.stats().loadCount(), c -> c.stats().totalLoadTimeMillis(),
            TimeUnit.MILLISECONDS)
        .tags(getTagsWithCacheName())
        .description("Time spent in loader calls")
        .register(registry);
    counter(registry, cache, SustainableCacheMeters.LOAD_TIMEOUTS, null,
        CacheStats::loadTimeoutCount, "Loads that did not finish within the load timeout");
    counter(registry, cache, SustainableCacheMeters.FAILURES_REMEMBERED, null,
        CacheStats::failureRememberedCount,
        "Reads failed with the key's remembered load failure during its back-off");
    counter(registry, cache, SustainableCacheMeters.STALE_HITS, null,
        CacheStats::staleHitCount, "Hits served past the TTL while the entry refreshes");
    counter(registry, cache, SustainableCacheMeters.ABSENT_HITS, null,
        CacheStats::absentHitCount, "Hits on a cached absence (no value)");
    counter(registry, cache, SustainableCacheMeters.STALE_ON_ERROR, null,
        CacheStats::staleOnErrorCount, "Stale values served because a reload failed");
    counter(registry, cache, SustainableCacheMeters.REFRESH_REQUESTS, "scheduled",
        CacheStats::refreshScheduledCount, "Refreshes handed to the refresh executor");
    counter(registry, cache, SustainableCacheMeters.REFRESH_REQUESTS, "deduplicated",
        CacheStats::refreshDedupedCount, "Refreshes dropped: the key was already loading");
    counter(registry, cache, SustainableCacheMeters.REFRESH_REQUESTS, "rejected",
        CacheStats::refreshRejectedCount, "Refreshes the refresh executor rejected");
    counter(registry, cache, SustainableCacheMeters.REFRESH_REQUESTS, "backed.off",
        CacheStats::refreshBackoffCount, "Refreshes skipped: the key's last load failed recently");
    counter(registry, cache, SustainableCacheMeters.REFRESHES, "success",
        CacheStats::refreshSuccessCount, "Refreshes whose value was written");
    counter(registry, cache, SustainableCacheMeters.REFRESHES, "failure",
        CacheStats::refreshFailureCount, "Refreshes whose loader failed");
    counter(registry, cache, SustainableCacheMeters.STORE_ERRORS, null,
        CacheStats::storeErrorCount, "Store operations that failed or timed out");
    counter(registry, cache, SustainableCacheMeters.CORRUPT_ENTRIES, null,
        CacheStats::corruptEntryCount, "Stored items that could not be decoded");
    counter(registry, cache, SustainableCacheMeters.WRITES_SKIPPED, null,
        CacheStats::skippedWriteCount, "Loaded values returned but not cached");
    counter(registry, cache, SustainableCacheMeters.WRITES_DISCARDED, null,
        CacheStats::staleSetDiscardCount, "Loaded values not written: the item changed meanwhile");
    counter(registry, cache, SustainableCacheMeters.LEASES, "won",
        CacheStats::leaseWonCount, "Fleet leases this instance took before loading");
    counter(registry, cache, SustainableCacheMeters.LEASES, "lost",
        CacheStats::leaseLostCount, "Loads left to another instance holding the lease");
    counter(registry, cache, SustainableCacheMeters.LEASE_TAKEOVERS, null,
        CacheStats::leaseTakeoverCount, "Leases won after another holder's lease ran out");
    counter(registry, cache, SustainableCacheMeters.LEASES_INVALID, null,
        CacheStats::leaseInvalidCount, "Lease keys holding no valid lease, taken over");
    counter(registry, cache, SustainableCacheMeters.NEAR_GETS, "hit",
        CacheStats::nearHitCount, "Reads answered from the near cache, without a round trip");
    counter(registry, cache, SustainableCacheMeters.NEAR_GETS, "miss",
        CacheStats::nearMissCount, "Reads of a cache with a near cache that went to the store");
    counter(registry, cache, SustainableCacheMeters.NEAR_LOG_FAILURES, "poll.failed",
        CacheStats::nearPollFailureCount, "Polls of the near cache's invalidation log that failed");
    counter(registry, cache, SustainableCacheMeters.NEAR_LOG_FAILURES, "record.failed",
        CacheStats::nearRecordFailureCount, "Load writes the near cache's log could not record");
    counter(registry, cache, SustainableCacheMeters.NEAR_SAMPLES, "checked",
        CacheStats::nearSampleCount, "Near hits checked against the store");
    counter(registry, cache, SustainableCacheMeters.NEAR_SAMPLES, "stale",
        CacheStats::nearStaleSampleCount, "Checked near hits served beyond the near cache's bound");
    counter(registry, cache, SustainableCacheMeters.NEAR_DROPS, "evicted",
        CacheStats::nearEvictionCount, "Near entries evicted to stay within the size");
    counter(registry, cache, SustainableCacheMeters.NEAR_DROPS, "invalidated",
        CacheStats::nearInvalidationCount, "Near entries dropped for changes made elsewhere");
    counter(registry, cache, SustainableCacheMeters.NEAR_DROPS, "reset",
        CacheStats::nearResetCount, "Times the near cache dropped every entry");
    counter(registry, cache, SustainableCacheMeters.FENCES, "placed",
        CacheStats::fenceCount, "Keys fenced while a database transaction changed their data");
    counter(registry, cache, SustainableCacheMeters.FENCES, "answered",
        CacheStats::fencedHitCount, "Reads answered under a write fence with the value it replaced");
    counter(registry, cache, SustainableCacheMeters.FENCES, "loaded",
        CacheStats::fencedLoadCount, "Loads under a write fence: returned, not cached");
    counter(registry, cache, SustainableCacheMeters.FENCES, "release.failed",
        CacheStats::fenceReleaseFailureCount, "Write fences left to expire: the store failed");
    counter(registry, cache, SustainableCacheMeters.WRITES_UNPROTECTED, null,
        CacheStats::unprotectedWriteCount,
        "Changes committed while their invalidation could not reach the store (owed)");
    Gauge.builder(SustainableCacheMeters.INVALIDATIONS_OWED, cache,
            c -> c.stats().keysAwaitingInvalidation())
        .tags(getTagsWithCacheName())
        .description("Keys waiting for an invalidation this instance owes the store")
        .register(registry);
    counter(registry, cache, SustainableCacheMeters.STORE_REJECTED, null,
        CacheStats::storeRejectedCount, "Store operations failed at once: their node is out");
    counter(registry, cache, SustainableCacheMeters.OUTAGE_LOADS, null,
        CacheStats::outageLoadCount, "Loads started for reads that failed on the store");
    for (String node : cache.storeNodeStates().keySet()) {
      Gauge.builder(SustainableCacheMeters.STORE_NODE_OUT, cache,
              c -> Boolean.TRUE.equals(c.storeNodeStates().get(node)) ? 1 : 0)
          .tags(getTagsWithCacheName())
          .tag("node", node)
          .description("1 while the store node's operations fail at once (it stopped answering)")
          .register(registry);
    }
  }

  private void counter(MeterRegistry registry, SustainableCache<?> cache, String name,
      String result, ToLongFunction<CacheStats> count, String description) {
    FunctionCounter.Builder<SustainableCache<?>> b = FunctionCounter.<SustainableCache<?>>builder(
            name, cache, c -> count.applyAsLong(c.stats()))
        .tags(getTagsWithCacheName())
        .description(description);
    if (result != null) {
      b.tag(TAG_RESULT, result);
    }
    b.register(registry);
  }
}
