package io.sustainablecache.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testing.FixedRandom;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A cluster smoke test for an adapter: a {@link SustainableCache} over three memcached processes
 * ({@link MemcachedCluster}) with the client configured as the adapter recommends for a cluster;
 * the node holding the most keys is killed ({@code SIGKILL}) and restarted, empty, on its port.
 * It checks what depends on the client (where its locator sends a dead node's keys, and that it
 * uses the node again), step by step and without load, so that every count is exact:
 * <ol>
 *   <li>{@value #KEY_COUNT} keys are read once (one load each) and again (none); each key's item
 *       is on the node the client's locator names, and on no other.</li>
 *   <li>The node is killed; where the cluster has a membership, the adapter's {@link
 *       #dropFromMembership} runs at once (ARCUS: the node's znode is deleted). Every key is read
 *       twice: no caller gets an exception or a wrong value; the other nodes' keys load nothing;
 *       the dead node's keys load twice each where the client leaves them on the dead node
 *       (every read fails and nothing can be written), once each where it moves them (the first
 *       read misses on the new node and writes there). A {@code getAll} of every key returns
 *       every value.</li>
 *   <li>The node is restarted ({@link #addToMembership}); once the client uses it again, every
 *       key is read twice: the dead node's keys load once each (the new process is empty), the
 *       others nothing; at the end every key is cached on its node.</li>
 * </ol>
 * The cache's TTL is long and its random source pins "no early refresh", so no refresh runs.
 * Under steady load, with refreshes, leases and recovery times, the experiment runs once for the
 * project, in the lab ({@code stampede-lab --cluster 3}, checked by the lab's {@code
 * ClusterScenarioIT}; figures in {@code docs/failures.md}). Takes a few seconds.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class ClusterContract {

  static final int NODES = 3;
  static final int KEY_COUNT = 30;
  /** Longer than the test: no entry expires and (with the pinned random source) none refreshes. */
  static final Duration TTL = Duration.ofMinutes(5);
  /** Generous: a live node that answers late on a loaded machine must not look dead. */
  static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(1);
  private static final Duration PATIENCE = Duration.ofSeconds(20);

  /** Where the client sends the keys of a node that died. */
  protected enum DeadNodeKeys {
    /**
     * To the dead node, until it returns ({@code FailureMode.Cancel} with a fixed server list):
     * each read fails at once and is a miss that loads, and nothing can be written.
     */
    STAY_ON_THE_DEAD_NODE,
    /**
     * To the surviving nodes once the cluster's membership drops the dead node (ARCUS: its znode
     * is deleted and the client rebuilds its hash ring).
     */
    MOVE_WHEN_DROPPED_FROM_MEMBERSHIP,
    /** To the next live node of the key's hash sequence, at once ({@code Redistribute}). */
    MOVE_AT_ONCE
  }

  /** A client of the cluster's nodes, configured as the adapter recommends for a cluster. */
  protected interface ClusterClient extends AutoCloseable {

    /** The store over the client. */
    CacheStore store();

    /** The node the client's locator maps a store key to now (its primary). */
    InetSocketAddress nodeOf(String storeKey);

    /** Whether the client has a working connection to the node now. */
    boolean connectedTo(InetSocketAddress node);

    /** Shuts the client down without waiting for dead servers. */
    @Override
    void close();
  }

  /** Creates the contract; subclasses are instantiated by JUnit. */
  protected ClusterContract() {}

  /**
   * Connects a new client to the nodes and waits until it is connected to all of them.
   *
   * @param nodes the cluster's nodes, in node order
   * @param operationTimeout the client's and the store's operation timeout
   */
  protected abstract ClusterClient connect(List<InetSocketAddress> nodes,
      Duration operationTimeout) throws Exception;

  /** Where this client sends a dead node's keys. */
  protected abstract DeadNodeKeys deadNodeKeys();

  /**
   * What the cluster's membership does once the dead node is noticed. ARCUS: delete the node's
   * znode from the cache list. Default: nothing.
   */
  protected void dropFromMembership(InetSocketAddress node) throws Exception {}

  /**
   * What the cluster's membership does when the node is back (its process restarted). ARCUS:
   * the server registers its znode again. Default: nothing.
   */
  protected void addToMembership(InetSocketAddress node) throws Exception {}

  @Test
  void aNodeKilledAndRestarted_noCallerFails_onlyItsKeysLoad_asTheClientRoutesThem()
      throws Exception {
    String namespace = "cluster-" + UUID.randomUUID().toString().substring(0, 8);
    List<String> keys = IntStream.range(0, KEY_COUNT)
        .mapToObj(i -> String.format(Locale.ROOT, "key-%02d", i)).toList();
    Map<String, AtomicInteger> loads = new ConcurrentHashMap<>();

    try (MemcachedCluster cluster = MemcachedCluster.start(NODES);
        ClusterClient client = connect(cluster.addresses(), OPERATION_TIMEOUT);
        SustainableCache<String> cache = SustainableCache.builder(client.store())
            .namespace(namespace).ttl(TTL).random(FixedRandom.neverEarly())
            .codec(ValueCodec.utf8()).build()) {
      Map<String, InetSocketAddress> home = new TreeMap<>();
      keys.forEach(key -> home.put(key, client.nodeOf(namespace + ":" + key)));
      assertThat(Set.copyOf(home.values())).as("the nodes the %d keys are on", KEY_COUNT)
          .hasSize(NODES);
      InetSocketAddress victim = mostKeys(home);
      int victimIndex = cluster.indexOf(victim);
      Set<String> deadKeys = keys.stream().filter(key -> home.get(key).equals(victim))
          .collect(Collectors.toUnmodifiableSet());

      assertThat(readEachTwice(cache, keys, loads)).as("loads of a cold read, then a warm one")
          .allSatisfy((key, n) -> assertThat(n).as(key).isEqualTo(1));
      for (String key : keys) {
        for (int node = 0; node < NODES; node++) {
          assertThat(cluster.holds(node, namespace + ":" + key))
              .as("node %d (%s) holds %s; the client's locator says %s", node,
                  cluster.address(node), key, home.get(key))
              .isEqualTo(cluster.address(node).equals(home.get(key)));
        }
      }

      cluster.kill(victimIndex);
      // An idle client notices a lost connection when it next uses it: a read of one of the dead
      // node's keys through the store (not the cache: it must not count as a load) does.
      String probe = namespace + ":" + deadKeys.iterator().next();
      await("the client to notice that " + victim + " is down").atMost(PATIENCE)
          .pollInterval(Duration.ofMillis(20)).until(() -> {
            client.store().gets(probe).exceptionally(e -> Optional.empty());
            return !client.connectedTo(victim);
          });
      if (deadNodeKeys() == DeadNodeKeys.MOVE_WHEN_DROPPED_FROM_MEMBERSHIP) {
        dropFromMembership(victim);
        await("the client to map the dead node's keys elsewhere").atMost(PATIENCE)
            .pollInterval(Duration.ofMillis(5)).until(() -> deadKeys.stream()
                .noneMatch(key -> client.nodeOf(namespace + ":" + key).equals(victim)));
      }
      for (String key : keys) {
        if (!deadKeys.contains(key)) {
          assertThat(client.nodeOf(namespace + ":" + key))
              .as("the node of %s, a surviving node's key", key).isEqualTo(home.get(key));
        }
      }
      int deadNodeLoads = deadNodeKeys() == DeadNodeKeys.STAY_ON_THE_DEAD_NODE ? 2 : 1;
      assertThat(readEachTwice(cache, keys, loads)).as("loads of two reads with the node dead")
          .allSatisfy((key, n) -> assertThat(n).as(key)
              .isEqualTo(deadKeys.contains(key) ? deadNodeLoads : 0));
      AtomicInteger bulkLoads = new AtomicInteger();
      Map<String, String> all = cache.getAll(keys, missing -> {
        bulkLoads.addAndGet(missing.size());
        Map<String, String> values = new HashMap<>();
        missing.forEach(key -> values.put(key, CountingLoader.valueOf(key)));
        return values;
      });
      assertThat(all).as("getAll with the node dead").hasSize(KEY_COUNT)
          .allSatisfy((key, value) -> assertThat(value).isEqualTo(CountingLoader.valueOf(key)));
      if (deadNodeKeys() != DeadNodeKeys.STAY_ON_THE_DEAD_NODE) {
        assertThat(bulkLoads).as("keys getAll loaded once the dead node's keys were moved")
            .hasValue(0);
      }

      cluster.restart(victimIndex);
      addToMembership(victim);
      await("the client to use " + victim + " again").atMost(PATIENCE)
          .pollInterval(Duration.ofMillis(5))
          .until(() -> client.connectedTo(victim) && deadKeys.stream()
              .allMatch(key -> client.nodeOf(namespace + ":" + key).equals(victim)));
      assertThat(readEachTwice(cache, keys, loads)).as("loads of two reads with the node back")
          .allSatisfy((key, n) -> assertThat(n).as(key)
              .isEqualTo(deadKeys.contains(key) ? 1 : 0));
      for (String key : keys) {
        assertThat(cluster.holds(cluster.indexOf(home.get(key)), namespace + ":" + key))
            .as("%s is cached on its node %s at the end", key, home.get(key)).isTrue();
      }
    }
  }

  /** Reads every key twice with {@code get}; returns the loads per key the reads caused. */
  private static Map<String, Integer> readEachTwice(SustainableCache<String> cache,
      List<String> keys, Map<String, AtomicInteger> loads) {
    Map<String, Integer> before = new HashMap<>();
    keys.forEach(key -> before.put(key, loads.computeIfAbsent(key, k -> new AtomicInteger())
        .get()));
    for (int round = 0; round < 2; round++) {
      for (String key : keys) {
        assertThat(cache.get(key, k -> {
          loads.get(k).incrementAndGet();
          return CountingLoader.valueOf(k);
        })).as("the value of %s", key).isEqualTo(CountingLoader.valueOf(key));
      }
    }
    Map<String, Integer> caused = new TreeMap<>();
    keys.forEach(key -> caused.put(key, loads.get(key).get() - before.get(key)));
    return caused;
  }

  private static InetSocketAddress mostKeys(Map<String, InetSocketAddress> home) {
    return home.values().stream()
        .collect(Collectors.groupingBy(node -> node, Collectors.counting()))
        .entrySet().stream()
        .max(Map.Entry.<InetSocketAddress, Long>comparingByValue()
            .thenComparing(entry -> entry.getKey().getPort()))
        .orElseThrow().getKey();
  }
}
