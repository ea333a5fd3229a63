package io.sustainablecache.arcus;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.SustainableCacheContract;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import net.spy.memcached.ArcusClient;

/**
 * The cache's end-to-end behaviour over {@link ArcusStore} and a real memcached, each test's
 * "hosts" with clients of their own built from {@link Clients#recommendedSettings()}.
 */
class ArcusSustainableCacheIT extends SustainableCacheContract {

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
