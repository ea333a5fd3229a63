package io.sustainablecache.spymemcached;

import io.sustainablecache.testkit.ShutdownContract;
import io.sustainablecache.testkit.StoreConnector;

/**
 * Issue 31, part 4: cold gets, {@code close()}, {@code MemcachedClient.shutdown()} at once:
 * nothing the cache wrote is lost.
 */
class SpymemcachedShutdownIT extends ShutdownContract {

  private final StoreConnector connector = TestClients.connector();

  @Override
  protected StoreConnector connector() {
    return connector;
  }
}
