package io.sustainablecache.arcus;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.CompletionThreadContract;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import net.spy.memcached.ArcusClient;

/** Issue 24: the cache never waits on {@link ArcusStore}'s I/O thread or the scheduler. */
class ArcusCompletionThreadIT extends CompletionThreadContract {

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
