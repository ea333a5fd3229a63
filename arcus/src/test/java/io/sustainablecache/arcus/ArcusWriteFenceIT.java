package io.sustainablecache.arcus;

import io.sustainablecache.testkit.StoreConnector;
import io.sustainablecache.testkit.WriteFenceContract;

/** Write fences over {@link ArcusStore} and a real memcached, each "host" a client of its own. */
class ArcusWriteFenceIT extends WriteFenceContract {

  private final StoreConnector connector = Clients.connector();

  @Override
  protected StoreConnector connector() {
    return connector;
  }
}
