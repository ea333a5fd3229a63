package io.sustainablecache.spymemcached;

import static org.awaitility.Awaitility.await;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.ClusterContract;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import net.spy.memcached.ConnectionObserver;
import net.spy.memcached.FailureMode;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.NodeLocator;

/**
 * The cluster contract over {@link SpymemcachedStore} and a {@link MemcachedClient} of three
 * servers configured as the adapter recommends: text protocol, {@code Locator.CONSISTENT} with
 * {@code KETAMA_HASH}, {@code FailureMode.Cancel}, a one-second maximum reconnect delay, the
 * operation timeout as the client's, no blocking on a full queue, a daemon I/O thread.
 *
 * <p>spymemcached has a fixed server list: with {@code Cancel}, a dead server's keys stay on it,
 * every read of them fails at once and is a miss that loads (and cannot be written), until the
 * server is back. {@link SpymemcachedRedistributeClusterIT} runs the same test with {@code
 * FailureMode.Redistribute}.
 */
class SpymemcachedClusterIT extends ClusterContract {

  /** The client's failure mode. */
  FailureMode failureMode() {
    return FailureMode.Cancel;
  }

  @Override
  protected DeadNodeKeys deadNodeKeys() {
    return DeadNodeKeys.STAY_ON_THE_DEAD_NODE;
  }

  @Override
  protected ClusterClient connect(List<InetSocketAddress> nodes, Duration operationTimeout)
      throws Exception {
    MemcachedClient client = new MemcachedClient(SpymemcachedStore.recommendedSettings()
        .setFailureMode(failureMode())
        .setOpTimeout(operationTimeout.toMillis())
        .setDaemon(true)
        .build(), nodes);
    try {
      await("the client to connect to " + nodes).atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(10))
          .until(() -> client.getAvailableServers().containsAll(nodes));
    } catch (RuntimeException | Error e) {
      client.shutdown();
      throw e;
    }
    SpymemcachedStore store =
        SpymemcachedStore.builder(client).operationTimeout(operationTimeout).build();
    long connected = System.nanoTime();
    List<String> events = new CopyOnWriteArrayList<>();
    client.addObserver(new ConnectionObserver() {
      @Override
      public void connectionEstablished(SocketAddress node, int reconnectCount) {
        events.add(since(connected) + " ms: connected to " + node);
      }

      @Override
      public void connectionLost(SocketAddress node) {
        events.add(since(connected) + " ms: lost " + node);
      }
    });
    return new ClusterClient() {
      @Override
      public List<String> connectionEvents() {
        return List.copyOf(events);
      }

      @Override
      public CacheStore store() {
        return store;
      }

      @Override
      public InetSocketAddress nodeOf(String storeKey) {
        return (InetSocketAddress) client.getNodeLocator().getPrimary(storeKey)
            .getSocketAddress();
      }

      /**
       * Where spymemcached's connection puts an operation on the key now
       * ({@code MemcachedConnection.addOperation}): the primary if it is connected or the mode
       * is not {@code Redistribute}; else the first connected node of the key's ketama sequence,
       * which tries a bounded number of points: if none of them is on a connected node, the
       * client warns "Could not redistribute to another node, retrying primary node" and the
       * operation goes to the dead primary after all.
       */
      @Override
      public InetSocketAddress placeOf(String storeKey) {
        NodeLocator locator = client.getNodeLocator();
        MemcachedNode primary = locator.getPrimary(storeKey);
        if (!primary.isActive() && failureMode() == FailureMode.Redistribute) {
          Iterator<MemcachedNode> sequence = locator.getSequence(storeKey);
          while (sequence.hasNext()) {
            MemcachedNode next = sequence.next();
            if (next.isActive()) {
              return (InetSocketAddress) next.getSocketAddress();
            }
          }
        }
        return (InetSocketAddress) primary.getSocketAddress();
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

  private static long since(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
  }
}
