package io.sustainablecache.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class MemcachedServerIT {

  private static final int SOCKET_TIMEOUT_MILLIS = 2_000;

  private MemcachedServer local;

  @AfterEach
  void stopLocal() {
    if (local != null) {
      local.stop();
    }
  }

  @Test
  void startLocalAnswersTheVersionCommand() throws IOException {
    local = MemcachedServer.startLocal();
    assertThat(local.address().getAddress().isLoopbackAddress()).isTrue();
    assertThat(local.description())
        .startsWith("memcached binary ")
        .endsWith(" on 127.0.0.1:" + local.address().getPort());
    assertThat(version(local.address())).startsWith("VERSION ");
  }

  @Test
  void stopMakesThePortRefuseConnectionsAndIsIdempotent() throws IOException {
    local = MemcachedServer.startLocal();
    InetSocketAddress address = local.address();
    assertThat(version(address)).startsWith("VERSION ");

    local.stop();
    assertThatThrownBy(() -> version(address)).isInstanceOf(ConnectException.class);
    local.stop();
    assertThatThrownBy(() -> version(address)).isInstanceOf(ConnectException.class);
  }

  @Test
  void everyStartLocalIsANewServer() throws IOException {
    local = MemcachedServer.startLocal();
    MemcachedServer other = MemcachedServer.startLocal();
    try {
      assertThat(other.address()).isNotEqualTo(local.address());
      assertThat(version(other.address())).startsWith("VERSION ");
      other.stop();
      assertThat(version(local.address())).startsWith("VERSION ");
    } finally {
      other.stop();
    }
  }

  @Test
  void aSuspendedServerAcceptsButDoesNotAnswerUntilResumed() throws IOException {
    local = MemcachedServer.startLocal();
    local.suspend();
    try (Socket socket = connect(local.address())) {
      socket.setSoTimeout(300);
      send(socket, "version\r\n");
      BufferedReader reader = reader(socket);
      assertThatThrownBy(reader::readLine).isInstanceOf(SocketTimeoutException.class);

      local.resume();
      socket.setSoTimeout(SOCKET_TIMEOUT_MILLIS);
      assertThat(reader.readLine()).startsWith("VERSION ");
    }
  }

  @Test
  void stopEndsASuspendedServer() {
    local = MemcachedServer.startLocal();
    InetSocketAddress address = local.address();
    local.suspend();
    local.stop();
    assertThatThrownBy(() -> version(address)).isInstanceOf(ConnectException.class);
    assertThatThrownBy(local::resume)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("only a running process started by startLocal()");
  }

  @Test
  void sharedIsOneServerThatStopDoesNotEnd() throws IOException {
    MemcachedServer shared = MemcachedServer.shared();
    assertThat(MemcachedServer.shared()).isSameAs(shared);
    assertThat(shared.description()).isNotBlank().isEqualTo(shared.toString());

    shared.stop();
    assertThat(version(shared.address())).startsWith("VERSION ");
    assertThatThrownBy(shared::suspend).isInstanceOf(IllegalStateException.class);
  }

  private static String version(InetSocketAddress address) throws IOException {
    try (Socket socket = connect(address)) {
      send(socket, "version\r\n");
      return reader(socket).readLine();
    }
  }

  private static Socket connect(InetSocketAddress address) throws IOException {
    Socket socket = new Socket();
    try {
      socket.connect(address, SOCKET_TIMEOUT_MILLIS);
      socket.setSoTimeout(SOCKET_TIMEOUT_MILLIS);
      return socket;
    } catch (IOException e) {
      socket.close();
      throw e;
    }
  }

  private static void send(Socket socket, String command) throws IOException {
    OutputStream out = socket.getOutputStream();
    out.write(command.getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  private static BufferedReader reader(Socket socket) throws IOException {
    return new BufferedReader(
        new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
  }
}
