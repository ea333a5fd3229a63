/**
 * Spring's cache abstraction over {@link io.sustainablecache.SustainableCache}: {@link
 * io.sustainablecache.spring.SustainableCacheManager} creates one {@link
 * io.sustainablecache.spring.SustainableSpringCache} per cache name, each a {@code
 * SustainableCache} with its own namespace, TTL, refresh policy and value codec ({@link
 * io.sustainablecache.spring.CacheSpec}).
 *
 * <p><b>Use {@code @Cacheable(sync = true)}.</b> Only then does Spring hand the annotated method
 * to the cache as a loader ({@code Cache.get(key, Callable)}), which the cache calls on misses and
 * for refreshes ahead of expiry. Without {@code sync}, Spring reads, calls the method itself on a
 * miss and then writes: no cache can refresh ahead through that path, every expiry is a miss,
 * and concurrent misses of one key each run the method.
 *
 * <p>Spring's {@code Object} keys become store keys through a {@link
 * io.sustainablecache.spring.KeyEncoder}; the default is injective and type-tagged, so {@code "1"},
 * {@code 1} and {@code 1L}, or {@code SimpleKey("a,b")} and {@code SimpleKey("a", "b")}, never
 * share an entry.
 */
package io.sustainablecache.spring;
