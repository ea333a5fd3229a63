package io.sustainablecache.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.CacheStats;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testing.ForwardingStore;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A {@link SustainableCache} over a cluster of three memcached processes ({@link
 * MemcachedCluster}), one of which is killed under steady load and later comes back.
 *
 * <h2>The scenario</h2>
 * A cache with the default configuration (the sustainable policy, fleet lease on), TTL {@value
 * #TTL_SECONDS} s, over {@value #KEY_COUNT} keys spread by the client's consistent hashing; a
 * loader that takes {@value #LOAD_MILLIS} ms and records every call ({@link LoadLog}); steady load
 * of {@value #THREADS} threads × {@value #REQUESTS_PER_SECOND_PER_THREAD} requests per second on
 * random keys (about five requests per key per second). The timeline:
 * <ol>
 *   <li>warm-up ({@link #WARM_UP}); then the placement is checked: every key's item is on the
 *       node the client's locator names, and on no other node ({@link
 *       MemcachedCluster#holds});</li>
 *   <li>baseline ({@link #BASELINE}): loads per key per TTL period with every node up;</li>
 *   <li>the node holding the most keys is killed ({@code SIGKILL}); {@link #membershipDelay()}
 *       later the adapter's {@link #dropFromMembership} runs (ARCUS: the node's znode is deleted
 *       from the cache list, as ZooKeeper does when the dead server's session expires);</li>
 *   <li>{@link #DEAD_FOR} after the kill the node is restarted, empty, on its port ({@link
 *       #addToMembership}: ARCUS re-creates the znode), and the test waits until the client uses
 *       it again;</li>
 *   <li>{@link #AFTER_RETURN} of load with every node up again.</li>
 * </ol>
 * A second cache on the same client, without load, probes {@code getAll} over {@value
 * #KEY_COUNT} other keys before the kill, right after it, and after the dead node's keys moved.
 *
 * <h2>What is asserted</h2>
 * <ul>
 *   <li>No caller ever gets an exception or another value than the loader's, in any phase; loads
 *       of one key never overlap (one load per key at a time in this JVM).</li>
 *   <li>Keys on the surviving nodes keep being hits: not one miss from the baseline to the end,
 *       and at most {@value #MAX_LOADS_PER_KEY_PER_PERIOD} loads per key in any TTL-long window
 *       (their normal refresh). This includes the keys whose <em>lease</em> key lands on the dead
 *       node: their refreshes fail open (the lease's {@code add} fails, they load anyway) and
 *       keep going (at least two loads each while the node is dead).</li>
 *   <li>The dead node's keys, where the client moves them ({@link DeadNodeKeys}): from {@link
 *       #SETTLE} after the move, at most {@value #MAX_LOADS_PER_KEY_PER_PERIOD} loads per key
 *       in any TTL-long window (one reload as they land on another node, then the normal
 *       refresh); and the recovery, the time from the kill until the dead node's keys are loaded
 *       about once per key per period ({@value #ABOUT_ONE} or less in every TTL-long window from
 *       then on), is at most {@link #membershipDelay()} + {@link #RECOVERY_SLACK}. Where the client
 *       leaves them on the dead node, every read of them fails at once and loads; that load is
 *       measured and reported, and only bounded by the requests (and one load per key at a
 *       time).</li>
 *   <li>When the node returns, no stampede: from {@link #SETTLE} after the client uses it again,
 *       at most {@value #MAX_LOADS_PER_KEY_PER_PERIOD} loads per key in any TTL-long window,
 *       and loads per key per period back to about one within {@link #RECOVERY_SLACK}.</li>
 *   <li>No key is stuck: in the last {@link #FINAL_WINDOW} every key was refreshed at least once
 *       and none missed; at the end every key is cached on the node the client maps it to.</li>
 *   <li>{@code getAll} returns every key's value while the node is dead.</li>
 * </ul>
 * The test prints one Markdown table row prefixed with {@value #RESULT_PREFIX}, the loads per
 * second around the kill prefixed with {@value #SERIES_PREFIX}, and the cache's counters per
 * phase prefixed with {@value #STATS_PREFIX}; {@code docs/failures.md} collects them. It takes
 * about 25 seconds.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
public abstract class ClusterContract {

  /** The prefix of the result line on standard output. */
  public static final String RESULT_PREFIX = "CLUSTER |";
  /** The prefix of the per-second lines. */
  public static final String SERIES_PREFIX = "CLUSTER-SERIES |";
  /** The prefix of the counter lines. */
  public static final String STATS_PREFIX = "CLUSTER-STATS |";

  static final int NODES = 3;
  static final int KEY_COUNT = 60;
  static final int TTL_SECONDS = 2;
  static final Duration TTL = Duration.ofSeconds(TTL_SECONDS);
  static final int LOAD_MILLIS = 5;
  /**
   * The TTL of the {@code getAll} probe's cache: longer than the test, so that each probe loads
   * only what the failure made unreadable.
   */
  static final Duration BULK_TTL = Duration.ofSeconds(60);
  static final int THREADS = 6;
  static final int REQUESTS_PER_SECOND_PER_THREAD = 50;
  /** Generous: a live node that answers late on a loaded machine must not look dead. */
  static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(1);

  static final Duration WARM_UP = Duration.ofSeconds(3);
  static final Duration BASELINE = Duration.ofSeconds(4);
  static final Duration DEAD_FOR = Duration.ofSeconds(9);
  static final Duration AFTER_RETURN = Duration.ofSeconds(6);
  /** The end of the run in which every key must have been refreshed and none missed. */
  static final Duration FINAL_WINDOW = Duration.ofMillis(3_500);
  /**
   * After the client moved keys (or got the node back), reads that were decided before may still
   * be loading: they are left out of the per-key bound.
   */
  static final Duration SETTLE = Duration.ofMillis(250);
  /** At most this many loads of one key in any TTL-long window, outside the kill's moment. */
  static final int MAX_LOADS_PER_KEY_PER_PERIOD = 2;
  /** "About one load per key per period": SUS loads 1 to 1.11 times per period. */
  static final double ABOUT_ONE = 1.5;
  /** The recovery bound beyond the membership delay: two TTL periods, plus slack. */
  static final Duration RECOVERY_SLACK = Duration.ofSeconds(4);

  private static final Duration PATIENCE = Duration.ofSeconds(20);
  private static final long STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
  private static final long TTL_NANOS = TTL.toNanos();
  private static final char LEASE_MARK = '\u007F';

  /** Where the client sends the keys of a node that died. */
  protected enum DeadNodeKeys {
    /**
     * To the dead node, until it returns ({@code FailureMode.Cancel} with a fixed server list):
     * each read fails at once and is a miss that loads, and nothing can be written.
     */
    STAY_ON_THE_DEAD_NODE,
    /**
     * To the surviving nodes once the cluster's membership drops the dead node (ARCUS: its znode
     * is deleted and the client rebuilds its hash ring); until then as {@link
     * #STAY_ON_THE_DEAD_NODE}.
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
   * What the cluster's membership does once the dead node is noticed ({@link #membershipDelay()}
   * after the kill). ARCUS: delete the node's znode from the cache list. Default: nothing.
   */
  protected void dropFromMembership(InetSocketAddress node) throws Exception {}

  /**
   * What the cluster's membership does when the node is back (its process restarted). ARCUS:
   * the server registers its znode again. Default: nothing.
   */
  protected void addToMembership(InetSocketAddress node) throws Exception {}

  /**
   * How long after the kill the membership drops the node (ARCUS: the dead server's ZooKeeper
   * session timeout). Default: zero (no membership).
   */
  protected Duration membershipDelay() {
    return Duration.ZERO;
  }

  /** The name in the result lines: the class name without {@code ClusterIT}, lower case. */
  protected String adapterName() {
    return getClass().getSimpleName().replace("ClusterFailoverIT", "").replace("ClusterIT", "")
        .toLowerCase(Locale.ROOT);
  }

  @Test
  void aNodeKilledUnderSteadyLoad_onlyItsKeysReload_noCallerFails_loadsReturnToOncePerPeriod()
      throws Exception {
    String namespace = "cluster-" + UUID.randomUUID().toString().substring(0, 8);
    List<String> keys = IntStream.range(0, KEY_COUNT)
        .mapToObj(i -> String.format(Locale.ROOT, "key-%02d", i)).toList();
    List<String> bulkKeys = IntStream.range(0, KEY_COUNT)
        .mapToObj(i -> String.format(Locale.ROOT, "bulk-%02d", i)).toList();
    LoadLog loads = new LoadLog(Duration.ofMillis(LOAD_MILLIS),
        "sustainable-cache-refresh-" + namespace + "-");
    AtomicInteger bulkLoads = new AtomicInteger();
    Timeline at = new Timeline();
    Map<String, CacheStats> stats = new LinkedHashMap<>();
    Map<String, SteadyLoad.Phase> phases = new LinkedHashMap<>();
    Map<String, Integer> probes = new LinkedHashMap<>();
    Map<String, long[]> leases = new LinkedHashMap<>();
    long copiesLeft;

    try (MemcachedCluster cluster = MemcachedCluster.start(NODES);
        ClusterClient client = connect(cluster.addresses(), OPERATION_TIMEOUT)) {
      Map<String, InetSocketAddress> home = homes(client, namespace, keys, "");
      Map<String, InetSocketAddress> leaseHome =
          homes(client, namespace, keys, LEASE_MARK + "lease");
      Map<String, InetSocketAddress> bulkHome = homes(client, namespace + "-bulk", bulkKeys, "");
      assertThat(Set.copyOf(home.values())).as("the nodes the %d keys are on", KEY_COUNT)
          .hasSize(NODES);
      InetSocketAddress victim = mostKeys(home);
      int victimIndex = cluster.indexOf(victim);
      Set<String> deadKeys = keysOn(home, victim::equals);
      Set<String> survivorKeys = keysOn(home, node -> !node.equals(victim));
      Set<String> leaseOnlyKeys = survivorKeys.stream()
          .filter(key -> leaseHome.get(key).equals(victim)).collect(Collectors.toSet());

      LeaseCounter store = new LeaseCounter(client.store());
      try (SustainableCache<String> cache = cache(store, namespace, TTL);
          SustainableCache<String> bulk = cache(store, namespace + "-bulk", BULK_TTL);
          SteadyLoad load = SteadyLoad.start(cache, keys, loads, THREADS,
              REQUESTS_PER_SECOND_PER_THREAD, "cluster-load")) {
        at.start = System.nanoTime();
        probes.put("getAll cold", probe(bulk, bulkKeys, bulkLoads));
        letTimePass(WARM_UP);
        for (String key : keys) {
          String storeKey = namespace + ":" + key;
          for (int node = 0; node < NODES; node++) {
            assertThat(cluster.holds(node, storeKey))
                .as("node %d (%s) holds %s; the client's locator says %s", node,
                    cluster.address(node), key, home.get(key))
                .isEqualTo(cluster.address(node).equals(home.get(key)));
          }
        }
        phases.put("warm-up", load.nextPhase());
        stats.put("warm-up", cache.stats());
        leases.put("warm-up", store.snapshot());
        probes.put("getAll warm", probe(bulk, bulkKeys, bulkLoads));

        at.baseline = System.nanoTime();
        letTimePass(BASELINE);
        phases.put("baseline", load.nextPhase());
        stats.put("baseline", cache.stats());
        leases.put("baseline", store.snapshot());

        cluster.kill(victimIndex);
        at.kill = System.nanoTime();
        await("the client to notice that " + victim + " is down").atMost(PATIENCE)
            .pollInterval(Duration.ofMillis(5))
            .until(() -> !client.connectedTo(victim));
        at.noticed = System.nanoTime();
        probes.put("getAll, node dead", probe(bulk, bulkKeys, bulkLoads));
        switch (deadNodeKeys()) {
          case MOVE_AT_ONCE -> at.moved = at.noticed;
          case MOVE_WHEN_DROPPED_FROM_MEMBERSHIP -> {
            sleepUntil(at.kill + membershipDelay().toNanos());
            dropFromMembership(victim);
            at.dropped = System.nanoTime();
            await("the client to map the dead node's keys elsewhere").atMost(PATIENCE)
                .pollInterval(Duration.ofMillis(5))
                .until(() -> deadKeys.stream().noneMatch(
                    key -> client.nodeOf(namespace + ":" + key).equals(victim)));
            at.moved = System.nanoTime();
            for (String key : survivorKeys) {
              assertThat(client.nodeOf(namespace + ":" + key))
                  .as("the node of %s, a survivor's key, after the node was dropped", key)
                  .isEqualTo(home.get(key));
            }
            probes.put("getAll, keys moved", probe(bulk, bulkKeys, bulkLoads));
          }
          case STAY_ON_THE_DEAD_NODE -> {
            // nothing moves
          }
          default -> throw new AssertionError(deadNodeKeys());
        }
        sleepUntil(at.kill + DEAD_FOR.minusSeconds(1).toNanos());
        probes.put("getAll, node dead 8 s", probe(bulk, bulkKeys, bulkLoads));
        sleepUntil(at.kill + DEAD_FOR.toNanos());
        phases.put("node dead", load.nextPhase());
        stats.put("node dead", cache.stats());
        leases.put("node dead", store.snapshot());

        at.restart = System.nanoTime();
        cluster.restart(victimIndex);
        addToMembership(victim);
        await("the client to use " + victim + " again").atMost(PATIENCE)
            .pollInterval(Duration.ofMillis(5))
            .until(() -> client.connectedTo(victim) && deadKeys.stream().allMatch(
                key -> client.nodeOf(namespace + ":" + key).equals(victim)));
        at.returned = System.nanoTime();
        copiesLeft = deadKeys.stream().filter(key -> survivorsHold(cluster, victimIndex,
            namespace + ":" + key)).count();
        sleepUntil(at.returned + AFTER_RETURN.toNanos());
        phases.put("node back", load.stop());
        at.end = System.nanoTime();
        stats.put("node back", cache.stats());
        leases.put("node back", store.snapshot());
        probes.put("getAll, node back", probe(bulk, bulkKeys, bulkLoads));

        for (String key : keys) {
          String storeKey = namespace + ":" + key;
          assertThat(cluster.holds(cluster.indexOf(home.get(key)), storeKey))
              .as("%s is cached on its node %s at the end", key, home.get(key)).isTrue();
        }
      }

      Analysis analysis = new Analysis(loads.snapshot(), at, deadKeys, survivorKeys);
      report(analysis, deadKeys, leaseOnlyKeys, bulkHome, victim, phases, stats, leases, probes,
          copiesLeft);

      for (Map.Entry<String, SteadyLoad.Phase> phase : phases.entrySet()) {
        assertThat(phase.getValue().requests()).as("requests, %s", phase.getKey()).isPositive();
        assertThat(phase.getValue().callerErrors())
            .as("exceptions thrown to callers, %s; the first: %s", phase.getKey(),
                phase.getValue().firstError())
            .isZero();
        assertThat(phase.getValue().wrongValues())
            .as("gets that returned another value than the loader's, %s", phase.getKey())
            .isZero();
      }
      assertThat(loads.database().maxConcurrentLoadsOfOneKey())
          .as("the most loads of one key at the same time; first overlap: %s",
              loads.database().firstOverlap())
          .isEqualTo(1);
      long bulkOnDead = bulkHome.values().stream().filter(victim::equals).count();
      assertThat(probes.get("getAll warm")).as("keys a getAll of fresh keys loaded").isZero();
      assertThat(probes.get("getAll, node dead").longValue())
          .as("keys a getAll loaded right after the kill").isGreaterThanOrEqualTo(bulkOnDead);
      if (at.moved != 0) {
        assertThat(probes.get("getAll, node dead 8 s"))
            .as("keys a getAll loaded once the dead node's keys had moved and been loaded")
            .isZero();
      }
      if (probes.containsKey("getAll, keys moved")) {
        assertThat(probes.get("getAll, keys moved").longValue())
            .as("keys a getAll loaded once the dead node's keys had moved: only those")
            .isEqualTo(bulkOnDead);
      }
      assertThat(probes.get("getAll, node back").longValue())
          .as("keys a getAll loaded after the node came back, empty: only its own")
          .isEqualTo(bulkOnDead);

      // Keys on the surviving nodes: hits, refreshed as usual, lease keys on the dead node or not.
      assertThat(analysis.misses(survivorKeys, at.baseline, at.end))
          .as("misses of keys on the surviving nodes from the baseline to the end").isZero();
      for (String key : survivorKeys) {
        assertThat(analysis.maxInAnyPeriod(key, at.baseline, at.end))
            .as("loads of %s (on a surviving node) in any %d s window", key, TTL_SECONDS)
            .isLessThanOrEqualTo(MAX_LOADS_PER_KEY_PER_PERIOD);
      }
      if (deadNodeKeys() == DeadNodeKeys.STAY_ON_THE_DEAD_NODE && !leaseOnlyKeys.isEmpty()) {
        assertThat(leases.get("node dead")[2] - leases.get("baseline")[2])
            .as("lease adds that failed while the node was dead (the refreshes went ahead)")
            .isPositive();
      }
      for (String key : leaseOnlyKeys) {
        assertThat(analysis.count(Set.of(key), at.kill, at.restart))
            .as("refreshes of %s, whose lease key is on the dead node, while it was dead", key)
            .isGreaterThanOrEqualTo(2);
      }

      // The dead node's keys.
      if (at.moved != 0) {
        for (String key : deadKeys) {
          assertThat(analysis.maxInAnyPeriod(key, at.moved + SETTLE.toNanos(), at.restart))
              .as("loads of %s (on the dead node) in any %d s window after it moved", key,
                  TTL_SECONDS)
              .isLessThanOrEqualTo(MAX_LOADS_PER_KEY_PER_PERIOD);
        }
        assertThat(analysis.recoveryNanos(at.kill, at.restart))
            .as("ns from the kill until the dead node's keys were loaded about once per key per"
                + " period (-1: not before the node came back)")
            .isNotNegative()
            .isLessThanOrEqualTo(membershipDelay().plus(RECOVERY_SLACK).toNanos());
      } else {
        assertThat(analysis.misses(deadKeys, at.kill + SETTLE.toNanos(), at.restart))
            .as("misses of the dead node's keys while it was dead").isPositive();
      }

      // The node is back.
      for (String key : deadKeys) {
        assertThat(analysis.maxInAnyPeriod(key, at.returned + SETTLE.toNanos(), at.end))
            .as("loads of %s in any %d s window after its node came back", key, TTL_SECONDS)
            .isLessThanOrEqualTo(MAX_LOADS_PER_KEY_PER_PERIOD);
      }
      assertThat(analysis.recoveryNanos(at.returned, at.end))
          .as("ns from the node's return until its keys were loaded about once per key per"
              + " period")
          .isNotNegative()
          .isLessThanOrEqualTo(RECOVERY_SLACK.toNanos());

      // No key is stuck.
      long finalFrom = at.end - FINAL_WINDOW.toNanos();
      assertThat(analysis.misses(Set.copyOf(keys), finalFrom, at.end))
          .as("misses in the last %d ms", FINAL_WINDOW.toMillis()).isZero();
      for (String key : keys) {
        assertThat(analysis.count(Set.of(key), finalFrom, at.end))
            .as("refreshes of %s in the last %d ms", key, FINAL_WINDOW.toMillis())
            .isPositive();
      }
    }
  }

  // -------------------------------------------------------------------------------------------

  private static SustainableCache<String> cache(CacheStore store, String namespace,
      Duration ttl) {
    return SustainableCache.builder(store)
        .namespace(namespace)
        .ttl(ttl)
        .codec(ValueCodec.utf8())
        .build();
  }

  /** One getAll over the keys; returns how many keys the bulk loader was asked for. */
  private static int probe(SustainableCache<String> bulk, List<String> keys,
      AtomicInteger counter) {
    int[] asked = {0};
    Map<String, String> values = bulk.getAll(keys, missing -> {
      asked[0] += missing.size();
      counter.addAndGet(missing.size());
      Map<String, String> loaded = new HashMap<>();
      missing.forEach(key -> loaded.put(key, CountingLoader.valueOf(key)));
      return loaded;
    });
    assertThat(values).as("getAll's answer").hasSize(keys.size());
    values.forEach((key, value) -> assertThat(value).isEqualTo(CountingLoader.valueOf(key)));
    return asked[0];
  }

  private static Map<String, InetSocketAddress> homes(ClusterClient client, String namespace,
      List<String> keys, String suffix) {
    Map<String, InetSocketAddress> homes = new TreeMap<>();
    for (String key : keys) {
      homes.put(key, client.nodeOf(namespace + ":" + key + suffix));
    }
    return homes;
  }

  private static InetSocketAddress mostKeys(Map<String, InetSocketAddress> home) {
    return home.values().stream()
        .collect(Collectors.groupingBy(node -> node, Collectors.counting()))
        .entrySet().stream()
        .max(Map.Entry.<InetSocketAddress, Long>comparingByValue()
            .thenComparing(entry -> entry.getKey().getPort()))
        .orElseThrow().getKey();
  }

  private static Set<String> keysOn(Map<String, InetSocketAddress> home,
      Predicate<InetSocketAddress> node) {
    return home.entrySet().stream().filter(entry -> node.test(entry.getValue()))
        .map(Map.Entry::getKey).collect(Collectors.toUnmodifiableSet());
  }

  private static boolean survivorsHold(MemcachedCluster cluster, int victim, String storeKey) {
    for (int node = 0; node < cluster.size(); node++) {
      if (node != victim && cluster.holds(node, storeKey)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Counts the fleet lease's {@code add}s (lease keys contain the byte 0x7F): won, lost, and
   * failed, after which the cache loads anyway (fail open).
   */
  static final class LeaseCounter extends ForwardingStore {
    private final LongAdder won = new LongAdder();
    private final LongAdder lost = new LongAdder();
    private final LongAdder failed = new LongAdder();

    LeaseCounter(CacheStore delegate) {
      super(delegate);
    }

    /** {won, lost, failed} so far. */
    long[] snapshot() {
      return new long[] {won.sum(), lost.sum(), failed.sum()};
    }

    @Override
    public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
      CompletableFuture<Boolean> added = super.add(key, value, exptime);
      if (key.indexOf(LEASE_MARK) >= 0) {
        added.whenComplete((stored, error) -> (error != null ? failed
            : stored ? won : lost).increment());
      }
      return added;
    }
  }

  /** The moments of the run, in {@link System#nanoTime()}; 0 where a moment did not occur. */
  static final class Timeline {
    long start;
    long baseline;
    long kill;
    long noticed;
    long dropped;
    long moved;
    long restart;
    long returned;
    long end;

    double seconds(long from, long to) {
      return (to - from) / 1e9;
    }
  }

  /** Loader calls, per key and over time. */
  static final class Analysis {

    private final List<LoadLog.Load> loads;
    private final Timeline at;
    private final Set<String> deadKeys;
    private final Set<String> survivorKeys;
    private final Map<String, long[]> byKey = new HashMap<>();

    Analysis(List<LoadLog.Load> loads, Timeline at, Set<String> deadKeys,
        Set<String> survivorKeys) {
      this.loads = loads;
      this.at = at;
      this.deadKeys = deadKeys;
      this.survivorKeys = survivorKeys;
      Map<String, List<Long>> times = new HashMap<>();
      for (LoadLog.Load load : loads) {
        times.computeIfAbsent(load.key(), k -> new ArrayList<>()).add(load.nanos());
      }
      times.forEach((key, list) -> byKey.put(key,
          list.stream().mapToLong(Long::longValue).sorted().toArray()));
    }

    /** Loads of the keys that started in [from, to). */
    long count(Set<String> keys, long from, long to) {
      return loads.stream().filter(l -> keys.contains(l.key()) && l.nanos() >= from
          && l.nanos() < to).count();
    }

    /** Loads of the keys that started in [from, to) on a caller's thread: misses. */
    long misses(Set<String> keys, long from, long to) {
      return loads.stream().filter(l -> !l.refresh() && keys.contains(l.key())
          && l.nanos() >= from && l.nanos() < to).count();
    }

    /** The most loads of one key that started within any TTL-long window inside [from, to). */
    int maxInAnyPeriod(String key, long from, long to) {
      long[] times = byKey.getOrDefault(key, new long[0]);
      int max = 0;
      int first = 0;
      for (int last = 0; last < times.length; last++) {
        if (times[last] < from || times[last] >= to) {
          continue;
        }
        while (times[first] < from || times[last] - times[first] >= TTL_NANOS) {
          first++;
        }
        max = Math.max(max, last - first + 1);
      }
      return max;
    }

    /** Loads of the dead node's keys per key per TTL period in [from, to). */
    double perKeyPerPeriod(Set<String> keys, long from, long to) {
      return count(keys, from, to) / (double) keys.size() / ((to - from) / (double) TTL_NANOS);
    }

    /**
     * From {@code from}: how long until the dead node's keys were loaded at most {@value
     * #ABOUT_ONE} times per key in every TTL-long window that starts then or later and ends
     * before {@code to}; -1 if that never happened.
     */
    long recoveryNanos(long from, long to) {
      long lastBad = Long.MIN_VALUE;
      for (long start = from; start + TTL_NANOS <= to; start += STEP_NANOS) {
        if (count(deadKeys, start, start + TTL_NANOS) > ABOUT_ONE * deadKeys.size()) {
          lastBad = start;
        }
      }
      if (lastBad == Long.MIN_VALUE) {
        return 0;
      }
      long recovered = lastBad + STEP_NANOS;
      return recovered + TTL_NANOS <= to ? recovered - from : -1;
    }

    /** Loads per second from {@code from}: {seconds from the kill, dead keys, others, misses}. */
    List<long[]> perSecond(long from, long to) {
      List<long[]> series = new ArrayList<>();
      long second = TimeUnit.SECONDS.toNanos(1);
      for (long start = from; start < to; start += second) {
        long end = Math.min(start + second, to);
        series.add(new long[] {Math.round((start - at.kill) / 1e9), count(deadKeys, start, end),
            count(survivorKeys, start, end), misses(deadKeys, start, end)
                + misses(survivorKeys, start, end)});
      }
      return series;
    }
  }

  private void report(Analysis analysis, Set<String> deadKeys, Set<String> leaseOnlyKeys,
      Map<String, InetSocketAddress> bulkHome, InetSocketAddress victim,
      Map<String, SteadyLoad.Phase> phases, Map<String, CacheStats> stats,
      Map<String, long[]> leases, Map<String, Integer> probes, long copiesLeft) {
    Timeline at = analysis.at;
    Set<String> all = new java.util.HashSet<>(deadKeys);
    all.addAll(analysis.survivorKeys);
    long requests = phases.values().stream().mapToLong(SteadyLoad.Phase::requests).sum();
    long errors = phases.values().stream().mapToLong(SteadyLoad.Phase::callerErrors).sum();
    long firstMove = at.moved == 0 ? at.kill : at.moved;
    String beforeMove = at.moved == 0 || at.moved - at.kill < SETTLE.toNanos() ? "-"
        : format(analysis.perKeyPerPeriod(deadKeys, at.kill, at.moved) / TTL_SECONDS);
    String whileDead = format(analysis.perKeyPerPeriod(deadKeys, at.kill, at.restart));
    String firstPeriod = at.moved == 0 ? "-" : format(
        analysis.count(deadKeys, firstMove, firstMove + TTL_NANOS) / (double) deadKeys.size());
    String afterMove = at.moved == 0 ? "-" : format(analysis.perKeyPerPeriod(deadKeys,
        firstMove + TTL_NANOS, at.restart));
    long recovery = analysis.recoveryNanos(at.kill, at.restart);
    long recoveryAfterReturn = analysis.recoveryNanos(at.returned, at.end);
    long bulkOnDead = bulkHome.values().stream().filter(victim::equals).count();
    String probeDead = probes.get("getAll, node dead") + " of " + KEY_COUNT + " ("
        + bulkOnDead + " on the dead node)";
    System.out.printf(Locale.ROOT,
        "%s %s | %d of %d | %d | %s | %s | %s | %s | %s | %s | %s | %d | %d | %s | %d |%n",
        RESULT_PREFIX, adapterName(), deadKeys.size(), all.size(), leaseOnlyKeys.size(),
        format(analysis.perKeyPerPeriod(all, at.baseline, at.kill)),
        beforeMove.equals("-") ? whileDead + " per period" : beforeMove + " per s",
        firstPeriod, afterMove,
        recovery < 0 ? "not while dead" : TimeUnit.NANOSECONDS.toMillis(recovery) + " ms",
        TimeUnit.NANOSECONDS.toMillis(recoveryAfterReturn) + " ms",
        format(analysis.count(deadKeys, at.returned, at.returned + TTL_NANOS)
            / (double) deadKeys.size()),
        analysis.misses(analysis.survivorKeys, at.baseline, at.end), errors,
        probeDead, requests);
    System.out.printf(Locale.ROOT, "%s %s | moments (s from the kill): baseline %.1f, noticed"
            + " %s, dropped %s, moved %s, restarted %.1f, back %.1f, end %.1f; dead node's keys"
            + " with a copy on a survivor when it came back: %d of %d; getAll probes (keys"
            + " loaded): %s%n",
        STATS_PREFIX, adapterName(), at.seconds(at.kill, at.baseline),
        format(at.seconds(at.kill, at.noticed)),
        at.dropped == 0 ? "-" : format(at.seconds(at.kill, at.dropped)),
        at.moved == 0 ? "-" : format(at.seconds(at.kill, at.moved)),
        at.seconds(at.kill, at.restart), at.seconds(at.kill, at.returned),
        at.seconds(at.kill, at.end), copiesLeft, deadKeys.size(), probes);
    CacheStats previous = null;
    long[] leasesBefore = new long[3];
    for (Map.Entry<String, CacheStats> phase : stats.entrySet()) {
      CacheStats delta = previous == null ? phase.getValue() : phase.getValue().minus(previous);
      previous = phase.getValue();
      long[] leasesNow = leases.get(phase.getKey());
      System.out.printf("%s %s | %s | lease adds won %d, lost %d, failed (loaded anyway) %d |"
              + " %s%n", STATS_PREFIX, adapterName(), phase.getKey(),
          leasesNow[0] - leasesBefore[0], leasesNow[1] - leasesBefore[1],
          leasesNow[2] - leasesBefore[2], delta);
      leasesBefore = leasesNow;
    }
    for (long[] second : analysis.perSecond(at.baseline, at.end)) {
      System.out.printf(Locale.ROOT, "%s %s | %+d s | dead node's keys %d | other keys %d |"
          + " misses %d |%n", SERIES_PREFIX, adapterName(), second[0], second[1], second[2],
          second[3]);
    }
  }

  private static String format(double value) {
    return String.format(Locale.ROOT, "%.2f", value);
  }

  /** Real time must pass for load to be steady or a node to stay dead; not a wait for a state. */
  private static void letTimePass(Duration duration) throws InterruptedException {
    Thread.sleep(duration.toMillis());
  }

  private static void sleepUntil(long nanoTime) throws InterruptedException {
    long wait = nanoTime - System.nanoTime();
    if (wait > 0) {
      TimeUnit.NANOSECONDS.sleep(wait);
    }
  }
}
