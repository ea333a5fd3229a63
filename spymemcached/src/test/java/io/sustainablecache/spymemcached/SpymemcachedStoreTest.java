package io.sustainablecache.spymemcached;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.memcached.RawBytesTranscoder;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.MemcachedClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Needs no memcached: the client is connected to a socket that accepts connections but never
 * answers, so every request times out.
 */
class SpymemcachedStoreTest {

  private static final Duration SHORT_TIMEOUT = Duration.ofMillis(50);
  private static final byte[] SECRET = "secret-value".getBytes(StandardCharsets.US_ASCII);

  private static ServerSocket blackHole;
  private static MemcachedClient client;

  @BeforeAll
  static void connectToABlackHole() throws IOException {
    // Never accepted: the kernel completes the handshake and buffers requests, nothing answers.
    blackHole = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
    client = TestClients.connect(
        new InetSocketAddress("127.0.0.1", blackHole.getLocalPort()), Duration.ofSeconds(1));
  }

  @AfterAll
  static void disconnect() throws IOException {
    if (client != null) {
      client.shutdown(0, TimeUnit.SECONDS);
    }
    if (blackHole != null) {
      blackHole.close();
    }
  }

  @Nested
  class Builder {

    @Test
    void defaultsToSevenHundredMillisecondsAndMemcachedsKeyLimit() {
      SpymemcachedStore store = SpymemcachedStore.of(client);
      assertThat(store.operationTimeout()).isEqualTo(Duration.ofMillis(700));
      assertThat(store.maxKeyLength()).isEqualTo(250);
      assertThat(store).hasToString("SpymemcachedStore[operationTimeout=700 ms, maxKeyLength=250]");
    }

    @Test
    void appliesTheConfiguredValues() {
      SpymemcachedStore store = SpymemcachedStore.builder(client)
          .operationTimeout(Duration.ofSeconds(2))
          .maxKeyLength(200)
          .build();
      assertThat(store.operationTimeout()).isEqualTo(Duration.ofSeconds(2));
      assertThat(store.maxKeyLength()).isEqualTo(200);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 250})
    void acceptsTheKeyLengthBounds(int bytes) {
      assertThat(SpymemcachedStore.builder(client).maxKeyLength(bytes).build().maxKeyLength())
          .isEqualTo(bytes);
    }

    @ParameterizedTest
    @ValueSource(ints = {Integer.MIN_VALUE, -1, 0, 251, Integer.MAX_VALUE})
    void rejectsAKeyLengthOutsideMemcachedsRange(int bytes) {
      assertThatThrownBy(() -> SpymemcachedStore.builder(client).maxKeyLength(bytes))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("maxKeyLength must be between 1 and 250 bytes, was " + bytes);
    }

    @ParameterizedTest
    @ValueSource(strings = {"PT0.001S", "PT0.0015S", "PT10M"})
    void acceptsTimeoutsFromOneMillisecondToTenMinutes(String text) {
      Duration timeout = Duration.parse(text);
      assertThat(SpymemcachedStore.builder(client).operationTimeout(timeout).build()
          .operationTimeout()).isEqualTo(timeout);
    }

    @ParameterizedTest
    @ValueSource(strings = {"PT0S", "PT-0.001S", "PT-1H", "PT0.000999S", "PT10M0.001S"})
    void rejectsATimeoutOutOfRange(String timeout) {
      assertThatThrownBy(
          () -> SpymemcachedStore.builder(client).operationTimeout(Duration.parse(timeout)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("operationTimeout must be between 1 ms and 10 min, was " + timeout);
    }

    @Test
    void rejectsNulls() {
      assertThatThrownBy(() -> SpymemcachedStore.builder(null))
          .isInstanceOf(NullPointerException.class).hasMessage("client");
      assertThatThrownBy(() -> SpymemcachedStore.of(null))
          .isInstanceOf(NullPointerException.class).hasMessage("client");
      assertThatThrownBy(() -> SpymemcachedStore.builder(client).operationTimeout(null))
          .isInstanceOf(NullPointerException.class).hasMessage("operationTimeout");
    }

    @Test
    void keepsItsStateAfterARejectedValue() {
      SpymemcachedStore.Builder builder = SpymemcachedStore.builder(client).maxKeyLength(100);
      assertThatThrownBy(() -> builder.maxKeyLength(0))
          .isInstanceOf(IllegalArgumentException.class);
      assertThat(builder.build().maxKeyLength()).isEqualTo(100);
    }

    /** The store builds text-protocol requests: a binary client would be sent garbage. */
    @Test
    void rejectsABinaryProtocolClient() {
      MemcachedClient binary = TestClients.connecting(
          List.of(new InetSocketAddress("127.0.0.1", blackHole.getLocalPort())),
          Duration.ofSeconds(1), ConnectionFactoryBuilder.Protocol.BINARY);
      try {
        assertThatThrownBy(() -> SpymemcachedStore.builder(binary))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("text protocol");
      } finally {
        binary.shutdown(0, TimeUnit.SECONDS);
      }
    }
  }

  @Nested
  class Failures {

    private final SpymemcachedStore store =
        SpymemcachedStore.builder(client).operationTimeout(SHORT_TIMEOUT).build();

    @Test
    void everyOperationTimesOutWithAStoreExceptionNamingItButNotTheKeyOrValue() {
      String key = "user-4711";
      assertTimesOut("gets", () -> store.gets(key));
      assertTimesOut("getsAll", () -> store.getsAll(List.of(key, key + "-2")));
      assertTimesOut("add", () -> store.add(key, SECRET, 0));
      assertTimesOut("set", () -> store.set(key, SECRET, 0));
      assertTimesOut("cas", () -> store.cas(key, 42L, SECRET, 0));
      assertTimesOut("delete", () -> store.delete(key));
    }

    /**
     * spymemcached queues interruptibly, so it would refuse every operation of an interrupted
     * thread; the store queues with the flag cleared and sets it again. Here the operation is
     * queued and then times out, which shows it was not refused.
     */
    @Test
    void anInterruptedCallerGetsAQueuedOperationAndKeepsItsFlag() {
      CompletableFuture<Optional<StoreItem>> gets;
      boolean flagAfterwards;
      Thread.currentThread().interrupt();
      try {
        gets = store.gets("k");
      } finally {
        flagAfterwards = Thread.interrupted();
      }
      assertThat(flagAfterwards).isTrue();
      assertThat(failure(gets)).hasMessage("spymemcached gets timed out after 50 ms");
    }

    @Test
    void anInvalidKeyFailsTheFutureBeforeAnyRequest() {
      CompletableFuture<Void> set = store.set("has space", SECRET, 0);

      assertThat(set).as("failed before set returned").isCompletedExceptionally();
      assertThat(failure(set))
          .isInstanceOf(StoreException.class)
          .hasMessage("spymemcached set failed: the key contains a space");
    }

    @Test
    void aSubMillisecondTimeoutIsShownExactly() {
      SpymemcachedStore impatient = SpymemcachedStore.builder(client)
          .operationTimeout(Duration.ofNanos(1_500_000)).build();
      assertThat(failure(impatient.gets("k")))
          .isInstanceOf(StoreException.class)
          .hasMessage("spymemcached gets timed out after 1.5 ms");
    }

    @Test
    void cancellingAFutureCancelsIt() {
      SpymemcachedStore patient =
          SpymemcachedStore.builder(client).operationTimeout(Duration.ofMinutes(1)).build();
      CompletableFuture<Optional<StoreItem>> gets = patient.gets("k");

      assertThat(gets.cancel(true)).isTrue();
      assertThat(gets).isCancelled();
    }

    @Test
    void flushPrefixIsNotSupported() {
      assertThat(failure(store.flushPrefix("p")))
          .isInstanceOf(UnsupportedOperationException.class);
      assertThatThrownBy(() -> store.flushPrefix(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void nullArgumentsAreRejectedBeforeAnyRequest() {
      assertThatThrownBy(() -> store.gets(null)).isInstanceOf(NullPointerException.class)
          .hasMessage("key");
      assertThatThrownBy(() -> store.getsAll(null)).isInstanceOf(NullPointerException.class)
          .hasMessage("keys");
      assertThatThrownBy(() -> store.getsAll(Arrays.asList("k", null)))
          .isInstanceOf(NullPointerException.class).hasMessage("key");
      assertThatThrownBy(() -> store.add("k", null, 0)).isInstanceOf(NullPointerException.class)
          .hasMessage("value");
      assertThatThrownBy(() -> store.set(null, SECRET, 0)).isInstanceOf(NullPointerException.class)
          .hasMessage("key");
      assertThatThrownBy(() -> store.cas("k", 1L, null, 0))
          .isInstanceOf(NullPointerException.class).hasMessage("value");
      assertThatThrownBy(() -> store.delete(null)).isInstanceOf(NullPointerException.class)
          .hasMessage("key");
    }

    private void assertTimesOut(String operation, Supplier<CompletableFuture<?>> call) {
      long start = System.nanoTime();
      Throwable e = failure(call.get());
      long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

      assertThat(e).as(operation).isInstanceOf(StoreException.class)
          .hasMessage("spymemcached " + operation + " timed out after 50 ms");
      assertThat(elapsedMillis).as("%s took", operation).isGreaterThanOrEqualTo(50L);
      assertThat(stackTrace(e)).as("%s exception with its causes", operation)
          .doesNotContain(new String(SECRET, StandardCharsets.US_ASCII))
          .doesNotContain("user-4711");
    }
  }

  @Nested
  class Transcoder {

    @Test
    void encodesACopyWithTheByteArrayFlags() {
      byte[] value = {1, 2, 3};
      var encoded = RawBytesTranscoder.INSTANCE.encode(value);
      value[0] = 9;
      assertThat(encoded.getData()).containsExactly(1, 2, 3);
      assertThat(encoded.getFlags()).isEqualTo(RawBytesTranscoder.FLAGS).isEqualTo(2048);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 2048, 0xffff, -1})
    void decodesTheBytesWhateverTheFlags(int flags) {
      byte[] data = {4, 5, 6};
      var item = new net.spy.memcached.CachedData(flags, data, Integer.MAX_VALUE);
      assertThat(RawBytesTranscoder.INSTANCE.decode(item)).isSameAs(data);
    }

    @Test
    void leavesTheSizeLimitToTheServerAndDecodesSynchronously() {
      assertThat(RawBytesTranscoder.INSTANCE.getMaxSize()).isEqualTo(Integer.MAX_VALUE);
      assertThat(RawBytesTranscoder.INSTANCE.asyncDecode(null)).isFalse();
    }
  }

  private static Throwable failure(CompletableFuture<?> future) {
    try {
      Object value = future.get(5, TimeUnit.SECONDS);
      throw new AssertionError("expected a failure, got " + value);
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      throw new AssertionError("expected a failure", e);
    }
  }

  private static String stackTrace(Throwable e) {
    StringWriter out = new StringWriter();
    e.printStackTrace(new PrintWriter(out));
    return out.toString();
  }
}
