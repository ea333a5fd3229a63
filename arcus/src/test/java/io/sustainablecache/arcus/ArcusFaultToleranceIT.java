package io.sustainablecache.arcus;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.FaultToleranceContract;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import net.spy.memcached.ArcusClient;

/**
 * The fault-tolerance contract over {@link ArcusStore} and an {@link ArcusClient} built from
 * {@link Clients#recommendedSettings()} ({@code FailureMode.Cancel}, the builder's one-second
 * reconnect delay) with the contract's operation timeout.
 */
class ArcusFaultToleranceIT extends FaultToleranceContract {

  private final Map<CacheStore, ArcusClient> clients = new IdentityHashMap<>();

  @Override
  protected CacheStore storeConnectedTo(InetSocketAddress address, Duration operationTimeout) {
    ArcusClient client = Clients.connectedTo(address, operationTimeout);
    ArcusStore store = ArcusStore.builder(client).operationTimeout(operationTimeout).build();
    clients.put(store, client);
    return store;
  }

  @Override
  protected void closeStore(CacheStore store) {
    clients.remove(store).shutdown();
  }
}
