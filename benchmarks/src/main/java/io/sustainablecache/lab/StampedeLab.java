package io.sustainablecache.lab;

import io.sustainablecache.arcus.ArcusStore;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.io.IOException;
import java.io.PrintStream;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ConnectionFactoryBuilder;

/**
 * The stampede lab: compares plain TTL caching, locking, PER and SUS under open-loop load and
 * writes a table, {@code results.csv} and charts.
 *
 * <pre>
 * java -jar benchmarks/target/stampede-lab.jar                 # quick preset, virtual time
 * java -jar benchmarks/target/stampede-lab.jar --full          # the whole grid, virtual time
 * java -jar benchmarks/target/stampede-lab.jar --quick --memcached auto
 * java -jar benchmarks/target/stampede-lab.jar --quick --memcached 127.0.0.1:11211
 * java -jar benchmarks/target/stampede-lab.jar --quick --arcus 127.0.0.1:2181/test
 * java -jar benchmarks/target/stampede-lab.jar --cluster 3 --kill-node-at 20s
 * </pre>
 *
 * Run with {@code --help} for every option.
 */
public final class StampedeLab {

  static final String USAGE = """
      Usage: stampede-lab [options]

      Compares caching strategies on one hot key (or Zipf keys) under a fixed request rate.
      Without --memcached/--arcus it runs in virtual time against an in-memory model of
      memcached (including its one-second expiry tick): exactly repeatable, seconds per grid.

      Presets (default: --quick)
        --quick              none, lock, PER, SUS at 10 and 100 req/s with 1 instance, and SUS
                             with 4 instances; TTL 3 s, DB 100 ms. In real time: none, lock,
                             PER, SUS at 100 req/s and none, PER, SUS at 10 req/s, 11 periods
                             (10 measured; about 4.5 minutes)
        --full               the whole grid: 4 policies x rates 1,10,100,1000 x TTL 3,10,30 s
                             x DB 10,100,500 ms x 1 and 4 instances

      Scenarios (instead of the comparison; each writes DIR/<name>.csv and DIR/charts/<name>-*)
        --scenario LIST      comma-separated, or all (every one but compare):
          compare            the policy comparison above (the default)
          fleet              SUS on 1, 4, 16 instances (real time: 4), fleet lease on and off,
                             10 and 100 req/s, one hot key, TTL 3 s, DB 100 ms
          coldstart          4 and 16 instances miss one key at the same instant, lease on/off
          zipf               100,000 keys, Zipf 0.99, 2,000 req/s: none, lock, SUS (misses, DB
                             loads/s, wasted refreshes, heap); virtual time only
          getall             pages of 100 keys: getAll vs 100 gets (round trips, loader calls,
                             pages/s; real time) and coalesced background refreshes (virtual)
          absent             20 % of requests for 1,000 ids without a row: noValueTtl = TTL vs 0
          failingdb          the database fails for 10 s: loader calls per key per back-off
                             window, 1 and 4 instances, lease on and off
          jitter             10,000 keys loaded by one getAll, then 3 TTL periods of traffic:
                             ttlJitter 0, 0.1, 0.25, 0.5; virtual time only
        --processes N        fleet in real time: also run N separate JVMs against the memcached
                             (each hosting one instance at 1/N of the rate; lease on and off)
        --repeat N           repeat each run N times (seeds S, S+1, ...); tables show medians

      Where
        --memcached H:P|auto real time against a memcached at H:P, or one obtained like the
                             tests do (MEMCACHED_ADDRESS, else the local memcached binary on
                             PATH, /usr/bin or /usr/local/bin; the lab has no Testcontainers)
        --arcus ZK/SVC       real time over ARCUS: ZooKeeper ensemble ZK, service code SVC
        Real-time runs give each instance its own client (connection).

      Overrides (comma-separated lists replace the preset's)
        --policies none,lock,PER,SUS   --rates 10,100   --ttls 3,10   --db 10,100
        --instances 1,4      --periods N (TTL periods per run incl. 1 warm-up; default 10
                             virtual, 11 real)  --keys N  --zipf S (default 1.0)
        --db-slowdown X      query time grows by X per extra concurrent query (default 0)
        --refresh-threads N  --refresh-queue N   per instance (defaults 4, 1024)
        --lease on|off       the fleet lease of lock/SUS (default: the library's, on for SUS)

      Faults
        --faults             instead of the comparison: the library under steady load against a
                             real memcached (--memcached H:P, default auto) behind the lab's fault
                             proxy: server down, server slow, database failing, refresh executor
                             saturated; writes faults.csv
        --outage-reads       readers of one hot key in 2 instances while memcached hangs 10 s,
                             then dies 10 s: the defaults vs the node breaker and outage reuse
                             off vs no cache; writes outage-reads.csv. --outage-reads --help
        --outage             a hot key, reader JVMs and a writer in transactions (H2) while
                             memcached is hung (SIGSTOP) 10 s, then killed 10 s: the defaults,
                             fail-closed and Spring's decorator; writes outage-*.csv.
                             --outage --help

      Cluster
        --near               instead of the comparison: the near cache against memcached
                             processes the lab starts (store reads under Zipf; staleness of four
                             reader JVMs under churn and faults); writes near.csv. --near --help
        --cluster N          instead of the comparison: SUS over N memcached processes the lab
                             starts (ARCUS adapter, ZooKeeper cache list), one killed under load;
                             writes cluster.csv. Its options: --cluster 3 --help

      Transactions
        --tx                 instead of the comparison: writes inside JDBC transactions (an H2
                             server the lab starts) against a memcached the lab starts, reader
                             JVMs checking every read: invalidate inside the transaction, after
                             the commit, or fenced (SustainableCache.fence); writes tx.csv.
                             --tx --help
        --tx --hot           one hot key written once a second in a transaction: DB loads per
                             write and read latency during writes, per invalidation (issue 30);
                             writes tx-hot.csv. --tx --hot --help

      Bulk reads across a fleet
        --bulk-fleet         instead of the comparison: N JVMs read the same cold page with
                             getAll at once against a memcached the lab starts (issue 23);
                             writes bulk-fleet.csv. --bulk-fleet --help
        --coalesce           instead of the comparison: concurrent misses of different keys
                             coalesced into one bulk query (a loading cache) against a
                             memcached the lab starts: a burst of 200 threads, idle requests,
                             Zipf load; writes coalesce.csv. --coalesce --help
        --spring             instead of the comparison: @Cacheable(sync = true) through Spring
                             against a memcached the lab starts: 200 concurrent cold ids
                             coalesced or not, idle misses, a page of 100 ids (90 cached) by
                             getAll or by 100 calls. --spring --help
      Hibernate
        --hibernate          instead of the comparison: Hibernate's second-level cache (none,
                             this project's provider without and with its near region, JCache
                             over a local Caffeine) with reader JVMs: reads/s, SQL/s, stale reads
                             under churn per access type, findMultiple's round trips; writes
                             hibernate-*.csv. --hibernate --help

      Output
        --out DIR            results.csv, results.txt and charts/ (default: lab-results)
        --no-charts          skip the PNG charts
        --seed N             random seed (default 42)
      """;

  private StampedeLab() {}

  public static void main(String[] args) {
    int status;
    try {
      status = run(args, System.out);
    } catch (IllegalArgumentException e) {
      System.err.println("stampede-lab: " + e.getMessage());
      System.err.println("Run with --help for usage.");
      status = 2;
    }
    System.exit(status);
  }

  /** Parsed command line. */
  record Options(List<LabPolicy.Kind> policies, List<Integer> rates, List<Integer> ttls,
      List<Integer> dbs, List<Integer> instances, Integer periods, int keys, double zipf,
      double dbSlowdown, int refreshThreads, int refreshQueue, String memcached, String arcus,
      Path out, boolean charts, long seed, boolean full, boolean faults, boolean help,
      Boolean lease, List<String> scenarios, int processes, int repeat) {

    boolean realTime() {
      return memcached != null || arcus != null;
    }
  }

  static Options parse(String[] args) {
    List<LabPolicy.Kind> policies = null;
    List<Integer> rates = null;
    List<Integer> ttls = null;
    List<Integer> dbs = null;
    List<Integer> instances = null;
    Integer periods = null;
    int keys = 1;
    double zipf = 1.0;
    double slowdown = 0;
    int threads = 4;
    int queue = 1024;
    String memcached = null;
    String arcus = null;
    Path out = Path.of("lab-results");
    boolean charts = true;
    long seed = 42;
    boolean full = false;
    boolean faults = false;
    boolean help = false;
    Boolean lease = null;
    List<String> scenarios = List.of();
    int processes = 0;
    int repeat = 1;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--help", "-h" -> help = true;
        case "--quick" -> full = false;
        case "--full" -> full = true;
        case "--no-charts" -> charts = false;
        case "--faults" -> faults = true;
        case "--memcached" -> memcached = value(args, ++i, arg);
        case "--arcus" -> arcus = value(args, ++i, arg);
        case "--out" -> out = Path.of(value(args, ++i, arg));
        case "--seed" -> seed = number(value(args, ++i, arg), arg, Long::parseLong);
        case "--policies" -> policies = list(value(args, ++i, arg), LabPolicy.Kind::parse);
        case "--rates" -> rates = ints(value(args, ++i, arg), arg);
        case "--ttls" -> ttls = ints(value(args, ++i, arg), arg);
        case "--db" -> dbs = ints(value(args, ++i, arg), arg);
        case "--instances" -> instances = ints(value(args, ++i, arg), arg);
        case "--periods" -> periods = number(value(args, ++i, arg), arg, Integer::parseInt);
        case "--keys" -> keys = number(value(args, ++i, arg), arg, Integer::parseInt);
        case "--zipf" -> zipf = number(value(args, ++i, arg), arg, Double::parseDouble);
        case "--db-slowdown" -> slowdown = number(value(args, ++i, arg), arg,
            Double::parseDouble);
        case "--refresh-threads" -> threads = number(value(args, ++i, arg), arg,
            Integer::parseInt);
        case "--refresh-queue" -> queue = number(value(args, ++i, arg), arg, Integer::parseInt);
        case "--lease" -> lease = switch (value(args, ++i, arg)) {
          case "on" -> Boolean.TRUE;
          case "off" -> Boolean.FALSE;
          default -> throw new IllegalArgumentException("--lease takes on or off");
        };
        case "--scenario", "--scenarios" -> scenarios = Scenarios.parse(value(args, ++i, arg));
        case "--processes" -> processes = number(value(args, ++i, arg), arg, Integer::parseInt);
        case "--repeat" -> repeat = number(value(args, ++i, arg), arg, Integer::parseInt);
        default -> throw new IllegalArgumentException("unknown option '" + arg + "'");
      }
    }
    if (memcached != null && arcus != null) {
      throw new IllegalArgumentException("choose one of --memcached and --arcus");
    }
    if (faults && arcus != null) {
      throw new IllegalArgumentException("--faults runs against a memcached: use --memcached");
    }
    if (repeat < 1 || processes < 0 || processes == 1) {
      throw new IllegalArgumentException("--repeat takes 1 or more, --processes 2 or more");
    }
    if (processes > 0 && (memcached == null || !scenarios.contains("fleet"))) {
      throw new IllegalArgumentException("--processes runs the fleet scenario in real time:"
          + " use it with --scenario fleet --memcached");
    }
    return new Options(policies, rates, ttls, dbs, instances, periods, keys, zipf, slowdown,
        threads, queue, memcached, arcus, out, charts, seed, full, faults, help, lease,
        scenarios, processes, repeat);
  }

  /** The runs an invocation asks for, in order. */
  static List<RunConfig> plan(Options o) {
    int periods = o.periods() != null ? o.periods() : o.realTime() ? 11 : 10;
    List<RunConfig> runs = new ArrayList<>();
    boolean custom = o.policies() != null || o.rates() != null || o.ttls() != null
        || o.dbs() != null || o.instances() != null;
    if (o.full() || custom) {
      List<LabPolicy.Kind> policies = o.policies() != null ? o.policies()
          : List.of(LabPolicy.Kind.values());
      List<Integer> rates = or(o.rates(), o.full() ? List.of(1, 10, 100, 1000) : List.of(10, 100));
      List<Integer> ttls = or(o.ttls(), o.full() ? List.of(3, 10, 30) : List.of(3));
      List<Integer> dbs = or(o.dbs(), o.full() ? List.of(10, 100, 500) : List.of(100));
      List<Integer> instances = or(o.instances(), o.full() ? List.of(1, 4) : List.of(1));
      for (int inst : instances) {
        for (int ttl : ttls) {
          for (int db : dbs) {
            for (int rate : rates) {
              for (LabPolicy.Kind policy : policies) {
                runs.add(config(o, policy, inst, rate, ttl, db, periods));
              }
            }
          }
        }
      }
      return runs;
    }
    if (o.realTime()) {
      // 10 measured periods per run, so that loads per period mean something; the 4-instance
      // runs and lock at 10 req/s (like none there) are left to the fleet scenario and --full.
      for (LabPolicy.Kind policy : LabPolicy.Kind.values()) {
        runs.add(config(o, policy, 1, 100, 3, 100, periods));
      }
      for (LabPolicy.Kind policy : List.of(LabPolicy.Kind.NONE, LabPolicy.Kind.PER,
          LabPolicy.Kind.SUS)) {
        runs.add(config(o, policy, 1, 10, 3, 100, periods));
      }
      return runs;
    }
    for (int rate : List.of(10, 100)) {
      for (LabPolicy.Kind policy : LabPolicy.Kind.values()) {
        runs.add(config(o, policy, 1, rate, 3, 100, periods));
      }
    }
    for (int rate : List.of(10, 100)) {
      runs.add(config(o, LabPolicy.Kind.SUS, 4, rate, 3, 100, periods));
    }
    return runs;
  }

  private static RunConfig config(Options o, LabPolicy.Kind policy, int instances, int rate,
      int ttl, int db, int periods) {
    return new RunConfig(policy, instances, rate, ttl, db, periods, o.keys(), o.zipf(),
        o.dbSlowdown(), o.refreshThreads(), o.refreshQueue(), o.seed(), o.lease());
  }

  static int run(String[] args, PrintStream out) {
    if (ClusterScenario.requested(args)) {
      return ClusterScenario.run(args, out);
    }
    if (NearScenario.requested(args)) {
      return NearScenario.run(args, out);
    }
    if (TxScenario.requested(args)) {
      return TxScenario.run(args, out);
    }
    if (BulkFleetScenario.requested(args)) {
      return BulkFleetScenario.run(args, out);
    }
    if (OutageScenario.requested(args)) {
      return OutageScenario.run(args, out);
    }
    if (OutageReadScenario.requested(args)) {
      return OutageReadScenario.run(args, out);
    }
    if (CoalesceScenario.requested(args)) {
      return CoalesceScenario.run(args, out);
    }
    if (SpringScenario.requested(args)) {
      return SpringScenario.run(args, out);
    }
    if (HibernateScenario.requested(args)) {
      return HibernateScenario.run(args, out);
    }
    System.setProperty("java.awt.headless", "true");
    Options options = parse(args);
    if (options.help()) {
      out.print(USAGE);
      return 0;
    }
    if (options.faults()) {
      return runFaults(options, out);
    }
    boolean scenarios = options.scenarios().stream().anyMatch(n -> !n.equals("compare"));
    if (scenarios && !options.scenarios().contains("compare")) {
      return Scenarios.run(options, out);
    }
    List<RunConfig> runs = plan(options);
    Path dir = options.out();
    try {
      Files.createDirectories(dir.resolve("charts"));
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot create output directory " + dir + ": " + e);
    }
    StoreHandle handle = options.realTime() ? StoreHandle.open(options, out) : null;
    out.printf("stampede-lab: %d runs, %s, seed %d, output in %s%n", runs.size(),
        handle == null ? "virtual time (in-memory memcached model with a 1 s expiry tick)"
            : "real time against " + handle.description, options.seed(), dir.toAbsolutePath());
    List<RunResult> all = new ArrayList<>();
    List<RunResult> results;
    try {
      results = runAll(runs, options.repeat(), handle, out, all);
      if (options.charts()) {
        for (RunResult result : results) {
          Charts.write(result, dir.resolve("charts"));
        }
        compareCharts(results, dir.resolve("charts"));
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot write charts: " + e, e);
    } finally {
      if (handle != null) {
        handle.close();
      }
    }
    results = Repeats.medians(all, options.repeat());
    String table = table(results)
        + (options.repeat() > 1 ? "(medians of " + options.repeat() + " runs each)\n" : "");
    out.println();
    out.print(table);
    out.print(verdict(results));
    try {
      writeCsv(all, dir.resolve("results.csv"));
      Files.writeString(dir.resolve("results.txt"), table + verdict(results),
          StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot write results: " + e, e);
    }
    out.printf("%nWrote %s, %s%s%n", dir.resolve("results.csv"), dir.resolve("results.txt"),
        options.charts() ? " and " + dir.resolve("charts") + "/*.png" : "");
    return scenarios ? Scenarios.run(options, out) : 0;
  }

  /**
   * Runs each config {@code repeat} times (seeds seed, seed + 1, ...), adding every result to
   * {@code all}; returns the first repetition's results (for the charts).
   */
  static List<RunResult> runAll(List<RunConfig> runs, int repeat, StoreHandle handle,
      PrintStream out, List<RunResult> all) {
    List<RunResult> first = new ArrayList<>();
    int total = runs.size() * repeat;
    int done = 0;
    for (int r = 0; r < repeat; r++) {
      for (RunConfig config : runs) {
        RunConfig run = config.withSeed(config.seed() + r);
        out.printf("[%3d/%d] %s ... ", ++done, total, run.describe());
        out.flush();
        RunResult result = handle == null ? LabRun.virtual(run) : LabRun.real(run, handle::store);
        all.add(result);
        if (r == 0) {
          first.add(result);
        }
        out.printf("%d misses, %.2f loads/period, p99 %.0f ms (%.1f s)%n", result.misses(),
            result.loadsPerPeriod(), result.p99Ms(), result.wallMillis() / 1000.0);
      }
    }
    return first;
  }

  /** One comparison per group of runs that differ only in policy (same instances, rate...). */
  static void compareCharts(List<RunResult> results, Path charts) throws IOException {
    java.util.Map<String, List<RunResult>> groups = new java.util.LinkedHashMap<>();
    for (RunResult r : results) {
      RunConfig c = r.config();
      String group = "compare-x" + c.instances() + "-" + c.tps() + "tps-ttl" + c.ttlSeconds()
          + "s-db" + c.dbMillis() + "ms";
      groups.computeIfAbsent(group, g -> new ArrayList<>()).add(r);
    }
    for (var group : groups.entrySet()) {
      if (group.getValue().size() > 1) {
        RunConfig c = group.getValue().get(0).config();
        String title = String.format(Locale.ROOT, "x%d @%d req/s, TTL %d s, DB %d ms",
            c.instances(), c.tps(), c.ttlSeconds(), c.dbMillis());
        Charts.compare(title, group.getKey(), group.getValue(),
            r -> r.config().policy().toString(), charts);
      }
    }
  }

  /** The fault suite: needs a real memcached, by default one obtained like the tests do. */
  static int runFaults(Options options, PrintStream out) {
    Path dir = options.out();
    InetSocketAddress address = memcached(options.memcached()).address();
    out.printf("stampede-lab --faults: SUS through the ARCUS adapter against memcached %s:%d"
        + " behind a fault proxy; output in %s%n", address.getHostString(), address.getPort(),
        dir.toAbsolutePath());
    List<FaultSuite.FaultResult> results = new ArrayList<>();
    for (int r = 0; r < options.repeat(); r++) {
      results.addAll(new FaultSuite(address, out).run());
    }
    String table = FaultSuite.table(FaultSuite.medians(results))
        + (options.repeat() > 1 ? "(medians of " + options.repeat() + " runs each)\n" : "");
    out.println();
    out.print(table);
    try {
      Files.createDirectories(dir);
      StringBuilder csv = new StringBuilder(FaultSuite.CSV_HEADER).append('\n');
      results.forEach(r -> csv.append(r.csvRow()).append('\n'));
      Files.writeString(dir.resolve("faults.csv"), csv, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot write faults.csv: " + e, e);
    }
    out.printf("%nWrote %s%n", dir.resolve("faults.csv"));
    return 0;
  }

  static void writeCsv(List<RunResult> results, Path file) throws IOException {
    try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      w.write(RunResult.CSV_HEADER);
      w.write('\n');
      for (RunResult r : results) {
        w.write(r.csvRow());
        w.write('\n');
      }
    }
  }

  static String table(List<RunResult> results) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT,
        "%-6s %4s %6s %5s %5s | %8s %7s %6s %6s %9s %7s | %7s %7s %7s %8s | %6s %8s%n",
        "policy", "inst", "tps", "ttl_s", "db_ms", "requests", "misses", "waits", "loads",
        "loads/per", "writes", "p50_ms", "p99_ms", "max_ms", "hitp99ms", "max_db", "rejected"));
    for (RunResult r : results) {
      RunConfig c = r.config();
      b.append(String.format(Locale.ROOT,
          "%-6s %4d %6d %5d %5d | %8d %7d %6d %6d %9.2f %7d | %7.0f %7.0f %7.0f %8.0f | %6d %8d%n",
          c.policy(), c.instances(), c.tps(), c.ttlSeconds(), c.dbMillis(), r.requests(),
          r.misses(), r.refreshWaits(), r.loads(), r.loadsPerPeriod(), r.writes(), r.p50Ms(),
          r.p99Ms(), r.maxMs(), r.hitP99Ms(), r.maxDbConcurrency(), r.rejected()));
    }
    b.append("""
        misses: requests after warm-up that found no usable value (first fills excluded);
        waits: requests that waited for PER's inline recomputation; loads: DB queries after
        warm-up; loads/per: loads per key per TTL period; hitp99ms: p99 of cache hits.
        """);
    return b.toString();
  }

  /** Checks the SUS targets on single-instance runs at 10 req/s and more. */
  static String verdict(List<RunResult> results) {
    List<RunResult> sus = results.stream()
        .filter(r -> r.config().policy() == LabPolicy.Kind.SUS && r.config().instances() == 1
            && r.config().tps() >= 10)
        .toList();
    if (sus.isEmpty()) {
      return "";
    }
    long misses = sus.stream().mapToLong(RunResult::misses).sum();
    double maxLoads = sus.stream().mapToDouble(RunResult::loadsPerPeriod).max().orElse(0);
    boolean latency = sus.stream().allMatch(r -> r.p99Ms() <= 1.2 * r.hitP99Ms() + 1e-9);
    return String.format(Locale.ROOT, """

        SUS (1 instance, >= 10 req/s, %d runs): misses after warm-up %d (target 0); \
        max loads per TTL period %.2f (one per refresh cycle; refreshes land in the last tenth \
        of the TTL, so at most 1/0.9 = 1.11 per period); p99 within 1.2x of hit p99: %s
        """, sus.size(), misses, maxLoads, latency ? "yes" : "no");
  }

  private static String value(String[] args, int i, String option) {
    if (i >= args.length) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return args[i];
  }

  private static <T> T number(String text, String option, Function<String, T> parse) {
    try {
      return parse.apply(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " expects a number: '" + text + "'");
    }
  }

  private static List<Integer> ints(String text, String option) {
    return list(text, t -> number(t, option, Integer::parseInt));
  }

  private static <T> List<T> list(String text, Function<String, T> parse) {
    return Arrays.stream(text.split(",")).filter(t -> !t.isBlank()).map(parse).toList();
  }

  private static <T> List<T> or(List<T> value, List<T> fallback) {
    return value != null ? value : fallback;
  }

  /** A memcached to run against, and how it was found. */
  record Memcached(InetSocketAddress address, String description) {}

  /**
   * Resolves {@code --memcached}: {@code host:port}, or {@code auto}/absent for one obtained the
   * way the tests obtain one (the shared server lives until the JVM exits).
   */
  static Memcached memcached(String spec) {
    if (spec != null && !"auto".equals(spec)) {
      InetSocketAddress address = StoreHandle.parseAddress(spec);
      return new Memcached(address, "memcached " + spec);
    }
    try {
      MemcachedServer server = MemcachedServer.shared();
      InetSocketAddress address = server.address();
      return new Memcached(address, "memcached " + address.getHostString() + ":"
          + address.getPort() + " (" + server.description() + ")");
    } catch (RuntimeException e) { // none found: the testkit's message says how to get one
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  /**
   * The real store and whatever must be closed with it: one client per simulated instance, as
   * separate app instances would have (the first opened at once, the others on demand).
   */
  static final class StoreHandle implements AutoCloseable {
    final CacheStore store;
    final String description;
    final InetSocketAddress address;
    private final java.util.function.Supplier<ArcusClient> connect;
    private final List<ArcusClient> clients = new ArrayList<>();
    private final List<CacheStore> stores = new ArrayList<>();

    private StoreHandle(CacheStore store, String description, ArcusClient client,
        InetSocketAddress address, java.util.function.Supplier<ArcusClient> connect) {
      this.store = store;
      this.description = description;
      this.address = address;
      this.connect = connect;
      clients.add(client);
      stores.add(store);
    }

    /** The store of instance {@code i}, each over its own client. */
    synchronized CacheStore store(int i) {
      while (stores.size() <= i) {
        ArcusClient another = connect.get();
        clients.add(another);
        stores.add(ArcusStore.of(another));
      }
      return stores.get(i);
    }

    static StoreHandle open(Options o, PrintStream out) {
      try {
        if (o.arcus() != null) {
          int slash = o.arcus().lastIndexOf('/');
          if (slash <= 0 || slash == o.arcus().length() - 1) {
            throw new IllegalArgumentException(
                "--arcus expects zkHost:port/serviceCode: '" + o.arcus() + "'");
          }
          String zk = o.arcus().substring(0, slash);
          String service = o.arcus().substring(slash + 1);
          java.util.function.Supplier<ArcusClient> connect = () -> ArcusClient.createArcusClient(
              zk, service, new ConnectionFactoryBuilder());
          ArcusClient client = connect.get();
          return new StoreHandle(ArcusStore.of(client), "ARCUS " + o.arcus(), client, null,
              connect);
        }
        Memcached memcached = memcached(o.memcached());
        java.util.function.Supplier<ArcusClient> connect = () -> {
          try {
            return new ArcusClient(new ConnectionFactoryBuilder().build(),
                List.of(memcached.address()));
          } catch (IOException e) {
            throw new IllegalStateException("cannot connect: " + e, e);
          }
        };
        ArcusClient client = connect.get();
        return new StoreHandle(ArcusStore.of(client), memcached.description(), client,
            memcached.address(), connect);
      } catch (RuntimeException e) {
        if (e instanceof IllegalArgumentException || e instanceof IllegalStateException) {
          throw e;
        }
        // e.g. the ARCUS client refusing an unknown service code
        throw new IllegalArgumentException(e.getMessage(), e);
      }
    }

    static InetSocketAddress parseAddress(String hostPort) {
      int colon = hostPort.lastIndexOf(':');
      if (colon <= 0) {
        throw new IllegalArgumentException(
            "--memcached expects host:port or auto: '" + hostPort + "'");
      }
      int port = number(hostPort.substring(colon + 1), "--memcached", Integer::parseInt);
      return new InetSocketAddress(hostPort.substring(0, colon), port);
    }

    @Override
    public synchronized void close() {
      clients.forEach(ArcusClient::shutdown);
    }
  }
}
