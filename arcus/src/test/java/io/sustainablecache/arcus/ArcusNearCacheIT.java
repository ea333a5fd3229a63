package io.sustainablecache.arcus;

import io.sustainablecache.testkit.NearCacheContract;
import io.sustainablecache.testkit.StoreConnector;

/** The near cache over {@link ArcusStore}, each host with a client of its own. */
class ArcusNearCacheIT extends NearCacheContract {

  private final StoreConnector connector = Clients.connector();

  @Override
  protected StoreConnector connector() {
    return connector;
  }
}
