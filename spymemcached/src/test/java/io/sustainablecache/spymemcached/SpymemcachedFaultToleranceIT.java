package io.sustainablecache.spymemcached;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.FaultToleranceContract;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import net.spy.memcached.MemcachedClient;

/**
 * The fault-tolerance contract over {@link SpymemcachedStore} and a {@link MemcachedClient}
 * configured as {@link TestClients#connect} does ({@code FailureMode.Cancel}, text protocol, a
 * one-second maximum reconnect delay, the operation timeout also as the client's queue timeouts).
 */
class SpymemcachedFaultToleranceIT extends FaultToleranceContract {

  private final Map<CacheStore, MemcachedClient> clients = new IdentityHashMap<>();

  @Override
  protected CacheStore storeConnectedTo(InetSocketAddress address, Duration operationTimeout) {
    MemcachedClient client = TestClients.connect(address, operationTimeout);
    SpymemcachedStore store =
        SpymemcachedStore.builder(client).operationTimeout(operationTimeout).build();
    clients.put(store, client);
    return store;
  }

  @Override
  protected void closeStore(CacheStore store) {
    clients.remove(store).shutdown();
  }
}
