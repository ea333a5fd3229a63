package io.sustainablecache.arcus;

import io.sustainablecache.testkit.ShutdownContract;
import io.sustainablecache.testkit.StoreConnector;

/**
 * Issue 31, part 4: cold gets, {@code close()}, {@code ArcusClient.shutdown()} at once: nothing
 * the cache wrote is lost.
 */
class ArcusShutdownIT extends ShutdownContract {

  private final StoreConnector connector = Clients.connector();

  @Override
  protected StoreConnector connector() {
    return connector;
  }
}
