package io.sustainablecache.spymemcached;

import io.sustainablecache.memcached.OperationDeadlines;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.CacheStoreFailureContract;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import net.spy.memcached.MemcachedClient;

/**
 * The failure contract for {@link SpymemcachedStore} over clients configured as the store
 * recommends ({@code FailureMode.Cancel}, text protocol, no blocking on a full queue).
 */
class SpymemcachedStoreFailureIT extends CacheStoreFailureContract {

  private final Map<CacheStore, MemcachedClient> clients = new IdentityHashMap<>();

  @Override
  protected CacheStore storeConnectedTo(List<InetSocketAddress> servers) {
    MemcachedClient client = TestClients.connect(servers, operationTimeout());
    SpymemcachedStore store =
        SpymemcachedStore.builder(client).operationTimeout(operationTimeout()).build();
    clients.put(store, client);
    return store;
  }

  @Override
  protected void closeStore(CacheStore store) {
    clients.remove(store).shutdown(0, TimeUnit.SECONDS);
  }

  @Override
  protected Duration operationTimeout() {
    return SpymemcachedStore.DEFAULT_OPERATION_TIMEOUT;
  }

  @Override
  protected int maxPendingOperations() {
    return OperationDeadlines.DEFAULT_MAX_PENDING;
  }
}
