/**
 * The store service provider interface: what a memcached-protocol client must offer to back a
 * {@link io.sustainablecache.SustainableCache}. Adapters live in their own modules
 * ({@code sustainable-cache-arcus}, {@code sustainable-cache-spymemcached});
 * {@link io.sustainablecache.testing.InMemoryStore} is an in-process implementation for tests and
 * simulations.
 *
 * <h2>For adapter authors</h2>
 * Besides the interface and its value types ({@link io.sustainablecache.spi.CacheStore}, {@link
 * io.sustainablecache.spi.StoreItem}, {@link io.sustainablecache.spi.CasOutcome}, {@link
 * io.sustainablecache.spi.StoreException}), the package holds the plumbing that makes every
 * adapter behave the same way:
 * <ul>
 *   <li>{@link io.sustainablecache.spi.PendingOperation} and {@link
 *       io.sustainablecache.spi.OperationDeadlines}: a returned future that always completes
 *       within the operation timeout, enforced by one shared thread per timeout instead of a
 *       timer task per operation;</li>
 *   <li>{@link io.sustainablecache.spi.StoreFailures} and {@link
 *       io.sustainablecache.spi.OperationName}: one {@link
 *       io.sustainablecache.spi.StoreException} per failure, with messages that name the
 *       operation and never a key or a value;</li>
 *   <li>{@link io.sustainablecache.spi.StoreKeys}: the memcached text protocol's key rules;</li>
 *   <li>{@link io.sustainablecache.spi.AdapterSettings}: the builders' shared validation of the
 *       operation timeout and the maximum key length.</li>
 * </ul>
 */
package io.sustainablecache.spi;
