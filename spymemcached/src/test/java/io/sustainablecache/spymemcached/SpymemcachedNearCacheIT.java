package io.sustainablecache.spymemcached;

import io.sustainablecache.testkit.NearCacheContract;
import io.sustainablecache.testkit.StoreConnector;

/** The near cache over {@link SpymemcachedStore}, each host with a client of its own. */
class SpymemcachedNearCacheIT extends NearCacheContract {

  private final StoreConnector connector = TestClients.connector();

  @Override
  protected StoreConnector connector() {
    return connector;
  }
}
