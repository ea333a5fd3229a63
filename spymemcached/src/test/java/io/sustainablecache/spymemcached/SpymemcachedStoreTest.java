package io.sustainablecache.spymemcached;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.spi.StoreException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import net.spy.memcached.MemcachedClient;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
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
      assertThat(store).hasToString("SpymemcachedStore{operationTimeout=PT0.7S, maxKeyLength=250}");
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
          .hasMessage("maxKeyLength must be between 1 and 250 (memcached's limit), but was "
              + bytes);
    }

    @Test
    void acceptsTheSmallestPositiveTimeout() {
      Duration nanosecond = Duration.ofNanos(1);
      assertThat(SpymemcachedStore.builder(client).operationTimeout(nanosecond).build()
          .operationTimeout()).isEqualTo(nanosecond);
    }

    @ParameterizedTest
    @ValueSource(strings = {"PT0S", "PT-0.001S", "PT-1H"})
    void rejectsATimeoutThatIsNotPositive(String timeout) {
      assertThatThrownBy(
          () -> SpymemcachedStore.builder(client).operationTimeout(Duration.parse(timeout)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("operationTimeout must be positive, but was " + timeout);
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
  }

  @Nested
  class Failures {

    private final SpymemcachedStore store =
        SpymemcachedStore.builder(client).operationTimeout(SHORT_TIMEOUT).build();

    @Test
    void everyOperationTimesOutWithAStoreExceptionNamingItAndTheKey() {
      assertTimesOut("gets", () -> store.gets("k"));
      assertTimesOut("add", () -> store.add("k", SECRET, 0));
      assertTimesOut("set", () -> store.set("k", SECRET, 0));
      assertTimesOut("cas", () -> store.cas("k", 42L, SECRET, 0));
      assertTimesOut("delete", () -> store.delete("k"));
    }

    @Test
    void aCallerInterruptedBeforeTheCallGetsAStoreExceptionAndKeepsItsInterruptFlag() {
      Thread.currentThread().interrupt();
      try {
        // spymemcached itself refuses to enqueue the request, restoring the flag.
        StoreException e = catchThrowableOfType(StoreException.class, () -> store.gets("k"));
        assertThat(e).hasMessageStartingWith("memcached gets ");
        assertThat(Thread.currentThread().isInterrupted()).isTrue();
      } finally {
        Thread.interrupted();
      }
    }

    @Test
    void aCallerInterruptedWhileWaitingGetsAStoreExceptionAndKeepsItsInterruptFlag()
        throws InterruptedException {
      SpymemcachedStore patient =
          SpymemcachedStore.builder(client).operationTimeout(Duration.ofSeconds(20)).build();
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      AtomicBoolean interruptedAfterwards = new AtomicBoolean();
      Thread caller = new Thread(() -> {
        try {
          patient.gets("k");
        } catch (RuntimeException e) {
          thrown.set(e);
        }
        interruptedAfterwards.set(Thread.currentThread().isInterrupted());
      }, "interrupted-caller");
      caller.start();
      await().atMost(Duration.ofSeconds(5))
          .pollInterval(Duration.ofMillis(5))
          .until(caller::getState, state -> state == Thread.State.TIMED_WAITING);
      caller.interrupt();
      caller.join(TimeUnit.SECONDS.toMillis(5));

      assertThat(caller.isAlive()).as("caller still waiting").isFalse();
      assertThat(thrown.get()).isInstanceOf(StoreException.class)
          .hasMessage("memcached gets was interrupted")
          .hasCauseInstanceOf(InterruptedException.class);
      assertThat(interruptedAfterwards).isTrue();
    }

    @Test
    void aKeyTheClientRefusesIsAStoreException() {
      assertThatThrownBy(() -> store.set("has space", SECRET, 0))
          .isInstanceOf(StoreException.class)
          .hasMessageStartingWith("memcached set was rejected by the client: ")
          .hasCauseInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aLongKeyIsShortenedInTheMessage() {
      String key = "k".repeat(200);
      assertThatThrownBy(() -> store.delete(key))
          .isInstanceOf(StoreException.class)
          .hasMessage("memcached delete timed out after 50 ms");
    }

    @Test
    void aSubMillisecondTimeoutIsShownExactly() {
      SpymemcachedStore impatient =
          SpymemcachedStore.builder(client).operationTimeout(Duration.ofNanos(500_000)).build();
      assertThatThrownBy(() -> impatient.gets("k"))
          .isInstanceOf(StoreException.class)
          .hasMessage("memcached gets timed out after PT0.0005S");
    }

    @Test
    void nullArgumentsAreRejectedBeforeAnyRequest() {
      assertThatThrownBy(() -> store.gets(null)).isInstanceOf(NullPointerException.class)
          .hasMessage("key");
      assertThatThrownBy(() -> store.add("k", null, 0)).isInstanceOf(NullPointerException.class)
          .hasMessage("value");
      assertThatThrownBy(() -> store.set(null, SECRET, 0)).isInstanceOf(NullPointerException.class)
          .hasMessage("key");
      assertThatThrownBy(() -> store.cas("k", 1L, null, 0))
          .isInstanceOf(NullPointerException.class).hasMessage("value");
      assertThatThrownBy(() -> store.delete(null)).isInstanceOf(NullPointerException.class)
          .hasMessage("key");
    }

    private void assertTimesOut(String operation, ThrowingCallable call) {
      long start = System.nanoTime();
      StoreException e = catchThrowableOfType(StoreException.class, call);
      long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

      assertThat(e).as(operation)
          .hasMessage("memcached " + operation + " timed out after 50 ms")
          .hasCauseInstanceOf(TimeoutException.class);
      assertThat(elapsedMillis).as("%s took", operation).isBetween(50L, 1_000L);
      assertThat(stackTrace(e)).as("%s exception with its causes", operation)
          .doesNotContain(new String(SECRET, StandardCharsets.US_ASCII));
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

  private static String stackTrace(Throwable e) {
    StringWriter out = new StringWriter();
    e.printStackTrace(new PrintWriter(out));
    return out.toString();
  }
}
