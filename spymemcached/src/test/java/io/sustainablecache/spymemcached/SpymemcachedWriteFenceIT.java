package io.sustainablecache.spymemcached;

import io.sustainablecache.testkit.StoreConnector;
import io.sustainablecache.testkit.WriteFenceContract;

/** Write fences over {@link SpymemcachedStore} and a real memcached, each "host" a client of its own. */
class SpymemcachedWriteFenceIT extends WriteFenceContract {

  private final StoreConnector connector = TestClients.connector();

  @Override
  protected StoreConnector connector() {
    return connector;
  }
}
