/**
 * The {@link io.sustainablecache.spi.CacheStore} adapter over upstream spymemcached
 * ({@code net.spy:spymemcached}): {@link io.sustainablecache.spymemcached.SpymemcachedStore}.
 *
 * <p>This module must not share a classpath with {@code sustainable-cache-arcus}: the ARCUS Java
 * client is a fork of spymemcached and ships the same {@code net.spy.memcached} packages.
 */
package io.sustainablecache.spymemcached;
