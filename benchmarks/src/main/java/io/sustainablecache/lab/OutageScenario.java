package io.sustainablecache.lab;

import io.sustainablecache.testkit.memcached.MemcachedCluster;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.h2.tools.Server;
import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * {@code --outage} (issue 31, section 7): a hot key read by reader JVMs and written in database
 * transactions by a writer JVM while the memcached process is hung ({@code SIGSTOP}) and then
 * killed ({@code SIGKILL}, started again empty on its port), per configuration: the library's
 * defaults (the write fence; an invalidation the store does not take is owed), {@code
 * failWritesWhenStoreDown(true)} (fail closed) and Spring's {@code TransactionAwareCacheDecorator}
 * over this project's manager with its own transaction awareness off.
 *
 * <p>The pieces are {@link TxHotScenario}'s: the H2 TCP server and its hot row, the reader JVMs
 * ({@link TxReader}: a fixed total rate, every read recorded with its version, every load with
 * its instants) and the writer JVM ({@link TxHotWriter}: here a transaction every {@code
 * --write-ms}); every JVM's client has the adapter's recommended settings and the store its
 * default 700 ms operation timeout ({@link TxScenario#STORE_DEFAULTS_PROPERTY}). The timeline,
 * from the readers' start: healthy, hung, healthy, killed, healthy; each fault's instants (the
 * readers' start, SIGSTOP sent, SIGCONT sent, SIGKILL sent, the restart begun: {@code
 * System.nanoTime()}, comparable with the JVMs' records) in {@code outage-<run>/faults.txt}.
 *
 * <p>Per second ({@code outage-seconds.csv} and the charts): reads/s, p50/p99, DB loads of the
 * hot key per reader JVM, writes committed and failed (by when they began), stale reads (a read
 * that began after a write had returned and got an older row). Per phase ({@code
 * outage-phases.csv}, the table): the same, and for the healthy phases after a fault the stale
 * reads that began more than {@link #BOUND_MILLIS} after memcached answered again (the bound of
 * docs/failures.md, "Writes while the store is down or hung"). The goals of issue 31 are checked
 * per configuration; the throughput goal (80 % of readers without a cache) against the rate the
 * readers offer, which readers without a cache reach at most.
 */
final class OutageScenario {

  static final String USAGE = """
      stampede-lab --outage: one hot key (an H2 row), reader JVMs at a fixed total rate, a writer
      JVM committing a transaction every --write-ms, a real memcached (the lab starts one) hung
      with SIGSTOP for --fault s, healthy again, then killed with SIGKILL for --fault s and
      started again on its port; --healthy s before, between and after. Per configuration:
      reads/s, p50/p99, DB loads/s per reader JVM, writes committed and failed, stale reads,
      per second and per phase, and the goals of issue 31. Writes outage.txt,
      outage-phases.csv, outage-seconds.csv and charts/outage-*.png under --out.

        --quick            the integration test's preset: --runs default --healthy 4 --fault 3
                           --rate 400
        --runs LIST        default (the fence; invalidations owed while the store is down),
                           fail-closed (failWritesWhenStoreDown(true)), spring (Spring's
                           TransactionAwareCacheDecorator over the manager, its own transaction
                           awareness off), no-cache (the readers without a cache, the
                           writer as default: the throughput baseline); default: all four
        --healthy S        seconds healthy before, between and after the faults (default 5;
                           3 or more: the stale check starts 2 s after a fault)
        --fault S          seconds hung, and seconds killed (default 10)
        --jvms N           reader JVMs (default 2)   --rate N  total reads/s (default 600)
        --threads N        reading threads per JVM (default 8)   --query-ms N  a load's time
                           after its SELECT (default 10)
        --write-ms N       a transaction every N ms (default 100)   --hold N  ms each holds
                           before its commit (default 10)
        --out DIR          (default lab-results)   --no-charts   --seed N (default 42)
      """;

  static final List<String> RUNS = List.of("default", "fail-closed", "spring", "no-cache");

  /**
   * How long before a read began a load it shares may have begun while the store fails (the
   * default {@code outage-reuse}): reads while memcached is down are stale only past it.
   */
  static final long REUSE_MILLIS = 50;

  /** The bound of docs/failures.md: a change is seen everywhere this long after the store answers. */
  static final long BOUND_MILLIS = 2_000;

  /** Goals of issue 31, section 7. */
  static final double P50_GOAL_MS = 100;
  static final double THROUGHPUT_GOAL = 0.80;
  static final double COMMIT_GOAL = 0.99;
  static final double LOADS_GOAL = 20;

  static final List<String> PHASES = List.of("healthy", "hung", "healthy after hang", "killed",
      "healthy after kill");

  static final String PHASE_HEADER = "run,phase,seconds,reads,reads_per_s,p50_ms,p99_ms,"
      + "loads_per_s_per_jvm,worst_second_loads,writes_committed,writes_failed,"
      + "stale_reads,stale_past_reuse,checked_after_bound,stale_after_bound";

  static final String SECOND_HEADER = "run,second,phase,reads,p50_ms,p99_ms,loads_jvm_max,"
      + "writes_committed,writes_failed,stale_reads,stale_past_reuse";

  /** One colour per run, its secondary series dashed or dotted in the same colour. */
  private static final java.awt.Color[] COLORS = {new java.awt.Color(0x1f77b4),
      new java.awt.Color(0xd62728), new java.awt.Color(0x2ca02c), new java.awt.Color(0x7f7f7f)};

  record Options(List<String> runs, int healthy, int fault, int jvms, int rate, int threads,
      long queryMillis, long writeMillis, int hold, Path out, boolean charts, long seed) {

    int seconds() {
      return 3 * healthy + 2 * fault;
    }
  }

  /** One phase of one run. */
  record Phase(String run, String phase, double seconds, long reads, double p50Ms,
      double p99Ms, double loadsPerSecondPerJvm, long worstSecondLoads, long committed,
      long failed, long stale, long stalePastReuse, long checkedAfterBound,
      long staleAfterBound) {

    double readsPerSecond() {
      return reads / seconds;
    }

    boolean down() {
      return phase.equals("hung") || phase.equals("killed");
    }

    String csvRow() {
      return Scenarios.csv(run, phase, seconds, reads, readsPerSecond(), p50Ms, p99Ms,
          loadsPerSecondPerJvm, worstSecondLoads, committed, failed, stale, stalePastReuse,
          checkedAfterBound, staleAfterBound);
    }
  }

  /** One run: its phases, its per-second rows (CSV) and series (charts). */
  record Run(String name, List<Phase> phases, List<String> secondRows,
      Map<String, double[]> series, double[] marks, long lost, long staleKeys) {}

  private final Options options;
  private final PrintStream out;

  private OutageScenario(Options options, PrintStream out) {
    this.options = options;
    this.out = out;
  }

  static boolean requested(String[] args) {
    return Arrays.asList(args).contains("--outage") && !TxScenario.requested(args);
  }

  static int run(String[] args, PrintStream out) {
    if (ScenarioStart.help(args, USAGE, out)) {
      return 0;
    }
    ScenarioStart.prepare("net.spy.memcached", "error", "io.sustainablecache", "error",
        "io.sustainablecache.testkit", "warn");
    return ScenarioStart.guarded("the outage scenario",
        () -> new OutageScenario(parse(args), out).run());
  }

  static Options parse(String[] args) {
    List<String> runs = RUNS;
    int healthy = 5;
    int fault = 10;
    int jvms = 2;
    int rate = 600;
    int threads = 8;
    long queryMillis = 10;
    long writeMillis = 100;
    int hold = 10;
    Path out = Path.of("lab-results");
    boolean charts = true;
    long seed = 42;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--outage" -> { }
        case "--quick" -> {
          runs = List.of("default");
          healthy = 4;
          fault = 3;
          rate = 400;
        }
        case "--runs" -> {
          runs = List.of(NearScenario.value(args, ++i, arg).split(","));
          for (String run : runs) {
            if (!RUNS.contains(run)) {
              throw new IllegalArgumentException("--runs: unknown run " + run + "; known: "
                  + String.join(",", RUNS));
            }
          }
        }
        case "--healthy" -> healthy = TxScenario.number(args, ++i, arg);
        case "--fault" -> fault = TxScenario.number(args, ++i, arg);
        case "--jvms" -> jvms = TxScenario.number(args, ++i, arg);
        case "--rate" -> rate = TxScenario.number(args, ++i, arg);
        case "--threads" -> threads = TxScenario.number(args, ++i, arg);
        case "--query-ms" -> queryMillis = TxScenario.number(args, ++i, arg);
        case "--write-ms" -> writeMillis = TxScenario.number(args, ++i, arg);
        case "--hold" -> hold = TxScenario.number(args, ++i, arg);
        case "--out" -> out = Path.of(NearScenario.value(args, ++i, arg));
        case "--no-charts" -> charts = false;
        case "--seed" -> seed = TxScenario.number(args, ++i, arg);
        default -> throw new IllegalArgumentException("--outage: unknown option " + arg
            + " (see --outage --help)");
      }
    }
    if (healthy < 3 || fault < 1 || jvms < 1 || threads < 1 || rate / jvms < threads
        || writeMillis < 1 || hold < 0 || hold >= writeMillis || queryMillis < 0) {
      throw new IllegalArgumentException("--outage needs --healthy 3 or more, --fault 1 or"
          + " more, a reader JVM or more, a read per second per thread or more, and a hold"
          + " shorter than --write-ms");
    }
    return new Options(runs, healthy, fault, jvms, rate, threads, queryMillis, writeMillis,
        hold, out, charts, seed);
  }

  private int run() throws IOException, SQLException {
    Path dir = options.out();
    Files.createDirectories(dir);
    out.printf("stampede-lab --outage: %d reader JVMs x %d threads, %d reads/s in total, loads"
        + " of %d ms after the SELECT; a transaction every %d ms holding %d ms; healthy %d s,"
        + " hung %d s, healthy %d s, killed %d s, healthy %d s; runs %s; load average %s%n",
        options.jvms(), options.threads(), options.rate(), options.queryMillis(),
        options.writeMillis(), options.hold(), options.healthy(), options.fault(),
        options.healthy(), options.fault(), options.healthy(), String.join(",", options.runs()),
        OutageReadScenario.loadAverage());
    int port = TxHotScenario.freePort();
    Server h2 = Server.createTcpServer("-tcpPort", Integer.toString(port), "-ifNotExists")
        .start();
    String jdbcUrl = "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:outage;DB_CLOSE_DELAY=-1";
    List<Run> runs = new ArrayList<>();
    try {
      for (String name : options.runs()) {
        runs.add(run(name, jdbcUrl));
      }
    } finally {
      h2.stop();
    }
    String text = report(runs);
    out.print(text);
    Files.writeString(dir.resolve("outage.txt"), text, StandardCharsets.UTF_8);
    StringBuilder phases = new StringBuilder(PHASE_HEADER).append('\n');
    StringBuilder seconds = new StringBuilder(SECOND_HEADER).append('\n');
    for (Run run : runs) {
      run.phases().forEach(p -> phases.append(p.csvRow()).append('\n'));
      run.secondRows().forEach(row -> seconds.append(row).append('\n'));
    }
    Files.writeString(dir.resolve("outage-phases.csv"), phases, StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("outage-seconds.csv"), seconds, StandardCharsets.UTF_8);
    if (options.charts()) {
      Path charts = dir.resolve("charts");
      Files.createDirectories(charts);
      Charts.save(chart(runs, "reads per second, all reader JVMs", "reads/s", "reads", false),
          charts.resolve("outage-reads.png"));
      Charts.save(chart(runs, "read latency p99 (dashed: p50)", "ms", "p99", true),
          charts.resolve("outage-latency.png"));
      Charts.save(chart(runs, "DB loads of the hot key per second, the busiest reader JVM"
          + " (goal while down: 20 or fewer)", "loads/s", "loads", false),
          charts.resolve("outage-loads.png"));
      Charts.save(chart(runs, "writes committed per second (dashed: failed; dots: stale reads"
          + " past 50 ms)", "per second", "committed", false),
          charts.resolve("outage-writes.png"));
    }
    out.printf("Wrote %s, %s, %s%n", dir.resolve("outage.txt"), dir.resolve("outage-phases.csv"),
        dir.resolve("outage-seconds.csv"));
    long stale = runs.stream().flatMap(r -> r.phases().stream())
        .mapToLong(Phase::staleAfterBound).sum();
    if (stale > 0) {
      out.println("FAILED: " + stale + " read(s) that began more than " + BOUND_MILLIS
          + " ms after memcached answered again got an older row than a committed write");
    }
    return stale == 0 ? 0 : 1;
  }

  private Run run(String name, String jdbcUrl) throws IOException, SQLException {
    out.printf("[%s] ... ", name);
    out.flush();
    Path dir = options.out().resolve("outage-" + name);
    Files.createDirectories(dir);
    String namespace = "outage-" + Long.toHexString(System.nanoTime() & 0xFFFFFFL);
    TxHotScenario.hotTable(jdbcUrl);
    List<String> jvmOptions = new ArrayList<>(List.of("-Xmx256m",
        "-D" + TxScenario.STORE_DEFAULTS_PROPERTY + "=true"));
    if (name.equals("fail-closed")) {
      jvmOptions.add("-D" + TxScenario.FAIL_CLOSED_PROPERTY + "=true");
    }
    if (name.equals("no-cache")) {
      jvmOptions.add("-D" + TxReader.NO_CACHE_PROPERTY + "=true");
    }
    String mode = name.equals("spring") ? "spring" : "fenced";
    int seconds = options.seconds();
    int writes = (int) ((seconds * 1000L - TxHotWriter.FIRST_MILLIS - 500) / options.writeMillis());
    long[] at = new long[5]; // nanos: the readers' start, hung, resumed, killed, restarted
    long staleKeys;
    TxHotScenario.Jvms jvms;
    try (MemcachedCluster memcached = MemcachedCluster.start(1)) {
      jvms = TxHotScenario.Jvms.start(dir, jvmOptions, memcached.address(0), jdbcUrl,
          namespace, mode, options.jvms(), options.rate(), seconds, options.threads(),
          options.queryMillis(), options.seed(), options.hold(), writes, options.writeMillis());
      try {
        long startAt = jvms.startAtMillis();
        at[0] = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(startAt
            - System.currentTimeMillis());
        long h = options.healthy() * 1000L;
        long f = options.fault() * 1000L;
        // each instant taken as the signal is sent: a phase of the fault ends before memcached
        // can answer again, and the bound counts from the earliest instant it may
        FaultSuite.sleepUntil(startAt + h);
        at[1] = System.nanoTime();
        memcached.pause(0);
        FaultSuite.sleepUntil(startAt + h + f);
        at[2] = System.nanoTime();
        memcached.resume(0);
        FaultSuite.sleepUntil(startAt + 2 * h + f);
        at[3] = System.nanoTime();
        memcached.kill(0);
        FaultSuite.sleepUntil(startAt + 2 * h + 2 * f);
        at[4] = System.nanoTime();
        memcached.restart(0);
        Files.writeString(dir.resolve("faults.txt"), Arrays.stream(at)
            .mapToObj(Long::toString).reduce((x, y) -> x + " " + y).orElse("") + "\n");
      } catch (RuntimeException e) {
        jvms.destroy();
        throw e;
      }
      jvms.await(seconds);
      staleKeys = TxScenario.staleKeysOf(memcached.address(0), jdbcUrl, namespace, 1);
    }
    Run run = measure(name, jvms, at, staleKeys);
    Phase hung = run.phases().get(1);
    out.printf(Locale.ROOT, "hung: %.0f reads/s, p50 %.1f ms, %.1f loads/s per JVM, %d/%d"
        + " writes committed/failed; stale after the bound %d%n", hung.readsPerSecond(),
        hung.p50Ms(), hung.loadsPerSecondPerJvm(), hung.committed(), hung.failed(),
        run.phases().stream().mapToLong(Phase::staleAfterBound).sum());
    return run;
  }

  /** The run's figures from its JVMs' records, against the fault instants {@code at}. */
  private Run measure(String name, TxHotScenario.Jvms jvms, long[] at, long staleKeys)
      throws IOException {
    long second = TimeUnit.SECONDS.toNanos(1);
    long origin = at[0];
    long end = origin + options.seconds() * second;
    TxScenario.Reads reads = new TxScenario.Reads();
    List<List<long[]>> loads = new ArrayList<>();
    for (int r = 0; r < options.jvms(); r++) {
      TxReader.readInto(Path.of(jvms.prefixes().get(r) + ".reads"), reads);
      loads.add(TxReader.loads(Path.of(jvms.prefixes().get(r) + ".loads")));
    }
    String writer = jvms.writerPrefix();
    List<TxHotScenario.Write> writes = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of(writer + ".commits"))) {
      long[] w = Arrays.stream(line.trim().split(" ")).mapToLong(Long::parseLong).toArray();
      writes.add(new TxHotScenario.Write(w[0], w[1], w[2], w[3], w[4]));
    }
    long[] refused = Files.readAllLines(Path.of(writer + ".refused")).stream()
        .filter(l -> !l.isBlank()).mapToLong(l -> Long.parseLong(l.trim())).toArray();
    long lost = Long.parseLong(Files.readString(Path.of(writer + ".stats")).trim()
        .split(" ")[1]);
    List<TxScenario.Commit> commits = writes.stream().map(w -> new TxScenario.Commit(
        TxHotWriter.HOT, w.version(), w.committed(), w.returned())).toList();

    long[] bounds = {origin, at[1], at[2], at[3], at[4], end};
    long bound = TimeUnit.MILLISECONDS.toNanos(BOUND_MILLIS);
    long reuse = TimeUnit.MILLISECONDS.toNanos(REUSE_MILLIS);
    Records records = new Records(reads, loads, writes, refused, commits, reuse);
    List<Phase> phases = new ArrayList<>();
    for (int p = 0; p < PHASES.size(); p++) {
      long from = bounds[p];
      long to = bounds[p + 1];
      Window w = records.window(from, to);
      long worst = 0;
      for (long s = from; s + second <= to; s += second) { // whole seconds of the phase
        worst = Math.max(worst, records.window(s, s + second).loadsMax());
      }
      long checked = 0;
      long staleAfterBound = 0;
      if (p == 2 || p == 4) { // memcached answers again from the phase's start
        TxScenario.Reads late = subset(reads, from + bound, to);
        checked = late.size;
        staleAfterBound = TxScenario.stale(commits, late, 1, 0)[1];
      }
      phases.add(new Phase(name, PHASES.get(p), (to - from) / 1e9, w.reads(), w.p50Ms(),
          w.p99Ms(), w.loadsMax() / ((to - from) / 1e9), worst, w.committed(), w.failed(),
          w.stale(), w.stalePastReuse(), checked, staleAfterBound));
    }

    int bins = options.seconds();
    List<String> rows = new ArrayList<>();
    Map<String, double[]> series = new LinkedHashMap<>();
    // stale: past the outage reuse's window (a read that began within it of a write's return
    // may share a load that read the row before the commit, as documented)
    for (String s : List.of("reads", "p50", "p99", "loads", "committed", "failed", "stale")) {
      series.put(s, new double[bins]);
    }
    for (int b = 0; b < bins; b++) {
      long from = origin + b * second;
      Window w = records.window(from, from + second);
      int phase = 0;
      while (phase < 4 && from + second / 2 >= bounds[phase + 1]) {
        phase++;
      }
      rows.add(Scenarios.csv(name, b, PHASES.get(phase), w.reads(), w.p50Ms(), w.p99Ms(),
          w.loadsMax(), w.committed(), w.failed(), w.stale(), w.stalePastReuse()));
      double[] values = {w.reads(), w.p50Ms(), w.p99Ms(), w.loadsMax(), w.committed(),
          w.failed(), w.stalePastReuse()};
      int i = 0;
      for (double[] s : series.values()) {
        s[b] = values[i++];
      }
    }
    double[] marks = new double[4];
    for (int m = 0; m < 4; m++) {
      marks[m] = (at[m + 1] - origin) / 1e9;
    }
    return new Run(name, phases, rows, series, marks, lost, staleKeys);
  }

  /** A run's records: the reads, each reader JVM's loads, the committed and refused writes. */
  private record Records(TxScenario.Reads reads, List<List<long[]>> loads,
      List<TxHotScenario.Write> writes, long[] refused, List<TxScenario.Commit> commits,
      long reuseNanos) {

    /** The figures of {@code [from, to)}; reads, loads and writes by when they began. */
    Window window(long from, long to) {
      TxScenario.Reads in = subset(reads, from, to);
      long[] latencies = Arrays.copyOf(in.latencies, in.size);
      Arrays.sort(latencies);
      long loadsMax = 0;
      for (List<long[]> jvm : loads) {
        loadsMax = Math.max(loadsMax, jvm.stream().filter(l -> l[0] >= from && l[0] < to)
            .count());
      }
      long[] stale = TxScenario.stale(commits, in, 1, reuseNanos);
      return new Window(in.size, LabRun.percentile(latencies, 0.50) / 1e6,
          LabRun.percentile(latencies, 0.99) / 1e6, loadsMax,
          writes.stream().filter(w -> w.begin() >= from && w.begin() < to).count(),
          Arrays.stream(refused).filter(t -> t >= from && t < to).count(), stale[1], stale[2]);
    }
  }

  /**
   * One window's figures: reads, their p50 and p99, the busiest reader JVM's loads, writes
   * committed and refused, reads stale after a write had returned and past the reuse window.
   */
  private record Window(long reads, double p50Ms, double p99Ms, long loadsMax, long committed,
      long failed, long stale, long stalePastReuse) {}

  /** The reads that began in {@code [from, to)}. */
  private static TxScenario.Reads subset(TxScenario.Reads reads, long from, long to) {
    TxScenario.Reads in = new TxScenario.Reads();
    for (int i = 0; i < reads.size; i++) {
      if (reads.starts[i] >= from && reads.starts[i] < to) {
        in.add(reads.keys[i], reads.versions[i], reads.starts[i], reads.latencies[i]);
      }
    }
    return in;
  }

  private String report(List<Run> runs) {
    StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%noutage: %d reader JVMs,"
        + " %d reads/s in total; a transaction every %d ms; healthy %d s, hung %d s, healthy,"
        + " killed %d s, healthy%n", options.jvms(), options.rate(), options.writeMillis(),
        options.healthy(), options.fault(), options.fault()));
    List<List<String>> rows = new ArrayList<>();
    for (Run run : runs) {
      for (Phase p : run.phases()) {
        boolean after = p.phase().startsWith("healthy after");
        rows.add(List.of(p.run(), p.phase(), String.format(Locale.ROOT, "%.0f",
            p.readsPerSecond()), String.format(Locale.ROOT, "%.1f", p.p50Ms()),
            String.format(Locale.ROOT, "%.1f", p.p99Ms()),
            String.format(Locale.ROOT, "%.1f", p.loadsPerSecondPerJvm()),
            Long.toString(p.worstSecondLoads()), p.committed() + "/" + p.failed(),
            p.stale() + " / " + p.stalePastReuse(), after ? p.staleAfterBound() + " of "
                + String.format("%,d", p.checkedAfterBound()) : "-"));
      }
    }
    b.append(Scenarios.table(List.of("run", "phase", "reads/s", "p50_ms", "p99_ms",
        "loads/s/jvm", "worst_s", "writes ok/failed", "stale / past 50 ms",
        "stale past bound"), rows));
    b.append(String.format(Locale.ROOT, """
        reads/s: all reader JVMs; loads/s/jvm: the hot key's DB loads per second of the busiest
        reader JVM (worst_s: its busiest whole second in the phase); writes: by when the
        transaction began (failed: rolled back); stale: reads of the phase that began after a
        write had returned and got an older row (past 50 ms: more than the outage reuse's %d ms
        after it had returned); stale past bound: those among the reads that began more than
        %d ms after memcached answered again (of the reads checked).
        """, REUSE_MILLIS, BOUND_MILLIS));
    Run baseline = runs.stream().filter(r -> r.name().equals("no-cache")).findFirst()
        .orElse(null);
    for (Run run : runs) {
      if (run != baseline) {
        b.append(goals(run, baseline, options.rate()));
      }
    }
    return b.toString();
  }

  /**
   * The goals of issue 31, section 7, met or not, for one run; the throughput against the
   * no-cache run's reads/s while hung, or without one against the offered rate (which readers
   * without a cache reach at most).
   */
  static String goals(Run run, Run noCache, int offeredRate) {
    Phase hung = run.phases().get(1);
    double reference = noCache == null ? offeredRate
        : noCache.phases().get(1).readsPerSecond();
    String against = noCache == null ? "the " + offeredRate + " offered"
        : String.format(Locale.ROOT, "no cache's %.0f", reference);
    long committed = 0;
    long attempted = 0;
    double loads = 0;
    long worst = 0;
    for (Phase p : run.phases()) {
      if (p.down()) {
        committed += p.committed();
        attempted += p.committed() + p.failed();
        loads = Math.max(loads, p.loadsPerSecondPerJvm());
        worst = Math.max(worst, p.worstSecondLoads());
      }
    }
    long stale = run.phases().stream().mapToLong(Phase::staleAfterBound).sum();
    long checked = run.phases().stream().mapToLong(Phase::checkedAfterBound).sum();
    double ratio = attempted == 0 ? 1 : (double) committed / attempted;
    return String.format(Locale.ROOT, "%s: p50 while hung %.1f ms <= %.0f: %s; reads/s while"
        + " hung %.0f >= %.0f %% of %s: %s; writes committed while down %d of %d"
        + " (%.1f %%) >= %.0f %%: %s; DB loads/s per JVM while down %.1f (worst second %d) <="
        + " %.0f: %s; stale reads past the bound %d of %,d: %s; invalidations lost %d; stale"
        + " keys after quiescence %d%n", run.name(), hung.p50Ms(), P50_GOAL_MS,
        Scenarios.yesNo(hung.p50Ms() <= P50_GOAL_MS), hung.readsPerSecond(),
        THROUGHPUT_GOAL * 100, against,
        Scenarios.yesNo(hung.readsPerSecond() >= THROUGHPUT_GOAL * reference), committed,
        attempted, ratio * 100, COMMIT_GOAL * 100, Scenarios.yesNo(ratio >= COMMIT_GOAL), loads,
        worst, LOADS_GOAL, Scenarios.yesNo(loads <= LOADS_GOAL), stale, checked,
        Scenarios.yesNo(stale == 0), run.lost(), run.staleKeys());
  }

  /**
   * One line per run of {@code key}'s per-second series (log axis if asked), the fault instants
   * marked; for {@code p99} the p50 dashed too, for {@code committed} the failed writes dashed
   * and the stale reads dotted.
   */
  private static XYChart chart(List<Run> runs, String title, String yTitle, String key,
      boolean log) {
    XYChart chart = new XYChartBuilder().width(1000).height(420)
        .title("Outage (hung, then killed): " + title).xAxisTitle("time (s)")
        .yAxisTitle(yTitle).build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
    chart.getStyler().setLegendLayout(Styler.LegendLayout.Horizontal);
    chart.getStyler().setYAxisLogarithmic(log);
    if (!log) {
      chart.getStyler().setYAxisMin(0.0);
    }
    Map<String, String> extra = Map.of("p99", "p50", "committed", "failed");
    int r = 0;
    for (Run run : runs) {
      java.awt.Color color = COLORS[r++ % COLORS.length];
      double[] x = new double[run.series().get(key).length];
      for (int i = 0; i < x.length; i++) {
        x[i] = i + 0.5;
      }
      add(chart, run.name(), x, run.series().get(key), log, null, color);
      if (extra.containsKey(key)) {
        add(chart, run.name() + " " + extra.get(key), x, run.series().get(extra.get(key)), log,
            XYSeries.XYSeriesRenderStyle.Line, color);
      }
      if (key.equals("committed")) {
        add(chart, run.name() + " stale", x, run.series().get("stale"), log,
            XYSeries.XYSeriesRenderStyle.Scatter, color);
      }
    }
    for (double mark : runs.get(0).marks()) {
      chart.addAnnotation(new AnnotationLine(mark, true, false));
    }
    return chart;
  }

  private static void add(XYChart chart, String name, double[] x, double[] y, boolean log,
      XYSeries.XYSeriesRenderStyle secondary, java.awt.Color color) {
    double[] values = log ? Arrays.stream(y).map(v -> Math.max(v, 0.1)).toArray() : y;
    XYSeries series = chart.addSeries(name, x, values);
    series.setLineColor(color);
    series.setMarkerColor(color);
    series.setMarker(secondary == XYSeries.XYSeriesRenderStyle.Scatter ? SeriesMarkers.CIRCLE
        : SeriesMarkers.NONE);
    if (secondary == XYSeries.XYSeriesRenderStyle.Line) {
      series.setLineStyle(new java.awt.BasicStroke(1.5f, java.awt.BasicStroke.CAP_BUTT,
          java.awt.BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f));
    } else if (secondary == XYSeries.XYSeriesRenderStyle.Scatter) {
      series.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
    }
  }
}
