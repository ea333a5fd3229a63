package io.sustainablecache.arcus;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.MemcachedServer;
import io.sustainablecache.testkit.SustainableCacheContract;
import net.spy.memcached.ArcusClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The cache's end-to-end behaviour over {@link ArcusStore} and a real memcached. */
class ArcusSustainableCacheIT extends SustainableCacheContract {

  private static ArcusClient client;
  private static ArcusStore store;

  @BeforeAll
  static void connect() {
    client = Clients.connectedTo(MemcachedServer.shared().address());
    store = ArcusStore.of(client);
  }

  @AfterAll
  static void disconnect() {
    if (client != null) {
      client.shutdown();
    }
  }

  @Override
  protected CacheStore store() {
    return store;
  }
}
