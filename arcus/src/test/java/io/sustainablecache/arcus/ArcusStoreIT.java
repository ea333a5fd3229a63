package io.sustainablecache.arcus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testkit.CacheStoreContract;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
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

  /** The clients of the stores {@link #ownStore} opened in this test. */
  private final Map<CacheStore, ArcusClient> own = new IdentityHashMap<>();

  @Override
  protected CacheStore ownStore(Duration operationTimeout) {
    ArcusClient client = Clients.connectedTo(MemcachedServer.shared().address(), operationTimeout);
    ArcusStore opened = ArcusStore.builder(client).operationTimeout(operationTimeout).build();
    own.put(opened, client);
    return opened;
  }

  @Override
  protected void closeOwnStore(CacheStore store) {
    own.remove(store).shutdown();
  }

  /**
   * The client was created with the address of a plain memcached, which does not know ARCUS's
   * flush_prefix: the store does not send it (issue 15: its ERROR answer made the client re-open
   * the connection shared with other caches).
   */
  @Override
  protected FlushPrefixSupport flushPrefixSupport() {
    return FlushPrefixSupport.UNSUPPORTED;
  }

  /**
   * The ARCUS client reads the part of a key before its first {@code ':'} as an ARCUS prefix and
   * refuses prefixes outside {@code [A-Za-z0-9_+.-]}; the store applies the same rule before
   * sending anything, and says so without repeating the key.
   */
  /**
   * Issue 32: by default {@code invalidateAll} works on plain memcached through this adapter too
   * (a new generation of the namespace), and sends no {@code flush_prefix}.
   */
  @Test
  void invalidateAllOnPlainMemcached_byDefault_isANewGeneration() {
    String run = Long.toHexString(System.nanoTime());
    try (SustainableCache<String> cleared = SustainableCache.builder(store).namespace("ic" + run)
            .ttl(Duration.ofMinutes(1)).codec(ValueCodec.utf8()).build();
        SustainableCache<String> other = SustainableCache.builder(store).namespace("id" + run)
            .ttl(Duration.ofMinutes(1)).codec(ValueCodec.utf8()).build()) {
      cleared.put("k", "v");
      other.put("k", "w");

      cleared.invalidateAll();

      assertThat(cleared.getIfPresent("k")).isEmpty();
      assertThat(other.getIfPresent("k")).as("another namespace keeps its entries").contains("w");
      assertThat(cleared.stats().storeErrorCount()).isZero();
    }
  }

  /**
   * Issue 15: on plain memcached, {@code invalidateAll} of a cache without a generation (the
   * opt-out, {@code invalidateAllBound(0)}) fails at once with {@link
   * UnsupportedOperationException}; it used to send {@code flush_prefix}, whose {@code ERROR}
   * answer made the client re-open the connection that other caches share, failing their
   * operations.
   */
  @Test
  void invalidateAllOnPlainMemcached_withoutAGeneration_failsAtOnceAndDisturbsNoOtherCache()
      throws Exception {
    String run = Long.toHexString(System.nanoTime());
    try (SustainableCache<String> cleared = SustainableCache.builder(store).namespace("ia" + run)
            .ttl(Duration.ofMinutes(1)).codec(ValueCodec.utf8())
            .invalidateAllBound(Duration.ZERO).build();
        SustainableCache<String> other = SustainableCache.builder(store).namespace("ib" + run)
            .ttl(Duration.ofMinutes(1)).codec(ValueCodec.utf8()).build()) {
      AtomicBoolean stop = new AtomicBoolean();
      AtomicInteger operations = new AtomicInteger();
      CompletableFuture<Void> traffic = CompletableFuture.runAsync(() -> {
        for (int i = 0; !stop.get(); i++) {
          other.put("k" + (i % 50), "v" + i);
          assertThat(other.getIfPresent("k" + (i % 50))).contains("v" + i);
          operations.incrementAndGet();
        }
      });
      for (int i = 0; i < 20; i++) {
        assertThatThrownBy(cleared::invalidateAll)
            .isInstanceOf(UnsupportedOperationException.class)
            .hasMessageContaining("prefixFlush");
        Thread.sleep(20);
      }
      stop.set(true);
      traffic.get(10, TimeUnit.SECONDS);
      assertThat(operations.get()).isPositive();
      assertThat(other.stats().storeErrorCount()).isZero();
    }
  }

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
