package io.sustainablecache.arcus;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testkit.CacheStoreContract;
import io.sustainablecache.testkit.MemcachedServer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
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

  /** The shared server is a plain memcached, which does not know ARCUS's flush_prefix. */
  @Override
  protected FlushPrefixSupport flushPrefixSupport() {
    return FlushPrefixSupport.FAILS_WITH_STORE_EXCEPTION;
  }

  /**
   * The ARCUS client reads the part of a key before its first {@code ':'} as an ARCUS prefix and
   * refuses prefixes outside {@code [A-Za-z0-9_+.-]}; the store applies the same rule before
   * sending anything, and says so without repeating the key.
   */
  @Test
  void aKeyWithAnInvalidArcusPrefixFailsTheFuture() {
    byte[] value = "v".getBytes(StandardCharsets.US_ASCII);

    assertThat(failure(store.set("tenant/a:key", value, 60), "set"))
        .isInstanceOf(StoreException.class)
        .hasMessage("ARCUS set failed: the ARCUS prefix (before ':') may contain only"
            + " [A-Za-z0-9_+.-]");
    assertThat(failure(store.gets("-tenant:key"), "gets"))
        .isInstanceOf(StoreException.class)
        .hasMessage("ARCUS gets failed: the ARCUS prefix starts with '-'");
    assertThat(completed(store.gets("tenant/a-key"))).as("a '/' is fine without a ':'").isEmpty();
  }

  @Test
  void itemsWrittenByTheClientsDefaultTranscoderAreReadAsTheirRawBytes() throws Exception {
    String plain = key("foreign-string");
    String compressed = key("foreign-compressed");
    // SerializingTranscoder: a short String is stored as UTF-8 with flags 0, a long one gzipped.
    String longText = "x".repeat(64 * 1024);
    assertThat(client.set(plain, 0, "hello").get(5, TimeUnit.SECONDS)).isTrue();
    assertThat(client.set(compressed, 0, longText).get(5, TimeUnit.SECONDS)).isTrue();

    assertThat(completed(store.gets(plain))).get().extracting(StoreItem::value)
        .isEqualTo("hello".getBytes(StandardCharsets.UTF_8));
    byte[] gzipped = completed(store.gets(compressed)).orElseThrow().value();
    assertThat(gzipped.length).isLessThan(longText.length());
    assertThat(Arrays.copyOf(gzipped, 2)).containsExactly(0x1f, 0x8b);
  }

  @Test
  void itemsWrittenByTheStoreAreByteArraysForTheClientsDefaultTranscoder() throws Exception {
    String key = key("interop");
    byte[] value = {0, 1, 2, (byte) 0xff};
    completed(store.set(key, value, 0));
    assertThat(client.asyncGet(key).get(5, TimeUnit.SECONDS))
        .isInstanceOf(byte[].class).isEqualTo(value);
  }
}
