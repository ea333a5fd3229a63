package io.sustainablecache.spymemcached;

import io.sustainablecache.testkit.FaultToleranceContract;
import io.sustainablecache.testkit.StoreConnector;
import net.spy.memcached.MemcachedClient;

/**
 * The fault-tolerance contract over {@link SpymemcachedStore} and a {@link MemcachedClient}
 * configured as {@link TestClients#connect} does ({@code FailureMode.Cancel}, text protocol, a
 * one-second maximum reconnect delay, the operation timeout also as the client's queue timeouts).
 */
class SpymemcachedFaultToleranceIT extends FaultToleranceContract {

  private final StoreConnector connector = TestClients.connector();

  @Override
  protected StoreConnector connector() {
    return connector;
  }
}
