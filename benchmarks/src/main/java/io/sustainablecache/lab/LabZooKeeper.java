package io.sustainablecache.lab;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
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
 * A standalone ZooKeeper server inside the lab's JVM (the server classes of the ZooKeeper jar the
 * ARCUS client brings), on a free loopback port, with an administrative session that maintains
 * an ARCUS cache list: {@code /arcus/cache_list/<service>/<ip:port>-<hostname>} per cache node
 * and {@code /arcus/client_list/<service>}, where ARCUS clients register. The same layout as the
 * adapter's tests ({@code EmbeddedZooKeeper}); the znodes are persistent, since the cache nodes
 * are plain memcached processes that do not register themselves.
 */
final class LabZooKeeper implements AutoCloseable {

  private static final int TICK_MILLIS = 500;
  private static final int SESSION_TIMEOUT_MILLIS = 10_000;

  private final Path dataDirectory;
  private final ZooKeeperServer server;
  private final ServerCnxnFactory connections;
  private final ZooKeeper admin;
  private final String service;

  private LabZooKeeper(Path dataDirectory, ZooKeeperServer server, ServerCnxnFactory connections,
      ZooKeeper admin, String service) {
    this.dataDirectory = dataDirectory;
    this.server = server;
    this.connections = connections;
    this.admin = admin;
    this.service = service;
  }

  /** Starts the server and creates the service's cache list (empty) and client list. */
  static LabZooKeeper start(String service) {
    try {
      Path dataDirectory = Files.createTempDirectory("stampede-lab-zookeeper");
      ZooKeeperServer server =
          new ZooKeeperServer(dataDirectory.toFile(), dataDirectory.toFile(), TICK_MILLIS);
      ServerCnxnFactory connections = ServerCnxnFactory.createFactory(
          new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
      connections.startup(server);
      CountDownLatch connected = new CountDownLatch(1);
      ZooKeeper admin = new ZooKeeper(connectString(connections), SESSION_TIMEOUT_MILLIS,
          event -> {
            if (event.getState() == KeeperState.SyncConnected) {
              connected.countDown();
            }
          });
      if (!connected.await(10, TimeUnit.SECONDS)) {
        admin.close();
        connections.shutdown();
        throw new IllegalStateException("the lab's ZooKeeper did not accept a session in 10 s");
      }
      LabZooKeeper zooKeeper =
          new LabZooKeeper(dataDirectory, server, connections, admin, service);
      zooKeeper.create("/arcus/client_list/" + service);
      zooKeeper.create("/arcus/cache_list/" + service);
      return zooKeeper;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the lab's ZooKeeper", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting ZooKeeper", e);
    }
  }

  /** The {@code host:port} for {@code ArcusClient.createArcusClient}. */
  String connectString() {
    return connectString(connections);
  }

  /** Registers a cache node, as an ARCUS server does when it starts. */
  void addNode(InetSocketAddress node) {
    create(nodePath(node));
  }

  /** Removes a cache node, as ZooKeeper does when a dead ARCUS server's session expires. */
  void removeNode(InetSocketAddress node) {
    try {
      admin.delete(nodePath(node), -1);
    } catch (KeeperException e) {
      throw new IllegalStateException("cannot delete " + nodePath(node) + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

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
      try (Stream<Path> paths = Files.walk(dataDirectory)) {
        for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(path);
        }
      } catch (IOException e) {
        // a temporary directory: left for the system to clean
      }
    }
  }

  private String nodePath(InetSocketAddress node) {
    return "/arcus/cache_list/" + service + "/" + node.getAddress().getHostAddress() + ":"
        + node.getPort() + "-stampede-lab";
  }

  /** Creates a persistent znode and any missing parent. */
  private void create(String path) {
    StringBuilder prefix = new StringBuilder();
    try {
      for (String part : path.substring(1).split("/")) {
        prefix.append('/').append(part);
        try {
          admin.create(prefix.toString(), new byte[0], Ids.OPEN_ACL_UNSAFE,
              CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException alreadyThere) {
          // keep it
        }
      }
    } catch (KeeperException e) {
      throw new IllegalStateException("cannot create " + path + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private static String connectString(ServerCnxnFactory connections) {
    return InetAddress.getLoopbackAddress().getHostAddress() + ":" + connections.getLocalPort();
  }
}
