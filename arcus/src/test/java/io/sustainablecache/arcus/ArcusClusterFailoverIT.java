package io.sustainablecache.arcus;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.ClusterContract;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.ConcurrentModificationException;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicInteger;
import net.spy.memcached.ArcusClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The cluster contract over {@link ArcusStore} and an {@link ArcusClient} that finds its three
 * cache nodes the ARCUS way, through the cache list of an {@linkplain EmbeddedZooKeeper embedded
 * ZooKeeper} ({@code /arcus/cache_list/<service>/<ip:port>-<hostname>}), configured as {@link
 * Clients#recommendedSettings()} ({@code FailureMode.Cancel}, ARCUS ketama hashing).
 *
 * <p>When the node's process is killed, its znode is deleted (as ZooKeeper does when the dead
 * server's session expires; the lab's cluster scenario measures what that delay costs), and the
 * client rebuilds its hash ring without the node (the dead node's keys move to the survivors,
 * the others stay). When the process is back, empty, on its port, the
 * znode is created again, as a restarted ARCUS server registers itself, and the keys move back.
 * (The znodes here are persistent, created by the test: the servers are plain memcached.)
 */
class ArcusClusterFailoverIT extends ClusterContract {

  private static final AtomicInteger SERVICES = new AtomicInteger();

  private static EmbeddedZooKeeper zooKeeper;

  private String service;

  @BeforeAll
  static void startZooKeeper() throws Exception {
    zooKeeper = EmbeddedZooKeeper.start();
  }

  @AfterAll
  static void stopZooKeeper() {
    if (zooKeeper != null) {
      zooKeeper.close();
    }
  }

  @Override
  protected ClusterClient connect(List<InetSocketAddress> nodes, Duration operationTimeout)
      throws Exception {
    service = "cluster-failover-" + SERVICES.incrementAndGet();
    for (InetSocketAddress node : nodes) {
      zooKeeper.createPersistent(cacheList() + "/" + nodeName(node));
    }
    zooKeeper.createPersistent("/arcus/client_list/" + service);
    ArcusClient client = ArcusClient.createArcusClient(zooKeeper.connectString(), service,
        Clients.recommendedSettings().setOpTimeout(operationTimeout.toMillis()));
    try {
      for (InetSocketAddress node : nodes) {
        Clients.awaitConnected(client, node);
      }
    } catch (RuntimeException | Error e) {
      client.shutdown();
      throw e;
    }
    ArcusStore store = ArcusStore.builder(client).operationTimeout(operationTimeout).build();
    return new ClusterClient() {
      @Override
      public CacheStore store() {
        return store;
      }

      @Override
      public InetSocketAddress nodeOf(String storeKey) {
        return primary(client, storeKey);
      }

      @Override
      public boolean connectedTo(InetSocketAddress node) {
        return client.getAvailableServers().contains(node);
      }

      @Override
      public void close() {
        client.shutdown();
      }
    };
  }

  @Override
  protected DeadNodeKeys deadNodeKeys() {
    return DeadNodeKeys.MOVE_WHEN_DROPPED_FROM_MEMBERSHIP;
  }

  @Override
  protected void dropFromMembership(InetSocketAddress node) throws Exception {
    zooKeeper.delete(cacheList() + "/" + nodeName(node));
  }

  @Override
  protected void addToMembership(InetSocketAddress node) throws Exception {
    zooKeeper.createPersistent(cacheList() + "/" + nodeName(node));
  }

  /**
   * The node the client's locator maps a key to. {@code getNodeLocator()} copies the locator, and
   * in ARCUS client 1.13.2 the copy races with a cache-list change: it copies the hash ring
   * outside the lock that the update holds, so a copy taken while a node leaves can hold hash
   * points with no node, and {@code getPrimary} throws {@link NoSuchElementException}, or the
   * copy itself fails with {@link ConcurrentModificationException} (the ring's {@code TreeMap}
   * changed under it: seen once in CI); fixed in 1.14.0, naver/arcus-java-client ddf7a33f. The
   * client's own routing uses the live locator under its lock and is not affected. Retried here.
   */
  static InetSocketAddress primary(ArcusClient client, String storeKey) {
    for (int attempt = 1; ; attempt++) {
      try {
        return (InetSocketAddress) client.getNodeLocator().getPrimary(storeKey)
            .getSocketAddress();
      } catch (NoSuchElementException | ConcurrentModificationException raceWithAnUpdate) {
        if (attempt == 100) {
          throw raceWithAnUpdate;
        }
        Thread.onSpinWait();
      }
    }
  }

  private String cacheList() {
    return "/arcus/cache_list/" + service;
  }

  /** A cache_list child: {@code <ip>:<port>-<hostname>}. */
  private static String nodeName(InetSocketAddress address) {
    return address.getAddress().getHostAddress() + ":" + address.getPort() + "-test-host";
  }
}
