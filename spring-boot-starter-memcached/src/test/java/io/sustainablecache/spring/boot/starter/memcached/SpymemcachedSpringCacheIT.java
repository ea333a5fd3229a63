package io.sustainablecache.spring.boot.starter.memcached;

import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.spring.MemcachedSpringCacheContract;
import io.sustainablecache.spymemcached.SpymemcachedStoreFactory;

/**
 * Spring's cache contract and annotations over {@link SpymemcachedStoreFactory}'s store against a
 * real memcached.
 */
class SpymemcachedSpringCacheIT extends MemcachedSpringCacheContract {

  @Override
  protected CacheStoreFactory storeFactory() {
    return new SpymemcachedStoreFactory();
  }
}
