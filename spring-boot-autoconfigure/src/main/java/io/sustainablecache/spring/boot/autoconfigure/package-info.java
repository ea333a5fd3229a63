/**
 * Spring Boot auto-configuration for sustainable-cache: {@link
 * io.sustainablecache.spring.boot.autoconfigure.SustainableCacheAutoConfiguration} creates the
 * memcached or ARCUS client through the adapter found on the class path (a {@link
 * io.sustainablecache.spi.CacheStoreFactory}), a {@link
 * io.sustainablecache.spring.SustainableCacheManager} from the {@code sustainable-cache.*}
 * properties ({@link io.sustainablecache.spring.boot.autoconfigure.SustainableCacheProperties}),
 * and registers the Micrometer binder for every cache, including caches created after start-up.
 */
package io.sustainablecache.spring.boot.autoconfigure;
