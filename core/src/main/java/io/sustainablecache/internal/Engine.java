package io.sustainablecache.internal;

import io.sustainablecache.AsyncBulkLoader;
import io.sustainablecache.LoadingSustainableCache;
import io.sustainablecache.Scheduler;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import java.util.List;

/**
 * The engine's entry points for the API package: the caches {@link SustainableCacheBuilder}
 * builds, the shared scheduler, and the counters' names. Everything they return is an API type;
 * the implementations stay package-private.
 *
 * <p><b>Not part of the supported API:</b> public for the API package only; it may change in any
 * release. <b>Thread-safety:</b> every method is thread-safe. <b>Nulls:</b> no method accepts or
 * returns {@code null}.
 */
public final class Engine {

  private static final List<String> COUNTER_NAMES =
      java.util.Arrays.stream(Counter.ALL).map(Counter::counterName).toList();

  private Engine() {}

  /**
   * A cache with this configuration, which the builder checked first.
   *
   * @param config the resolved configuration
   * @param <V> the value type
   * @return a new cache
   */
  public static <V> SustainableCache<V> cache(CacheConfig<V> config) {
    return new DefaultSustainableCache<>(config);
  }

  /**
   * A loading cache with this configuration, whose reads load with {@code loader}.
   *
   * @param config the resolved configuration
   * @param loader the bulk loader of every read without a loader of its own
   * @param <V> the value type
   * @return a new loading cache
   */
  public static <V> LoadingSustainableCache<V> loadingCache(CacheConfig<V> config,
      AsyncBulkLoader<? extends V> loader) {
    return new DefaultLoadingSustainableCache<>(config, loader);
  }

  /**
   * Whether a near cache can be built: Caffeine, the core's optional dependency, is on the
   * classpath.
   *
   * @return whether Caffeine is present
   */
  public static boolean nearCacheAvailable() {
    return NearCache.caffeinePresent();
  }

  /**
   * {@link Scheduler#systemScheduler()}: one shared daemon thread, created lazily.
   *
   * @return the shared instance
   */
  public static Scheduler systemScheduler() {
    return SystemScheduler.INSTANCE;
  }

  /**
   * The names of the cache's counters, in the order the engine keeps them, as {@link
   * io.sustainablecache.CacheStats#counterNames()} lists them.
   *
   * @return an unmodifiable list
   */
  public static List<String> counterNames() {
    return COUNTER_NAMES;
  }
}
