package io.sustainablecache.testkit;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.testkit.memcached.FaultProxy;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link FaultProxy} in front of a real memcached, speaking its text protocol. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FaultProxyIT {

  private static final int READ_TIMEOUT_MILLIS = 5_000;

  private FaultProxy proxy;
  private final String key = "fault-proxy-it-" + Long.toHexString(
      ThreadLocalRandom.current().nextLong());

  @BeforeEach
  void startProxyInFrontOfMemcached() {
    proxy = FaultProxy.start(MemcachedServer.shared().address());
  }

  @AfterEach
  void closeProxy() {
    // null when the set-up was aborted (no memcached): the abort must stay the reported reason.
    if (proxy != null) {
      proxy.close();
    }
  }

  @Test
  void memcachedAnswersThroughAPassThroughProxy() throws IOException {
    try (Client client = new Client()) {
      assertThat(client.call("set " + key + " 0 60 5\r\nhello")).isEqualTo("STORED");
      assertThat(client.call("get " + key)).isEqualTo("VALUE " + key + " 0 5");
      assertThat(client.readLine()).isEqualTo("hello");
      assertThat(client.readLine()).isEqualTo("END");
    }
  }

  @Test
  void aDelayedRoundTripTakesTwiceTheDelay() throws IOException {
    Duration delay = Duration.ofMillis(200);
    try (Client client = new Client()) {
      assertThat(client.call("version")).startsWith("VERSION ");
      proxy.delay(delay);

      long started = System.nanoTime();
      assertThat(client.call("version")).startsWith("VERSION ");
      Duration roundTrip = Duration.ofNanos(System.nanoTime() - started);
      assertThat(roundTrip).isGreaterThanOrEqualTo(delay.multipliedBy(2))
          .isLessThan(delay.multipliedBy(2).plusSeconds(2));
    }
  }

  @Test
  void aBlackholedServerAnswersNothingThenEverythingInOrderAfterPassThrough()
      throws IOException {
    try (Client client = new Client()) {
      assertThat(client.call("version")).startsWith("VERSION ");
      proxy.blackhole();
      client.send("set " + key + " 0 60 3\r\nold");
      client.send("set " + key + " 0 60 3\r\nnew");
      client.send("get " + key);
      client.assertSilentFor(Duration.ofMillis(300));

      proxy.passThrough();
      assertThat(client.readLine()).isEqualTo("STORED");
      assertThat(client.readLine()).isEqualTo("STORED");
      assertThat(client.readLine()).isEqualTo("VALUE " + key + " 0 3");
      assertThat(client.readLine()).isEqualTo("new");
      assertThat(client.readLine()).isEqualTo("END");
    }
  }

  @Test
  void aServerTakenDownRefusesAndDropsThenComesBackOnTheSamePort() throws IOException {
    try (Client before = new Client()) {
      assertThat(before.call("version")).startsWith("VERSION ");
      proxy.refuse();
      proxy.dropConnections();

      assertThat(before.readLine()).as("the next line of a dropped connection").isNull();
      assertThatThrownBy(Client::new).isInstanceOf(ConnectException.class);
    }
    proxy.passThrough();
    try (Client after = new Client()) {
      assertThat(after.call("version")).startsWith("VERSION ");
    }
    assertThat(proxy.connectionsAccepted()).isEqualTo(2);
  }

  /** A minimal memcached text-protocol client on a blocking socket. */
  private final class Client implements AutoCloseable {

    private final Socket socket = new Socket();
    private final BufferedReader reader;

    Client() throws IOException {
      try {
        socket.connect(proxy.address(), READ_TIMEOUT_MILLIS);
        socket.setSoTimeout(READ_TIMEOUT_MILLIS);
        reader = new BufferedReader(new InputStreamReader(socket.getInputStream(), US_ASCII));
      } catch (IOException e) {
        socket.close();
        throw e;
      }
    }

    void send(String command) throws IOException {
      OutputStream out = socket.getOutputStream();
      out.write((command + "\r\n").getBytes(US_ASCII));
      out.flush();
    }

    String call(String command) throws IOException {
      send(command);
      return readLine();
    }

    /** The next line, or {@code null} when the connection ended (or was reset). */
    String readLine() throws IOException {
      try {
        return reader.readLine();
      } catch (SocketTimeoutException e) {
        throw e;
      } catch (IOException reset) {
        return null;
      }
    }

    void assertSilentFor(Duration duration) throws IOException {
      socket.setSoTimeout((int) duration.toMillis());
      try {
        assertThatThrownBy(reader::readLine).isInstanceOf(SocketTimeoutException.class);
      } finally {
        socket.setSoTimeout(READ_TIMEOUT_MILLIS);
      }
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
