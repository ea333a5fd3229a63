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
    return stats.count("put") + stats.count("load_written");
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
        s -> s.count("loader_call"), "Loader calls (a bulk call counts once)");
    FunctionTimer.<SustainableCache<?>>builder(SustainableCacheMeters.LOAD_DURATION, cache,
            c -> c.stats().count("loader_call"), c -> c.stats().totalLoadTimeMillis(),
            TimeUnit.MILLISECONDS)
        .tags(getTagsWithCacheName())
        .description("Time spent in loader calls")
        .register(registry);
    counter(registry, cache, SustainableCacheMeters.LOAD_TIMEOUTS, null,
        s -> s.count("load_timeout"), "Loads that did not finish within the load timeout");
    counter(registry, cache, SustainableCacheMeters.FAILURES_REMEMBERED, null,
        s -> s.count("failure_remembered"),
        "Reads failed with the key's remembered load failure during its back-off");
    counter(registry, cache, SustainableCacheMeters.STALE_HITS, null,
        s -> s.count("stale_hit"), "Hits served past the TTL while the entry refreshes");
    counter(registry, cache, SustainableCacheMeters.NO_VALUE_HITS, null,
        s -> s.count("no_value_hit"), "Hits on a cached absence (no value)");
    counter(registry, cache, SustainableCacheMeters.STALE_ON_ERROR, null,
        s -> s.count("stale_on_error"), "Stale values served because a reload failed");
    counter(registry, cache, SustainableCacheMeters.REFRESH_REQUESTS, "scheduled",
        s -> s.count("refresh_scheduled"), "Refreshes handed to the refresh executor");
    counter(registry, cache, SustainableCacheMeters.REFRESH_REQUESTS, "deduplicated",
        s -> s.count("refresh_deduped"), "Refreshes dropped: the key was already loading");
    counter(registry, cache, SustainableCacheMeters.REFRESH_REQUESTS, "rejected",
        s -> s.count("refresh_rejected"), "Refreshes the refresh executor rejected");
    counter(registry, cache, SustainableCacheMeters.REFRESH_REQUESTS, "backed.off",
        s -> s.count("refresh_backoff"), "Refreshes skipped: the key's last load failed recently");
    counter(registry, cache, SustainableCacheMeters.REFRESHES, "success",
        CacheStats::refreshSuccessCount, "Refreshes whose value was written");
    counter(registry, cache, SustainableCacheMeters.REFRESHES, "failure",
        CacheStats::refreshFailureCount, "Refreshes whose loader failed");
    counter(registry, cache, SustainableCacheMeters.STORE_ERRORS, null,
        CacheStats::storeErrorCount, "Store operations that failed or timed out");
    counter(registry, cache, SustainableCacheMeters.CORRUPT_ENTRIES, null,
        s -> s.count("corrupt_entry"), "Stored items that could not be decoded");
    counter(registry, cache, SustainableCacheMeters.WRITES_SKIPPED, null,
        s -> s.count("skipped_write"), "Loaded values returned but not cached");
    counter(registry, cache, SustainableCacheMeters.WRITES_DISCARDED, null,
        s -> s.count("stale_set_discard"), "Loaded values not written: the item changed meanwhile");
    counter(registry, cache, SustainableCacheMeters.LEASES, "won",
        s -> s.count("lease_won"), "Fleet leases this instance took before loading");
    counter(registry, cache, SustainableCacheMeters.LEASES, "lost",
        s -> s.count("lease_lost"), "Loads left to another instance holding the lease");
    counter(registry, cache, SustainableCacheMeters.LEASE_TAKEOVERS, null,
        s -> s.count("lease_takeover"), "Leases won after another holder's lease ran out");
    counter(registry, cache, SustainableCacheMeters.LEASES_INVALID, null,
        s -> s.count("lease_invalid"), "Lease keys holding no valid lease, taken over");
    counter(registry, cache, SustainableCacheMeters.NEAR_GETS, "hit",
        s -> s.count("near_hit"), "Reads answered from the near cache, without a round trip");
    counter(registry, cache, SustainableCacheMeters.NEAR_GETS, "miss",
        s -> s.count("near_miss"), "Reads of a cache with a near cache that went to the store");
    counter(registry, cache, SustainableCacheMeters.NEAR_LOG_FAILURES, "poll.failed",
        s -> s.count("near_poll_failure"), "Polls of the near cache's invalidation log that failed");
    counter(registry, cache, SustainableCacheMeters.NEAR_LOG_FAILURES, "record.failed",
        s -> s.count("near_record_failure"), "Load writes the near cache's log could not record");
    counter(registry, cache, SustainableCacheMeters.NEAR_SAMPLES, "checked",
        s -> s.count("near_sample"), "Near hits checked against the store");
    counter(registry, cache, SustainableCacheMeters.NEAR_SAMPLES, "stale",
        s -> s.count("near_stale_sample"), "Checked near hits served beyond the near cache's bound");
    counter(registry, cache, SustainableCacheMeters.NEAR_DROPS, "evicted",
        s -> s.count("near_eviction"), "Near entries evicted to stay within the size");
    counter(registry, cache, SustainableCacheMeters.NEAR_DROPS, "invalidated",
        s -> s.count("near_invalidation"), "Near entries dropped for changes made elsewhere");
    counter(registry, cache, SustainableCacheMeters.NEAR_DROPS, "reset",
        s -> s.count("near_reset"), "Times the near cache dropped every entry");
    counter(registry, cache, SustainableCacheMeters.FENCES, "placed",
        s -> s.count("fence"), "Keys fenced while a database transaction changed their data");
    counter(registry, cache, SustainableCacheMeters.FENCES, "answered",
        s -> s.count("fenced_hit"), "Reads answered under a write fence with the value it replaced");
    counter(registry, cache, SustainableCacheMeters.FENCES, "loaded",
        s -> s.count("fenced_load"), "Loads under a write fence: returned, not cached");
    counter(registry, cache, SustainableCacheMeters.FENCES, "release.failed",
        s -> s.count("fence_release_failure"), "Write fences left to expire: the store failed");
    counter(registry, cache, SustainableCacheMeters.WRITES_UNPROTECTED, null,
        s -> s.count("unprotected_write"),
        "Changes committed while their invalidation could not reach the store (owed)");
    Gauge.builder(SustainableCacheMeters.INVALIDATIONS_OWED, cache,
            c -> c.stats().keysAwaitingInvalidation())
        .tags(getTagsWithCacheName())
        .description("Keys waiting for an invalidation this instance owes the store")
        .register(registry);
    counter(registry, cache, SustainableCacheMeters.STORE_REJECTED, null,
        s -> s.count("store_rejected"), "Store operations failed at once: their node is out");
    counter(registry, cache, SustainableCacheMeters.OUTAGE_LOADS, null,
        s -> s.count("outage_load"), "Loads started for reads that failed on the store");
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
