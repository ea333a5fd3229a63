package io.sustainablecache.arcus;

import io.sustainablecache.memcached.OperationDeadlines;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.CacheStoreFailureContract;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import net.spy.memcached.ArcusClient;

/**
 * The failure contract for {@link ArcusStore} over an {@link ArcusClient} configured as the store
 * recommends ({@code FailureMode.Cancel}, 700 ms, no blocking on a full queue): a stopped server
 * fails operations at once, a frozen one after the operation timeout, and the client recovers
 * when the server answers again.
 */
class ArcusStoreFailureIT extends CacheStoreFailureContract {

  private final Map<CacheStore, ArcusClient> clients = new IdentityHashMap<>();

  @Override
  protected CacheStore storeConnectedTo(List<InetSocketAddress> servers) {
    ArcusClient client = Clients.connectedTo(servers.toArray(InetSocketAddress[]::new));
    ArcusStore store = ArcusStore.of(client);
    clients.put(store, client);
    return store;
  }

  @Override
  protected void closeStore(CacheStore store) {
    clients.remove(store).shutdown();
  }

  @Override
  protected Duration operationTimeout() {
    return ArcusStore.DEFAULT_OPERATION_TIMEOUT;
  }

  @Override
  protected int maxPendingOperations() {
    return OperationDeadlines.DEFAULT_MAX_PENDING;
  }
}
