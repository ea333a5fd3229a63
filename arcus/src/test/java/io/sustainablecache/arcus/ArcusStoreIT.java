package io.sustainablecache.arcus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.testkit.CacheStoreContract;
import io.sustainablecache.testkit.MemcachedServer;
import java.nio.charset.StandardCharsets;
import net.spy.memcached.ArcusClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The store contract for {@link ArcusStore} over a single {@link ArcusClient} connected straight
 * to the shared memcached (no ZooKeeper).
 */
class ArcusStoreIT extends CacheStoreContract {

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

  /**
   * The ARCUS client reads the part of a key before its first {@code ':'} as an ARCUS prefix and
   * refuses prefixes outside {@code [A-Za-z0-9_+.-]} before sending anything.
   */
  @Test
  void aKeyWithAnInvalidArcusPrefixIsAStoreException() {
    byte[] value = "v".getBytes(StandardCharsets.US_ASCII);

    assertThatThrownBy(() -> store.set("tenant/a:key", value, 60))
        .isInstanceOf(StoreException.class)
        .hasMessage("ARCUS set failed: Key contains invalid prefix: ``tenant/a:key''")
        .hasCauseInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> store.gets("-tenant:key"))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("invalid prefix");
    assertThat(store.gets("tenant/a-key")).as("a '/' is fine without a ':'").isEmpty();
  }
}
