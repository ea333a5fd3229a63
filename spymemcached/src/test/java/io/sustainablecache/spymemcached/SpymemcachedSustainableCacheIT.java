package io.sustainablecache.spymemcached;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.MemcachedServer;
import io.sustainablecache.testkit.SustainableCacheContract;
import java.time.Duration;
import net.spy.memcached.MemcachedClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The cache's end-to-end behaviour over {@link SpymemcachedStore} and a real memcached. */
class SpymemcachedSustainableCacheIT extends SustainableCacheContract {

  private static MemcachedClient client;
  private static SpymemcachedStore store;

  @BeforeAll
  static void connect() {
    client = TestClients.connect(MemcachedServer.shared().address(), Duration.ofMillis(700));
    store = SpymemcachedStore.of(client);
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
