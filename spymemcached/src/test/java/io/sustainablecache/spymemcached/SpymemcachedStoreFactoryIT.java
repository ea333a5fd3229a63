package io.sustainablecache.spymemcached;

import io.sustainablecache.memcached.AdapterSettings;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testkit.CacheStoreFactoryContract;
import java.time.Duration;

/** The factory contract for {@link SpymemcachedStoreFactory}, against a real memcached. */
class SpymemcachedStoreFactoryIT extends CacheStoreFactoryContract {

  @Override
  protected CacheStoreFactory factory() {
    return new SpymemcachedStoreFactory();
  }

  @Override
  protected Duration connectPatience() {
    return AdapterSettings.CONNECT_PATIENCE;
  }
}
