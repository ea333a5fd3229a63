package io.sustainablecache.spymemcached;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.CacheStoreContract;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import net.spy.memcached.MemcachedClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SpymemcachedStoreIT extends CacheStoreContract {

  private static MemcachedClient client;
  private static SpymemcachedStore store;

  @BeforeAll
  static void connect() {
    client = TestClients.connect(MemcachedServer.shared().address(),
        SpymemcachedStore.DEFAULT_OPERATION_TIMEOUT);
    store = SpymemcachedStore.of(client);
  }

  @AfterAll
  static void disconnect() {
    if (client != null) {
      client.shutdown(5, TimeUnit.SECONDS);
    }
  }

  @Override
  protected CacheStore store() {
    return store;
  }

  /** The clients of the stores {@link #ownStore} opened in this test. */
  private final Map<CacheStore, MemcachedClient> own = new IdentityHashMap<>();

  @Override
  protected CacheStore ownStore(Duration operationTimeout) {
    MemcachedClient ownClient =
        TestClients.connect(MemcachedServer.shared().address(), operationTimeout);
    SpymemcachedStore opened =
        SpymemcachedStore.builder(ownClient).operationTimeout(operationTimeout).build();
    own.put(opened, ownClient);
    return opened;
  }

  @Override
  protected void closeOwnStore(CacheStore store) {
    own.remove(store).shutdown(5, TimeUnit.SECONDS);
  }

  @Test
  void itemsWrittenByTheDefaultTranscoderAreReadAsTheirRawBytes() throws Exception {
    String plain = key("foreign-string");
    String compressed = key("foreign-compressed");
    // SerializingTranscoder: a short String is stored as UTF-8 with flags 0, a long one gzipped.
    String longText = "x".repeat(64 * 1024);
    assertThat(client.set(plain, 0, "hello").get(5, TimeUnit.SECONDS)).isTrue();
    assertThat(client.set(compressed, 0, longText).get(5, TimeUnit.SECONDS)).isTrue();

    assertThat(completed(store.gets(plain)).orElseThrow().value())
        .isEqualTo("hello".getBytes(StandardCharsets.UTF_8));
    byte[] gzipped = completed(store.gets(compressed)).orElseThrow().value();
    assertThat(gzipped.length).isLessThan(longText.length());
    assertThat(Arrays.copyOf(gzipped, 2)).containsExactly(0x1f, 0x8b);
  }

  @Test
  void itemsWrittenByTheStoreAreByteArraysForTheDefaultTranscoder() throws Exception {
    String key = key("interop");
    byte[] value = {0, 1, 2, (byte) 0xff};
    completed(store.set(key, value, 0));
    assertThat(client.get(key)).isInstanceOf(byte[].class).isEqualTo(value);
  }
}
