/**
 * The {@link io.sustainablecache.spi.CacheStore} adapter over the ARCUS Java client
 * ({@code com.navercorp.arcus:arcus-java-client}): {@link io.sustainablecache.arcus.ArcusStore}
 * stores the cache's bytes raw in an ARCUS cluster, through either an
 * {@link net.spy.memcached.ArcusClient} or an {@link net.spy.memcached.ArcusClientPool}, and
 * also works against plain memcached servers.
 *
 * <p>The ARCUS client and spymemcached both ship the {@code net.spy.memcached} package and must
 * never share a classpath; use {@code sustainable-cache-spymemcached} for spymemcached.
 */
package io.sustainablecache.arcus;
