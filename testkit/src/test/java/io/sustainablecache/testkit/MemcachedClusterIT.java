package io.sustainablecache.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.testkit.memcached.MemcachedCluster;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MemcachedClusterIT {

  @Test
  void nodesAreSeparateServersOnTheirOwnPorts() throws IOException {
    try (MemcachedCluster cluster = MemcachedCluster.start(3)) {
      assertThat(cluster.size()).isEqualTo(3);
      assertThat(Set.copyOf(cluster.addresses())).hasSize(3);
      assertThat(cluster.indexOf(cluster.address(2))).isEqualTo(2);
      assertThat(cluster.indexOf(new InetSocketAddress("127.0.0.1", 1))).isEqualTo(-1);

      set(cluster.address(1), "k\u007Flease", "v");

      assertThat(cluster.holds(1, "k\u007Flease")).isTrue();
      assertThat(cluster.holds(0, "k\u007Flease")).isFalse();
      assertThat(cluster.holds(2, "k\u007Flease")).isFalse();
      assertThat(cluster.itemCount(1)).isEqualTo(1);
      assertThat(cluster.itemCount(0)).isZero();
    }
  }

  @Test
  void aKilledNodeRefusesConnectionsAndComesBackEmptyOnItsPort() throws IOException {
    try (MemcachedCluster cluster = MemcachedCluster.start(2)) {
      InetSocketAddress address = cluster.address(0);
      set(address, "key", "value");
      assertThat(cluster.holds(0, "key")).isTrue();

      cluster.kill(0);
      cluster.kill(0);

      assertThat(cluster.isRunning(0)).isFalse();
      assertThat(cluster.isRunning(1)).isTrue();
      assertThatThrownBy(() -> cluster.holds(0, "key")).isInstanceOf(UncheckedIOException.class);

      cluster.restart(0);

      assertThat(cluster.isRunning(0)).isTrue();
      assertThat(cluster.address(0)).isEqualTo(address);
      assertThat(cluster.holds(0, "key")).isFalse();
      assertThatThrownBy(() -> cluster.restart(1)).isInstanceOf(IllegalStateException.class);
    }
  }

  @Test
  void aPausedNodeAnswersNothingAndKeepsItsItemsWhenResumed() throws IOException {
    try (MemcachedCluster cluster = MemcachedCluster.start(1)) {
      set(cluster.address(0), "key", "value");

      cluster.pause(0);

      assertThat(cluster.isRunning(0)).isTrue();
      assertThatThrownBy(() -> cluster.holds(0, "key")).isInstanceOf(UncheckedIOException.class);

      cluster.resume(0);

      assertThat(cluster.holds(0, "key")).isTrue();
      cluster.kill(0);
      assertThatThrownBy(() -> cluster.pause(0)).isInstanceOf(IllegalStateException.class);
    }
  }

  @Test
  void closeKillsEveryNode() {
    MemcachedCluster cluster = MemcachedCluster.start(2);
    cluster.close();
    cluster.close();

    assertThat(cluster.isRunning(0)).isFalse();
    assertThat(cluster.isRunning(1)).isFalse();
    assertThatThrownBy(() -> cluster.restart(0)).isInstanceOf(IllegalStateException.class);
  }

  private static void set(InetSocketAddress address, String key, String value)
      throws IOException {
    try (Socket socket = new Socket()) {
      socket.connect(address, 2_000);
      socket.setSoTimeout(2_000);
      OutputStream out = socket.getOutputStream();
      out.write(("set " + key + " 0 0 " + value.length() + "\r\n" + value + "\r\n")
          .getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      InputStream in = socket.getInputStream();
      byte[] answer = in.readNBytes("STORED\r\n".length());
      assertThat(new String(answer, StandardCharsets.ISO_8859_1)).isEqualTo("STORED\r\n");
    }
  }
}
