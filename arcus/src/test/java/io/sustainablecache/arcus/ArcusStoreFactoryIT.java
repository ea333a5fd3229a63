package io.sustainablecache.arcus;

import io.sustainablecache.memcached.AdapterSettings;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testkit.CacheStoreFactoryContract;
import java.time.Duration;

/** The factory contract for {@link ArcusStoreFactory}, against a real memcached. */
class ArcusStoreFactoryIT extends CacheStoreFactoryContract {

  @Override
  protected CacheStoreFactory factory() {
    return new ArcusStoreFactory();
  }

  @Override
  protected Duration connectPatience() {
    return AdapterSettings.CONNECT_PATIENCE;
  }
}
