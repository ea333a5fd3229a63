package io.sustainablecache.hibernate;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.micrometer.SustainableCacheMetrics;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.hibernate.cache.CacheException;

/**
 * Each region's Micrometer meters ({@link SustainableCacheMetrics}: {@code cache.gets}, {@code
 * cache.puts}, the near cache's and the fence's, ...), tagged {@code cache=<region name>} and
 * {@code cache.manager=hibernate}. Loaded only when {@value
 * SustainableCacheRegionFactory#METER_REGISTRY} is set, so Micrometer stays optional.
 *
 * <p>Thread-safe.
 */
final class RegionMeters {

  /** The tag that tells the regions' meters from a Spring cache manager's of the same name. */
  static final String MANAGER_TAG = "cache.manager";
  /** Its value. */
  static final String MANAGER = "hibernate";

  private final MeterRegistry registry;
  private final Set<String> regions = ConcurrentHashMap.newKeySet();

  private RegionMeters(MeterRegistry registry) {
    this.registry = registry;
  }

  /**
   * The meters over the registry in the setting.
   *
   * @throws CacheException if the setting is not a {@link MeterRegistry}, or {@code
   *     sustainable-cache-micrometer} is not on the class path
   */
  static RegionMeters of(Object setting) {
    try {
      if (setting instanceof MeterRegistry registry) {
        SustainableCacheMetrics.class.getName(); // fails here without the module
        return new RegionMeters(registry);
      }
    } catch (NoClassDefFoundError e) {
      throw new CacheException(SustainableCacheRegionFactory.METER_REGISTRY + " needs"
          + " io.sustainablecache:sustainable-cache-micrometer on the class path", e);
    }
    throw new CacheException(SustainableCacheRegionFactory.METER_REGISTRY + " must be an"
        + " io.micrometer.core.instrument.MeterRegistry instance: " + setting.getClass().getName());
  }

  /** Registers the meters of one region's cache (the first binding of a name wins). */
  void bind(String region, SustainableCache<?> cache) {
    regions.add(region);
    SustainableCacheMetrics.monitor(registry, cache, region, MANAGER_TAG, MANAGER);
  }

  /** Removes the meters of every region bound here. */
  void removeAll() {
    for (Meter meter : registry.getMeters()) {
      Meter.Id id = meter.getId();
      if (MANAGER.equals(id.getTag(MANAGER_TAG)) && regions.contains(id.getTag("cache"))) {
        registry.remove(meter);
      }
    }
    regions.clear();
  }
}
