package io.sustainablecache.lab;

import io.sustainablecache.BulkLoader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.arcus.ArcusStore;
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
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import net.spy.memcached.ArcusClient;

/**
 * {@code --bulk-fleet} (issue 23): N separate JVMs (default 4) read the same page of cold keys
 * (default 100) with {@code getAll} at the same instant, against one real memcached the lab
 * starts, with a bulk loader that takes {@code --db-ms} (default 50 ms) per call; once per round,
 * each round a new page. Counted per round, fleet-wide: the keys the loaders were asked for
 * (the goal with the fleet lease: at most 105 for a page of 100, where every JVM loading the
 * whole page is 400), values that are not the page's own (0), and the page's latency in each JVM
 * (not worse than one load plus the lease's wait). The fleet lease on and off, side by side.
 *
 * <pre>
 * java -jar benchmarks/target/stampede-lab.jar --bulk-fleet [--processes 4] [--keys 100]
 *     [--db-ms 50] [--rounds 5] [--lease on|off|both] [--quick] [--out DIR]
 * </pre>
 *
 * <p>Each JVM ({@link #main}) first warms up on a page of its own (JIT, the connection, and its
 * measured load time, which sets how often a miss that lost the lease polls), then says it is
 * ready ({@code partFile.ready}); once every JVM is, the lab writes the first round's instant to
 * each one's {@code partFile.go}. Each JVM waits for each round's instant and calls {@code getAll}
 * once; it writes one line per round to a part file.
 */
final class BulkFleetScenario {

  static final int MAX_LOADED_PER_100 = 105;

  private static final String USAGE = """
      stampede-lab --bulk-fleet: N JVMs read the same cold page with getAll at once (issue 23)
        --processes N   JVMs (default 4)
        --keys K        keys per page (default 100)
        --db-ms M       the bulk loader's time per call (default 50)
        --rounds R      pages, one after another, each cold (default 5)
        --lease MODE    on, off or both (default both)
        --quick         2 rounds (the IT's preset)
        --out DIR       bulk-fleet.txt and bulk-fleet.csv (default lab-results)
        --seed N        accepted for symmetry; the scenario draws nothing
        --no-charts     accepted; it draws none
      Goal with the lease: at most 105 keys loaded fleet-wide per page of 100 (scaled for other
      page sizes), no wrong value. Exit status 1 if a run with the lease misses it.
      """;

  static final String CSV_HEADER =
      "lease,round,processes,keys,loaded,wrong,page_ms_max,page_ms_median,db_ms";

  /** The command line. */
  record Options(int processes, int keys, int dbMillis, int rounds, List<Boolean> leases,
      Path out) {}

  /** One round's figures, fleet-wide. */
  record Round(boolean lease, int round, int processes, int keys, long loaded, long wrong,
      double pageMsMax, double pageMsMedian, int dbMillis) {

    String csvRow() {
      return String.format(Locale.ROOT, "%s,%d,%d,%d,%d,%d,%.1f,%.1f,%d", lease ? "on" : "off",
          round, processes, keys, loaded, wrong, pageMsMax, pageMsMedian, dbMillis);
    }

    boolean goalMet() {
      return loaded <= maxLoaded(keys) && wrong == 0;
    }
  }

  private BulkFleetScenario() {}

  static boolean requested(String[] args) {
    return Arrays.asList(args).contains("--bulk-fleet");
  }

  /** The bound of the goal for a page of {@code keys}: 105 per 100, rounded up. */
  static long maxLoaded(int keys) {
    return (keys * (long) MAX_LOADED_PER_100 + 99) / 100;
  }

  static int run(String[] args, PrintStream out) {
    if (ScenarioStart.help(args, USAGE, out)) {
      return 0;
    }
    ScenarioStart.prepare("net.spy.memcached", "error", "io.sustainablecache", "error",
        "io.sustainablecache.testkit", "warn");
    Options options = parse(args);
    try {
      return run(options, out);
    } catch (IOException e) {
      throw new IllegalStateException("the bulk-fleet scenario could not write: " + e, e);
    }
  }

  static Options parse(String[] args) {
    int processes = 4;
    int keys = 100;
    int db = 50;
    int rounds = 5;
    List<Boolean> leases = List.of(true, false);
    Path out = Path.of("lab-results");
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--bulk-fleet", "--no-charts" -> { }
        case "--quick" -> rounds = 2;
        case "--processes" -> processes = number(args, ++i, arg);
        case "--keys" -> keys = number(args, ++i, arg);
        case "--db-ms" -> db = number(args, ++i, arg);
        case "--rounds" -> rounds = number(args, ++i, arg);
        case "--seed" -> number(args, ++i, arg);
        case "--lease" -> leases = switch (NearScenario.value(args, ++i, arg)) {
          case "on" -> List.of(true);
          case "off" -> List.of(false);
          case "both" -> List.of(true, false);
          default -> throw new IllegalArgumentException("--lease takes on, off or both");
        };
        case "--out" -> out = Path.of(NearScenario.value(args, ++i, arg));
        default -> throw new IllegalArgumentException("--bulk-fleet: unknown option " + arg
            + " (see --bulk-fleet --help)");
      }
    }
    if (processes < 2 || keys < 1 || db < 0 || rounds < 1) {
      throw new IllegalArgumentException("--bulk-fleet needs 2 or more processes, a key, a"
          + " non-negative --db-ms and a round");
    }
    return new Options(processes, keys, db, rounds, leases, out);
  }

  private static int number(String[] args, int i, String option) {
    try {
      return Integer.parseInt(NearScenario.value(args, i, option).trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " expects a number: '" + args[i] + "'");
    }
  }

  private static int run(Options options, PrintStream out) throws IOException {
    Path dir = options.out();
    Files.createDirectories(dir.resolve("bulk-fleet"));
    out.printf("stampede-lab --bulk-fleet: %d JVMs, a cold page of %d keys each round, getAll at"
        + " once, bulk loader %d ms, %d rounds%n", options.processes(), options.keys(),
        options.dbMillis(), options.rounds());
    List<Round> rounds = new ArrayList<>();
    try (MemcachedCluster memcached = MemcachedCluster.start(1)) {
      for (boolean lease : options.leases()) {
        rounds.addAll(fleet(options, lease, memcached.address(0), dir.resolve("bulk-fleet")));
      }
    }
    String text = report(rounds);
    out.print(text);
    Files.writeString(dir.resolve("bulk-fleet.txt"), text, StandardCharsets.UTF_8);
    StringBuilder csv = new StringBuilder(CSV_HEADER).append('\n');
    rounds.forEach(r -> csv.append(r.csvRow()).append('\n'));
    Files.writeString(dir.resolve("bulk-fleet.csv"), csv, StandardCharsets.UTF_8);
    out.printf("Wrote %s, %s%n", dir.resolve("bulk-fleet.txt"), dir.resolve("bulk-fleet.csv"));
    boolean ok = rounds.stream().filter(Round::lease).allMatch(Round::goalMet);
    if (!ok) {
      out.println("FAILED: with the fleet lease, a page loaded more than " + MAX_LOADED_PER_100
          + " keys per 100 fleet-wide, or a value was wrong");
    }
    return ok ? 0 : 1;
  }

  /** One fleet of JVMs, all rounds, the lease on or off. */
  private static List<Round> fleet(Options options, boolean lease, InetSocketAddress address,
      Path dir) throws IOException {
    String namespace = "bulk-" + Long.toHexString(System.nanoTime() & 0xFFFFFFFFL)
        + (lease ? "-on" : "-off");
    int members = options.processes();
    long gapMillis = 1_000L + 4L * options.dbMillis();
    List<Process> processes = new ArrayList<>();
    List<Path> parts = new ArrayList<>();
    for (int i = 0; i < members; i++) {
      Path part = dir.resolve(namespace + "-member" + i + ".txt");
      for (String suffix : List.of("", ".ready", ".go")) {
        Files.deleteIfExists(Path.of(part + suffix));
      }
      parts.add(part);
      processes.add(ChildJvm.start(List.of("-Xmx256m"), BulkFleetScenario.class, List.of(
          address.getHostString() + ":" + address.getPort(), namespace,
          Long.toString(gapMillis), Integer.toString(i), Integer.toString(options.keys()),
          Integer.toString(options.dbMillis()), Integer.toString(options.rounds()),
          lease ? "on" : "off", part.toString()),
          dir.resolve(namespace + "-member" + i + ".log")));
    }
    try { // each JVM started, connected and warmed up: the first round's instant
      for (int i = 0; i < members; i++) {
        Scenarios.awaitFile(Path.of(parts.get(i) + ".ready"), processes.get(i),
            "bulk-fleet member " + i + " did not start; see " + dir);
      }
    } catch (IllegalStateException e) {
      processes.forEach(Process::destroyForcibly);
      throw e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      processes.forEach(Process::destroyForcibly);
      throw new IllegalStateException("interrupted", e);
    }
    long startAt = System.currentTimeMillis() + 200;
    for (Path part : parts) {
      HibernateScenario.signal(Path.of(part + ".go"), Long.toString(startAt));
    }
    long limitMillis = options.rounds() * gapMillis + 120_000;
    for (int i = 0; i < members; i++) {
      Process p = processes.get(i);
      try {
        if (!p.waitFor(limitMillis, TimeUnit.MILLISECONDS)) {
          processes.forEach(Process::destroyForcibly);
          throw new IllegalStateException("bulk-fleet member " + i + " did not finish");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        processes.forEach(Process::destroyForcibly);
        throw new IllegalStateException("interrupted", e);
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException("bulk-fleet member " + i + " failed (exit "
            + p.exitValue() + "); see " + dir);
      }
    }
    // per round: loaded, wrong, and each member's page latency
    long[] loaded = new long[options.rounds()];
    long[] wrong = new long[options.rounds()];
    double[][] pageMs = new double[options.rounds()][members];
    for (int m = 0; m < members; m++) {
      for (String line : Files.readAllLines(parts.get(m))) {
        String[] cells = line.trim().split(" ");
        int round = Integer.parseInt(cells[0]);
        loaded[round] += Long.parseLong(cells[1]);
        wrong[round] += Long.parseLong(cells[2]);
        pageMs[round][m] = Long.parseLong(cells[3]) / 1000.0;
      }
    }
    List<Round> rounds = new ArrayList<>();
    for (int r = 0; r < options.rounds(); r++) {
      double[] sorted = pageMs[r].clone();
      Arrays.sort(sorted);
      rounds.add(new Round(lease, r, members, options.keys(), loaded[r], wrong[r],
          sorted[sorted.length - 1], sorted[sorted.length / 2], options.dbMillis()));
    }
    return rounds;
  }

  static String report(List<Round> rounds) {
    List<List<String>> rows = new ArrayList<>();
    for (Round r : rounds) {
      rows.add(Scenarios.row(r.lease() ? "on" : "off", r.round(), r.processes(), r.keys(),
          r.loaded(), r.wrong(), r.pageMsMedian(), r.pageMsMax(), r.dbMillis(),
          r.lease() ? Scenarios.yesNo(r.goalMet()) : "-"));
    }
    return Scenarios.table(List.of("lease", "round", "JVMs", "keys", "loaded", "wrong",
        "page_ms_p50", "page_ms_max", "db_ms", "goal"), rows)
        + """
        loaded: keys the JVMs' bulk loaders were asked for, fleet-wide, for one page (every JVM
        loading the whole page is JVMs x keys). page_ms: one getAll of the page in a JVM (p50 and
        max over the JVMs). goal (with the lease): loaded <= 105 per 100 keys, wrong 0.
        """;
  }

  /**
   * A member JVM: {@code host:port namespace gapMillis member keys dbMillis rounds on|off
   * partFile}; the first round's instant (wall-clock milliseconds) comes from {@code
   * partFile.go}, once it wrote {@code partFile.ready}.
   */
  public static void main(String[] args) throws Exception {
    if (args.length != 9) {
      System.err.println("usage: BulkFleetScenario host:port namespace gapMillis member keys"
          + " dbMillis rounds on|off partFile");
      System.exit(2);
    }
    InetSocketAddress address = StampedeLab.StoreHandle.parseAddress(args[0]);
    String namespace = args[1];
    long gapMillis = Long.parseLong(args[2]);
    int member = Integer.parseInt(args[3]);
    int keys = Integer.parseInt(args[4]);
    long dbMillis = Long.parseLong(args[5]);
    int rounds = Integer.parseInt(args[6]);
    boolean lease = "on".equals(args[7]);
    String partFile = args[8];
    AtomicLong asked = new AtomicLong();
    BulkLoader<String> db = wanted -> {
      asked.addAndGet(wanted.size());
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(dbMillis));
      Map<String, String> values = new HashMap<>();
      wanted.forEach(key -> values.put(key, "v:" + key));
      return values;
    };
    ArcusClient client = TxScenario.client(address);
    StringBuilder part = new StringBuilder();
    try (SustainableCache<String> cache = SustainableCache.builder(ArcusStore.of(client))
        .namespace(namespace).ttl(Duration.ofMinutes(1)).codec(ValueCodec.utf8())
        .fleetLease(lease).build()) {
      for (int w = 0; w < 3; w++) { // warm-up: a page of its own, not counted
        cache.getAll(page("warm" + member + "-" + w, 10), db);
      }
      Files.writeString(Path.of(partFile + ".ready"), "ready\n");
      long startAt = Long.parseLong(HibernateReader.await(Path.of(partFile + ".go")).trim());
      for (int round = 0; round < rounds; round++) {
        long at = startAt + round * gapMillis;
        long wait = at - System.currentTimeMillis();
        if (round == 0 && wait < 0) {
          System.err.println("warning: member " + member + " started " + -wait + " ms late");
        }
        if (wait > 0) {
          Thread.sleep(wait);
        }
        List<String> page = page("round" + round, keys);
        long before = asked.get();
        long start = System.nanoTime();
        Map<String, String> values = cache.getAll(page, db);
        long micros = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start);
        long wrongValues = page.stream().filter(key -> !("v:" + key).equals(values.get(key)))
            .count();
        part.append(round).append(' ').append(asked.get() - before).append(' ')
            .append(wrongValues).append(' ').append(micros).append('\n');
      }
    } finally {
      // getAll returns once its values are delivered: the last round's write-backs and lease
      // releases may still be queued on the connection, and shutdown() drops them; the other
      // members would then wait out their lease wait and load those keys again
      if (!client.waitForQueues(10, TimeUnit.SECONDS)) {
        System.err.println("warning: member " + member + " shut down with writes still queued");
      }
      client.shutdown();
    }
    Files.writeString(Path.of(partFile), part, StandardCharsets.UTF_8);
    System.exit(0);
  }

  private static List<String> page(String prefix, int keys) {
    List<String> page = new ArrayList<>(keys);
    for (int i = 0; i < keys; i++) {
      page.add(prefix + "-k" + i);
    }
    return page;
  }
}
