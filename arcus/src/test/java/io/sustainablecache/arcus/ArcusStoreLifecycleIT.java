package io.sustainablecache.arcus;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import net.spy.memcached.ArcusClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What {@link ArcusStore} does around the client's lifecycle, which the store contracts do not
 * cover in these words: a client that was shut down, a client whose server never answers, and a
 * client with nothing to connect to.
 */
@Timeout(60)
class ArcusStoreLifecycleIT {

  private static final byte[] VALUE = "value".getBytes(US_ASCII);
  private static final Duration PATIENCE = Duration.ofSeconds(5);

  @Test
  void theStoreDoesNotOwnTheClientAndFailsOnceTheCallerShutsItDown() throws Exception {
    ArcusClient client = Clients.connectedTo(MemcachedServer.shared().address());
    ArcusStore store = ArcusStore.of(client);
    String key = "arcus-lifecycle-" + System.nanoTime();
    try {
      store.set(key, VALUE, 60).get(5, TimeUnit.SECONDS);
      assertThat(store.gets(key).get(5, TimeUnit.SECONDS)).isPresent();
      assertThat(store.delete(key).get(5, TimeUnit.SECONDS)).isTrue();
    } finally {
      client.shutdown();
    }

    for (CompletableFuture<?> future : List.of(store.gets(key), store.set(key, VALUE, 60),
        store.getsAll(List.of(key)), store.delete(key))) {
      assertThat(failure(future)).isInstanceOf(StoreException.class)
          .hasMessageStartingWith("ARCUS ")
          .hasMessageNotContaining(key);
    }
  }

  /**
   * A server that accepts connections but never answers: the client keeps operations queued on
   * a node that is still "first connecting" or connected, so only the store's deadline ends them,
   * never before the timeout.
   */
  @Test
  void aServerThatNeverAnswersTimesOutEveryOperation() throws Exception {
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      ArcusClient client = Clients.connectingTo(
          new InetSocketAddress(silent.getInetAddress(), silent.getLocalPort()));
      try {
        ArcusStore store =
            ArcusStore.builder(client).operationTimeout(Duration.ofMillis(200)).build();

        long started = System.nanoTime();
        CompletableFuture<Optional<StoreItem>> gets = store.gets("k");
        CompletableFuture<Boolean> add = store.add("k", VALUE, 60);
        CompletableFuture<Map<String, StoreItem>> getsAll = store.getsAll(List.of("k", "l"));

        assertThat(failure(gets)).hasMessage("ARCUS gets timed out after 200 ms");
        assertThat(failure(add)).hasMessage("ARCUS add timed out after 200 ms");
        assertThat(failure(getsAll)).hasMessage("ARCUS getsAll timed out after 200 ms");
        assertThat(Duration.ofNanos(System.nanoTime() - started))
            .isGreaterThanOrEqualTo(Duration.ofMillis(200));
      } finally {
        client.shutdown();
      }
    }
  }

  /** Nothing listens on the port: with {@code FailureMode.Cancel} operations fail at once. */
  @Test
  void aPortWithNothingListeningFailsEveryOperation() throws Exception {
    InetSocketAddress closed;
    try (ServerSocket probe = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      closed = new InetSocketAddress(probe.getInetAddress(), probe.getLocalPort());
    }
    ArcusClient client = Clients.connectingTo(closed);
    try {
      ArcusStore store = ArcusStore.of(client);

      assertThat(failure(store.gets("k"))).isInstanceOf(StoreException.class);
      assertThat(failure(store.set("k", VALUE, 60))).isInstanceOf(StoreException.class);
      assertThat(failure(store.delete("k"))).isInstanceOf(StoreException.class);
    } finally {
      client.shutdown();
    }
  }

  /**
   * The store reads the client's key delimiter (a private field of the client, see the class
   * documentation of {@link ArcusStore}) for the ARCUS prefix rule.
   */
  @Test
  void theStoreAppliesThePrefixRuleWithTheClientsOwnDelimiter() throws Exception {
    InetSocketAddress closed;
    try (ServerSocket probe = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      closed = new InetSocketAddress(probe.getInetAddress(), probe.getLocalPort());
    }
    ArcusClient client = new ArcusClient(Clients.recommendedSettings().setDelimiter((byte) '#')
        .build(), List.of(closed));
    try {
      ArcusStore store = ArcusStore.of(client);

      assertThat(store.keyProblem("tenant/a#key"))
          .isEqualTo("the ARCUS prefix (before '#') may contain only [A-Za-z0-9_+.-]");
      assertThat(store.keyProblem("tenant/a:key")).as("':' is no delimiter here").isNull();
      assertThat(failure(store.gets("tenant/a#key"))).isInstanceOf(StoreException.class)
          .hasMessage("ARCUS gets failed: the ARCUS prefix (before '#') may contain only"
              + " [A-Za-z0-9_+.-]");
    } finally {
      client.shutdown();
    }
  }

  private static Throwable failure(CompletableFuture<?> future)
      throws InterruptedException, TimeoutException {
    try {
      Object value = future.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
      throw new AssertionError("expected a failure, got " + value);
    } catch (ExecutionException e) {
      return e.getCause();
    }
  }
}
