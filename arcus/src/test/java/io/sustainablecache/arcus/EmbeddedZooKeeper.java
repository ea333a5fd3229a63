package io.sustainablecache.arcus;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooDefs.Ids;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;

/**
 * A standalone ZooKeeper server inside the test JVM, on a free loopback port with its data in a
 * temporary directory, plus an administrative client session to shape the ARCUS znode tree.
 *
 * <p>It uses the server classes of the {@code org.apache.zookeeper:zookeeper} 3.4 jar that the
 * ARCUS client already depends on. Not thread-safe; one instance per test class, closed in
 * {@code @AfterAll}.
 */
final class EmbeddedZooKeeper implements AutoCloseable {

  private static final int TICK_MILLIS = 500;
  private static final int SESSION_TIMEOUT_MILLIS = 10_000;
  private static final long CONNECT_TIMEOUT_SECONDS = 10;

  private final Path dataDirectory;
  private final ZooKeeperServer server;
  private final ServerCnxnFactory connections;
  private final ZooKeeper admin;

  private EmbeddedZooKeeper(Path dataDirectory, ZooKeeperServer server,
      ServerCnxnFactory connections, ZooKeeper admin) {
    this.dataDirectory = dataDirectory;
    this.server = server;
    this.connections = connections;
    this.admin = admin;
  }

  /**
   * Starts a server and connects the administrative session.
   *
   * @return a running server
   * @throws IOException if the server cannot start or the session cannot connect
   */
  static EmbeddedZooKeeper start() throws IOException, InterruptedException {
    Path dataDirectory = Files.createTempDirectory("sustainable-cache-zookeeper");
    ZooKeeperServer server =
        new ZooKeeperServer(dataDirectory.toFile(), dataDirectory.toFile(), TICK_MILLIS);
    ServerCnxnFactory connections = ServerCnxnFactory.createFactory(
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    connections.startup(server);
    String connectString = connectString(connections);
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper admin = new ZooKeeper(connectString, SESSION_TIMEOUT_MILLIS, event -> {
      if (event.getState() == KeeperState.SyncConnected) {
        connected.countDown();
      }
    });
    if (!connected.await(CONNECT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      admin.close();
      connections.shutdown();
      throw new IOException("no ZooKeeper session at " + connectString + " within "
          + CONNECT_TIMEOUT_SECONDS + " s");
    }
    return new EmbeddedZooKeeper(dataDirectory, server, connections, admin);
  }

  /** The {@code host:port} to hand to {@code ArcusClient.createArcusClient}. */
  String connectString() {
    return connectString(connections);
  }

  /** Creates a persistent znode and any missing parent, like {@code mkdir -p}. */
  void createPersistent(String path) throws KeeperException, InterruptedException {
    StringBuilder prefix = new StringBuilder();
    for (String part : path.substring(1).split("/")) {
      prefix.append('/').append(part);
      try {
        admin.create(prefix.toString(), new byte[0], Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
      } catch (KeeperException.NodeExistsException alreadyThere) {
        // created by an earlier call: keep it
      }
    }
  }

  /** Deletes a znode without children. */
  void delete(String path) throws KeeperException, InterruptedException {
    admin.delete(path, -1);
  }

  /** The names of a znode's children, or an empty list if the znode does not exist. */
  List<String> children(String path) throws KeeperException, InterruptedException {
    try {
      return admin.getChildren(path, false);
    } catch (KeeperException.NoNodeException absent) {
      return List.of();
    }
  }

  /** Closes the administrative session, stops the server and deletes its data. */
  @Override
  public void close() {
    try {
      admin.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      connections.shutdown();
      if (server.isRunning()) {
        server.shutdown();
      }
      deleteRecursively(dataDirectory);
    }
  }

  private static String connectString(ServerCnxnFactory connections) {
    return InetAddress.getLoopbackAddress().getHostAddress() + ":" + connections.getLocalPort();
  }

  private static void deleteRecursively(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + root, e);
    }
  }
}
