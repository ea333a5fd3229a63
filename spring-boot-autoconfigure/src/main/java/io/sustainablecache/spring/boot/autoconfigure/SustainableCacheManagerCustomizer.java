package io.sustainablecache.spring.boot.autoconfigure;

import io.sustainablecache.spring.SustainableCacheManager;

/**
 * Changes the auto-configured {@link SustainableCacheManager} before it is built: add caches with
 * settings the properties cannot express ({@code builder.cache("books", CacheSpec.builder()...)}),
 * a key encoder. Customizers run in {@link org.springframework.core.Ordered}
 * order, after the properties are applied.
 */
@FunctionalInterface
public interface SustainableCacheManagerCustomizer {

  /**
   * Customizes the builder.
   *
   * @param builder the manager's builder, already holding the properties' settings
   */
  void customize(SustainableCacheManager.Builder builder);
}
