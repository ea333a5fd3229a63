package io.sustainablecache.arcus;

import io.sustainablecache.testkit.StoreConnector;
import io.sustainablecache.testkit.SustainableCacheContract;

/**
 * The cache's end-to-end behaviour over {@link ArcusStore} and a real memcached, each test's
 * "hosts" with clients of their own built from {@link Clients#recommendedSettings()}.
 */
class ArcusSustainableCacheIT extends SustainableCacheContract {

  private final StoreConnector connector = Clients.connector();

  @Override
  protected StoreConnector connector() {
    return connector;
  }
}
