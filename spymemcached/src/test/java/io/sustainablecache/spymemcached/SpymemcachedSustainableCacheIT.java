package io.sustainablecache.spymemcached;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.SustainableCacheContract;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import net.spy.memcached.MemcachedClient;

/**
 * The cache's end-to-end behaviour over {@link SpymemcachedStore} and a real memcached, each
 * test's "hosts" with clients of their own configured as {@link TestClients#connect} does.
 */
class SpymemcachedSustainableCacheIT extends SustainableCacheContract {

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
