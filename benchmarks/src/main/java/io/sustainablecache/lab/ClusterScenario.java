package io.sustainablecache.lab;

import io.sustainablecache.CacheStats;
import io.sustainablecache.Loader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.arcus.ArcusStore;
import io.sustainablecache.lab.ClusterChecks.Check;
import io.sustainablecache.lab.ClusterChecks.Moments;
import io.sustainablecache.lab.ClusterChecks.Outcome;
import io.sustainablecache.lab.ClusterChecks.Probes;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testkit.memcached.MemcachedCluster;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ConcurrentModificationException;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.FailureMode;
import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The lab's cluster scenario ({@code --cluster N}): the library (SUS, default configuration, the
 * fleet lease on) through the ARCUS adapter over N memcached processes that the lab starts
 * itself, in real time, under steady open-loop load over many keys; one node is killed ({@code
 * SIGKILL}) and later restarted, empty, on its port.
 *
 * <p>The client finds the nodes through an ARCUS cache list in a ZooKeeper server the lab runs
 * itself ({@code --membership zookeeper}, the default: the dead node's znode is deleted {@code
 * --znode-removed-after} the kill, as ZooKeeper does when the dead server's session expires, and
 * re-created when it is back), or is given the addresses ({@code --membership static}; {@code
 * --failure-mode cancel} or {@code redistribute}). It prints and writes, per second: requests,
 * hits, misses, caller errors, database loads (total, and of each node's keys), store errors and
 * leases; and a summary with the recovery time: from the kill until the dead node's keys were
 * loaded about once per key per TTL period again (at most 1.5 times per key in every TTL-long
 * window from then on).
 */
final class ClusterScenario {

  static final String USAGE = """
      Cluster (real time: N memcached processes started by the lab, the ARCUS adapter)
        --cluster N          run the cluster scenario over N nodes (2 to 9) instead of the
                             comparison; needs the memcached binary
        --kill-node-at T     when the node is killed (default 20s)
        --return-node-at T   when it is restarted, empty, on its port (default 40s; 'never')
        --duration T         the whole run (default 60s)
        --kill-node I        which node (default: the one holding the most keys)
        --membership M       zookeeper (default): nodes in an ARCUS cache list in a ZooKeeper
                             the lab runs; static: the client is given the addresses
        --znode-removed-after T   zookeeper: when the dead node's znode is deleted (default 2s)
        --failure-mode F     cancel (default, the adapter's recommendation) or redistribute
        --keys N (default 60)  --rate R (req/s, default 300)  --ttl T (default 3s)
        --db MS (query time, default 10)  --seed N  --out DIR  --no-charts
        Writes cluster.csv (per second), cluster-summary.csv and charts/cluster-loads.png.
      """;

  static final String CSV_HEADER = "second,requests,hits,misses,caller_errors,wrong_values,"
      + "max_latency_ms,loads,%s,store_errors,leases_won,leases_lost,event";

  static final String SUMMARY_HEADER = "nodes,membership,failure_mode,keys,rate,ttl_s,db_ms,"
      + "kill_at_s,return_at_s,victim,victim_keys,keys_moved,moved_after_ms,"
      + "baseline_loads_per_key_per_period,dead_keys_loads_per_key_per_s_while_dead,"
      + "dead_keys_loads_per_key_per_s_before_move,dead_keys_loads_first_period_after_move,"
      + "dead_keys_still_missing_before_return,recovery_ms,recovery_after_return_ms,"
      + "survivor_key_misses_after_warmup,requests,caller_errors,wrong_values,checks_failed";

  private static final Duration OPERATION_TIMEOUT = Duration.ofMillis(700);
  private static final String SERVICE = "stampede-lab";

  /** Parsed options. */
  record Options(int nodes, long killAtMillis, long returnAtMillis, long durationMillis,
      int killNode, boolean zookeeper, long znodeRemovedAfterMillis, FailureMode failureMode,
      int keys, int rate, long ttlMillis, long dbMillis, long seed, Path out, boolean charts) {}

  /** One loader call: when it started (ms from the start), its key, whether a refresh ran it. */
  record Load(long millis, String key, boolean refresh) {}

  private final Options options;
  private final PrintStream out;

  private ClusterScenario(Options options, PrintStream out) {
    this.options = options;
    this.out = out;
  }

  /** Whether the command line asks for this scenario. */
  static boolean requested(String[] args) {
    return Arrays.asList(args).contains("--cluster");
  }

  /** Runs the scenario the command line describes; returns the exit status. */
  static int run(String[] args, PrintStream out) {
    if (ScenarioStart.help(args, USAGE, out)) {
      return 0;
    }
    // A dead node makes the client log a refused reconnect with its stack trace every second,
    // and ZooKeeper logs every session: keep the table readable.
    ScenarioStart.prepare("net.spy.memcached", "error", "org.apache.zookeeper", "error",
        "io.sustainablecache.testkit", "warn");
    return new ClusterScenario(parse(args), out).run();
  }

  static Options parse(String[] args) {
    int nodes = 3;
    long killAt = 20_000;
    Long returnAt = null;
    long duration = 60_000;
    int killNode = -1;
    boolean zookeeper = true;
    long znodeAfter = 2_000;
    FailureMode failureMode = FailureMode.Cancel;
    int keys = 60;
    int rate = 300;
    long ttl = 3_000;
    long db = 10;
    long seed = 42;
    Path out = Path.of("lab-results");
    boolean charts = true;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--cluster" -> nodes = integer(value(args, ++i, arg), arg);
        case "--kill-node-at" -> killAt = millis(value(args, ++i, arg), arg);
        case "--return-node-at" -> {
          String v = value(args, ++i, arg);
          returnAt = v.equals("never") ? -1L : millis(v, arg);
        }
        case "--duration" -> duration = millis(value(args, ++i, arg), arg);
        case "--kill-node" -> killNode = integer(value(args, ++i, arg), arg);
        case "--membership" -> zookeeper = switch (value(args, ++i, arg)) {
          case "zookeeper" -> true;
          case "static" -> false;
          default -> throw new IllegalArgumentException(
              "--membership takes zookeeper or static");
        };
        case "--znode-removed-after" -> znodeAfter = millis(value(args, ++i, arg), arg);
        case "--failure-mode" -> failureMode = switch (value(args, ++i, arg)) {
          case "cancel" -> FailureMode.Cancel;
          case "redistribute" -> FailureMode.Redistribute;
          default -> throw new IllegalArgumentException(
              "--failure-mode takes cancel or redistribute");
        };
        case "--keys" -> keys = integer(value(args, ++i, arg), arg);
        case "--rate" -> rate = integer(value(args, ++i, arg), arg);
        case "--ttl" -> ttl = millis(value(args, ++i, arg), arg);
        case "--db" -> db = integer(value(args, ++i, arg), arg);
        case "--seed" -> seed = Long.parseLong(value(args, ++i, arg));
        case "--out" -> out = Path.of(value(args, ++i, arg));
        case "--no-charts" -> charts = false;
        default -> throw new IllegalArgumentException(
            "unknown option for --cluster: '" + arg + "' (see --cluster 3 --help)");
      }
    }
    long back = returnAt != null ? returnAt : killAt + 20_000;
    if (nodes < 2 || nodes > 9) {
      throw new IllegalArgumentException("--cluster takes 2 to 9 nodes");
    }
    if (killNode >= nodes) {
      throw new IllegalArgumentException("--kill-node must be below " + nodes);
    }
    if (keys < nodes || rate < 1 || ttl < 1_000 || db < 0) {
      throw new IllegalArgumentException(
          "need --keys >= nodes, --rate >= 1, --ttl >= 1s, --db >= 0");
    }
    if (killAt < 2 * ttl || killAt >= duration) {
      throw new IllegalArgumentException("--kill-node-at must leave two TTL periods of warm-up"
          + " and come before the end (--duration)");
    }
    if (back >= 0 && (back <= killAt || back >= duration)) {
      throw new IllegalArgumentException(
          "--return-node-at must be after the kill and before the end");
    }
    return new Options(nodes, killAt, back, duration, killNode, zookeeper, znodeAfter,
        failureMode, keys, rate, ttl, db, seed, out, charts);
  }

  // -------------------------------------------------------------------------------------------

  private int run() {
    Options o = options;
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < o.keys(); i++) {
      keys.add("k" + i);
    }
    String namespace = "lab-cluster-" + Long.toHexString(System.nanoTime() & 0xFFFFFFL);
    int seconds = (int) ((o.durationMillis() + 999) / 1000);
    AtomicLongArray requests = new AtomicLongArray(seconds + 1);
    AtomicLongArray errors = new AtomicLongArray(seconds + 1);
    AtomicLongArray wrong = new AtomicLongArray(seconds + 1);
    AtomicLongArray maxLatency = new AtomicLongArray(seconds + 1);
    ConcurrentLinkedQueue<Load> loads = new ConcurrentLinkedQueue<>();
    CacheStats[] stats = new CacheStats[seconds + 1];
    Map<Integer, String> events = new HashMap<>();
    AtomicReference<Throwable> firstError = new AtomicReference<>();

    try (MemcachedCluster cluster = MemcachedCluster.start(o.nodes());
        LabZooKeeper zooKeeper = o.zookeeper() ? LabZooKeeper.start(SERVICE) : null;
        Client client = Client.connect(cluster, zooKeeper, o)) {
      Map<String, Integer> home = new HashMap<>();
      int[] perNode = new int[o.nodes()];
      for (String key : keys) {
        int node = cluster.indexOf(client.nodeOf(namespace + ":" + key));
        home.put(key, node);
        perNode[node]++;
      }
      int victim = o.killNode() >= 0 ? o.killNode() : mostKeys(perNode);
      Set<String> deadKeys = new HashSet<>();
      keys.stream().filter(k -> home.get(k) == victim).forEach(deadKeys::add);
      int bulkOnDeadNode = (int) keys.stream().filter(k -> cluster.indexOf(
          client.nodeOf(namespace + "-bulk:" + k)) == victim).count();
      out.printf(Locale.ROOT, "stampede-lab --cluster %d: SUS through the ARCUS adapter over %d"
              + " memcached nodes %s, %s, FailureMode.%s; %d keys (per node: %s), %d req/s,"
              + " TTL %.1f s, DB %d ms; node %d (%d keys) killed at %.1f s%s%s; %d s; output"
              + " in %s%n", o.nodes(), o.nodes(), cluster.addresses(),
          o.zookeeper() ? "found through an ARCUS cache list in ZooKeeper" : "given to the client",
          o.failureMode(), o.keys(), Arrays.toString(perNode), o.rate(), o.ttlMillis() / 1000.0,
          o.dbMillis(), victim, perNode[victim], o.killAtMillis() / 1000.0,
          o.zookeeper() ? String.format(Locale.ROOT, ", its znode removed %.1f s later",
              o.znodeRemovedAfterMillis() / 1000.0) : "",
          o.returnAtMillis() < 0 ? ", never back" : String.format(Locale.ROOT,
              ", back at %.1f s", o.returnAtMillis() / 1000.0),
          seconds, o.out().toAbsolutePath());
      String refreshPrefix = "sustainable-cache-refresh-" + namespace + "-";
      long[] start = {0};
      Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
      AtomicLong overlaps = new AtomicLong();
      Loader<String> database = key -> {
        loads.add(new Load(System.currentTimeMillis() - start[0], key,
            Thread.currentThread().getName().startsWith(refreshPrefix)));
        AtomicInteger ofKey = running.computeIfAbsent(key, k -> new AtomicInteger());
        if (ofKey.incrementAndGet() > 1) {
          overlaps.incrementAndGet();
        }
        try {
          Thread.sleep(o.dbMillis());
        } finally {
          ofKey.decrementAndGet();
        }
        return valueOf(key);
      };
      Probe probe = new Probe(keys);
      Map<String, Integer> probes = new LinkedHashMap<>();
      long returnedAt = -1;
      long misplaced = 0;
      long movedAfter = -1;
      int moved = 0;
      try (SustainableCache<String> cache = SustainableCache.builder(client.store)
          .namespace(namespace).ttl(Duration.ofMillis(o.ttlMillis()))
          .codec(ValueCodec.utf8()).build();
          SustainableCache<String> bulk = SustainableCache.builder(client.store)
              .namespace(namespace + "-bulk").ttl(Duration.ofMillis(2 * o.durationMillis()))
              .random(FixedRandom.neverEarly()).codec(ValueCodec.utf8()).build()) {
        probe.run(bulk, "cold");
        ScheduledExecutorService ticker =
            Executors.newScheduledThreadPool(1, daemon("lab-cluster-ticker-"));
        ExecutorService workers = Executors.newCachedThreadPool(daemon("lab-cluster-request-"));
        SplittableRandom random = new SplittableRandom(o.seed());
        start[0] = System.currentTimeMillis();
        long startNanos = System.nanoTime();
        stats[0] = cache.stats();
        ticker.scheduleAtFixedRate(() -> {
          String key = keys.get(random.nextInt(keys.size()));
          int second = second(start[0], seconds);
          requests.incrementAndGet(second);
          workers.execute(() -> {
            long t0 = System.nanoTime();
            try {
              if (!valueOf(key).equals(cache.get(key, database))) {
                wrong.incrementAndGet(second);
              }
            } catch (RuntimeException | Error e) {
              errors.incrementAndGet(second);
              firstError.compareAndSet(null, e);
            } finally {
              maxLatency.accumulateAndGet(second,
                  TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), Math::max);
            }
          });
        }, 0, TimeUnit.SECONDS.toNanos(1) / o.rate(), TimeUnit.NANOSECONDS);
        ticker.scheduleAtFixedRate(() -> {
          int second = (int) Math.round((System.currentTimeMillis() - start[0]) / 1000.0);
          if (second >= 1 && second <= seconds) {
            stats[second] = cache.stats();
          }
        }, 1_000, 1_000, TimeUnit.MILLISECONDS);

        sleepUntil(startNanos, o.killAtMillis() - 500);
        probes.put("warm", probe.run(bulk, "warm"));
        sleepUntil(startNanos, o.killAtMillis());
        cluster.kill(victim);
        event(events, start[0], "node " + victim + " killed");
        out.printf(Locale.ROOT, "[%5.1f s] node %d (%s) killed%n", elapsed(start[0]), victim,
            cluster.address(victim));
        awaitUntil(() -> !client.client.getAvailableServers().contains(cluster.address(victim)));
        probes.put("dead", probe.run(bulk, "dead"));
        if (o.zookeeper()) {
          sleepUntil(startNanos, o.killAtMillis() + o.znodeRemovedAfterMillis());
          zooKeeper.removeNode(cluster.address(victim));
          event(events, start[0], "znode removed");
          long removed = System.currentTimeMillis();
          while (deadKeys.stream().anyMatch(k -> client.nodeOf(namespace + ":" + k)
              .equals(cluster.address(victim)))
              && System.currentTimeMillis() - removed < 10_000) {
            Thread.sleep(5);
          }
          movedAfter = System.currentTimeMillis() - start[0] - o.killAtMillis();
          for (String key : keys) {
            if (cluster.indexOf(client.nodeOf(namespace + ":" + key)) != home.get(key)) {
              moved++;
            }
          }
          out.printf(Locale.ROOT, "[%5.1f s] znode removed; the client maps %d keys to other"
              + " nodes %.2f s after the kill%n", elapsed(start[0]), moved, movedAfter / 1000.0);
          probes.put("moved", probe.run(bulk, "moved"));
        }
        if (o.returnAtMillis() >= 0) {
          sleepUntil(startNanos, o.returnAtMillis() - 500);
          probes.put("dead late", probe.run(bulk, "dead late"));
          sleepUntil(startNanos, o.returnAtMillis());
          if (!o.zookeeper() && o.failureMode() == FailureMode.Redistribute) {
            for (String key : deadKeys) {
              if (heldByASurvivor(cluster, victim, namespace + ":" + key)) {
                moved++;
              }
            }
            out.printf(Locale.ROOT, "[%5.1f s] %d of the dead node's %d keys are cached on"
                + " other nodes (Redistribute)%n", elapsed(start[0]), moved, deadKeys.size());
          }
          cluster.restart(victim);
          if (o.zookeeper()) {
            zooKeeper.addNode(cluster.address(victim));
          }
          event(events, start[0], "node " + victim + " back");
          out.printf(Locale.ROOT, "[%5.1f s] node %d restarted (empty)%s%n", elapsed(start[0]),
              victim, o.zookeeper() ? ", znode re-created" : "");
          if (awaitUntil(() -> client.client.getAvailableServers().contains(
              cluster.address(victim)) && deadKeys.stream().allMatch(k -> client.nodeOf(
                  namespace + ":" + k).equals(cluster.address(victim))))) {
            returnedAt = System.currentTimeMillis() - start[0];
            out.printf(Locale.ROOT, "[%5.1f s] the client uses node %d again%n",
                elapsed(start[0]), victim);
          }
        }
        sleepUntil(startNanos, o.durationMillis());
        ticker.shutdownNow();
        workers.shutdown();
        if (!workers.awaitTermination(30, TimeUnit.SECONDS)) {
          out.println("requests still running after 30 s; the counts may be incomplete");
        }
        stats[seconds] = cache.stats();
        if (o.returnAtMillis() >= 0) {
          probes.put("back", probe.run(bulk, "back"));
        }
        for (String key : keys) {
          String storeKey = namespace + ":" + key;
          int node = cluster.indexOf(client.nodeOf(storeKey));
          if (cluster.isRunning(node) && !cluster.holds(node, storeKey)) {
            misplaced++;
          }
        }
      }
      List<Load> all = new ArrayList<>(loads);
      all.sort((a, b) -> Long.compare(a.millis(), b.millis()));
      List<Check> checks = checks(all, home, deadKeys, movedAfter, returnedAt, new Outcome(
          sum(requests), sum(errors), sum(wrong), overlaps.get(), misplaced),
          new Probes(probes, bulkOnDeadNode, probe.wrongValues.get()));
      return report(all, home, deadKeys, victim, perNode, requests, errors, wrong, maxLatency,
          stats, events, moved, movedAfter, firstError.get(), seconds, checks);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private List<Check> checks(List<Load> loads, Map<String, Integer> home, Set<String> deadKeys,
      long movedAfter, long returnedAt, Outcome outcome, Probes probes) {
    Options o = options;
    Set<String> survivors = new HashSet<>(home.keySet());
    survivors.removeAll(deadKeys);
    long moved = o.zookeeper() ? (movedAfter < 0 ? -1 : o.killAtMillis() + movedAfter)
        : o.failureMode() == FailureMode.Redistribute ? o.killAtMillis() : -1;
    Moments at = new Moments(2 * o.ttlMillis(), o.killAtMillis(), moved, o.returnAtMillis(),
        returnedAt, o.durationMillis(), o.ttlMillis(),
        o.zookeeper() ? o.znodeRemovedAfterMillis() : -1);
    return new ClusterChecks(loads).check(survivors, deadKeys, o.zookeeper(),
        !o.zookeeper() && o.failureMode() == FailureMode.Cancel, at, outcome, probes);
  }

  private int report(List<Load> loads, Map<String, Integer> home, Set<String> deadKeys,
      int victim, int[] perNode, AtomicLongArray requests, AtomicLongArray errors,
      AtomicLongArray wrong, AtomicLongArray maxLatency, CacheStats[] stats,
      Map<Integer, String> events, int moved,
      long movedAfter, Throwable firstError, int seconds, List<Check> checks) {
    Options o = options;
    long ttl = o.ttlMillis();
    long kill = o.killAtMillis();
    long back = o.returnAtMillis();
    long deadEnd = back >= 0 ? back : o.durationMillis();
    List<String> nodeColumns = new ArrayList<>();
    for (int n = 0; n < o.nodes(); n++) {
      nodeColumns.add("loads_node" + n + "_keys");
    }
    StringBuilder csv = new StringBuilder(
        String.format(Locale.ROOT, CSV_HEADER, String.join(",", nodeColumns))).append('\n');
    StringBuilder table = new StringBuilder(String.format(Locale.ROOT,
        "%6s %8s %6s %6s %6s %6s %6s %s %9s %6s %6s  %s%n", "second", "requests", "hits",
        "misses", "errors", "max_ms", "loads", nodeHeader(o.nodes(), victim), "store_err",
        "lease+", "lease-",
        "event"));
    long[][] loadsPerSecond = new long[o.nodes()][seconds];
    for (Load load : loads) {
      int s = (int) Math.min(seconds - 1, Math.max(0, load.millis() / 1000));
      loadsPerSecond[home.get(load.key())][s]++;
    }
    for (int s = 0; s < seconds; s++) {
      CacheStats from = stats[s];
      CacheStats to = stats[s + 1];
      CacheStats d = from != null && to != null ? to.minus(from) : null;
      long total = 0;
      StringBuilder perNodeCsv = new StringBuilder();
      StringBuilder perNodeText = new StringBuilder();
      for (int n = 0; n < o.nodes(); n++) {
        total += loadsPerSecond[n][s];
        perNodeCsv.append(loadsPerSecond[n][s]).append(',');
        perNodeText.append(String.format(Locale.ROOT, "%6d ", loadsPerSecond[n][s]));
      }
      String event = events.getOrDefault(s, "");
      csv.append(String.format(Locale.ROOT, "%d,%d,%s,%s,%d,%d,%d,%d,%s%s,%s,%s,%s%n", s,
          requests.get(s), d == null ? "" : d.hitCount(), d == null ? "" : d.missCount(),
          errors.get(s), wrong.get(s), maxLatency.get(s), total, perNodeCsv,
          d == null ? "" : d.storeErrorCount(),
          d == null ? "" : d.count("lease_won"), d == null ? "" : d.count("lease_lost"), event));
      table.append(String.format(Locale.ROOT, "%6d %8d %6s %6s %6d %6d %6d %s%9s %6s %6s  %s%n",
          s, requests.get(s), d == null ? "-" : d.hitCount(), d == null ? "-" : d.missCount(),
          errors.get(s), maxLatency.get(s), total, perNodeText,
          d == null ? "-" : d.storeErrorCount(),
          d == null ? "-" : d.count("lease_won"), d == null ? "-" : d.count("lease_lost"), event));
    }

    ClusterChecks record = new ClusterChecks(loads);
    Set<String> allKeys = home.keySet();
    Set<String> survivors = new HashSet<>(allKeys);
    survivors.removeAll(deadKeys);
    long baselineFrom = Math.max(2 * ttl, kill - 10_000);
    double baseline = record.count(allKeys, baselineFrom, kill) / (double) allKeys.size()
        / ((kill - baselineFrom) / (double) ttl);
    long moveAt = o.zookeeper() ? kill + movedAfter
        : o.failureMode() == FailureMode.Redistribute ? kill : -1;
    double beforeMove = moveAt > kill + ClusterChecks.STEP_MILLIS
        ? record.count(deadKeys, kill, moveAt) / (double) deadKeys.size()
            / ((moveAt - kill) / 1000.0)
        : -1;
    double whileDead = record.count(deadKeys, kill, deadEnd) / (double) deadKeys.size()
        / ((deadEnd - kill) / 1000.0);
    long stillMissing = deadKeys.stream().filter(key -> loads.stream().anyMatch(l ->
        !l.refresh() && l.key().equals(key) && l.millis() >= deadEnd - ttl
            && l.millis() < deadEnd)).count();
    double firstPeriod = moveAt < 0 ? -1
        : record.count(deadKeys, moveAt, moveAt + ttl) / (double) deadKeys.size();
    long recovery = record.recovery(deadKeys, kill, deadEnd, ttl);
    long recoveryAfterReturn = back >= 0 ? record.recovery(deadKeys, back, o.durationMillis(),
        ttl) : -1;
    long survivorMisses = loads.stream().filter(l -> !l.refresh() && survivors.contains(l.key())
        && l.millis() >= 2 * ttl).count();
    long totalRequests = sum(requests);
    long totalErrors = sum(errors);
    long totalWrong = sum(wrong);

    String summary = String.format(Locale.ROOT, """

        %s
        keys per node: %s; node %d killed at %.1f s with %d keys%s
        baseline (%.1f-%.1f s): %.2f loads per key per TTL period
        the dead node's keys while it was dead: %.2f loads per key per second (baseline: \
        %.2f)%s%s
        the dead node's keys that still missed in the last TTL period before it came back: %d
        recovery (loads of the dead node's keys back to about one per key per period: <= %.1f \
        in every TTL-long window from then on): %s%s
        misses of the other nodes' keys after warm-up: %d
        requests: %d; caller errors: %d%s; wrong values: %d

        checks (ClusterChecks):
        %s
        """, table, Arrays.toString(perNode), victim, kill / 1000.0, deadKeys.size(),
        o.zookeeper() ? String.format(Locale.ROOT, "; %d keys moved to other nodes %.2f s after"
            + " the kill (znode removed after %.1f s)", moved, movedAfter / 1000.0,
            o.znodeRemovedAfterMillis() / 1000.0)
            : o.failureMode() == FailureMode.Redistribute ? String.format(Locale.ROOT,
                "; %d of them cached on other nodes before the return (Redistribute)", moved)
            : "; they stay on it (static list, Cancel)",
        baselineFrom / 1000.0, kill / 1000.0, baseline,
        whileDead, baseline / (ttl / 1000.0),
        beforeMove < 0 ? "" : String.format(Locale.ROOT,
            "%n  from the kill until they moved: %.2f loads per key per second", beforeMove),
        firstPeriod < 0 ? "" : String.format(Locale.ROOT,
            "%n  in the first TTL period after they moved: %.2f loads per key", firstPeriod),
        stillMissing,
        ClusterChecks.ABOUT_ONE, recovery < 0 ? "not while the node was dead"
            : String.format(Locale.ROOT, "%.2f s after the kill", recovery / 1000.0),
        recoveryAfterReturn < 0 ? "" : String.format(Locale.ROOT,
            "; %.2f s after the node came back", recoveryAfterReturn / 1000.0),
        survivorMisses, totalRequests, totalErrors,
        firstError == null ? "" : " (first: " + firstError + ")", totalWrong,
        String.join("\n", checks.stream().map(Check::toString).toList()));
    long failed = checks.stream().filter(c -> !c.passed()).count();
    out.print(summary);
    if (firstError != null) {
      out.println("the first caller error:");
      firstError.printStackTrace(out);
    }

    String summaryCsv = SUMMARY_HEADER + "\n" + String.join(",", Integer.toString(o.nodes()),
        o.zookeeper() ? "zookeeper" : "static", o.failureMode().name(),
        Integer.toString(o.keys()), Integer.toString(o.rate()), format(ttl / 1000.0),
        Long.toString(o.dbMillis()), format(kill / 1000.0),
        back < 0 ? "" : format(back / 1000.0), Integer.toString(victim),
        Integer.toString(deadKeys.size()), Integer.toString(moved),
        movedAfter < 0 ? "" : Long.toString(movedAfter), format(baseline), format(whileDead),
        beforeMove < 0 ? "" : format(beforeMove), firstPeriod < 0 ? "" : format(firstPeriod),
        Long.toString(stillMissing), recovery < 0 ? "" : Long.toString(recovery),
        recoveryAfterReturn < 0 ? "" : Long.toString(recoveryAfterReturn),
        Long.toString(survivorMisses), Long.toString(totalRequests), Long.toString(totalErrors),
        Long.toString(totalWrong), Long.toString(failed)) + "\n";
    try {
      Files.createDirectories(o.out());
      Files.writeString(o.out().resolve("cluster.csv"), csv, StandardCharsets.UTF_8);
      Files.writeString(o.out().resolve("cluster-summary.csv"), summaryCsv,
          StandardCharsets.UTF_8);
      if (o.charts()) {
        Files.createDirectories(o.out().resolve("charts"));
        chart(loadsPerSecond, victim, events, o.out().resolve("charts/cluster-loads.png"));
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot write the results: " + e, e);
    }
    out.printf("%nWrote %s and %s%s%n", o.out().resolve("cluster.csv"),
        o.out().resolve("cluster-summary.csv"),
        o.charts() ? " and " + o.out().resolve("charts/cluster-loads.png") : "");
    return failed == 0 ? 0 : 1;
  }

  private static void chart(long[][] loadsPerSecond, int victim, Map<Integer, String> events,
      Path file) throws IOException {
    XYChart chart = new XYChartBuilder().width(1000).height(420)
        .title("database loads per second, by the node that held the key before the kill")
        .xAxisTitle("time (s)").yAxisTitle("loads").build();
    chart.getStyler().setYAxisMin(0.0);
    int seconds = loadsPerSecond[0].length;
    double[] x = new double[seconds];
    for (int s = 0; s < seconds; s++) {
      x[s] = s;
    }
    for (int n = 0; n < loadsPerSecond.length; n++) {
      double[] y = Arrays.stream(loadsPerSecond[n]).asDoubleStream().toArray();
      XYSeries series = chart.addSeries("keys of node " + n + (n == victim ? " (killed)" : ""),
          x, y);
      series.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Step);
      series.setMarker(SeriesMarkers.NONE);
    }
    events.keySet().forEach(s -> chart.addAnnotation(new AnnotationLine(s, true, false)));
    BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
  }

  /** The {@code getAll} probe: one bulk read over the keys through a cache without load. */
  private static final class Probe {
    final AtomicLong wrongValues = new AtomicLong();
    private final List<String> keys;

    Probe(List<String> keys) {
      this.keys = keys;
    }

    /** Returns how many keys the bulk loader was asked for. */
    int run(SustainableCache<String> bulk, String name) {
      int[] asked = {0};
      try {
        Map<String, String> values = bulk.getAll(keys, missing -> {
          asked[0] += missing.size();
          Map<String, String> loaded = new HashMap<>();
          missing.forEach(key -> loaded.put(key, valueOf(key)));
          return loaded;
        });
        for (String key : keys) {
          if (!valueOf(key).equals(values.get(key))) {
            wrongValues.incrementAndGet();
          }
        }
      } catch (RuntimeException e) {
        wrongValues.addAndGet(keys.size());
      }
      return asked[0];
    }
  }

  /** Polls every 5 ms for up to 10 s; whether the condition came true. */
  private static boolean awaitUntil(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(5);
    }
    return true;
  }

  private static String nodeHeader(int nodes, int victim) {
    StringBuilder b = new StringBuilder();
    for (int n = 0; n < nodes; n++) {
      b.append(String.format(Locale.ROOT, "%6s ", "node" + n + (n == victim ? "*" : "")));
    }
    return b.toString().stripTrailing();
  }

  private static boolean heldByASurvivor(MemcachedCluster cluster, int victim, String storeKey) {
    for (int n = 0; n < cluster.size(); n++) {
      if (n != victim && cluster.holds(n, storeKey)) {
        return true;
      }
    }
    return false;
  }

  private static int mostKeys(int[] perNode) {
    int best = 0;
    for (int n = 1; n < perNode.length; n++) {
      if (perNode[n] > perNode[best]) {
        best = n;
      }
    }
    return best;
  }

  private static void event(Map<Integer, String> events, long start, String what) {
    events.merge((int) ((System.currentTimeMillis() - start) / 1000), what,
        (a, b) -> a + "; " + b);
  }

  static String valueOf(String key) {
    return "value of " + key;
  }

  private static int second(long start, int seconds) {
    return (int) Math.min(seconds - 1, Math.max(0, (System.currentTimeMillis() - start) / 1000));
  }

  private static double elapsed(long start) {
    return (System.currentTimeMillis() - start) / 1000.0;
  }

  private static long sum(AtomicLongArray values) {
    long sum = 0;
    for (int i = 0; i < values.length(); i++) {
      sum += values.get(i);
    }
    return sum;
  }

  private static String format(double value) {
    return String.format(Locale.ROOT, "%.2f", value);
  }

  private static void sleepUntil(long startNanos, long offsetMillis) throws InterruptedException {
    long wait = startNanos + TimeUnit.MILLISECONDS.toNanos(offsetMillis) - System.nanoTime();
    if (wait > 0) {
      TimeUnit.NANOSECONDS.sleep(wait);
    }
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  private static String value(String[] args, int i, String option) {
    if (i >= args.length) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return args[i];
  }

  private static int integer(String text, String option) {
    try {
      return Integer.parseInt(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " expects a number: '" + text + "'");
    }
  }

  /** {@code 20s}, {@code 1500ms}, or a number of seconds. */
  static long millis(String text, String option) {
    String t = text.trim();
    try {
      if (t.endsWith("ms")) {
        return Long.parseLong(t.substring(0, t.length() - 2));
      }
      String number = t.endsWith("s") ? t.substring(0, t.length() - 1) : t;
      return Math.round(Double.parseDouble(number) * 1000);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " expects a time such as 20s or 1500ms: '"
          + text + "'");
    }
  }

  /** The ARCUS client, through ZooKeeper or with the addresses, and its locator. */
  private static final class Client implements AutoCloseable {
    final ArcusClient client;
    final ArcusStore store;

    private Client(ArcusClient client) {
      this.client = client;
      this.store = ArcusStore.builder(client).operationTimeout(OPERATION_TIMEOUT).build();
    }

    static Client connect(MemcachedCluster cluster, LabZooKeeper zooKeeper, Options o) {
      ConnectionFactoryBuilder settings = new ConnectionFactoryBuilder()
          .setFailureMode(o.failureMode())
          .setOpTimeout(OPERATION_TIMEOUT.toMillis())
          .setOpQueueMaxBlockTime(0);
      ArcusClient client;
      try {
        if (zooKeeper != null) {
          cluster.addresses().forEach(zooKeeper::addNode);
          client = ArcusClient.createArcusClient(zooKeeper.connectString(), SERVICE, settings);
        } else {
          client = new ArcusClient(settings.build(), cluster.addresses());
        }
      } catch (IOException e) {
        throw new IllegalStateException("cannot create the ARCUS client: " + e, e);
      }
      long deadline = System.currentTimeMillis() + 20_000;
      while (!client.getAvailableServers().containsAll(cluster.addresses())) {
        if (System.currentTimeMillis() > deadline) {
          client.shutdown();
          throw new IllegalStateException("the client did not connect to every node in 20 s");
        }
        try {
          Thread.sleep(10);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          client.shutdown();
          throw new IllegalStateException("interrupted", e);
        }
      }
      return new Client(client);
    }

    /**
     * The node the locator maps a key to. ARCUS client 1.13.2's {@code getNodeLocator()} copies
     * the hash ring outside the lock its updates hold, so a copy taken while a node leaves can
     * have hash points without a node and {@code getPrimary} throws {@link
     * NoSuchElementException}, or the copy fails with {@link ConcurrentModificationException}
     * (fixed in 1.14.0); retried. The client's own routing is not affected.
     */
    InetSocketAddress nodeOf(String storeKey) {
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

    @Override
    public void close() {
      client.shutdown();
    }
  }
}
