package io.sustainablecache.arcus;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.spi.StoreException;
import io.sustainablecache.testkit.MemcachedServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import net.spy.memcached.ArcusClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What {@link ArcusStore} does around the client's lifecycle, which the store contracts do not
 * cover: a client that was shut down, and a client whose server never answered.
 */
@Timeout(60)
class ArcusStoreLifecycleIT {

  private static final byte[] VALUE = "value".getBytes(US_ASCII);

  @Test
  void theStoreDoesNotOwnTheClientAndFailsOnceTheCallerShutsItDown() {
    ArcusClient client = Clients.connectedTo(MemcachedServer.shared().address());
    ArcusStore store = ArcusStore.of(client);
    String key = "arcus-lifecycle-" + System.nanoTime();
    try {
      store.set(key, VALUE, 60);
      assertThat(store.gets(key)).isPresent();
      assertThat(store.delete(key)).isTrue();
    } finally {
      client.shutdown();
    }

    assertThatThrownBy(() -> store.gets(key))
        .isInstanceOf(StoreException.class)
        .hasMessage("ARCUS gets failed: Shutting down")
        .hasCauseInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> store.set(key, VALUE, 60))
        .isInstanceOf(StoreException.class)
        .hasMessage("ARCUS set failed: Shutting down");
  }

  /**
   * A server that accepts connections but never answers: the client keeps operations queued on
   * a node that is still "first connecting" or connected, so only the store's timeout ends them.
   */
  @Test
  void aServerThatNeverAnswersTimesOutEveryOperation() throws IOException {
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      ArcusClient client = Clients.connectingTo(
          new InetSocketAddress(silent.getInetAddress(), silent.getLocalPort()));
      try {
        ArcusStore store =
            ArcusStore.builder(client).operationTimeout(Duration.ofMillis(200)).build();

        long started = System.nanoTime();
        assertThatThrownBy(() -> store.gets("k"))
            .isInstanceOf(StoreException.class)
            .hasMessage("ARCUS gets timed out after 200 ms");
        assertThatThrownBy(() -> store.add("k", VALUE, 60))
            .isInstanceOf(StoreException.class)
            .hasMessage("ARCUS add timed out after 200 ms");
        Duration elapsed = Duration.ofNanos(System.nanoTime() - started);

        assertThat(elapsed).isGreaterThanOrEqualTo(Duration.ofMillis(400))
            .isLessThan(Duration.ofSeconds(5));
      } finally {
        client.shutdown();
      }
    }
  }

  /** Nothing listens on the port: with {@code FailureMode.Cancel} operations fail at once. */
  @Test
  void aPortWithNothingListeningFailsEveryOperation() throws IOException {
    InetSocketAddress closed;
    try (ServerSocket probe = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      closed = new InetSocketAddress(probe.getInetAddress(), probe.getLocalPort());
    }
    ArcusClient client = Clients.connectingTo(closed);
    try {
      ArcusStore store = ArcusStore.of(client);

      assertThatThrownBy(() -> store.gets("k")).isInstanceOf(StoreException.class);
      assertThatThrownBy(() -> store.set("k", VALUE, 60)).isInstanceOf(StoreException.class);
      assertThatThrownBy(() -> store.delete("k")).isInstanceOf(StoreException.class);
    } finally {
      client.shutdown();
    }
  }
}
