package io.sustainablecache.lab;

import io.sustainablecache.LoadingSustainableCache;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.arcus.ArcusStore;
import io.sustainablecache.testkit.memcached.MemcachedCluster;
import java.io.IOException;
import java.io.PrintStream;
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
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import net.spy.memcached.ArcusClient;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * {@code --coalesce} (issue 23, part 3): a loading cache ({@code build(bulkLoader)}) against the
 * same cache with a per-call loader ({@code get(key, loader)}), over one real memcached the lab
 * starts, with a simulated database whose query takes 5 ms ({@code --query-ms}) + 0.05 ms per id.
 * Three parts:
 * <ol>
 *   <li><b>burst</b>: 200 threads each ask for a different cold key at the same instant; per
 *       round: loader calls (goal: at most {@value #MAX_CALLS}) and the callers' p50 latency (goal:
 *       at most {@value #MAX_P50_FACTOR}x one query of as many ids, measured right after as one
 *       caller's {@code getAll} of as many cold keys: the query, 15 ms for 200 ids, and the store
 *       round trips around it, on the same loaded machine);</li>
 *   <li><b>idle</b>: one cold request at a time, spaced (one per second): the latency a request
 *       adds beyond its query (goal: none; the loading cache is given a 50 ms maximum wait, which
 *       an idle miss must not wait for);</li>
 *   <li><b>zipf</b>: 1,000 requests per second over 100,000 keys (Zipf 0.99), open loop: database
 *       calls per second, coalesced and not, side by side, with a chart.</li>
 * </ol>
 *
 * <pre>
 * java -jar benchmarks/target/stampede-lab.jar --coalesce [--threads 200] [--rounds 5]
 *     [--idle 10] [--zipf-seconds 30] [--rate 1000] [--keys 100000] [--max-batch 50]
 *     [--smoke] [--out DIR] [--no-charts]
 * </pre>
 */
final class CoalesceScenario {

  static final int MAX_CALLS = 10;
  static final double MAX_P50_FACTOR = 1.5;
  /**
   * The idle part's goal: a coalesced miss adds at most this much above a per-call one, ms (the
   * spread of a store round trip on a loaded two-core machine; a miss that waited for the
   * loading cache's {@value #IDLE_MAX_WAIT_MS} ms maximum wait would add that much).
   */
  static final double MAX_IDLE_EXTRA_MS = 5.0;
  /** The loading cache's maximum wait in the idle part: a miss that waited for it shows. */
  static final long IDLE_MAX_WAIT_MS = 50;

  private static final String USAGE = """
      stampede-lab --coalesce: concurrent misses coalesced into one query (issue 23, part 3)
        --threads N       burst: threads, each a different cold key at once (default 200)
        --rounds R        burst rounds, each on cold keys (default 5)
        --idle N          idle: cold requests, one per --idle-gap-ms (default 10)
        --idle-gap-ms M   the gap between idle requests (default 1000)
        --zipf-seconds S  zipf: seconds per cache (default 30)
        --rate R          zipf: requests per second (default 1000)
        --keys K          zipf: keys (default 100000)
        --query-ms Q      a query's fixed time, ms (default 5; then 0.05 ms per id)
        --max-batch B     the loading cache's maxBatchSize (default 50: 200 misses at once
                          make 4 full batches that start at once, and one more)
        --smoke           2 rounds, 7 idle requests 100 ms apart, 3 zipf seconds (the IT's preset)
        --out DIR         coalesce.txt, coalesce.csv, coalesce-zipf.png (default lab-results)
        --no-charts       no chart
        --seed N          the Zipf sequence's seed (default 1)
      The database: one query takes --query-ms + 0.05 ms per id. Goals: burst <= 10 loader calls and
      p50 <= 1.5x one getAll of as many cold ids (measured); idle: no added latency. Exit
      status 1 if missed.
      """;

  static final String CSV_HEADER = "part,cache,round,requests,calls,ids,p50_ms,p99_ms,"
      + "query_ms,one_query_ms,added_ms_p50,calls_per_s";

  /** The command line. */
  record Options(int threads, int rounds, int idle, long idleGapMillis, int zipfSeconds,
      int rate, int keys, int maxBatch, int queryMillis, Path out, boolean charts, long seed) {}

  /** One line of the report: a part's figures for one cache (and round). */
  record Row(String part, String cache, int round, long requests, long calls, long ids,
      double p50, double p99, double query, double oneQuery, double addedP50,
      double callsPerSecond) {

    String csv() {
      return String.format(Locale.ROOT, "%s,%s,%d,%d,%d,%d,%.2f,%.2f,%.2f,%.2f,%.2f,%.1f", part,
          cache, round, requests, calls, ids, p50, p99, query, oneQuery, addedP50,
          callsPerSecond);
    }
  }

  private CoalesceScenario() {}

  static boolean requested(String[] args) {
    return Arrays.asList(args).contains("--coalesce");
  }

  static int run(String[] args, PrintStream out) {
    if (ScenarioStart.help(args, USAGE, out)) {
      return 0;
    }
    ScenarioStart.prepare("net.spy.memcached", "error", "io.sustainablecache", "error",
        "io.sustainablecache.testkit", "warn");
    return ScenarioStart.guarded("the coalesce scenario",
        () -> run(parse(args), out));
  }

  static Options parse(String[] args) {
    int threads = 200;
    int rounds = 5;
    int idle = 10;
    long gap = 1_000;
    int zipfSeconds = 30;
    int rate = 1_000;
    int keys = 100_000;
    int maxBatch = 50;
    int queryMillis = 5;
    Path out = Path.of("lab-results");
    boolean charts = true;
    long seed = 1;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--coalesce" -> { }
        case "--smoke" -> {
          rounds = 2;
          idle = 7;
          gap = 100;
          zipfSeconds = 3;
        }
        case "--threads" -> threads = number(args, ++i, arg);
        case "--rounds" -> rounds = number(args, ++i, arg);
        case "--idle" -> idle = number(args, ++i, arg);
        case "--idle-gap-ms" -> gap = number(args, ++i, arg);
        case "--zipf-seconds" -> zipfSeconds = number(args, ++i, arg);
        case "--rate" -> rate = number(args, ++i, arg);
        case "--keys" -> keys = number(args, ++i, arg);
        case "--max-batch" -> maxBatch = number(args, ++i, arg);
        case "--query-ms" -> queryMillis = number(args, ++i, arg);
        case "--out" -> out = Path.of(NearScenario.value(args, ++i, arg));
        case "--no-charts" -> charts = false;
        case "--seed" -> seed = number(args, ++i, arg);
        default -> throw new IllegalArgumentException("--coalesce: unknown option " + arg
            + " (see --coalesce --help)");
      }
    }
    if (threads < 2 || rounds < 1 || idle < 1 || zipfSeconds < 1 || rate < 1 || keys < 1
        || maxBatch < 1) {
      throw new IllegalArgumentException("--coalesce needs 2 or more threads, and positive"
          + " rounds, idle requests, zipf seconds, rate, keys and max batch");
    }
    return new Options(threads, rounds, idle, gap, zipfSeconds, rate, keys, maxBatch,
        queryMillis, out, charts, seed);
  }

  private static int number(String[] args, int i, String option) {
    try {
      return Integer.parseInt(NearScenario.value(args, i, option).trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " expects a number: '" + args[i] + "'");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The database

  /** A database whose query of n ids takes a fixed time + 0.05 ms per id; counts its calls. */
  static final class Database {
    final int baseMillis;
    final AtomicLong calls = new AtomicLong();
    final AtomicLong ids = new AtomicLong();
    /** Each call's start (ms since {@link #origin}), for the per-second chart. */
    final ConcurrentLinkedQueue<Long> starts = new ConcurrentLinkedQueue<>();
    /** Each call's own time, ns. */
    final ConcurrentLinkedQueue<Long> queryNanos = new ConcurrentLinkedQueue<>();
    volatile long origin = System.nanoTime();

    Database(int baseMillis) {
      this.baseMillis = baseMillis;
    }

    double queryMillis(int ids) {
      return baseMillis + 0.05 * ids;
    }

    Map<String, String> query(Set<String> keys) {
      long start = System.nanoTime();
      calls.incrementAndGet();
      ids.addAndGet(keys.size());
      starts.add(TimeUnit.NANOSECONDS.toMillis(start - origin));
      long until = start + (long) (queryMillis(keys.size()) * 1_000_000);
      for (long left = until - System.nanoTime(); left > 0; left = until - System.nanoTime()) {
        LockSupport.parkNanos(left);
      }
      Map<String, String> values = new HashMap<>();
      keys.forEach(key -> values.put(key, "v-" + key));
      queryNanos.add(System.nanoTime() - start);
      return values;
    }

    void reset() {
      calls.set(0);
      ids.set(0);
      starts.clear();
      queryNanos.clear();
      origin = System.nanoTime();
    }
  }

  // ---------------------------------------------------------------------------------------------

  private static int run(Options options, PrintStream out)
      throws IOException, InterruptedException {
    Path dir = options.out();
    Files.createDirectories(dir);
    out.printf("stampede-lab --coalesce: burst of %d threads x %d rounds; %d idle requests %d ms"
        + " apart; zipf %,d req/s over %,d keys, %d s per cache; maxBatchSize %d%n",
        options.threads(), options.rounds(), options.idle(), options.idleGapMillis(),
        options.rate(), options.keys(), options.zipfSeconds(), options.maxBatch());
    List<Row> rows = new ArrayList<>();
    List<ZipfRun> zipf = new ArrayList<>();
    try (MemcachedCluster memcached = MemcachedCluster.start(1)) {
      ArcusClient client = TxScenario.client(memcached.address(0));
      try {
        ArcusStore store = ArcusStore.of(client);
        String run = Long.toHexString(System.nanoTime() & 0xFFFFFFFFL);
        for (int round = 0; round < options.rounds(); round++) {
          for (boolean coalesced : List.of(true, false)) {
            rows.add(burst(store, "co-" + run + "-b" + round + (coalesced ? "c" : "u"),
                coalesced, round, options));
          }
        }
        rows.addAll(idle(store, "co-" + run + "-i", options));
        for (boolean coalesced : List.of(true, false)) {
          ZipfRun result = zipf(store, "co-" + run + "-z" + (coalesced ? "c" : "u"), coalesced,
              options);
          zipf.add(result);
          rows.add(result.row());
        }
      } finally {
        client.shutdown();
      }
    }
    String text = report(rows, options);
    out.print(text);
    Files.writeString(dir.resolve("coalesce.txt"), text, StandardCharsets.UTF_8);
    StringBuilder csv = new StringBuilder(CSV_HEADER).append('\n');
    rows.forEach(r -> csv.append(r.csv()).append('\n'));
    Files.writeString(dir.resolve("coalesce.csv"), csv, StandardCharsets.UTF_8);
    if (options.charts()) {
      Charts.save(chart(zipf, options), dir.resolve("coalesce-zipf.png"));
    }
    out.printf("Wrote %s, %s%s%n", dir.resolve("coalesce.txt"), dir.resolve("coalesce.csv"),
        options.charts() ? ", " + dir.resolve("coalesce-zipf.png") : "");
    List<String> missed = missedGoals(rows);
    missed.forEach(m -> out.println("FAILED: " + m));
    return missed.isEmpty() ? 0 : 1;
  }

  /** A cache over {@code store}: the loading one (coalescing) or one for per-call loaders. */
  private static SustainableCache<String> cache(ArcusStore store, String namespace,
      boolean coalesced, Database db, int maxBatch, Duration maxWait) {
    SustainableCacheBuilder<String> builder = SustainableCache.builder(store)
        .namespace(namespace).ttl(Duration.ofMinutes(10)).codec(ValueCodec.utf8())
        .loadTimeout(Duration.ofSeconds(5));
    if (!coalesced) {
      return builder.build();
    }
    if (maxWait == null) {
      builder.coalesce(maxBatch);
    } else {
      builder.coalesce(maxBatch, maxWait);
    }
    return builder.build(db::query);
  }

  private static String get(SustainableCache<String> cache, boolean coalesced, Database db,
      String key) {
    return coalesced ? ((LoadingSustainableCache<String>) cache).get(key)
        : cache.get(key, k -> db.query(Set.of(k)).get(k));
  }

  /** 200 threads, a different cold key each, at one instant. */
  private static Row burst(ArcusStore store, String namespace, boolean coalesced, int round,
      Options options) throws InterruptedException {
    Database db = new Database(options.queryMillis());
    int threads = options.threads();
    long[] latencies = new long[threads];
    double oneQuery = Double.NaN;
    long calls;
    try (SustainableCache<String> cache = cache(store, namespace, coalesced, db,
        options.maxBatch(), null)) {
      get(cache, coalesced, db, "warm"); // the connection, the JIT, the load-time estimate
      db.reset();
      CyclicBarrier start = new CyclicBarrier(threads);
      CountDownLatch done = new CountDownLatch(threads);
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int id = t;
        Thread worker = new Thread(() -> {
          try {
            start.await();
            long begin = System.nanoTime();
            String value = get(cache, coalesced, db, "id" + id);
            latencies[id] = System.nanoTime() - begin;
            if (!value.equals("v-id" + id)) {
              throw new IllegalStateException("wrong value " + value + " for id" + id);
            }
          } catch (Exception e) {
            latencies[id] = -1;
          } finally {
            done.countDown();
          }
        }, "coalesce-burst-" + t);
        worker.start();
        workers.add(worker);
      }
      if (!done.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the burst did not finish within 60 s");
      }
      calls = db.calls.get();
      if (coalesced) { // one query of as many cold ids, from one caller, as the cache makes it
        List<String> ids = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          ids.add("q" + t);
        }
        long begin = System.nanoTime();
        ((LoadingSustainableCache<String>) cache).getAll(ids);
        oneQuery = (System.nanoTime() - begin) / 1e6;
      }
    }
    long failed = Arrays.stream(latencies).filter(l -> l < 0).count();
    if (failed > 0) {
      throw new IllegalStateException(failed + " burst requests failed");
    }
    Arrays.sort(latencies);
    return new Row("burst", coalesced ? "coalesced" : "per-call", round, threads,
        calls, threads, percentile(latencies, 0.50), percentile(latencies, 0.99),
        db.queryMillis(threads), oneQuery, Double.NaN, Double.NaN);
  }

  /**
   * Cold requests one at a time, the two caches taking turns (so that the machine's load drifts
   * alike for both): what a request adds beyond its query.
   */
  private static List<Row> idle(ArcusStore store, String namespace, Options options) {
    Database db = new Database(options.queryMillis());
    int n = options.idle();
    long[][] added = new long[2][n];
    long[][] latencies = new long[2][n];
    try (SustainableCache<String> coalesced = cache(store, namespace + "c", true, db,
            options.maxBatch(), Duration.ofMillis(IDLE_MAX_WAIT_MS));
        SustainableCache<String> perCall = cache(store, namespace + "u", false, db,
            options.maxBatch(), null)) {
      get(coalesced, true, db, "warm");
      get(perCall, false, db, "warm");
      for (int i = 0; i < n; i++) {
        for (int c = 0; c < 2; c++) {
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(options.idleGapMillis()));
          db.queryNanos.clear();
          long begin = System.nanoTime();
          get(c == 0 ? coalesced : perCall, c == 0, db, "idle" + i);
          latencies[c][i] = System.nanoTime() - begin;
          added[c][i] = latencies[c][i] - db.queryNanos.stream().mapToLong(Long::longValue).sum();
        }
      }
    }
    List<Row> rows = new ArrayList<>();
    for (int c = 0; c < 2; c++) {
      Arrays.sort(added[c]);
      Arrays.sort(latencies[c]);
      rows.add(new Row("idle", c == 0 ? "coalesced" : "per-call", 0, n, n, n,
          percentile(latencies[c], 0.5), percentile(latencies[c], 0.99),
          db.queryMillis(1), Double.NaN, percentile(added[c], 0.5), Double.NaN));
    }
    return rows;
  }

  /** A Zipf run's figures and its calls' start times, for the chart. */
  record ZipfRun(Row row, String label, List<Long> starts, int seconds) {}

  /** {@code rate} requests per second, open loop, for {@code zipfSeconds}. */
  private static ZipfRun zipf(ArcusStore store, String namespace, boolean coalesced,
      Options options) throws InterruptedException {
    Database db = new Database(options.queryMillis());
    int requests = options.rate() * options.zipfSeconds();
    int[] sequence = NearScenario.zipfSequence(options.keys(), 0.99, requests, options.seed());
    long[] latencies = new long[requests];
    AtomicLong failures = new AtomicLong();
    ExecutorService workers = Executors.newFixedThreadPool(64);
    try (SustainableCache<String> cache = cache(store, namespace, coalesced, db,
        options.maxBatch(), null)) {
      get(cache, coalesced, db, "warm");
      db.reset();
      long origin = db.origin;
      long intervalNanos = 1_000_000_000L / options.rate();
      CountDownLatch done = new CountDownLatch(requests);
      for (int i = 0; i < requests; i++) {
        long due = origin + i * intervalNanos;
        for (long left = due - System.nanoTime(); left > 0; left = due - System.nanoTime()) {
          LockSupport.parkNanos(left);
        }
        int index = i;
        workers.execute(() -> {
          long begin = System.nanoTime();
          try {
            get(cache, coalesced, db, "z" + sequence[index]);
          } catch (RuntimeException e) {
            failures.incrementAndGet();
          } finally {
            latencies[index] = System.nanoTime() - begin;
            done.countDown();
          }
        });
      }
      if (!done.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the zipf run did not finish within 60 s");
      }
    } finally {
      workers.shutdownNow();
    }
    if (failures.get() > 0) {
      throw new IllegalStateException(failures.get() + " zipf requests failed");
    }
    Arrays.sort(latencies);
    String label = coalesced ? "coalesced" : "per-call";
    double seconds = options.zipfSeconds();
    Row row = new Row("zipf", label, 0, requests, db.calls.get(), db.ids.get(),
        percentile(latencies, 0.5), percentile(latencies, 0.99), Double.NaN, Double.NaN,
        Double.NaN, db.calls.get() / seconds);
    return new ZipfRun(row, label, List.copyOf(db.starts), options.zipfSeconds());
  }

  private static double percentile(long[] sortedNanos, double q) {
    int i = (int) Math.min(sortedNanos.length - 1, Math.floor(q * sortedNanos.length));
    return sortedNanos[Math.max(0, i)] / 1e6;
  }

  // ---------------------------------------------------------------------------------------------
  // Goals and report

  static List<String> missedGoals(List<Row> rows) {
    List<String> missed = new ArrayList<>();
    for (Row r : rows) {
      if (r.part().equals("burst") && r.cache().equals("coalesced")) {
        if (r.calls() > MAX_CALLS) {
          missed.add("burst round " + r.round() + ": " + r.calls() + " loader calls (goal <= "
              + MAX_CALLS + ")");
        }
        if (r.p50() > MAX_P50_FACTOR * r.oneQuery()) {
          missed.add(String.format(Locale.ROOT, "burst round %d: p50 %.1f ms (goal <= %.1f ms)",
              r.round(), r.p50(), MAX_P50_FACTOR * r.oneQuery()));
        }
      }
    }
    Row idleCoalesced = find(rows, "idle", "coalesced");
    Row idlePerCall = find(rows, "idle", "per-call");
    if (idleCoalesced != null && idlePerCall != null
        && idleCoalesced.addedP50() > idlePerCall.addedP50() + MAX_IDLE_EXTRA_MS) {
      missed.add(String.format(Locale.ROOT, "idle: added latency %.2f ms against %.2f ms per"
          + " call (goal: no more than %.1f ms above)", idleCoalesced.addedP50(),
          idlePerCall.addedP50(), MAX_IDLE_EXTRA_MS));
    }
    return missed;
  }

  private static Row find(List<Row> rows, String part, String cache) {
    return rows.stream().filter(r -> r.part().equals(part) && r.cache().equals(cache))
        .findFirst().orElse(null);
  }

  static String report(List<Row> rows, Options options) {
    List<List<String>> burst = new ArrayList<>();
    List<List<String>> idle = new ArrayList<>();
    List<List<String>> zipf = new ArrayList<>();
    for (Row r : rows) {
      switch (r.part()) {
        case "burst" -> burst.add(Scenarios.row(r.cache(), r.round(), r.requests(), r.calls(),
            r.ids(), r.p50(), r.p99(), r.query(), r.oneQuery(), r.cache().equals("coalesced")
                ? Scenarios.yesNo(r.calls() <= MAX_CALLS
                    && r.p50() <= MAX_P50_FACTOR * r.oneQuery()) : "-"));
        case "idle" -> idle.add(Scenarios.row(r.cache(), r.requests(), r.p50(), r.addedP50()));
        default -> zipf.add(Scenarios.row(r.cache(), r.requests(), r.calls(), r.ids(),
            r.callsPerSecond(), r.p50(), r.p99()));
      }
    }
    return "burst: " + options.threads() + " threads, a different cold key each, at once\n"
        + Scenarios.table(List.of("cache", "round", "requests", "calls", "ids", "p50_ms",
            "p99_ms", "query_ms", "one_query_ms", "goal"), burst)
        + "query_ms: the database's time for one query of all the burst's ids. one_query_ms:"
        + " one caller's getAll of as many cold ids through the same cache right after the burst"
        + " (the query and the store round trips around it, on the same machine at the same"
        + " time; maxBatchSize splits it into calls that run in parallel). goal: calls <= "
        + MAX_CALLS + ", p50 <= " + MAX_P50_FACTOR
        + " x one_query_ms.\n\n"
        + "idle: one cold request every " + options.idleGapMillis() + " ms, the caches taking"
        + " turns (the loading cache with a " + IDLE_MAX_WAIT_MS + " ms maxWait)\n"
        + Scenarios.table(List.of("cache", "requests", "p50_ms", "added_ms_p50"), idle)
        + "added_ms: a request's latency less its query's time (store round trips). goal: the"
        + " coalesced cache adds no more than " + MAX_IDLE_EXTRA_MS + " ms above per-call.\n\n"
        + "zipf: " + options.rate() + " req/s over " + options.keys() + " keys (Zipf 0.99), "
        + options.zipfSeconds() + " s per cache, each cold at its start\n"
        + Scenarios.table(List.of("cache", "requests", "db_calls", "ids", "calls_per_s",
            "p50_ms", "p99_ms"), zipf)
        + "db_calls: database queries; ids: the ids they asked for.\n";
  }

  private static XYChart chart(List<ZipfRun> runs, Options options) {
    XYChart chart = new XYChartBuilder().width(1000).height(420)
        .title(String.format(Locale.ROOT, "Database calls per second: %,d req/s, %,d keys"
            + " (Zipf 0.99), query %d ms + 0.05 ms/id", options.rate(), options.keys(),
            options.queryMillis()))
        .xAxisTitle("time (s)").yAxisTitle("database calls per second").build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
    chart.getStyler().setYAxisMin(0.0);
    for (ZipfRun run : runs) {
      double[] x = new double[run.seconds()];
      double[] y = new double[run.seconds()];
      for (int s = 0; s < x.length; s++) {
        x[s] = s;
      }
      for (long start : run.starts()) {
        int s = (int) (start / 1000);
        if (s >= 0 && s < y.length) {
          y[s]++;
        }
      }
      XYSeries line = chart.addSeries(run.label(), x, y);
      line.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Step);
      line.setMarker(SeriesMarkers.NONE);
    }
    return chart;
  }
}
