/**
 * The store service provider interface: what a memcached-protocol client must offer to back a
 * {@link io.sustainablecache.SustainableCache}. Adapters live in their own modules
 * ({@code sustainable-cache-arcus}, {@code sustainable-cache-spymemcached}); {@link
 * io.sustainablecache.spi.InMemoryStore} is an in-process implementation for tests and
 * simulations.
 */
package io.sustainablecache.spi;
