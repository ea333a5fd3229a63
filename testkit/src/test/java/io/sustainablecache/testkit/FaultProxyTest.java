package io.sustainablecache.testkit;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.testkit.memcached.FaultProxy;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link FaultProxy} in front of an in-process echo server. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FaultProxyTest {

  /** How long a read waits to show that nothing arrives. */
  private static final int SILENCE_MILLIS = 300;
  private static final int READ_TIMEOUT_MILLIS = 5_000;

  private EchoServer echo;
  private FaultProxy proxy;
  private final List<Socket> sockets = new ArrayList<>();

  @BeforeEach
  void startEchoServerBehindAProxy() throws IOException {
    echo = new EchoServer();
    proxy = FaultProxy.start(echo.address());
  }

  @AfterEach
  void closeEverything() throws IOException {
    for (Socket socket : sockets) {
      socket.close();
    }
    // Either is null when the set-up failed; that failure must stay the reported reason.
    if (proxy != null) {
      proxy.close();
    }
    if (echo != null) {
      echo.close();
    }
  }

  @Test
  void passThroughForwardsBothWaysOnALoopbackPort() throws IOException {
    assertThat(proxy.address().getAddress().isLoopbackAddress()).isTrue();
    assertThat(proxy.address().getPort()).isNotEqualTo(echo.address().getPort());
    assertThat(proxy.upstream()).isEqualTo(echo.address());

    Socket socket = connect();
    send(socket, "hello");
    assertThat(read(socket, 5)).isEqualTo("hello");
  }

  @Test
  void delayAddsTheLatencyToEachDirection() throws IOException {
    Duration delay = Duration.ofMillis(150);
    Socket socket = connect();
    proxy.delay(delay);

    long started = System.nanoTime();
    send(socket, "ping");
    assertThat(read(socket, 4)).isEqualTo("ping");
    Duration roundTrip = Duration.ofNanos(System.nanoTime() - started);

    assertThat(roundTrip).isGreaterThanOrEqualTo(delay.multipliedBy(2))
        .isLessThan(delay.multipliedBy(2).plusSeconds(2));
  }

  @Test
  void delayKeepsTheOrderOfChunks() throws IOException {
    Socket socket = connect();
    proxy.delay(Duration.ofMillis(50));
    for (char c = 'a'; c <= 'j'; c++) {
      send(socket, String.valueOf(c));
    }
    assertThat(read(socket, 10)).isEqualTo("abcdefghij");
  }

  @Test
  void passThroughReleasesDelayedChunksAtOnce() throws IOException {
    Socket socket = connect();
    proxy.delay(Duration.ofMinutes(10));
    send(socket, "held");
    assertNothingArrives(socket);

    proxy.passThrough();
    assertThat(read(socket, 4)).isEqualTo("held");
  }

  @Test
  void blackholeHoldsEveryByteUntilPassThroughThenForwardsThemInOrder() throws IOException {
    Socket socket = connect();
    proxy.blackhole();
    send(socket, "one ");
    send(socket, "two ");
    send(socket, "three");
    assertNothingArrives(socket);
    assertThat(proxy.openConnections()).isEqualTo(1);

    proxy.passThrough();
    assertThat(read(socket, 13)).isEqualTo("one two three");
  }

  @Test
  void blackholeStillAcceptsConnections() throws IOException {
    proxy.blackhole();
    Socket socket = connect();
    send(socket, "x");
    assertNothingArrives(socket);
    assertThat(proxy.connectionsAccepted()).isEqualTo(1);
  }

  @Test
  void dropConnectionsEndsOpenConnectionsButAcceptsNewOnes() throws IOException {
    Socket first = connectAndAwaitTheProxy();
    send(first, "a");
    assertThat(read(first, 1)).isEqualTo("a");
    await().until(() -> echo.openConnections() == 1);

    proxy.dropConnections();

    assertThat(proxy.openConnections()).isZero();
    assertConnectionEnded(first);
    await("the upstream connection to close").until(() -> echo.openConnections() == 0);
    Socket second = connect();
    send(second, "b");
    assertThat(read(second, 1)).isEqualTo("b");
    assertThat(proxy.connectionsAccepted()).isEqualTo(2);
  }

  @Test
  void dropConnectionsDiscardsWhatABlackholeHeld() throws IOException {
    Socket socket = connectAndAwaitTheProxy();
    proxy.blackhole();
    send(socket, "lost");
    proxy.dropConnections();
    proxy.passThrough();
    assertConnectionEnded(socket);
  }

  @Test
  void refuseMakesConnectionsFailUntilPassThroughListensAgainOnTheSamePort()
      throws IOException {
    InetSocketAddress address = proxy.address();
    proxy.refuse();
    proxy.refuse(); // idempotent

    assertThatThrownBy(this::connect).isInstanceOf(ConnectException.class);
    assertThat(proxy.toString()).contains("refusing");

    proxy.passThrough();
    assertThat(proxy.address()).isEqualTo(address);
    Socket socket = connect();
    send(socket, "back");
    assertThat(read(socket, 4)).isEqualTo("back");
  }

  @Test
  void refuseLeavesOpenConnectionsWorking() throws IOException {
    Socket socket = connectAndAwaitTheProxy();
    proxy.refuse();
    send(socket, "still");
    assertThat(read(socket, 5)).isEqualTo("still");
  }

  @Test
  void countsAcceptedAndOpenConnectionsAndForgetsClosedOnes() throws IOException {
    Socket first = connect();
    Socket second = connect();
    await().until(() -> proxy.openConnections() == 2);
    assertThat(proxy.connectionsAccepted()).isEqualTo(2);

    first.close();
    await("the proxy to notice the client's close").until(() -> proxy.openConnections() == 1);
    send(second, "ok");
    assertThat(read(second, 2)).isEqualTo("ok");
    assertThat(proxy.connectionsAccepted()).isEqualTo(2);
  }

  @Test
  void aClientHalfCloseIsForwardedAndTheAnswerStillArrives() throws IOException {
    Socket socket = connect();
    send(socket, "bye");
    socket.shutdownOutput();
    assertThat(read(socket, 3)).isEqualTo("bye");
    assertConnectionEnded(socket);
    await().until(() -> proxy.openConnections() == 0);
  }

  @Test
  void aConnectionIsClosedWhenTheUpstreamCannotBeReached() throws IOException {
    InetSocketAddress nothing;
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      nothing = new InetSocketAddress(probe.getInetAddress(), probe.getLocalPort());
    }
    try (FaultProxy toNothing = FaultProxy.start(nothing);
        Socket socket = new Socket()) {
      socket.connect(toNothing.address(), READ_TIMEOUT_MILLIS);
      socket.setSoTimeout(READ_TIMEOUT_MILLIS);
      assertConnectionEnded(socket);
      assertThat(toNothing.connectionsAccepted()).isEqualTo(1);
      assertThat(toNothing.openConnections()).isZero();
    }
  }

  @Test
  void closeStopsEveryThreadAndEndsConnections() throws IOException {
    String prefix = "fault-proxy-" + proxy.address().getPort() + "-";
    Socket socket = connectAndAwaitTheProxy();
    proxy.blackhole(); // writers wait for the mode, readers in read(): both must stop
    send(socket, "x");
    assertThat(threadsNamed(prefix)).hasSizeGreaterThanOrEqualTo(5);

    proxy.close();

    assertThat(threadsNamed(prefix)).isEmpty();
    assertConnectionEnded(socket);
    assertThatThrownBy(this::connect).isInstanceOf(ConnectException.class);
  }

  @Test
  void closeIsIdempotentAndEveryControlFailsAfterIt() {
    proxy.close();
    proxy.close();

    assertThat(proxy.toString()).contains("closed");
    assertThatThrownBy(proxy::passThrough).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("is closed");
    assertThatThrownBy(proxy::blackhole).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(proxy::refuse).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(proxy::dropConnections).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> proxy.delay(Duration.ofMillis(1)))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void delayRejectsNegativeAndOverlongDurations() {
    assertThatThrownBy(() -> proxy.delay(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("delay must be between 0 and");
    assertThatThrownBy(() -> proxy.delay(Duration.ofHours(2)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("use blackhole()");
    assertThatThrownBy(() -> proxy.delay(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void aZeroDelayIsPassThrough() throws IOException {
    proxy.blackhole();
    proxy.delay(Duration.ZERO);
    assertThat(proxy.toString()).contains("pass-through");
    Socket socket = connect();
    send(socket, "now");
    assertThat(read(socket, 3)).isEqualTo("now");
  }

  @Test
  void startRejectsAnUnresolvedUpstream() {
    assertThatThrownBy(() -> FaultProxy.start(
        InetSocketAddress.createUnresolved("nowhere.invalid", 11211)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FaultProxy.start(null)).isInstanceOf(NullPointerException.class);
  }

  // -------------------------------------------------------------------------------------------

  private Socket connect() throws IOException {
    Socket socket = new Socket();
    try {
      socket.connect(proxy.address(), READ_TIMEOUT_MILLIS);
      socket.setSoTimeout(READ_TIMEOUT_MILLIS);
      socket.setTcpNoDelay(true);
    } catch (IOException e) {
      socket.close();
      throw e;
    }
    sockets.add(socket);
    return socket;
  }

  /**
   * Connects and waits until the proxy has accepted the connection: {@code connect} returns as
   * soon as the kernel completed the handshake, before the proxy's accept loop sees it.
   */
  private Socket connectAndAwaitTheProxy() throws IOException {
    long accepted = proxy.connectionsAccepted();
    Socket socket = connect();
    await("the proxy to accept the connection")
        .until(() -> proxy.connectionsAccepted() > accepted && proxy.openConnections() > 0);
    return socket;
  }

  private static void send(Socket socket, String text) throws IOException {
    OutputStream out = socket.getOutputStream();
    out.write(text.getBytes(US_ASCII));
    out.flush();
  }

  /** Reads exactly {@code length} bytes, waiting at most the socket's timeout for each read. */
  private static String read(Socket socket, int length) throws IOException {
    byte[] bytes = socket.getInputStream().readNBytes(length);
    return new String(bytes, US_ASCII);
  }

  private static void assertNothingArrives(Socket socket) throws IOException {
    int timeout = socket.getSoTimeout();
    socket.setSoTimeout(SILENCE_MILLIS);
    try {
      assertThatThrownBy(() -> socket.getInputStream().read())
          .as("a read within %d ms", SILENCE_MILLIS)
          .isInstanceOf(SocketTimeoutException.class);
    } finally {
      socket.setSoTimeout(timeout);
    }
  }

  /** The peer closed: a read ends the stream or reports a reset, within the read timeout. */
  private static void assertConnectionEnded(Socket socket) {
    int outcome;
    try {
      outcome = socket.getInputStream().read();
    } catch (SocketTimeoutException e) {
      throw new AssertionError("the connection is still open", e);
    } catch (IOException reset) {
      outcome = -1;
    }
    assertThat(outcome).as("the next byte after the connection ended").isEqualTo(-1);
  }

  private static Set<String> threadsNamed(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(name -> name.startsWith(prefix))
        .collect(Collectors.toSet());
  }

  /** Echoes every byte back on each connection, and closes it once the client stops sending. */
  private static final class EchoServer implements AutoCloseable {

    private final ServerSocket listener;
    private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
    private final List<Thread> threads = new ArrayList<>();

    EchoServer() throws IOException {
      listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      start("echo-accept", this::accept);
    }

    InetSocketAddress address() {
      return new InetSocketAddress(listener.getInetAddress(), listener.getLocalPort());
    }

    int openConnections() {
      return connections.size();
    }

    private void accept() {
      while (true) {
        Socket socket;
        try {
          socket = listener.accept();
        } catch (IOException closed) {
          return;
        }
        connections.add(socket);
        start("echo-" + socket.getPort(), () -> echo(socket));
      }
    }

    private void echo(Socket socket) {
      try (socket) {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        in.transferTo(out);
      } catch (IOException reset) {
        // the proxy dropped the connection
      } finally {
        connections.remove(socket);
      }
    }

    private synchronized void start(String name, Runnable task) {
      Thread thread = new Thread(task, name);
      thread.setDaemon(true);
      threads.add(thread);
      thread.start();
    }

    @Override
    public void close() throws IOException {
      listener.close();
      for (Socket socket : connections) {
        socket.close();
      }
      List<Thread> started;
      synchronized (this) {
        started = new ArrayList<>(threads);
      }
      for (Thread thread : started) {
        try {
          thread.join(READ_TIMEOUT_MILLIS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new UncheckedIOException(new IOException("interrupted", e));
        }
      }
    }
  }
}
