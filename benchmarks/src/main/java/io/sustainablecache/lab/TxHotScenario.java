package io.sustainablecache.lab;

import io.sustainablecache.testkit.memcached.MemcachedCluster;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.h2.tools.Server;
import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * {@code --tx --hot}: one hot key written once a second inside a database transaction while
 * reader JVMs read it at a fixed total rate (issue 30, part 4): what a write costs the database
 * and the readers, for the write fence of this build, the previous release's fence, Spring's
 * after-commit decorator and the plain evict inside the transaction, side by side in one run.
 *
 * <p>The lab starts one memcached process and an H2 TCP server holding {@code item(id,
 * version)} with one row. Per configuration it starts reader JVMs ({@link TxReader}: the total
 * rate split between them, the key read once before the start so that the cache is warm, TTL 10
 * min so that nothing expires) and one writer JVM ({@link TxHotWriter}: a transaction a second
 * that updates the row, invalidates or fences its key and holds {@code hold} ms before the
 * commit). The previous release's fence is this build with {@code
 * -Dio.sustainablecache.internal.fenceWithoutPrior=true} on its writer and readers (a fence then
 * carries no prior: every read under it loads) and no {@code beforeCommit()} (which that release
 * did not have). A no-write run per reader setup ({@code none}) gives the baseline: its loads
 * per second are subtracted from every run's loads, and its latency is the reads' without
 * writes.
 *
 * <p>Figures per run: <b>DB loads per committed write</b> (the readers' loader calls from the
 * start, less the baseline's, divided by the committed writes), split by when each load began:
 * while the transaction was open before its commit step (for {@code fenced}, before {@code
 * beforeCommit()}), between the commit step and the write's return (the release or the
 * invalidation included), and after the write returned (the reload); read latency p50/p99 of the
 * reads that began while a transaction was open (from its beginning until the whole write
 * returned) and of the others; reads stale after the commit and after the write returned (every
 * read checked against the commit history, {@link TxScenario#stale}); stale values after
 * quiescence; writes committed.
 */
final class TxHotScenario {

  static final String USAGE = """
      stampede-lab --tx --hot: one hot key, read by reader JVMs at a fixed total rate, written
      by one transaction a second that updates the row, invalidates or fences the key and holds
      before the commit; a real memcached and an H2 TCP server (the lab starts both). Per
      configuration: DB loads per committed write (beyond a no-write baseline), reader latency
      p50/p99 during writes and outside them, stale reads, writes committed. Writes tx-hot.csv,
      tx-hot.txt and charts/tx-hot-loads.png, charts/tx-hot-p99.png under --out.

        --quick            the integration test's preset: --runs fenced --hold 50 --jvms 1
                           --rates 600 --seconds 4 --no-baseline
        --runs LIST        fenced (fence, update, beforeCommit, commit, committed()),
                           fenced-noprior (the previous release's fence: every JVM of the run
                           with -Dio.sustainablecache.internal.fenceWithoutPrior=true, no
                           beforeCommit), after-commit (Spring's TransactionAwareCacheDecorator),
                           plain (evict inside the transaction); default: these four;
                           also fenced-put (as fenced, completed with committed(newVersion))
        --hold LIST        ms each transaction holds before its commit (default 10,50,200)
        --jvms LIST        reader JVMs (default 1,3)
        --rates LIST       total reads per second, split between the reader JVMs
                           (default 300,1800)
        --seconds N        writes (one a second) per run (default 20)
        --threads N        reading threads per reader JVM (default 8)
        --query-ms N       a load's time after its SELECT (default 10)
        --no-baseline      skip the no-write runs (the baseline is then taken as 0 loads)
        --out DIR          (default lab-results)   --no-charts   --seed N (default 42)
        --redraw DIR       run nothing: draw the charts again from DIR/tx-hot.csv
      """;

  /** The configurations run by default, in this order. */
  static final List<String> DEFAULT_MODES = List.of("fenced", "fenced-noprior",
      "after-commit", "plain");

  static final List<String> MODES = List.of("fenced", "fenced-noprior", "after-commit",
      "plain", "fenced-put");

  /** The JVM property that makes this build's fences carry no prior (the previous release). */
  static final String WITHOUT_PRIOR = "-Dio.sustainablecache.internal.fenceWithoutPrior=true";

  static final String CSV_HEADER = "mode,jvms,rate,hold_ms,seconds,writes,refused,lost,reads,"
      + "reads_per_s,failed_reads,loads,baseline_loads,loads_per_write,loads_open,loads_closing,"
      + "loads_after,loads_before_writes,closing_ms_p50,reads_during,p50_during_ms,"
      + "p99_during_ms,p50_outside_ms,p99_outside_ms,stale_after_commit,stale_after_write,"
      + "stale_keys,store_ops_per_write,fenced_hits,fenced_loads,leases_won,leases_lost,"
      + "release_failures,writer_store_errors,reader_store_errors";

  /** Goal of issue 30 for the new fence: DB loads per committed write, fleet-wide. */
  static final double LOADS_GOAL = 1.1;

  /** Goal of issue 30: p99 of reads during a write at most this times the other reads' p99. */
  static final double P99_GOAL = 1.5;

  private static final long TAIL_MILLIS = 2_000;

  record Options(List<String> modes, List<Integer> holds, List<Integer> jvms,
      List<Integer> rates, int seconds, int threads, long queryMillis, boolean baseline,
      Path out, boolean charts, long seed) {}

  /**
   * One committed write: the version it committed and its instants ({@code System.nanoTime()}):
   * the transaction began, its commit step began ({@code beforeCommit()} or the commit), the
   * commit returned, the whole write returned.
   */
  record Write(long version, long begin, long commitStep, long committed, long returned) {}

  /** One run's figures; {@code mode} {@code none} for a no-write baseline. */
  record Result(String mode, int jvms, int rate, int holdMs, int seconds, long writes,
      long refused, long lost, long reads, long failedReads, long loads, double baselineLoads,
      long loadsOpen, long loadsClosing, long loadsAfter, long loadsBefore, double closingMsP50,
      long readsDuring, double p50DuringMs, double p99DuringMs, double p50OutsideMs,
      double p99OutsideMs, long staleAfterCommit, long staleAfterWrite, long staleKeys,
      double storeOpsPerWrite, long fencedHits, long fencedLoads, long leasesWon,
      long leasesLost, long releaseFailures, long writerStoreErrors, long readerStoreErrors) {

    boolean fenced() {
      return mode.startsWith("fenced");
    }

    /** Loads beyond the baseline per committed write; NaN without writes. */
    double loadsPerWrite() {
      return writes == 0 ? Double.NaN : Math.max(0, loads - baselineLoads) / writes;
    }

    double readsPerSecond() {
      return (double) reads / (seconds + TAIL_MILLIS / 1000.0);
    }

    /** A fence's promise: nothing stale once a write had returned, nothing stale cached. */
    boolean ok() {
      return !fenced() || staleAfterWrite == 0 && staleKeys == 0;
    }

    Result withBaseline(double baseline) {
      return new Result(mode, jvms, rate, holdMs, seconds, writes, refused, lost, reads,
          failedReads, loads, baseline, loadsOpen, loadsClosing, loadsAfter, loadsBefore,
          closingMsP50, readsDuring, p50DuringMs, p99DuringMs, p50OutsideMs, p99OutsideMs,
          staleAfterCommit, staleAfterWrite, staleKeys, storeOpsPerWrite, fencedHits,
          fencedLoads, leasesWon, leasesLost, releaseFailures, writerStoreErrors,
          readerStoreErrors);
    }

    String csvRow() {
      return Scenarios.csv(mode, jvms, rate, holdMs, seconds, writes, refused, lost, reads,
          readsPerSecond(), failedReads, loads, baselineLoads,
          writes == 0 ? 0.0 : loadsPerWrite(), loadsOpen, loadsClosing, loadsAfter,
          loadsBefore, closingMsP50, readsDuring, p50DuringMs, p99DuringMs, p50OutsideMs,
          p99OutsideMs, staleAfterCommit, staleAfterWrite, staleKeys, storeOpsPerWrite,
          fencedHits, fencedLoads, leasesWon, leasesLost, releaseFailures, writerStoreErrors,
          readerStoreErrors);
    }
  }

  /** The results of a {@code tx-hot.csv}, as {@link Result#csvRow} wrote them. */
  static List<Result> fromCsv(List<String> lines) {
    List<String> header = Arrays.asList(lines.get(0).split(","));
    List<Result> results = new ArrayList<>();
    for (String line : lines.subList(1, lines.size())) {
      String[] cells = line.split(",");
      java.util.function.ToDoubleFunction<String> d =
          column -> Double.parseDouble(cells[header.indexOf(column)]);
      java.util.function.ToLongFunction<String> l = column -> Math.round(d.applyAsDouble(column));
      results.add(new Result(cells[0], (int) l.applyAsLong("jvms"), (int) l.applyAsLong("rate"),
          (int) l.applyAsLong("hold_ms"), (int) l.applyAsLong("seconds"), l.applyAsLong("writes"),
          l.applyAsLong("refused"), l.applyAsLong("lost"), l.applyAsLong("reads"),
          l.applyAsLong("failed_reads"), l.applyAsLong("loads"), d.applyAsDouble("baseline_loads"),
          l.applyAsLong("loads_open"), l.applyAsLong("loads_closing"),
          l.applyAsLong("loads_after"), l.applyAsLong("loads_before_writes"),
          d.applyAsDouble("closing_ms_p50"), l.applyAsLong("reads_during"),
          d.applyAsDouble("p50_during_ms"), d.applyAsDouble("p99_during_ms"),
          d.applyAsDouble("p50_outside_ms"), d.applyAsDouble("p99_outside_ms"),
          l.applyAsLong("stale_after_commit"), l.applyAsLong("stale_after_write"),
          l.applyAsLong("stale_keys"), d.applyAsDouble("store_ops_per_write"),
          l.applyAsLong("fenced_hits"), l.applyAsLong("fenced_loads"),
          l.applyAsLong("leases_won"), l.applyAsLong("leases_lost"),
          l.applyAsLong("release_failures"), l.applyAsLong("writer_store_errors"),
          l.applyAsLong("reader_store_errors")));
    }
    return results;
  }

  private final Options options;
  private final PrintStream out;

  private TxHotScenario(Options options, PrintStream out) {
    this.options = options;
    this.out = out;
  }

  static boolean requested(String[] args) {
    return Arrays.asList(args).contains("--hot");
  }

  static int run(String[] args, PrintStream out) {
    if (ScenarioStart.help(args, USAGE, out)) {
      return 0;
    }
    int redraw = Arrays.asList(args).indexOf("--redraw");
    if (redraw >= 0) {
      Path dir = Path.of(NearScenario.value(args, redraw + 1, "--redraw"));
      try {
        List<Result> results = fromCsv(Files.readAllLines(dir.resolve("tx-hot.csv")));
        Files.createDirectories(dir.resolve("charts"));
        Charts.save(loadsChart(results), dir.resolve("charts").resolve("tx-hot-loads.png"));
        Charts.save(p99Chart(results), dir.resolve("charts").resolve("tx-hot-p99.png"));
        out.print(goals(results));
        out.printf("Drew %s%n", dir.resolve("charts"));
        return 0;
      } catch (IOException e) {
        throw new IllegalStateException("--redraw: " + e, e);
      }
    }
    ScenarioStart.prepare("net.spy.memcached", "error", "io.sustainablecache", "error",
        "io.sustainablecache.testkit", "warn");
    try {
      return new TxHotScenario(parse(args), out).run();
    } catch (IOException e) {
      throw new IllegalStateException("the hot-key transactions scenario could not write: " + e,
          e);
    } catch (SQLException e) {
      throw new IllegalStateException("the hot-key transactions scenario's database failed: "
          + e, e);
    }
  }

  static Options parse(String[] args) {
    List<String> modes = DEFAULT_MODES;
    List<Integer> holds = List.of(10, 50, 200);
    List<Integer> jvms = List.of(1, 3);
    List<Integer> rates = List.of(300, 1800);
    int seconds = 20;
    int threads = 8;
    long queryMillis = 10;
    boolean baseline = true;
    Path out = Path.of("lab-results");
    boolean charts = true;
    long seed = 42;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--tx", "--hot" -> { }
        case "--quick" -> {
          modes = List.of("fenced");
          holds = List.of(50);
          jvms = List.of(1);
          rates = List.of(600);
          seconds = 4;
          baseline = false;
        }
        case "--runs" -> {
          modes = List.of(NearScenario.value(args, ++i, arg).split(","));
          for (String mode : modes) {
            if (!MODES.contains(mode)) {
              throw new IllegalArgumentException("--runs: unknown run " + mode + "; known: "
                  + String.join(",", MODES));
            }
          }
        }
        case "--hold" -> holds = numbers(args, ++i, arg);
        case "--jvms" -> jvms = numbers(args, ++i, arg);
        case "--rates" -> rates = numbers(args, ++i, arg);
        case "--seconds" -> seconds = numbers(args, ++i, arg).get(0);
        case "--threads" -> threads = numbers(args, ++i, arg).get(0);
        case "--query-ms" -> queryMillis = numbers(args, ++i, arg).get(0);
        case "--no-baseline" -> baseline = false;
        case "--out" -> out = Path.of(NearScenario.value(args, ++i, arg));
        case "--no-charts" -> charts = false;
        case "--seed" -> seed = numbers(args, ++i, arg).get(0);
        default -> throw new IllegalArgumentException("--tx --hot: unknown option " + arg
            + " (see --tx --hot --help)");
      }
    }
    if (seconds < 2 || threads < 1 || queryMillis < 0
        || holds.stream().anyMatch(h -> h < 0 || h > 800)
        || jvms.stream().anyMatch(j -> j < 1)
        || rates.stream().anyMatch(r -> r < 2)) {
      throw new IllegalArgumentException("--tx --hot needs 2 s or more, a thread or more,"
          + " holds of 0 to 800 ms (a transaction a second), a reader JVM or more and rates of"
          + " 2 or more");
    }
    for (int r : rates) {
      for (int j : jvms) {
        if (r / j < threads) {
          throw new IllegalArgumentException("--tx --hot: " + r + " reads/s over " + j
              + " JVMs is less than a read per second per thread (--threads " + threads + ")");
        }
      }
    }
    return new Options(modes, holds, jvms, rates, seconds, threads, queryMillis, baseline, out,
        charts, seed);
  }

  private static List<Integer> numbers(String[] args, int i, String option) {
    try {
      return Arrays.stream(NearScenario.value(args, i, option).split(","))
          .map(s -> Integer.parseInt(s.trim())).toList();
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " expects numbers: '" + args[i] + "'");
    }
  }

  private int run() throws IOException, SQLException {
    Path dir = options.out();
    Files.createDirectories(dir);
    out.printf("stampede-lab --tx --hot: one hot key; readers %s JVMs x %s reads/s in total"
        + " (%d threads each); a transaction a second holding %s ms before its commit; loads of"
        + " %d ms after the SELECT; %d writes per run; runs %s%n", options.jvms(),
        options.rates(), options.threads(), options.holds(), options.queryMillis(),
        options.seconds(), String.join(",", options.modes()));
    List<Result> results = new ArrayList<>();
    int port = freePort();
    Server h2 = Server.createTcpServer("-tcpPort", Integer.toString(port), "-ifNotExists")
        .start();
    String jdbcUrl = "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:txhot;DB_CLOSE_DELAY=-1";
    try (MemcachedCluster memcached = MemcachedCluster.start(1)) {
      for (int rate : options.rates()) {
        for (int jvms : options.jvms()) {
          double baseline = 0;
          if (options.baseline()) {
            Result none = run("none", jvms, rate, 0, memcached, jdbcUrl);
            results.add(none);
            baseline = (double) none.loads() / (none.seconds() + TAIL_MILLIS / 1000.0);
          }
          for (int hold : options.holds()) {
            for (String mode : options.modes()) {
              results.add(run(mode, jvms, rate, hold, memcached, jdbcUrl)
                  .withBaseline(baseline * (options.seconds() + TAIL_MILLIS / 1000.0)));
            }
          }
        }
      }
    } finally {
      h2.stop();
    }
    String text = report(results);
    out.print(text);
    Files.writeString(dir.resolve("tx-hot.txt"), text, StandardCharsets.UTF_8);
    StringBuilder csv = new StringBuilder(CSV_HEADER).append('\n');
    results.forEach(r -> csv.append(r.csvRow()).append('\n'));
    Files.writeString(dir.resolve("tx-hot.csv"), csv, StandardCharsets.UTF_8);
    if (options.charts()) {
      Files.createDirectories(dir.resolve("charts"));
      Charts.save(loadsChart(results), dir.resolve("charts").resolve("tx-hot-loads.png"));
      Charts.save(p99Chart(results), dir.resolve("charts").resolve("tx-hot-p99.png"));
    }
    out.printf("Wrote %s, %s%n", dir.resolve("tx-hot.txt"), dir.resolve("tx-hot.csv"));
    boolean ok = results.stream().allMatch(Result::ok);
    if (!ok) {
      out.println("FAILED: a fenced run had a stale read after a write had returned or a stale"
          + " key after quiescence");
    }
    return ok ? 0 : 1;
  }

  private Result run(String mode, int jvms, int rate, int hold, MemcachedCluster memcached,
      String jdbcUrl) throws IOException, SQLException {
    String name = mode + "-" + jvms + "jvm-" + rate + "rps" + (mode.equals("none") ? ""
        : "-" + hold + "ms");
    out.printf("[%s] ... ", name);
    out.flush();
    Path dir = options.out().resolve("tx-hot-" + name);
    Files.createDirectories(dir);
    String namespace = "txhot-" + Long.toHexString(System.nanoTime() & 0xFFFFFFL);
    hotTable(jdbcUrl);
    InetSocketAddress address = memcached.address(0);
    int readSeconds = options.seconds() + (int) (TAIL_MILLIS / 1000);
    List<String> jvmOptions = mode.equals("fenced-noprior")
        ? List.of("-Xmx256m", WITHOUT_PRIOR) : List.of("-Xmx256m");
    Jvms started = Jvms.start(dir, jvmOptions, address, jdbcUrl, namespace, mode, jvms, rate,
        readSeconds, options.threads(), options.queryMillis(), options.seed(), hold,
        options.seconds(), 1_000);
    started.await(readSeconds);
    List<String> prefixes = started.prefixes();
    String writerPrefix = started.writerPrefix();
    TxScenario.Reads reads = new TxScenario.Reads();
    List<long[]> loads = new ArrayList<>();
    long[] readerStats = new long[8];
    for (int r = 0; r < jvms; r++) {
      TxReader.readInto(Path.of(prefixes.get(r) + ".reads"), reads);
      loads.addAll(TxReader.loads(Path.of(prefixes.get(r) + ".loads")));
      long[] stats = Arrays.stream(Files.readString(Path.of(prefixes.get(r) + ".stats")).trim()
          .split(" ")).mapToLong(Long::parseLong).toArray();
      for (int i = 0; i < readerStats.length; i++) {
        readerStats[i] += stats[i];
      }
    }
    List<Write> writes = new ArrayList<>();
    long[] writerStats = new long[5];
    if (!mode.equals("none")) {
      for (String line : Files.readAllLines(Path.of(writerPrefix + ".commits"))) {
        long[] f = Arrays.stream(line.trim().split(" ")).mapToLong(Long::parseLong).toArray();
        writes.add(new Write(f[0], f[1], f[2], f[3], f[4]));
      }
      writerStats = Arrays.stream(Files.readString(Path.of(writerPrefix + ".stats")).trim()
          .split(" ")).mapToLong(Long::parseLong).toArray();
    }
    Result result = measure(mode, jvms, rate, hold, options.seconds(), writes, reads, loads,
        readerStats, writerStats, TxScenario.staleKeysOf(address, jdbcUrl, namespace, 1));
    out.printf(Locale.ROOT, "%d writes, %,d reads, %d loads (%.2f per write), p99 %.2f ms"
        + " during writes / %.2f outside, %d stale after the write%n", result.writes(),
        result.reads(), result.loads(), result.writes() == 0 ? 0 : result.loadsPerWrite(),
        result.p99DuringMs(), result.p99OutsideMs(), result.staleAfterWrite());
    return result;
  }

  private static void clean(String prefix) throws IOException {
    for (String suffix : List.of(".ready", ".go", ".reads", ".loads", ".stats", ".commits",
        ".refused")) {
      Files.deleteIfExists(Path.of(prefix + suffix));
    }
  }

  /** The hot row ({@link TxHotWriter#HOT}) and the writer's warm-up row, both at version 0. */
  static void hotTable(String jdbcUrl) throws SQLException {
    try (Connection c = DriverManager.getConnection(jdbcUrl, "sa", "");
        Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS item");
      s.execute("CREATE TABLE item(id INT PRIMARY KEY, version BIGINT NOT NULL)");
      s.execute("INSERT INTO item VALUES (" + TxHotWriter.HOT + ", 0), ("
          + TxHotWriter.WARM_UP + ", 0)");
    }
  }

  /**
   * The JVMs of one run on the hot row ({@link TxHotScenario}'s and {@link OutageScenario}'s):
   * the readers' ({@link TxReader}, files {@code dir/reader-N.*}), then the writer's ({@link
   * TxHotWriter}, {@code dir/writer.*}; none for mode {@code none}), all ready, and the start
   * instant (wall-clock ms) sent to them.
   */
  record Jvms(List<Process> processes, List<String> prefixes, String writerPrefix,
      long startAtMillis) {

    /**
     * Starts them: {@code jvms} readers sharing {@code rate} reads/s for {@code readSeconds}
     * with {@code threads} threads each, warmed up, loads of {@code queryMillis} after the
     * SELECT; a writer of {@code writes} transactions of mode {@code mode} holding {@code hold}
     * ms, {@code intervalMillis} apart.
     */
    static Jvms start(Path dir, List<String> jvmOptions, InetSocketAddress cache,
        String jdbcUrl, String namespace, String mode, int jvms, int rate, int readSeconds,
        int threads, long queryMillis, long seed, int hold, int writes, long intervalMillis)
        throws IOException {
      String cacheAddress = cache.getHostString() + ":" + cache.getPort();
      List<Process> processes = new ArrayList<>();
      List<String> prefixes = new ArrayList<>();
      for (int r = 0; r < jvms; r++) {
        String prefix = dir.resolve("reader-" + r).toString();
        clean(prefix);
        processes.add(ChildJvm.start(jvmOptions, TxReader.class, List.of(cacheAddress,
            jdbcUrl, namespace, "1", Long.toString(queryMillis), Integer.toString(rate / jvms),
            Integer.toString(readSeconds), Long.toString(seed * 100 + r), prefix, "0",
            Integer.toString(threads), "true"), Path.of(prefix + ".log")));
        prefixes.add(prefix);
      }
      String writerPrefix = dir.resolve("writer").toString();
      if (!mode.equals("none")) {
        clean(writerPrefix);
        processes.add(ChildJvm.start(jvmOptions, TxHotWriter.class, List.of(cacheAddress,
            jdbcUrl, namespace, mode, Integer.toString(hold), Integer.toString(writes),
            writerPrefix, Long.toString(intervalMillis)), Path.of(writerPrefix + ".log")));
        prefixes.add(writerPrefix);
      }
      try {
        for (int p = 0; p < processes.size(); p++) {
          Scenarios.awaitFile(Path.of(prefixes.get(p) + ".ready"), processes.get(p),
              prefixes.get(p) + " did not start; see its .log");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        processes.forEach(Process::destroyForcibly);
        throw new IllegalStateException("interrupted", e);
      } catch (RuntimeException e) {
        processes.forEach(Process::destroyForcibly);
        throw e;
      }
      long startAt = System.currentTimeMillis() + 200;
      for (String prefix : prefixes) {
        HibernateScenario.signal(Path.of(prefix + ".go"), Long.toString(startAt));
      }
      return new Jvms(processes, prefixes, writerPrefix, startAt);
    }

    /** Waits until each has exited (at most {@code seconds} + 60 s); fails on a failed one. */
    void await(int seconds) {
      try {
        for (int p = 0; p < processes.size(); p++) {
          Process process = processes.get(p);
          if (!process.waitFor(seconds + 60L, TimeUnit.SECONDS)) {
            processes.forEach(Process::destroyForcibly);
            throw new IllegalStateException(prefixes.get(p) + " did not finish");
          }
          if (process.exitValue() != 0) {
            throw new IllegalStateException(prefixes.get(p) + " failed (exit "
                + process.exitValue() + "); see its .log");
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        processes.forEach(Process::destroyForcibly);
        throw new IllegalStateException("interrupted", e);
      }
    }

    /** Kills them all (a run that failed midway). */
    void destroy() {
      processes.forEach(Process::destroyForcibly);
    }
  }

  /**
   * A run's figures from its records: each read and each load placed against the writes'
   * windows (a write's window: from its transaction's beginning until the whole write
   * returned), each read checked against the commit history.
   */
  static Result measure(String mode, int jvms, int rate, int hold, int seconds,
      List<Write> writes, TxScenario.Reads reads, List<long[]> loads, long[] readerStats,
      long[] writerStats, long staleKeys) {
    List<Write> sorted = writes.stream()
        .sorted((a, b) -> Long.compare(a.begin(), b.begin())).toList();
    long[] begins = sorted.stream().mapToLong(Write::begin).toArray();
    long open = 0;
    long closing = 0;
    long after = 0;
    long before = 0;
    for (long[] load : loads) {
      int w = lastAtOrBefore(begins, load[0]);
      if (w < 0) {
        before++;
      } else if (load[0] < sorted.get(w).commitStep()) {
        open++;
      } else if (load[0] < sorted.get(w).returned()) {
        closing++;
      } else {
        after++;
      }
    }
    long[] during = new long[reads.size];
    long[] outside = new long[reads.size];
    int d = 0;
    int o = 0;
    for (int i = 0; i < reads.size; i++) {
      int w = lastAtOrBefore(begins, reads.starts[i]);
      if (w >= 0 && reads.starts[i] < sorted.get(w).returned()) {
        during[d++] = reads.latencies[i];
      } else {
        outside[o++] = reads.latencies[i];
      }
    }
    during = Arrays.copyOf(during, d);
    outside = Arrays.copyOf(outside, o);
    Arrays.sort(during);
    Arrays.sort(outside);
    long[] closingNanos = sorted.stream().mapToLong(w -> w.returned() - w.commitStep())
        .sorted().toArray();
    List<TxScenario.Commit> commits = writes.stream().map(w -> new TxScenario.Commit(
        TxHotWriter.HOT, w.version(), w.committed(), w.returned())).toList();
    long[] stale = TxScenario.stale(commits, reads, 1, 0);
    return new Result(mode, jvms, rate, hold, seconds, writes.size(), writerStats[0],
        writerStats[1], reads.size, readerStats[1], loads.size(), 0, open, closing, after,
        before, LabRun.percentile(closingNanos, 0.50) / 1e6, d,
        LabRun.percentile(during, 0.50) / 1e6, LabRun.percentile(during, 0.99) / 1e6,
        LabRun.percentile(outside, 0.50) / 1e6, LabRun.percentile(outside, 0.99) / 1e6,
        stale[0], stale[1], staleKeys,
        writes.isEmpty() ? 0 : (double) writerStats[2] / writes.size(), readerStats[4],
        readerStats[5], readerStats[6], readerStats[7], writerStats[3], writerStats[4],
        readerStats[3]);
  }

  /** The index of the last of {@code sorted} at or before {@code t}; -1 if none. */
  static int lastAtOrBefore(long[] sorted, long t) {
    int low = 0;
    int high = sorted.length;
    while (low < high) {
      int mid = (low + high) >>> 1;
      if (sorted[mid] <= t) {
        low = mid + 1;
      } else {
        high = mid;
      }
    }
    return low - 1;
  }

  // ---------------------------------------------------------------------------------------------
  // Reporting

  static String label(String mode) {
    return switch (mode) {
      case "fenced" -> "fenced (new)";
      case "fenced-noprior" -> "fenced, this release's";
      case "fenced-put" -> "fenced (new), committed(value)";
      case "none" -> "no writes";
      default -> mode;
    };
  }

  String report(List<Result> results) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "%nhot key: a transaction a second (update, invalidate"
        + " or fence, hold, commit); %d writes per run; readers %d threads per JVM; loads of %d"
        + " ms after the SELECT; baseline: %s%n", options.seconds(), options.threads(),
        options.queryMillis(), options.baseline() ? "the no-write run's loads per second"
            : "0 (no baseline run)"));
    List<List<String>> rows = new ArrayList<>();
    for (Result r : results) {
      boolean none = r.mode().equals("none");
      rows.add(List.of(label(r.mode()), Integer.toString(r.jvms()),
          String.format("%,d", r.rate()), none ? "-" : Integer.toString(r.holdMs()),
          none ? "-" : r.writes() + (r.refused() + r.lost() > 0
              ? " (" + r.refused() + "/" + r.lost() + ")" : ""),
          String.format(Locale.ROOT, "%,.0f", r.readsPerSecond()),
          none ? String.format(Locale.ROOT, "%d", r.loads())
              : String.format(Locale.ROOT, "%.2f", r.loadsPerWrite()),
          none ? "-" : String.format(Locale.ROOT, "%d/%d/%d", r.loadsOpen(), r.loadsClosing(),
              r.loadsAfter()),
          none ? "-" : String.format(Locale.ROOT, "%.1f", r.closingMsP50()),
          none ? "-" : String.format(Locale.ROOT, "%.2f / %.2f (%,d)", r.p50DuringMs(),
              r.p99DuringMs(), r.readsDuring()),
          String.format(Locale.ROOT, "%.2f / %.2f", r.p50OutsideMs(), r.p99OutsideMs()),
          none || r.p99OutsideMs() == 0 ? "-"
              : String.format(Locale.ROOT, "%.2f", r.p99DuringMs() / r.p99OutsideMs()),
          none ? "-" : r.staleAfterCommit() + "/" + r.staleAfterWrite() + "/" + r.staleKeys(),
          none ? "-" : String.format(Locale.ROOT, "%.1f", r.storeOpsPerWrite()),
          r.fencedHits() + "/" + r.fencedLoads() + "/" + r.leasesLost(),
          r.ok() ? (r.fenced() ? "ok" : "-") : "FAILED"));
    }
    b.append(Scenarios.table(List.of("configuration", "jvms", "reads/s", "hold_ms",
        "writes", "achieved_r/s", "loads/write", "open/closing/after", "closing_ms",
        "during p50/p99 ms (n)", "outside p50/p99 ms", "p99_ratio", "stale c/w/keys",
        "store_ops/w", "fhit/fload/lease_lost", "check"), rows));
    b.append("""
        loads/write: the readers' loader calls from the start, less the no-write baseline's
        (for no writes: its loads), per committed write (goal for the new fence: 1.1 or
        fewer); open/closing/after: the loads, by when they began: while the transaction was
        open before its commit step (fenced: before beforeCommit()), from the commit step until
        the whole write returned (the release or the invalidation included), after it returned
        (the reload); closing_ms: the median of that middle window; during: reads that began
        while a transaction was open (from its beginning until the whole write returned), n of
        them; outside: the others; p99_ratio: during over outside (goal 1.5 or less); stale
        c/w/keys: reads that began after a newer commit had returned and got an older row,
        the same after the whole write had returned (goal 0 for fenced), cached values that
        differed from the row after quiescence; writes: committed (refused/lost if any);
        fhit/fload/lease_lost: the readers' fenced_hit, fenced_load and lease_lost.
        """);
    b.append(goals(results));
    return b.toString();
  }

  /** The goals of issue 30 for the new fence, met or not, per run. */
  static String goals(List<Result> results) {
    StringBuilder b = new StringBuilder();
    List<Result> fenced = results.stream().filter(r -> r.mode().equals("fenced")).toList();
    if (fenced.isEmpty()) {
      return "";
    }
    double maxLoads = fenced.stream().mapToDouble(Result::loadsPerWrite).max().orElse(0);
    double maxRatio = fenced.stream().filter(r -> r.p99OutsideMs() > 0)
        .mapToDouble(r -> r.p99DuringMs() / r.p99OutsideMs()).max().orElse(0);
    long stale = fenced.stream().mapToLong(r -> r.staleAfterWrite() + r.staleKeys()).sum();
    long loadsMet = fenced.stream().filter(r -> r.loadsPerWrite() <= LOADS_GOAL).count();
    long ratioMet = fenced.stream().filter(r -> r.p99DuringMs() <= P99_GOAL * r.p99OutsideMs())
        .count();
    b.append(String.format(Locale.ROOT, "goals for the new fence over %d runs: loads per write"
        + " <= %.1f: %s (%d of %d runs; the most %.2f); p99 during <= %.1f x p99 outside: %s"
        + " (%d of %d runs; the most %.2f x); 0 stale after the write returned and 0 stale"
        + " keys: %s (%d)%n", fenced.size(), LOADS_GOAL, Scenarios.yesNo(loadsMet
            == fenced.size()), loadsMet, fenced.size(), maxLoads, P99_GOAL,
        Scenarios.yesNo(ratioMet == fenced.size()), ratioMet, fenced.size(), maxRatio,
        Scenarios.yesNo(stale == 0), stale));
    return b.toString();
  }

  /** The categories of the charts: one per reader setup and hold, in run order. */
  private static List<String> categories(List<Result> results) {
    List<String> categories = new ArrayList<>();
    for (Result r : results) {
      String c = category(r);
      if (!r.mode().equals("none") && !categories.contains(c)) {
        categories.add(c);
      }
    }
    return categories;
  }

  private static String category(Result r) {
    return String.format(Locale.ROOT, "%d JVM%s %,d/s %d ms", r.jvms(), r.jvms() == 1 ? "" : "s",
        r.rate(), r.holdMs());
  }

  /** Bars of one figure per configuration over the categories (a log axis: 0 drawn at min). */
  private static CategoryChart bars(List<Result> results, String title, String yTitle,
      java.util.function.ToDoubleFunction<Result> value, double min, double goal) {
    CategoryChart chart = new CategoryChartBuilder().width(1500).height(560).title(title)
        .xAxisTitle("reader JVMs, total reads per second, transaction hold")
        .yAxisTitle(yTitle).build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
    chart.getStyler().setLegendLayout(Styler.LegendLayout.Horizontal);
    chart.getStyler().setYAxisLogarithmic(true);
    chart.getStyler().setYAxisMin(min);
    chart.getStyler().setYAxisDecimalPattern("#,##0.##");
    chart.getStyler().setXAxisLabelRotation(30);
    chart.getStyler().setAvailableSpaceFill(0.85);
    chart.getStyler().setLabelsVisible(true);
    chart.getStyler().setLabelsFontColorAutomaticEnabled(false);
    chart.getStyler().setLabelsFontColor(java.awt.Color.BLACK);
    chart.getStyler().setLabelsRotation(90);
    List<String> categories = categories(results);
    Map<String, Map<String, Double>> series = new LinkedHashMap<>();
    for (Result r : results) {
      if (!r.mode().equals("none")) {
        series.computeIfAbsent(label(r.mode()), m -> new LinkedHashMap<>())
            .put(category(r), Math.max(min, value.applyAsDouble(r)));
      }
    }
    for (Map.Entry<String, Map<String, Double>> s : series.entrySet()) {
      List<Double> values = categories.stream()
          .map(c -> s.getValue().getOrDefault(c, min)).toList();
      chart.addSeries(s.getKey(), categories, values);
    }
    chart.addAnnotation(new AnnotationLine(goal, false, false));
    return chart;
  }

  /** DB loads per committed write, per configuration (log axis). */
  static CategoryChart loadsChart(List<Result> results) {
    return bars(results, "A hot key written once a second inside a transaction: DB loads per"
        + " committed write, fleet-wide (goal for the new fence: 1.1)", "DB loads per write",
        r -> r.writes() == 0 ? 0 : r.loadsPerWrite(), 0.1, LOADS_GOAL);
  }

  /** p99 of the reads during writes over p99 of the others, per configuration. */
  static CategoryChart p99Chart(List<Result> results) {
    return bars(results, "p99 latency of reads during a write / p99 of the other reads (goal:"
        + " 1.5 or less)", "p99 during / p99 outside",
        r -> r.p99OutsideMs() == 0 ? 0 : r.p99DuringMs() / r.p99OutsideMs(), 0.1, P99_GOAL);
  }

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1,
        java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
