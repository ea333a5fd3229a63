package io.sustainablecache.spring.boot.starter.arcus;

import io.sustainablecache.arcus.ArcusStoreFactory;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.spring.MemcachedSpringCacheContract;

/** Spring's cache contract and annotations over {@link ArcusStoreFactory}'s store against a real memcached. */
class ArcusSpringCacheIT extends MemcachedSpringCacheContract {

  @Override
  protected CacheStoreFactory storeFactory() {
    return new ArcusStoreFactory();
  }
}
