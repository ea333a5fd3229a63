package io.sustainablecache.spring.boot.autoconfigure;

import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.sustainablecache.micrometer.SustainableCacheMetrics;
import io.sustainablecache.spring.SustainableSpringCache;
import org.springframework.boot.cache.metrics.CacheMeterBinderProvider;

/**
 * Lets Spring Boot's cache metrics ({@code CacheMetricsRegistrar}) bind {@link
 * SustainableCacheMetrics} to every {@link SustainableSpringCache}: Micrometer's {@code cache.*}
 * meters and the library's own. Stateless and thread-safe.
 */
public final class SustainableCacheMeterBinderProvider
    implements CacheMeterBinderProvider<SustainableSpringCache> {

  /** Creates the provider. */
  public SustainableCacheMeterBinderProvider() {}

  @Override
  public MeterBinder getMeterBinder(SustainableSpringCache cache, Iterable<Tag> tags) {
    return new SustainableCacheMetrics(cache.getNativeCache(), cache.getName(), tags);
  }
}
