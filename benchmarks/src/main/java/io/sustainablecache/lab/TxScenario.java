package io.sustainablecache.lab;

import io.sustainablecache.CacheStats;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.WriteFence;
import io.sustainablecache.arcus.ArcusStore;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.ForwardingStore;
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
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ConnectionFactoryBuilder;
import org.h2.tools.Server;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * {@code --tx}: writes inside database transactions (issue 21), against a real memcached and a
 * real database, side by side in one run.
 *
 * <p>The lab starts one memcached process ({@link MemcachedCluster}) and an H2 TCP server holding
 * a table {@code item(id, version)}. Writer threads (this JVM) each loop over JDBC transactions
 * that increment one random row's version and commit after a delay of 20-100 ms (the rest of the
 * transaction's work); reader JVMs ({@link TxReader}) read the rows through the core API with a
 * loader that queries H2. The writers invalidate the key in one of four ways, each what a Spring
 * application does:
 *
 * <ul>
 *   <li><b>plain</b>: {@code invalidate} inside the transaction, after the update and before the
 *       commit ({@code @CacheEvict} on a {@code @Transactional} method, the cache interceptor
 *       inside the transaction);</li>
 *   <li><b>after-commit</b>: {@code invalidate} once the commit returned (Spring's {@code
 *       TransactionAwareCacheDecorator});</li>
 *   <li><b>fenced</b>: {@code fence} before the update, {@code committed()} after the commit (and
 *       {@code rolledBack()} after a rollback);</li>
 *   <li><b>fenced-put</b>: the same, completed with {@code committed(newVersion)}.</li>
 * </ul>
 *
 * Every read is checked against the writers' commit log: a read that began after a commit of its
 * key had returned and returned an older version is stale ({@code stale_after_commit}; the same
 * against the instant the writer's whole write, invalidation included, had returned: {@code
 * stale_after_write}). Once the writers stopped and the readers finished, every key's cached
 * value is compared with its row ({@code stale_keys}). With {@code --outage}, each configuration
 * runs again with the memcached process stopped ({@code SIGSTOP}, its items kept) for 5 s while
 * the writers commit. Exits 1 if a fenced configuration broke the fence's promise: a read that
 * began once a write had returned (with {@code --near-bound}, more than the bound after) got an
 * older row, or a stale key after quiescence. (A read that
 * began between the commit and the fence's completion may join a load of its instance that read
 * the row before the commit, as the fence's documentation allows: {@code stale_after_commit}.)
 */
final class TxScenario {

  static final String USAGE = """
      stampede-lab --tx: writes inside database transactions against a real memcached (the lab
      starts one; needs the memcached binary) and an H2 TCP server the lab starts. Writer threads
      update rows in JDBC transactions (commit after 20-100 ms) and invalidate their key: plain
      (inside the transaction), after-commit (Spring's TransactionAwareCacheDecorator), fenced
      (SustainableCache.fence, committed() after the commit), fenced-put (committed(value)).
      Reader JVMs read through the core API, their loader querying H2; every read is checked.
      Writes tx.csv, tx.txt and charts/tx-stale.png under --out.

        --quick            the integration test's preset: --seconds 4 --runs plain,fenced
                           --outage off
        --runs LIST        plain,after-commit,fenced,fenced-put (default: all four)
        --outage M         off, on (memcached stopped for 5 s from 40 % of the run) or both
                           (default both: every configuration without, then with the outage)
        --seconds N        writers' time per run (default 60; 10 or more with the outage)
        --readers N        reader JVMs (default 2)   --rate N  reads per second per reader
                           (default 500)   --keys N  rows (default 20)   --writers N  writer
                           threads (default 2)   --query-ms N  a load's time after its SELECT
                           (default 10)
        --near-bound MS    writers and readers with a near cache of bound MS (10,000 entries);
                           a fenced read may then be stale for up to MS (default 0: none)
        --repeat N         run each configuration N times (seeds S, S+1, ...); the table and
                           the chart show medians, tx.csv every run
        --out DIR          (default lab-results)   --no-charts   --seed N (default 42)
        --hot              one hot key written once a second instead: see --tx --hot --help
      """;

  static final List<String> MODES = List.of("plain", "after-commit", "fenced", "fenced-put");

  static final String CSV_HEADER = "mode,outage,seed,seconds,readers,writes,refused_writes,"
      + "lost_invalidations,reads,failed_reads,stale_after_commit,stale_after_write,"
      + "stale_past_near_bound,"
      + "stale_keys_after_quiescence,store_ops_per_write,read_p50_ms,read_p99_ms,db_queries,"
      + "db_queries_per_s,fence_release_failures,writer_store_errors,reader_store_errors";

  static final String SELECT = "SELECT version FROM item WHERE id = ?";
  static final Duration TTL = Duration.ofMinutes(10);
  static final Duration OPERATION_TIMEOUT = Duration.ofMillis(500);
  static final int NEAR_SIZE = 10_000;
  static final double CHART_MAX = 20;

  /**
   * {@code -Dio.sustainablecache.lab.storeDefaults=true} on a JVM of the scenario: its client
   * with the adapter's recommended settings ({@link ArcusStore#recommendedSettings()}: {@code
   * FailureMode.Cancel}, reconnects at most a second apart) and its store with the default 700
   * ms operation timeout, what {@link OutageScenario} runs with; otherwise the client's defaults
   * and {@link #OPERATION_TIMEOUT}.
   */
  static final String STORE_DEFAULTS_PROPERTY = "io.sustainablecache.lab.storeDefaults";

  /**
   * {@code -Dio.sustainablecache.lab.failWritesWhenStoreDown=true}: the JVM's caches with {@code
   * failWritesWhenStoreDown(true)} ({@link OutageScenario}'s fail-closed configuration).
   */
  static final String FAIL_CLOSED_PROPERTY = "io.sustainablecache.lab.failWritesWhenStoreDown";

  private static final boolean STORE_DEFAULTS = Boolean.getBoolean(STORE_DEFAULTS_PROPERTY);
  private static final boolean FAIL_CLOSED = Boolean.getBoolean(FAIL_CLOSED_PROPERTY);
  private static final long TAIL_MILLIS = 2_000;
  private static final long OUTAGE_MILLIS = 5_000;

  record Options(List<String> modes, List<Boolean> outages, int seconds, int readers, int rate,
      int keys, int writers, long queryMillis, Path out, boolean charts, long seed, int repeat,
      long nearMillis) {}

  /**
   * One committed write: its key, the version it committed, when the commit returned and when the
   * whole write (the invalidation or the fence's completion included) had returned.
   */
  record Commit(int key, long version, long committedNanos, long returnedNanos) {}

  /**
   * One run's figures.
   *
   * @param refused writes not made: the invalidation (plain) or the fence failed before the
   *     commit, so the transaction was rolled back
   * @param lost after-commit invalidations that threw after the commit (the change committed,
   *     the invalidation lost)
   * @param staleAfterCommit reads that began after a commit of their key had returned and
   *     returned an older version
   * @param staleAfterWrite the same, after the writer's whole write had returned
   * @param stalePastBound the same, more than the near cache's bound after the write had
   *     returned (without a near cache: {@code staleAfterWrite})
   * @param staleKeys keys whose cached value differed from their row after quiescence
   * @param storeOpsPerWrite the writers' store operations per committed write
   */
  record Result(String mode, boolean outage, long seed, int seconds, int readers, long writes,
      long refused,
      long lost, long reads, long failedReads, long staleAfterCommit, long staleAfterWrite,
      long stalePastBound,
      long staleKeys, double storeOpsPerWrite, double p50Ms, double p99Ms, long dbQueries,
      long fenceReleaseFailures, long writerStoreErrors, long readerStoreErrors) {

    boolean fenced() {
      return mode.startsWith("fenced");
    }

    /**
     * The fence's promise: no read that began once a write (its commit and its completion) had
     * returned gets an older row, and nothing stale stays cached.
     */
    boolean ok() {
      return !fenced() || stalePastBound == 0 && staleKeys == 0;
    }

    String csvRow() {
      return Scenarios.csv(mode, outage ? "on" : "off", seed, seconds, readers, writes, refused,
          lost,
          reads, failedReads, staleAfterCommit, staleAfterWrite, stalePastBound, staleKeys,
          storeOpsPerWrite,
          p50Ms, p99Ms, dbQueries, (double) dbQueries / seconds, fenceReleaseFailures,
          writerStoreErrors, readerStoreErrors);
    }
  }

  /** The reads of a run, from every reader: growable columns. */
  static final class Reads {
    int size;
    int[] keys = new int[1024];
    long[] versions = new long[1024];
    long[] starts = new long[1024];
    long[] latencies = new long[1024];

    void add(int key, long version, long startNanos, long latencyNanos) {
      if (size == keys.length) {
        keys = Arrays.copyOf(keys, size * 2);
        versions = Arrays.copyOf(versions, size * 2);
        starts = Arrays.copyOf(starts, size * 2);
        latencies = Arrays.copyOf(latencies, size * 2);
      }
      keys[size] = key;
      versions[size] = version;
      starts[size] = startNanos;
      latencies[size] = latencyNanos;
      size++;
    }
  }

  private final Options options;
  private final PrintStream out;

  private TxScenario(Options options, PrintStream out) {
    this.options = options;
    this.out = out;
  }

  static boolean requested(String[] args) {
    return Arrays.asList(args).contains("--tx");
  }

  static int run(String[] args, PrintStream out) {
    if (TxHotScenario.requested(args)) {
      return TxHotScenario.run(args, out);
    }
    if (ScenarioStart.help(args, USAGE, out)) {
      return 0;
    }
    ScenarioStart.prepare("net.spy.memcached", "error", "io.sustainablecache", "error",
        "io.sustainablecache.testkit", "warn");
    return ScenarioStart.guarded("the transactions scenario",
        () -> new TxScenario(parse(args), out).run());
  }

  static Options parse(String[] args) {
    List<String> modes = MODES;
    List<Boolean> outages = List.of(false, true);
    int seconds = 60;
    int readers = 2;
    int rate = 500;
    int keys = 20;
    int writers = 2;
    long queryMillis = 10;
    Path out = Path.of("lab-results");
    boolean charts = true;
    long seed = 42;
    int repeat = 1;
    long nearMillis = 0;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--tx" -> { }
        case "--quick" -> {
          seconds = 4;
          modes = List.of("plain", "fenced");
          outages = List.of(false);
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
        case "--outage" -> outages = switch (NearScenario.value(args, ++i, arg)) {
          case "off" -> List.of(false);
          case "on" -> List.of(true);
          case "both" -> List.of(false, true);
          default -> throw new IllegalArgumentException("--outage takes off, on or both");
        };
        case "--seconds" -> seconds = number(args, ++i, arg);
        case "--readers" -> readers = number(args, ++i, arg);
        case "--rate" -> rate = number(args, ++i, arg);
        case "--keys" -> keys = number(args, ++i, arg);
        case "--writers" -> writers = number(args, ++i, arg);
        case "--query-ms" -> queryMillis = number(args, ++i, arg);
        case "--out" -> out = Path.of(NearScenario.value(args, ++i, arg));
        case "--no-charts" -> charts = false;
        case "--seed" -> seed = number(args, ++i, arg);
        case "--repeat" -> repeat = number(args, ++i, arg);
        case "--near-bound" -> nearMillis = number(args, ++i, arg);
        default -> throw new IllegalArgumentException("--tx: unknown option " + arg
            + " (see --tx --help)");
      }
    }
    if (readers < 2 || writers < 1 || keys < 1 || rate < 2 || seconds < 2 || repeat < 1
        || nearMillis < 0) {
      throw new IllegalArgumentException("--tx needs 2 or more readers, a writer, a key, a rate"
          + " of 2 or more, 2 s or more per run and --repeat 1 or more");
    }
    if (outages.contains(true) && seconds < 10) {
      throw new IllegalArgumentException("--tx --outage needs 10 s or more per run");
    }
    return new Options(modes, outages, seconds, readers, rate, keys, writers, queryMillis, out,
        charts, seed, repeat, nearMillis);
  }

  /** The number at {@code args[i]}, the value of {@code option}. */
  static int number(String[] args, int i, String option) {
    try {
      return Integer.parseInt(NearScenario.value(args, i, option).trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " expects a number: '" + args[i] + "'");
    }
  }

  private int run() throws IOException, SQLException {
    Path dir = options.out();
    Files.createDirectories(dir);
    out.printf("stampede-lab --tx: %d writer threads (commit after 20-100 ms), %d reader JVMs x"
        + " %d reads/s, %d rows, loads of %d ms, %d s per run%n", options.writers(),
        options.readers(), options.rate(), options.keys(), options.queryMillis(),
        options.seconds());
    List<Result> results = new ArrayList<>();
    int port = freePort();
    Server h2 = Server.createTcpServer("-tcpPort", Integer.toString(port), "-ifNotExists")
        .start();
    String jdbcUrl = "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:tx;DB_CLOSE_DELAY=-1";
    try (MemcachedCluster memcached = MemcachedCluster.start(1)) {
      for (int r = 0; r < options.repeat(); r++) {
        for (boolean outage : options.outages()) {
          for (String mode : options.modes()) {
            results.add(run(mode, outage, options.seed() + r, memcached, jdbcUrl));
          }
        }
      }
    } finally {
      h2.stop();
    }
    List<Result> medians = medians(results);
    String text = report(medians) + (options.repeat() > 1
        ? "(medians of " + options.repeat() + " runs each)\n" : "");
    out.print(text);
    Files.writeString(dir.resolve("tx.txt"), text, StandardCharsets.UTF_8);
    StringBuilder csv = new StringBuilder(CSV_HEADER).append('\n');
    results.forEach(r -> csv.append(r.csvRow()).append('\n'));
    Files.writeString(dir.resolve("tx.csv"), csv, StandardCharsets.UTF_8);
    if (options.charts()) {
      Files.createDirectories(dir.resolve("charts"));
      Charts.save(chart(medians), dir.resolve("charts").resolve("tx-stale.png"));
    }
    out.printf("Wrote %s, %s%n", dir.resolve("tx.txt"), dir.resolve("tx.csv"));
    boolean ok = results.stream().allMatch(Result::ok); // every run, not only the medians
    if (!ok) {
      out.println("FAILED: a fenced run had a stale read after a write had returned or a stale"
          + " key after quiescence");
    }
    return ok ? 0 : 1;
  }

  private Result run(String mode, boolean outage, long seed, MemcachedCluster memcached,
      String jdbcUrl) throws IOException, SQLException {
    out.printf("[%s%s, seed %d] ... ", mode, outage ? ", memcached stopped 5 s" : "", seed);
    out.flush();
    Path dir = options.out().resolve("tx-" + mode + (outage ? "-outage" : "") + "-" + seed);
    Files.createDirectories(dir);
    String namespace = "tx-" + Long.toHexString(System.nanoTime() & 0xFFFFFFL);
    try (Connection c = DriverManager.getConnection(jdbcUrl, "sa", "");
        Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS item");
      s.execute("CREATE TABLE item(id INT PRIMARY KEY, version BIGINT NOT NULL)");
      s.execute("INSERT INTO item SELECT x, 0 FROM SYSTEM_RANGE(0, " + (options.keys() - 1)
          + ")");
    }
    InetSocketAddress address = memcached.address(0);
    int readSeconds = options.seconds() + (int) (TAIL_MILLIS / 1000);
    List<Process> readers = new ArrayList<>();
    for (int r = 0; r < options.readers(); r++) {
      for (String suffix : List.of(".ready", ".go", ".reads", ".stats")) {
        Files.deleteIfExists(dir.resolve("reader-" + r + suffix));
      }
      readers.add(ChildJvm.start(List.of("-Xmx256m"), TxReader.class, List.of(
          address.getHostString() + ":" + address.getPort(), jdbcUrl, namespace,
          Integer.toString(options.keys()), Long.toString(options.queryMillis()),
          Integer.toString(options.rate()), Integer.toString(readSeconds),
          Long.toString(seed * 100 + r),
          dir.resolve("reader-" + r).toString(), Long.toString(options.nearMillis())),
          dir.resolve("reader-" + r + ".log")));
    }
    Writers writers = new Writers(mode, address, jdbcUrl, namespace, seed);
    try {
      for (int r = 0; r < readers.size(); r++) { // each reader's JVM started and connected
        Scenarios.awaitFile(dir.resolve("reader-" + r + ".ready"), readers.get(r),
            "reader " + r + " did not start; see " + dir);
      }
      awaitConnected(writers.client);
      long startAt = System.currentTimeMillis() + 100;
      for (int r = 0; r < readers.size(); r++) {
        HibernateScenario.signal(dir.resolve("reader-" + r + ".go"), Long.toString(startAt));
      }
      writers.run(startAt, outage ? memcached : null);
      for (int r = 0; r < readers.size(); r++) {
        Process p = readers.get(r);
        if (!p.waitFor(readSeconds + 60L, TimeUnit.SECONDS)) {
          readers.forEach(Process::destroyForcibly);
          throw new IllegalStateException("reader " + r + " did not finish; see " + dir);
        }
        if (p.exitValue() != 0) {
          throw new IllegalStateException("reader " + r + " failed (exit " + p.exitValue()
              + "); see " + dir);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      readers.forEach(Process::destroyForcibly);
      throw new IllegalStateException("interrupted", e);
    } finally {
      writers.close();
    }
    Reads reads = new Reads();
    long failedReads = 0;
    long dbQueries = 0;
    long readerStoreErrors = 0;
    for (int r = 0; r < options.readers(); r++) {
      TxReader.readInto(dir.resolve("reader-" + r + ".reads"), reads);
      long[] stats = Arrays.stream(Files.readString(dir.resolve("reader-" + r + ".stats"))
          .trim().split(" ")).mapToLong(Long::parseLong).toArray();
      failedReads += stats[1];
      dbQueries += stats[2];
      readerStoreErrors += stats[3];
    }
    List<Commit> commits = List.copyOf(writers.commits);
    long[] stale = stale(commits, reads, options.keys(),
        TimeUnit.MILLISECONDS.toNanos(options.nearMillis()));
    long staleKeys = staleKeysOf(address, jdbcUrl, namespace, options.keys());
    long[] sorted = Arrays.copyOf(reads.latencies, reads.size);
    Arrays.sort(sorted);
    CacheStats ws = writers.stats;
    Result result = new Result(mode, outage, seed, options.seconds(), options.readers(),
        commits.size(), writers.refused.get(), writers.lost.get(), reads.size, failedReads,
        stale[0], stale[1], stale[2], staleKeys,
        commits.isEmpty() ? 0 : (double) writers.storeOps.get() / commits.size(),
        LabRun.percentile(sorted, 0.50) / 1e6, LabRun.percentile(sorted, 0.99) / 1e6, dbQueries,
        ws.count("fence_release_failure"), ws.storeErrorCount(), readerStoreErrors);
    out.printf(Locale.ROOT, "%,d writes, %,d reads, %,d stale after a commit, %d stale keys after"
        + " quiescence%n", result.writes(), result.reads(), result.staleAfterCommit(),
        result.staleKeys());
    return result;
  }

  /**
   * The reads that returned a version older than one whose commit had returned before they
   * began ({@code [0]}), older than one whose whole write had returned ({@code [1]}), and older
   * than one whose whole write had returned more than {@code boundNanos} before ({@code [2]}).
   */
  static long[] stale(List<Commit> commits, Reads reads, int keys, long boundNanos) {
    long[][] byCommit = new long[keys][];
    long[][] byReturn = new long[keys][];
    long[][] maxByCommit = new long[keys][];
    long[][] maxByReturn = new long[keys][];
    for (int k = 0; k < keys; k++) {
      int key = k;
      List<Commit> of = commits.stream().filter(c -> c.key() == key).toList();
      List<Commit> c1 = of.stream().sorted((a, b) -> Long.compare(a.committedNanos(),
          b.committedNanos())).toList();
      List<Commit> c2 = of.stream().sorted((a, b) -> Long.compare(a.returnedNanos(),
          b.returnedNanos())).toList();
      byCommit[k] = c1.stream().mapToLong(Commit::committedNanos).toArray();
      byReturn[k] = c2.stream().mapToLong(Commit::returnedNanos).toArray();
      maxByCommit[k] = runningMax(c1);
      maxByReturn[k] = runningMax(c2);
    }
    long afterCommit = 0;
    long afterWrite = 0;
    long pastBound = 0;
    for (int i = 0; i < reads.size; i++) {
      int k = reads.keys[i];
      if (reads.versions[i] < newest(byCommit[k], maxByCommit[k], reads.starts[i])) {
        afterCommit++;
      }
      if (reads.versions[i] < newest(byReturn[k], maxByReturn[k], reads.starts[i])) {
        afterWrite++;
      }
      if (reads.versions[i] < newest(byReturn[k], maxByReturn[k],
          reads.starts[i] - boundNanos)) {
        pastBound++;
      }
    }
    return new long[] {afterCommit, afterWrite, pastBound};
  }

  private static long[] runningMax(List<Commit> commits) {
    long[] max = new long[commits.size()];
    long m = 0;
    for (int i = 0; i < max.length; i++) {
      m = Math.max(m, commits.get(i).version());
      max[i] = m;
    }
    return max;
  }

  /** The newest version among the commits at times before {@code start}; 0 if none. */
  private static long newest(long[] times, long[] maxVersion, long start) {
    int low = 0;
    int high = times.length; // the first commit at or after start
    while (low < high) {
      int mid = (low + high) >>> 1;
      if (times[mid] < start) {
        low = mid + 1;
      } else {
        high = mid;
      }
    }
    return low == 0 ? 0 : maxVersion[low - 1];
  }

  /** After quiescence: the keys whose cached value is not their row's version. */
  static long staleKeysOf(InetSocketAddress address, String jdbcUrl, String namespace,
      int keys) throws SQLException {
    ArcusClient client = client(address);
    try (SustainableCache<String> cache = cache(client, namespace, null, 0);
        Connection c = DriverManager.getConnection(jdbcUrl, "sa", "");
        PreparedStatement select = c.prepareStatement(SELECT)) {
      long stale = 0;
      for (int k = 0; k < keys; k++) {
        Optional<String> cached = cache.getIfPresent(key(k));
        if (cached.isPresent() && !cached.get().equals(select(select, k))) {
          stale++;
        }
      }
      return stale;
    } finally {
      client.shutdown();
    }
  }

  /** The writer threads of one run, their cache (over a counting store) and their commit log. */
  private final class Writers implements AutoCloseable {
    final ConcurrentLinkedQueue<Commit> commits = new ConcurrentLinkedQueue<>();
    final AtomicLong refused = new AtomicLong();
    final AtomicLong lost = new AtomicLong();
    final AtomicLong storeOps = new AtomicLong();
    CacheStats stats;
    private final String mode;
    private final String jdbcUrl;
    private final ArcusClient client;
    private final SustainableCache<String> cache;
    private final long seed;

    Writers(String mode, InetSocketAddress address, String jdbcUrl, String namespace,
        long seed) {
      this.mode = mode;
      this.seed = seed;
      this.jdbcUrl = jdbcUrl;
      this.client = client(address);
      this.cache = cache(client, namespace, storeOps, options.nearMillis());
    }

    /** Writes from {@code startAt} for the run's seconds, pausing memcached if given. */
    void run(long startAtMillis, MemcachedCluster outage) throws InterruptedException {
      while (System.currentTimeMillis() < startAtMillis) {
        Thread.sleep(Math.max(1, Math.min(20, startAtMillis - System.currentTimeMillis())));
      }
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(options.seconds());
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < options.writers(); w++) {
        long writerSeed = seed * 1_000 + w;
        threads.add(new Thread(() -> write(end, writerSeed), "tx-writer-" + w));
      }
      threads.forEach(Thread::start);
      if (outage != null) {
        long at = TimeUnit.SECONDS.toMillis(options.seconds()) * 2 / 5;
        Thread.sleep(at);
        outage.pause(0);
        Thread.sleep(OUTAGE_MILLIS);
        outage.resume(0);
      }
      for (Thread thread : threads) {
        thread.join();
      }
      // the fences' completions that failed while memcached was stopped are retried meanwhile
      Thread.sleep(TAIL_MILLIS / 2);
      stats = cache.stats();
    }

    private void write(long end, long seed) {
      SplittableRandom random = new SplittableRandom(seed);
      try (Connection c = DriverManager.getConnection(jdbcUrl + ";LOCK_TIMEOUT=10000", "sa",
          "");
          PreparedStatement update = c.prepareStatement(
              "UPDATE item SET version = version + 1 WHERE id = ?");
          PreparedStatement select = c.prepareStatement(SELECT)) {
        c.setAutoCommit(false);
        while (System.nanoTime() < end) {
          int k = random.nextInt(options.keys());
          long delay = 20 + random.nextInt(81);
          transaction(c, update, select, k, delay);
        }
      } catch (SQLException e) {
        throw new IllegalStateException("a writer's connection failed: " + e, e);
      }
    }

    private void transaction(Connection c, PreparedStatement update, PreparedStatement select,
        int k, long delayMillis) throws SQLException {
      String key = key(k);
      WriteFence<String> fence = null;
      if (mode.startsWith("fenced")) {
        try {
          fence = cache.fence(key);
        } catch (RuntimeException e) {
          refuse(delayMillis); // the key is not protected: the data must not change
          return;
        }
      }
      long version;
      try {
        update.setInt(1, k);
        update.executeUpdate();
        version = Long.parseLong(select(select, k));
        if (mode.equals("plain")) {
          cache.invalidate(key); // throws if the store failed: the transaction rolls back
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(delayMillis));
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        if (fence != null) {
          fence.rolledBack();
        }
        refuse(delayMillis);
        return;
      }
      long committed = System.nanoTime();
      switch (mode) {
        case "after-commit" -> {
          try {
            cache.invalidate(key);
          } catch (RuntimeException e) {
            lost.incrementAndGet(); // committed; Spring logs the exception of afterCommit
          }
        }
        case "fenced" -> fence.committed();
        case "fenced-put" -> fence.committed(Long.toString(version));
        default -> { }
      }
      commits.add(new Commit(k, version, committed, System.nanoTime()));
    }

    /** A write that failed takes its time too: the writer's next request comes after it. */
    private void refuse(long delayMillis) {
      refused.incrementAndGet();
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(delayMillis));
    }

    @Override
    public void close() {
      cache.close();
      client.shutdown();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Shared with the reader JVMs

  /** The cache key of row {@code id}. */
  static String key(int id) {
    return "item:" + id;
  }

  /** The row id of a cache key. */
  static int id(String key) {
    return Integer.parseInt(key.substring("item:".length()));
  }

  /** The row's version, as text. */
  static String select(PreparedStatement select, int id) {
    try {
      select.setInt(1, id);
      try (ResultSet row = select.executeQuery()) {
        if (!row.next()) {
          throw new IllegalStateException("no row " + id);
        }
        return Long.toString(row.getLong(1));
      }
    } catch (SQLException e) {
      throw new IllegalStateException("the query of row " + id + " failed: " + e, e);
    }
  }

  /**
   * Waits until {@code client} is connected to a server (it connects in the background),
   * polling every 10 ms.
   *
   * @throws IllegalStateException if it is not after 60 s
   * @throws InterruptedException if interrupted while waiting
   */
  static void awaitConnected(ArcusClient client) throws InterruptedException {
    long limit = System.currentTimeMillis() + 60_000;
    while (client.getAvailableServers().isEmpty()) {
      if (System.currentTimeMillis() > limit) {
        throw new IllegalStateException("no connection to the cache server after 60 s");
      }
      Thread.sleep(10);
    }
  }

  static ArcusClient client(InetSocketAddress address) {
    try {
      return new ArcusClient(STORE_DEFAULTS ? ArcusStore.recommendedSettings().build()
          : new ConnectionFactoryBuilder().setOpTimeout(OPERATION_TIMEOUT.toMillis()).build(),
          List.of(address));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot create a client of " + address, e);
    }
  }

  /** The scenario's store over {@code client}; every operation counted in {@code storeOps} if given. */
  static CacheStore store(ArcusClient client, AtomicLong storeOps) {
    CacheStore store = STORE_DEFAULTS ? ArcusStore.of(client)
        : ArcusStore.builder(client).operationTimeout(OPERATION_TIMEOUT).build();
    return storeOps == null ? store : new CountingOps(store, storeOps);
  }

  /**
   * The scenario's cache: the core API over the ARCUS adapter, TTL 10 min (nothing is refreshed
   * during a run: a stale value stays until its key is written again), the default fence
   * timeout; every store operation counted in {@code storeOps} if given; a near cache of bound
   * {@code nearMillis} if that is positive.
   */
  static SustainableCache<String> cache(ArcusClient client, String namespace,
      AtomicLong storeOps, long nearMillis) {
    var builder = SustainableCache.builder(store(client, storeOps)).namespace(namespace).ttl(TTL)
        .codec(ValueCodec.utf8());
    if (nearMillis > 0) {
      builder.nearCache(NEAR_SIZE, Duration.ofMillis(nearMillis));
    }
    if (FAIL_CLOSED) {
      builder.failWritesWhenStoreDown(true);
    }
    return builder.build();
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1,
        java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  /** Counts every operation sent to the store (a round trip each). Thread-safe. */
  static final class CountingOps extends ForwardingStore {
    private final AtomicLong ops;
    private final AtomicLong reads;

    CountingOps(CacheStore delegate, AtomicLong ops) {
      this(delegate, ops, new AtomicLong());
    }

    /** Counts every operation in {@code ops}, and the reads among them in {@code reads} too. */
    CountingOps(CacheStore delegate, AtomicLong ops, AtomicLong reads) {
      super(delegate);
      this.ops = ops;
      this.reads = reads;
    }

    @Override
    public CompletableFuture<Optional<StoreItem>> gets(String key) {
      ops.incrementAndGet();
      reads.incrementAndGet();
      return super.gets(key);
    }

    @Override
    public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
      ops.incrementAndGet();
      reads.incrementAndGet();
      return super.getsAll(keys);
    }

    @Override
    public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
      ops.incrementAndGet();
      return super.add(key, value, exptime);
    }

    @Override
    public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
      ops.incrementAndGet();
      return super.set(key, value, exptime);
    }

    @Override
    public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
        int exptime) {
      ops.incrementAndGet();
      return super.cas(key, casToken, value, exptime);
    }

    @Override
    public CompletableFuture<Boolean> delete(String key) {
      ops.incrementAndGet();
      return super.delete(key);
    }

    @Override
    public CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
      ops.incrementAndGet();
      return super.incr(key, delta, initial, exptime);
    }

    @Override
    public CompletableFuture<Void> flushPrefix(String prefix) {
      ops.incrementAndGet();
      return super.flushPrefix(prefix);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Reporting

  /** One result per configuration (mode, outage), in first-run order: each figure's median. */
  static List<Result> medians(List<Result> results) {
    Map<String, List<Result>> groups = new LinkedHashMap<>();
    for (Result r : results) {
      groups.computeIfAbsent(r.mode() + "/" + r.outage(), g -> new ArrayList<>()).add(r);
    }
    List<Result> medians = new ArrayList<>();
    for (List<Result> g : groups.values()) {
      Result first = g.get(0);
      medians.add(new Result(first.mode(), first.outage(), first.seed(), first.seconds(),
          first.readers(), median(g, Result::writes), median(g, Result::refused),
          median(g, Result::lost), median(g, Result::reads), median(g, Result::failedReads),
          median(g, Result::staleAfterCommit), median(g, Result::staleAfterWrite),
          median(g, Result::stalePastBound),
          median(g, Result::staleKeys), medianOf(g, Result::storeOpsPerWrite),
          medianOf(g, Result::p50Ms), medianOf(g, Result::p99Ms), median(g, Result::dbQueries),
          median(g, Result::fenceReleaseFailures), median(g, Result::writerStoreErrors),
          median(g, Result::readerStoreErrors)));
    }
    return medians;
  }

  private static long median(List<Result> g, java.util.function.ToLongFunction<Result> f) {
    return Math.round(medianOf(g, r -> (double) f.applyAsLong(r)));
  }

  private static double medianOf(List<Result> g, java.util.function.ToDoubleFunction<Result> f) {
    double[] values = g.stream().mapToDouble(f).sorted().toArray();
    int n = values.length;
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  }

  String report(List<Result> results) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "%ntransactions: %d writer threads, commit after 20-100"
        + " ms; %d reader JVMs x %d reads/s over %d rows; loads of %d ms after the SELECT;"
        + " %d s per run; %s%n", options.writers(), options.readers(), options.rate(),
        options.keys(), options.queryMillis(), options.seconds(), options.nearMillis() > 0
            ? "near caches of bound " + options.nearMillis() + " ms" : "no near cache"));
    Map<Boolean, Double> plainP50 = new LinkedHashMap<>();
    results.stream().filter(r -> r.mode().equals("plain"))
        .forEach(r -> plainP50.put(r.outage(), r.p50Ms()));
    List<List<String>> rows = new ArrayList<>();
    for (Result r : results) {
      Double base = plainP50.get(r.outage());
      rows.add(List.of(r.mode(), r.outage() ? "5 s" : "-", String.format("%,d", r.writes()),
          r.refused() + "/" + r.lost(), String.format("%,d", r.reads()),
          String.format("%,d", r.staleAfterCommit()), String.format("%,d", r.staleAfterWrite()),
          String.format("%,d", r.stalePastBound()),
          Long.toString(r.staleKeys()), String.format(Locale.ROOT, "%.1f", r.storeOpsPerWrite()),
          String.format(Locale.ROOT, "%.2f", r.p50Ms()),
          String.format(Locale.ROOT, "%.2f", r.p99Ms()),
          base == null ? "-" : String.format(Locale.ROOT, "%+.2f", r.p50Ms() - base),
          String.format(Locale.ROOT, "%,.1f", (double) r.dbQueries() / r.seconds()),
          r.fenceReleaseFailures() + "/" + r.writerStoreErrors() + "/" + r.readerStoreErrors(),
          r.ok() ? (r.fenced() ? "ok" : "-") : "FAILED"));
    }
    b.append(Scenarios.table(List.of("mode", "outage", "writes", "refused/lost", "reads",
        "stale_after_commit", "stale_after_write", "past_bound", "stale_keys", "store_ops/write", "p50_ms",
        "p99_ms", "p50_vs_plain", "db_queries/s", "release_fail/w_err/r_err", "check"), rows));
    b.append("""
        stale_after_commit: reads that began after a commit of their key had returned and
        returned an older version; stale_after_write: the same once the writer's invalidation
        or fence completion had returned too (goal 0 for fenced without a near cache);
        past_bound: the same, more than the near cache's bound after (goal 0 for fenced; without
        a near cache, stale_after_write); stale_keys: cached values
        that differed from the row after quiescence (goal 0 for fenced); refused: writes rolled
        back because the invalidation (plain) or the fence failed before the commit; lost:
        after-commit invalidations that failed after the commit; store_ops/write: the writers'
        store operations per committed write; p50/p99: read latency; db_queries/s: loads;
        release_fail: fence_release_failure; w_err/r_err: storeErrorCount of the writers'
        cache and of the readers' caches.
        """);
    return b.toString();
  }

  /**
   * Stale reads per 1,000 reads, after the commit and after the write returned, steady and with
   * the outage: a bar per configuration. The axis stops at {@link #CHART_MAX} per 1,000 so that
   * the small counts show; a configuration with a taller bar is cut there, and its category
   * label gives its largest value.
   */
  static CategoryChart chart(List<Result> results) {
    CategoryChart chart = new CategoryChartBuilder().width(1000).height(460)
        .title("Reads that returned an older row than a commit that had returned before they"
            + " began")
        .xAxisTitle("invalidation").yAxisTitle("stale reads per 1,000 reads").build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
    chart.getStyler().setYAxisMin(0.0);
    chart.getStyler().setYAxisMax(CHART_MAX);
    chart.getStyler().setYAxisDecimalPattern("#,##0.##");
    chart.getStyler().setLabelsVisible(true);
    chart.getStyler().setLabelsFontColorAutomaticEnabled(false);
    chart.getStyler().setLabelsFontColor(java.awt.Color.BLACK);
    Map<String, Double> tallest = new LinkedHashMap<>();
    for (Result r : results) {
      tallest.merge(r.mode(), perThousand(r, r.staleAfterCommit()), Math::max);
    }
    for (boolean outage : List.of(false, true)) {
      for (boolean afterWrite : List.of(false, true)) {
        List<String> modes = new ArrayList<>();
        List<Double> values = new ArrayList<>();
        for (Result r : results) {
          if (r.outage() == outage) {
            double top = tallest.get(r.mode());
            modes.add(top <= CHART_MAX ? r.mode() : String.format(Locale.ROOT,
                "%s (cut: up to %,.0f)", r.mode(), top));
            values.add(perThousand(r, afterWrite ? r.stalePastBound() : r.staleAfterCommit()));
          }
        }
        if (!modes.isEmpty()) {
          chart.addSeries((afterWrite ? "after the write returned" : "after the commit")
              + (outage ? ", memcached stopped 5 s" : ", steady"), modes, values);
        }
      }
    }
    return chart;
  }

  private static double perThousand(Result r, long stale) {
    return r.reads() == 0 ? 0 : 1000.0 * stale / r.reads();
  }
}
