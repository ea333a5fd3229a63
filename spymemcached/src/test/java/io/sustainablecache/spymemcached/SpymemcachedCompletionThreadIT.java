package io.sustainablecache.spymemcached;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.CompletionThreadContract;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import net.spy.memcached.MemcachedClient;

/** Issue 24: the cache never waits on {@link SpymemcachedStore}'s I/O thread or the scheduler. */
class SpymemcachedCompletionThreadIT extends CompletionThreadContract {

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
