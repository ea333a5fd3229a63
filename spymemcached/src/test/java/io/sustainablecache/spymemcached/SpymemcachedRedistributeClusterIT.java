package io.sustainablecache.spymemcached;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.BulkLoader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.PartialReadException;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testkit.memcached.MemcachedCluster;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import net.spy.memcached.FailureMode;
import org.junit.jupiter.api.Test;

/**
 * {@link SpymemcachedClusterIT} with {@code FailureMode.Redistribute}: while a server is
 * disconnected, the client sends its keys to the next connected server of the key's ketama
 * sequence, where they miss once, are loaded and written, and are hits from then on; when the
 * server is back, they return to it (empty after a restart) and miss once more. {@code
 * docs/failures.md} explains why {@code Cancel} stays the recommendation.
 */
class SpymemcachedRedistributeClusterIT extends SpymemcachedClusterIT {

  @Override
  FailureMode failureMode() {
    return FailureMode.Redistribute;
  }

  @Override
  protected DeadNodeKeys deadNodeKeys() {
    return DeadNodeKeys.MOVE_AT_ONCE;
  }

  /**
   * Issue 31. spymemcached tries 7 points of a key's ketama sequence; a key none of whose points
   * is on a connected server stays "stranded" on the dead one. The contract's first test meets
   * such a key only when its random namespace and ports make one (about 2 % of the runs, by a
   * simulation of the client's locator over random ports; in those runs its {@code getAll}
   * loaded all 30 keys: the store's bulk read failed as a whole when it found a key with no
   * connected server). Here a stranded key is looked for on purpose, so the case is always
   * covered: a {@code getAll} with it loads it alone (and, once, the dead node's keys that
   * moved), and the store's bulk read fails for it only.
   */
  @Test
  void aGetAllWithAKeyStrandedOnTheDeadNode_loadsThatKeyOnly() throws Exception {
    String namespace = "stranded-" + UUID.randomUUID().toString().substring(0, 8);
    List<String> keys = IntStream.range(0, 30).mapToObj(i -> "key-" + i).toList();
    List<Set<String>> loads = new CopyOnWriteArrayList<>();
    BulkLoader<String> db = missing -> {
      loads.add(Set.copyOf(missing));
      Map<String, String> values = new HashMap<>();
      missing.forEach(key -> values.put(key, key + "!"));
      return values;
    };
    try (MemcachedCluster cluster = MemcachedCluster.start(3);
        ClusterClient client = connect(cluster.addresses(), Duration.ofSeconds(1));
        SustainableCache<String> cache = SustainableCache.builder(client.store())
            .namespace(namespace).ttl(Duration.ofMinutes(5)).random(FixedRandom.neverEarly())
            // The bulk read's per-key failure, not the store's breaker nor the outage reuse:
            // over a store that names no nodes (FailureMode.Redistribute) the breaker is one for
            // the whole store, and two operations in a row on the dead node's keys take it out,
            // so that every key of the next read loads (CI, 2026-11-29); and the reuse would let
            // the second read's failed key share the first read's load instead of loading
            .storeProbeInterval(Duration.ZERO).outageReuse(Duration.ZERO)
            .codec(ValueCodec.utf8()).build()) {
      assertThat(cache.getAll(keys, db)).hasSize(keys.size());
      // Its write-backs are issued, not awaited: one still unsent when the node dies is sent by
      // the client to the key's next node (Redistribute), where the key is then a hit, not the
      // miss this test counts (8 of the dead node's 13 keys once in CI, on a busy machine)
      List<String> written = keys.stream().map(key -> namespace + ":" + key).toList();
      await("the first getAll's write-backs").atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> client.store().getsAll(written).get(10, TimeUnit.SECONDS).keySet()
              .containsAll(written));
      InetSocketAddress victim = cluster.address(0);
      String probe = keys.stream()
          .filter(key -> client.nodeOf(namespace + ":" + key).equals(victim))
          .findFirst().orElseThrow();
      cluster.kill(0);
      await("the client to notice that " + victim + " is down").atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(20)).until(() -> {
            client.store().gets(namespace + ":" + probe).exceptionally(e -> Optional.empty());
            return !client.connectedTo(victim);
          });
      String stranded = IntStream.range(0, 1_000_000).mapToObj(i -> "stranded-" + i)
          .filter(key -> client.placeOf(namespace + ":" + key).equals(victim))
          .findFirst().orElseThrow();
      List<String> all = new ArrayList<>(keys);
      all.add(stranded);
      Set<String> onTheDeadNode = all.stream()
          .filter(key -> client.nodeOf(namespace + ":" + key).equals(victim))
          .collect(Collectors.toCollection(TreeSet::new));
      Set<String> sentToTheDeadNode = all.stream()
          .filter(key -> client.placeOf(namespace + ":" + key).equals(victim))
          .collect(Collectors.toCollection(TreeSet::new));
      assertThat(sentToTheDeadNode).contains(stranded);

      loads.clear();
      assertThat(cache.getAll(all, db)).as("getAll with the node dead").hasSize(all.size())
          .allSatisfy((key, value) -> assertThat(value).isEqualTo(key + "!"));
      assertThat(loads).as("one bulk load: the dead node's keys (those that moved miss once on"
          + " their new node)").containsExactly(onTheDeadNode);
      // The moved keys' write-backs are issued, not awaited by getAll: wait until they landed.
      List<String> moved = onTheDeadNode.stream().filter(key -> !sentToTheDeadNode.contains(key))
          .map(key -> namespace + ":" + key).toList();
      await("the moved keys' write-backs").atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> client.store().getsAll(moved).get(10, TimeUnit.SECONDS).keySet()
              .containsAll(moved));
      loads.clear();
      assertThat(cache.getAll(all, db)).hasSize(all.size());
      assertThat(loads).as("one bulk load: the keys still sent to the dead node")
          .containsExactly(sentToTheDeadNode);

      List<String> storeKeys = all.stream().map(key -> namespace + ":" + key).toList();
      Throwable failure;
      try {
        client.store().getsAll(storeKeys).get(10, TimeUnit.SECONDS);
        failure = null;
      } catch (java.util.concurrent.ExecutionException | CompletionException e) {
        failure = e.getCause();
      }
      Set<String> failedStoreKeys = sentToTheDeadNode.stream().map(key -> namespace + ":" + key)
          .collect(Collectors.toSet());
      assertThat(failure).as("the store's bulk read with the node dead")
          .isInstanceOfSatisfying(PartialReadException.class, partial -> {
            assertThat(partial.failedKeys()).isEqualTo(failedStoreKeys);
            assertThat(partial.found().keySet()).as("the items read")
                .containsAll(storeKeys.stream().filter(key -> !failedStoreKeys.contains(key))
                    .toList());
          });
    }
  }
}
