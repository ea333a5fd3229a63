package io.sustainablecache.arcus;

import io.sustainablecache.testkit.FaultToleranceContract;
import io.sustainablecache.testkit.StoreConnector;
import net.spy.memcached.ArcusClient;

/**
 * The fault-tolerance contract over {@link ArcusStore} and an {@link ArcusClient} built from
 * {@link Clients#recommendedSettings()} ({@code FailureMode.Cancel}, the builder's one-second
 * reconnect delay) with the contract's operation timeout.
 */
class ArcusFaultToleranceIT extends FaultToleranceContract {

  private final StoreConnector connector = Clients.connector();

  @Override
  protected StoreConnector connector() {
    return connector;
  }
}
