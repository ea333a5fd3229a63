package io.sustainablecache.arcus;

import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testkit.CacheStoreFactoryContract;

/** The factory contract for {@link ArcusStoreFactory}, against a real memcached. */
class ArcusStoreFactoryIT extends CacheStoreFactoryContract {

  @Override
  protected CacheStoreFactory factory() {
    return new ArcusStoreFactory();
  }
}
