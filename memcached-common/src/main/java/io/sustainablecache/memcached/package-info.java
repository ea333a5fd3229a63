/**
 * Internal to the store adapters: the memcached text-protocol operations ({@link
 * io.sustainablecache.memcached.MemcachedOperations}), the operation deadlines, key rules,
 * failure messages and the raw-bytes transcoder that {@code sustainable-cache-arcus} and {@code
 * sustainable-cache-spymemcached} share.
 *
 * <p>This source is compiled into each adapter's jar against that adapter's client:
 * arcus-java-client and spymemcached both ship {@code net.spy.memcached.*} with different
 * contents and never share a classpath, so the shared code cannot be one jar linked against
 * either. Not an API: it may change in any release and is left out of the javadoc.
 */
package io.sustainablecache.memcached;
