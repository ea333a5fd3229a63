/**
 * The store service provider interface: what a memcached-protocol client must offer to back a
 * {@link io.sustainablecache.SustainableCache}, and nothing else. An adapter implements {@link
 * io.sustainablecache.spi.CacheStore} (and, to be found by name, {@link
 * io.sustainablecache.spi.CacheStoreFactory}) and exchanges {@link
 * io.sustainablecache.spi.StoreItem}, {@link io.sustainablecache.spi.CasOutcome} and {@link
 * io.sustainablecache.spi.StoreException} with the cache.
 *
 * <p>The adapters of this project live in their own modules ({@code sustainable-cache-arcus},
 * {@code sustainable-cache-spymemcached}); the memcached text-protocol operations they share are
 * compiled into each of them and are not part of this API. {@code InMemoryStore}, in {@code
 * sustainable-cache-testing}, is an in-process implementation for tests and simulations. Every adapter should pass the contract suites of {@code sustainable-cache-testkit}
 * against a real server.
 */
package io.sustainablecache.spi;
