package io.sustainablecache.spymemcached;

import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testkit.CacheStoreFactoryContract;

/** The factory contract for {@link SpymemcachedStoreFactory}, against a real memcached. */
class SpymemcachedStoreFactoryIT extends CacheStoreFactoryContract {

  @Override
  protected CacheStoreFactory factory() {
    return new SpymemcachedStoreFactory();
  }
}
