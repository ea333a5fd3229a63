package io.sustainablecache.spring.boot.autoconfigure;

import io.sustainablecache.spring.SustainableSpringCache;

/**
 * Told about every cache the auto-configured manager creates after it was built (caches named in
 * the properties are created with the manager; others on first use, or at start-up when a caching
 * annotation names them). The auto-configuration registers one that binds the cache's metrics;
 * define your own beans to react too. Called on the thread that created the cache.
 */
@FunctionalInterface
public interface CacheCreatedListener {

  /**
   * Reacts to a new cache.
   *
   * @param cache the cache, already visible through the manager
   */
  void cacheCreated(SustainableSpringCache cache);
}
