package io.sustainablecache.lab;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.arcus.ArcusStore;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.ForwardingStore;
import io.sustainablecache.testkit.memcached.FaultProxy;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ConnectionFactoryBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * {@code --near}: the near cache against real memcached processes the lab starts (issue 14).
 *
 * <ul>
 *   <li><b>zipf</b>: 100,000 keys, Zipf 0.99, at a steady rate through one instance, once without
 *       and once with a near cache of 10,000 entries (same key sequence, same duration): store
 *       reads, database loads, misses.</li>
 *   <li><b>churn</b>: four reader JVMs ({@link NearReader}) read 200 hot keys while the writer (this
 *       JVM) changes their source (a second memcached, the "database") and invalidates or puts
 *       them 20 times a second. Every read is checked against the writer's log ({@link
 *       NearChecks}): 0 reads may return a value that a change which returned more than Δ
 *       before the read began had replaced. The same with one fault at a time: memcached
 *       restarted; the log's items evicted (deleted every 100 ms for 3 s, as an eviction would);
 *       one reader stopped with {@code SIGSTOP} for 10 s; one reader's connection blackholed for
 *       5 s (polls included, by the lab's fault proxy); one node of three killed for 5 s. And
 *       the recipe most services use instead: a local cache whose entries expire Δ after they
 *       were written, no invalidation. With {@code --storm N}, the writer's JVM also invalidates
 *       N distinct keys a second that no reader reads (issue 24): the readers' near hit ratio
 *       and whole-tier drops against the rate of changes.</li>
 * </ul>
 *
 * Exits 1 if a near run had a violation or a run's near hit ratio did not come back within 2 Δ
 * of its fault's end.
 */
final class NearScenario {

  static final String USAGE = """
      stampede-lab --near: the near cache against real memcached processes (needs a memcached
      binary on the PATH). Runs zipf, then the churn runs, and writes near.csv, near.txt and
      charts under --out.

        --runs LIST        zipf,churn,ttl,restart,evict,stop,block,node (default: all)
        --readers N        reader JVMs of the churn runs (default 4)
        --seconds N        length of a churn run (default 20)
        --rate N           reads per second per reader (default 15000)
        --staleness MS     the near cache's bound Δ (default 1000)
        --storm N          churn runs: N more invalidations per second, each of a distinct key
                           no reader reads, by the writer's JVM (default 0)
        --zipf-rate N      requests per second of the zipf runs (default 5000)
        --zipf-seconds N   length of each zipf run (default 30)
        --out DIR          (default lab-results)   --no-charts   --seed N (default 42)
      """;

  static final List<String> RUNS =
      List.of("zipf", "churn", "ttl", "restart", "evict", "stop", "block", "node");

  private static final int HOT_KEYS = 200;
  private static final int CHANGES_PER_SECOND = 20;
  private static final long FAULT_AT_MILLIS = 5_000;
  private static final int STORM_THREADS = 4;

  record Options(List<String> runs, int readers, int seconds, int rate, long stalenessMillis,
      int zipfRate, int zipfSeconds, Path out, boolean charts, long seed, int storm) {}

  /**
   * One churn run's outcome.
   *
   * @param recoveryMillis from the fault's end until the near hit ratio was back to 90 % of what
   *     it was before (over a 200 ms window); -1 if it was not; 0 for a run without a fault
   * @param resetsPerReader whole-tier drops per reader (the readers' {@code near_reset})
   * @param stormPerSecond the storm's invalidations per second (of keys no reader reads)
   */
  record ChurnResult(String run, String mode, NearChecks.Staleness staleness, double nearHitRatio,
      double storeReadsPerSecond, long changes, long failedChanges, long recoveryMillis,
      long boundMillis, double resetsPerReader, double stormPerSecond) {

    boolean ok() {
      return mode.equals("ttl") || (staleness.violations() == 0 && recoveryMillis >= 0
          && recoveryMillis <= 2 * boundMillis);
    }
  }

  /** One zipf run's outcome. */
  record ZipfResult(String cache, long requests, long storeReads, long dbLoads, long misses,
      long nearHits, long refreshes, double[] storeReadsPerSecond) {}

  private final Options options;
  private final PrintStream out;

  private NearScenario(Options options, PrintStream out) {
    this.options = options;
    this.out = out;
  }

  static boolean requested(String[] args) {
    return Arrays.asList(args).contains("--near");
  }

  static int run(String[] args, PrintStream out) {
    if (ScenarioStart.help(args, USAGE, out)) {
      return 0;
    }
    ScenarioStart.prepare("net.spy.memcached", "error", "io.sustainablecache", "error",
        "io.sustainablecache.testkit", "warn");
    return ScenarioStart.guarded("the near scenario",
        () -> new NearScenario(parse(args), out).run());
  }

  static Options parse(String[] args) {
    List<String> runs = RUNS;
    int readers = 4;
    int seconds = 20;
    int rate = 15_000;
    long staleness = 1_000;
    int zipfRate = 5_000;
    int zipfSeconds = 30;
    Path out = Path.of("lab-results");
    boolean charts = true;
    long seed = 42;
    int storm = 0;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--near" -> { }
        case "--runs" -> {
          runs = List.of(value(args, ++i, arg).split(","));
          for (String run : runs) {
            if (!RUNS.contains(run)) {
              throw new IllegalArgumentException("--runs: unknown run " + run + "; known: "
                  + String.join(",", RUNS));
            }
          }
        }
        case "--readers" -> readers = Integer.parseInt(value(args, ++i, arg));
        case "--seconds" -> seconds = Integer.parseInt(value(args, ++i, arg));
        case "--rate" -> rate = Integer.parseInt(value(args, ++i, arg));
        case "--staleness" -> staleness = Long.parseLong(value(args, ++i, arg));
        case "--zipf-rate" -> zipfRate = Integer.parseInt(value(args, ++i, arg));
        case "--zipf-seconds" -> zipfSeconds = Integer.parseInt(value(args, ++i, arg));
        case "--out" -> out = Path.of(value(args, ++i, arg));
        case "--no-charts" -> charts = false;
        case "--seed" -> seed = Long.parseLong(value(args, ++i, arg));
        case "--storm" -> storm = Integer.parseInt(value(args, ++i, arg));
        default -> throw new IllegalArgumentException("--near: unknown option " + arg
            + " (see --near --help)");
      }
    }
    if (readers < 2 || seconds < 18 && (runs.contains("stop")) || seconds < 10) {
      throw new IllegalArgumentException("--near needs at least 2 readers and 10 s per run"
          + " (18 s with the stop run)");
    }
    return new Options(runs, readers, seconds, rate, staleness, zipfRate, zipfSeconds, out,
        charts, seed, storm);
  }

  /** The option's value: the next argument. */
  static String value(String[] args, int i, String option) {
    if (i >= args.length) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return args[i];
  }

  private int run() throws IOException {
    Path dir = options.out();
    Files.createDirectories(dir);
    out.printf("stampede-lab --near: bound %d ms, %d reader JVMs x %,d reads/s, %d hot keys,"
        + " %d changes/s, %d s per churn run%n", options.stalenessMillis(), options.readers(),
        options.rate(), HOT_KEYS, CHANGES_PER_SECOND, options.seconds());
    List<ZipfResult> zipf = new ArrayList<>();
    if (options.runs().contains("zipf")) {
      zipf.add(zipf(false));
      zipf.add(zipf(true));
    }
    List<ChurnResult> churn = new ArrayList<>();
    Map<String, long[]> stalenessOfRun = new LinkedHashMap<>();
    for (String run : options.runs()) {
      if (!run.equals("zipf")) {
        churn.add(churn(run, stalenessOfRun));
      }
    }
    String text = report(zipf, churn);
    out.print(text);
    Files.writeString(dir.resolve("near.txt"), text, StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("near.csv"), csv(zipf, churn), StandardCharsets.UTF_8);
    if (options.charts()) {
      charts(zipf, stalenessOfRun, dir.resolve("charts"));
    }
    out.printf("Wrote %s, %s%n", dir.resolve("near.txt"), dir.resolve("near.csv"));
    boolean ok = churn.stream().allMatch(ChurnResult::ok);
    if (!ok) {
      out.println("FAILED: a near run had a violation, or its near hit ratio did not come back"
          + " within 2 x the bound");
    }
    return ok ? 0 : 1;
  }

  // ---------------------------------------------------------------------------------------------
  // zipf

  private ZipfResult zipf(boolean near) {
    int keys = 100_000;
    int requests = options.zipfRate() * options.zipfSeconds();
    int[] sequence = zipfSequence(keys, 0.99, requests, options.seed());
    String name = near ? "near cache (10,000 entries)" : "store only";
    out.printf("[zipf] %s: %,d requests over %,d keys at %,d/s ... ", name, requests, keys,
        options.zipfRate());
    out.flush();
    try (MemcachedCluster cluster = MemcachedCluster.start(1)) {
      ArcusClient client = client(cluster.addresses(), 1_000);
      AtomicLong storeReads = new AtomicLong();
      CacheStore store = new ForwardingStore(ArcusStore.of(client)) {
        @Override
        public CompletableFuture<Optional<StoreItem>> gets(String key) {
          storeReads.incrementAndGet();
          return super.gets(key);
        }
      };
      var builder = SustainableCache.builder(store).namespace("zipf").ttl(Duration.ofSeconds(10))
          .codec(ValueCodec.utf8());
      if (near) {
        builder.nearCache(10_000, Duration.ofMillis(options.stalenessMillis()));
      }
      AtomicLong loads = new AtomicLong();
      try (SustainableCache<String> cache = builder.build()) {
        int threads = 4;
        long gap = TimeUnit.SECONDS.toNanos(1) / options.zipfRate();
        long begin = System.nanoTime() + 100_000_000L;
        double[] perSecond = new double[options.zipfSeconds()];
        AtomicLong[] readsAt = new AtomicLong[options.zipfSeconds()];
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          int thread = t;
          Thread worker = new Thread(() -> {
            for (int i = thread; i < requests; i += threads) {
              long due = begin + i * gap;
              long now;
              while ((now = System.nanoTime()) < due) {
                LockSupport.parkNanos(Math.min(due - now, 1_000_000L));
              }
              cache.get("k" + sequence[i], key -> {
                loads.incrementAndGet();
                LockSupport.parkNanos(1_000_000L); // a 1 ms query
                return key + "-value";
              });
            }
          }, "zipf-" + t);
          workers.add(worker);
          worker.start();
        }
        long previous = 0;
        for (int s = 0; s < options.zipfSeconds(); s++) {
          long due = begin + TimeUnit.SECONDS.toNanos(s + 1);
          while (System.nanoTime() < due) {
            LockSupport.parkNanos(Math.min(due - System.nanoTime(), 10_000_000L));
          }
          long reads = storeReads.get();
          perSecond[s] = reads - previous;
          previous = reads;
        }
        for (Thread worker : workers) {
          worker.join();
        }
        var stats = cache.stats();
        ZipfResult result = new ZipfResult(name, requests, storeReads.get(), loads.get(),
            stats.missCount(), stats.count("near_hit"), stats.refreshSuccessCount(), perSecond);
        out.printf(Locale.ROOT, "%,d store reads, %,d loads, %,d misses%n", result.storeReads(),
            result.dbLoads(), result.misses());
        client.shutdown();
        return result;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** The keys of a run: Zipf-distributed ranks, from the seed. */
  static int[] zipfSequence(int keys, double exponent, int requests, long seed) {
    double[] cumulative = new double[keys];
    double total = 0;
    for (int k = 0; k < keys; k++) {
      total += 1.0 / Math.pow(k + 1, exponent);
      cumulative[k] = total;
    }
    SplittableRandom random = new SplittableRandom(seed);
    int[] sequence = new int[requests];
    for (int i = 0; i < requests; i++) {
      int k = Arrays.binarySearch(cumulative, random.nextDouble() * total);
      sequence[i] = k >= 0 ? k : -k - 1;
    }
    return sequence;
  }

  /**
   * The most store reads a near cache of {@code size} entries can save on a sequence: every
   * request but each key's first, for the {@code size} keys requested most (an oracle's choice).
   */
  static long savableReads(int[] sequence, int size) {
    Map<Integer, Long> counts = Arrays.stream(sequence).boxed()
        .collect(Collectors.groupingBy(k -> k, Collectors.counting()));
    return counts.values().stream().sorted((a, b) -> Long.compare(b, a)).limit(size)
        .mapToLong(c -> c - 1).sum();
  }

  // ---------------------------------------------------------------------------------------------
  // churn

  private ChurnResult churn(String run, Map<String, long[]> stalenessOfRun) throws IOException {
    String mode = run.equals("ttl") ? "ttl" : "near";
    long bound = options.stalenessMillis();
    out.printf("[%s] ... ", run);
    out.flush();
    Path dir = options.out().resolve("near-" + run);
    Files.createDirectories(dir);
    try (MemcachedCluster cluster = MemcachedCluster.start(run.equals("node") ? 3 : 1);
        MemcachedCluster db = MemcachedCluster.start(1);
        FaultProxy proxy = run.equals("block") ? FaultProxy.start(cluster.address(0)) : null) {
      String namespace = "near-" + Long.toHexString(System.nanoTime() & 0xFFFFFFL);
      String all = cluster.addresses().stream().map(NearScenario::text)
          .collect(Collectors.joining(","));
      long startAt = System.currentTimeMillis() + 2_500L + 400L * options.readers();
      List<Process> readers = new ArrayList<>();
      for (int r = 0; r < options.readers(); r++) {
        String addresses = r == 0 && proxy != null ? text(proxy.address()) : all;
        readers.add(ChildJvm.start(List.of("-Xmx384m"), NearReader.class, List.of(mode,
            addresses, text(db.address(0)), namespace, Integer.toString(HOT_KEYS),
            Long.toString(bound), Integer.toString(options.rate()),
            Integer.toString(options.seconds()), Long.toString(startAt),
            Long.toString(options.seed() + r), dir.resolve("reader-" + r).toString()),
            dir.resolve("reader-" + r + ".log")));
      }
      Writer writer = new Writer(cluster, db, namespace, mode.equals("near"), bound);
      long[] fault = writer.run(startAt, options.seconds(), run, cluster, proxy, readers.get(0),
          options.storm());
      for (int r = 0; r < readers.size(); r++) {
        Process p = readers.get(r);
        if (!p.waitFor(options.seconds() + 60, TimeUnit.SECONDS)) {
          readers.forEach(Process::destroyForcibly);
          throw new IllegalStateException("reader " + r + " did not finish; see " + dir);
        }
        if (p.exitValue() != 0) {
          throw new IllegalStateException("reader " + r + " failed (exit " + p.exitValue()
              + "); see " + dir);
        }
      }
      writer.close();
      return check(run, mode, dir, writer, fault, stalenessOfRun);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private ChurnResult check(String run, String mode, Path dir, Writer writer, long[] fault,
      Map<String, long[]> stalenessOfRun) throws IOException {
    long total = 0;
    for (int r = 0; r < options.readers(); r++) {
      total += Files.size(dir.resolve("reader-" + r + ".reads")) / 20;
    }
    int n = Math.toIntExact(total);
    int[] keys = new int[n];
    long[] versions = new long[n];
    long[] starts = new long[n];
    int at = 0;
    for (int r = 0; r < options.readers(); r++) {
      at = NearReader.readInto(dir.resolve("reader-" + r + ".reads"), keys, versions, starts, at);
    }
    long boundNanos = TimeUnit.MILLISECONDS.toNanos(options.stalenessMillis());
    NearChecks.Staleness staleness = NearChecks.check(writer.changes, keys, versions, starts, at,
        boundNanos);
    stalenessOfRun.put(run, NearChecks.staleOnly(
        NearChecks.stalenessOfEach(writer.changes, keys, versions, starts, at)));
    double nearHits = 0;
    double reads = 0;
    double storeReads = 0;
    double resets = 0;
    long recovery = fault == null ? 0 : -2;
    for (int r = 0; r < options.readers(); r++) {
      List<long[]> samples = samples(dir.resolve("reader-" + r + ".samples"));
      long[] first = samples.get(0);
      long[] last = samples.get(samples.size() - 1);
      reads += last[1] - first[1];
      nearHits += last[2] - first[2];
      storeReads += last[3] - first[3];
      resets += resets(dir.resolve("reader-" + r + ".log"));
      boolean affected = !(run.equals("stop") || run.equals("block")) || r == 0;
      if (fault != null && affected && mode.equals("near")) {
        long back = NearChecks.recoveryNanos(samples, first[0] + 2_000_000_000L, fault[0],
            fault[1], 200_000_000L, 0.9);
        recovery = back < 0 || recovery == -1 ? -1
            : Math.max(recovery, TimeUnit.NANOSECONDS.toMillis(back));
      }
    }
    ChurnResult result = new ChurnResult(run, mode, staleness, nearHits / Math.max(1, reads),
        storeReads / options.seconds(), writer.changes.size(), writer.failed.get(),
        recovery == -2 ? -1 : recovery, options.stalenessMillis(), resets / options.readers(),
        writer.stormPerSecond());
    out.printf(Locale.ROOT, "%,d reads, %d violations, max stale %.1f ms, near hits %.1f %%,"
        + " %.1f resets per reader, storm %,.0f/s%s%n",
        staleness.reads(), staleness.violations(), staleness.maxStaleNanos() / 1e6,
        100 * result.nearHitRatio(), result.resetsPerReader(), result.stormPerSecond(),
        fault == null ? ""
            : ", near hit ratio back " + result.recoveryMillis() + " ms after the fault");
    return result;
  }

  /** The whole-tier drops a reader's cache counted: {@code near_reset} in its last line. */
  private static long resets(Path log) throws IOException {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("near_reset=(\\d+)")
        .matcher(Files.readString(log, StandardCharsets.UTF_8));
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  private static List<long[]> samples(Path file) throws IOException {
    List<long[]> samples = new ArrayList<>();
    for (String line : Files.readAllLines(file, StandardCharsets.US_ASCII)) {
      samples.add(Arrays.stream(line.trim().split(" ")).mapToLong(Long::parseLong).toArray());
    }
    return samples;
  }

  private static String text(InetSocketAddress address) {
    return address.getHostString() + ":" + address.getPort();
  }

  /** The writer: changes the database, then the cache, and logs each change that returned. */
  private static final class Writer implements AutoCloseable {
    final List<NearChecks.Change> changes = new ArrayList<>();
    final AtomicLong failed = new AtomicLong();
    private final AtomicLong stormed = new AtomicLong();
    private long stormNanos;
    private final ArcusClient cacheClient;
    private final ArcusClient dbClient;
    private final SustainableCache<String> cache;
    private final long boundMillis;
    /** The store keys of the namespace's invalidation log: what the evict run deletes. */
    private final List<String> logKeys = new ArrayList<>();

    Writer(MemcachedCluster cluster, MemcachedCluster db, String namespace, boolean near,
        long boundMillis) {
      this.boundMillis = boundMillis;
      String log = namespace + ":\u007Fnear:";
      logKeys.add(log + "seq");
      logKeys.add(log + "gen");
      for (int slot = 0; slot < 4096; slot++) { // NearLog.SLOTS
        logKeys.add(log + slot);
      }
      cacheClient = client(cluster.addresses(), NearReader.OPERATION_TIMEOUT.toMillis());
      dbClient = client(List.of(db.address(0)), 1_000);
      var builder = SustainableCache.builder(ArcusStore.builder(cacheClient)
          .operationTimeout(NearReader.OPERATION_TIMEOUT).build()).namespace(namespace)
          .ttl(NearReader.TTL).codec(ValueCodec.utf8());
      if (near) {
        builder.nearCache(NearReader.NEAR_SIZE, Duration.ofMillis(boundMillis));
      }
      cache = builder.build();
    }

    /**
     * Changes keys from {@code startAt} for {@code seconds}, injecting the run's fault; returns
     * the fault's {@code {start, end}} in nanos, or {@code null} for none.
     */
    long[] run(long startAtMillis, int seconds, String run, MemcachedCluster cluster,
        FaultProxy proxy, Process firstReader, int storm) throws InterruptedException {
      for (int key = 0; key < HOT_KEYS; key++) {
        try {
          if (!dbClient.set("k" + key, 0, "0").get(5, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the database refused a write");
          }
        } catch (java.util.concurrent.ExecutionException
            | java.util.concurrent.TimeoutException e) {
          throw new IllegalStateException("cannot write the database: " + e, e);
        }
      }
      while (System.currentTimeMillis() < startAtMillis) {
        Thread.sleep(Math.max(1, Math.min(20, startAtMillis - System.currentTimeMillis())));
      }
      long begin = System.nanoTime();
      long end = begin + TimeUnit.SECONDS.toNanos(seconds);
      Thread faults = null;
      long[] window = faultless(run) ? null : new long[2];
      if (window != null) {
        faults = new Thread(() -> inject(run, begin, window, cluster, proxy, firstReader),
            "near-fault");
        faults.start();
      }
      long stop = end - TimeUnit.MILLISECONDS.toNanos(2 * boundMillis);
      List<Thread> storms = new ArrayList<>();
      for (int t = 0; t < STORM_THREADS && storm > 0; t++) {
        int thread = t;
        storms.add(new Thread(() -> storm(thread, storm, begin, stop), "near-storm-" + t));
      }
      storms.forEach(Thread::start);
      SplittableRandom random = new SplittableRandom(7);
      long gap = TimeUnit.SECONDS.toNanos(1) / CHANGES_PER_SECOND;
      long next = begin;
      boolean put = false;
      while (System.nanoTime() < end - TimeUnit.MILLISECONDS.toNanos(2 * boundMillis)) {
        long now = System.nanoTime();
        if (now < next) {
          LockSupport.parkNanos(next - now);
          continue;
        }
        next += gap;
        int key = random.nextInt(HOT_KEYS);
        long version;
        try {
          version = dbClient.incr("k" + key, 1); // plain memcached's incr: no default value
        } catch (RuntimeException e) {
          continue;
        }
        if (version < 1) {
          throw new IllegalStateException("the database lost key k" + key);
        }
        put = !put;
        try {
          if (put) {
            cache.put("k" + key, Long.toString(version));
          } else {
            cache.invalidate("k" + key);
          }
          changes.add(new NearChecks.Change(key, version, System.nanoTime()));
        } catch (RuntimeException e) {
          failed.incrementAndGet(); // threw: no bound promised for this change
        }
      }
      if (faults != null) {
        faults.join();
      }
      for (Thread thread : storms) {
        thread.join();
      }
      stormNanos = stop - begin;
      return window;
    }

    /** One storm thread: invalidates distinct keys nobody reads at its share of the rate. */
    private void storm(int thread, int perSecond, long begin, long stop) {
      long gap = TimeUnit.SECONDS.toNanos(1) * STORM_THREADS / perSecond;
      long next = begin;
      for (long i = 0; System.nanoTime() < stop; i++) {
        long now = System.nanoTime();
        if (now < next) {
          LockSupport.parkNanos(next - now);
        }
        next += gap;
        try {
          cache.invalidate("storm-" + thread + "-" + i);
          stormed.incrementAndGet();
        } catch (RuntimeException e) {
          // counted by what it did not do: the achieved rate
        }
      }
    }

    /** The storm's invalidations per second, over the writer's run. */
    double stormPerSecond() {
      return stormNanos == 0 ? 0 : stormed.get() * 1e9 / stormNanos;
    }

    private static boolean faultless(String run) {
      return run.equals("churn") || run.equals("ttl");
    }

    private void inject(String run, long begin, long[] window, MemcachedCluster cluster,
        FaultProxy proxy, Process firstReader) {
      long at = begin + TimeUnit.MILLISECONDS.toNanos(FAULT_AT_MILLIS);
      while (System.nanoTime() < at) {
        LockSupport.parkNanos(Math.min(at - System.nanoTime(), 10_000_000L));
      }
      window[0] = System.nanoTime();
      switch (run) {
        case "restart" -> {
          cluster.kill(0);
          cluster.restart(0);
        }
        case "evict" -> {
          long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
          while (System.nanoTime() < until) {
            for (String key : logKeys) {
              cacheClient.delete(key);
            }
            LockSupport.parkNanos(100_000_000L);
          }
        }
        case "stop" -> {
          signal("STOP", firstReader);
          LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(10));
          signal("CONT", firstReader);
        }
        case "block" -> {
          proxy.blackhole();
          LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(5));
          proxy.passThrough();
        }
        case "node" -> {
          cluster.kill(1);
          LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(5));
          cluster.restart(1);
        }
        default -> throw new IllegalArgumentException(run);
      }
      window[1] = System.nanoTime();
    }

    @Override
    public void close() {
      cache.close();
      cacheClient.shutdown();
      dbClient.shutdown();
    }
  }

  private static ArcusClient client(List<InetSocketAddress> addresses, long timeoutMillis) {
    try {
      return new ArcusClient(new ConnectionFactoryBuilder().setOpTimeout(timeoutMillis).build(),
          addresses);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot create a client of " + addresses, e);
    }
  }

  private static void signal(String signal, Process process) {
    try {
      Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot run kill: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Reporting

  String report(List<ZipfResult> zipf, List<ChurnResult> churn) {
    StringBuilder b = new StringBuilder();
    if (zipf.size() == 2) {
      ZipfResult none = zipf.get(0);
      ZipfResult near = zipf.get(1);
      int[] sequence = zipfSequence(100_000, 0.99, (int) none.requests(), options.seed());
      long savable = savableReads(sequence, 10_000);
      b.append(String.format(Locale.ROOT, "%nzipf: 100,000 keys, Zipf 0.99, %,d requests at"
          + " %,d/s, TTL 10 s, a 1 ms database%n", none.requests(), options.zipfRate()));
      List<List<String>> rows = new ArrayList<>();
      for (ZipfResult r : zipf) {
        rows.add(List.of(r.cache(), String.format("%,d", r.storeReads()),
            String.format("%,d", r.dbLoads()), String.format("%,d", r.misses()),
            String.format("%,d", r.refreshes()), String.format("%,d", r.nearHits())));
      }
      b.append(Scenarios.table(List.of("cache", "store_reads", "db_loads", "misses",
          "refreshes", "near_hits"), rows));
      b.append(String.format(Locale.ROOT, "store reads: %+.1f %%; database loads: %+.1f %%;"
              + " misses: %+d%n", pct(near.storeReads(), none.storeReads()),
          pct(near.dbLoads(), none.dbLoads()), near.misses() - none.misses()));
      b.append(String.format(Locale.ROOT, "the most a 10,000-entry near cache can save on this"
              + " sequence (the 10,000 most requested keys, all but their first request): %.1f %%"
              + " of the requests%n", 100.0 * savable / none.requests()));
    }
    if (!churn.isEmpty()) {
      b.append(String.format(Locale.ROOT, "%nchurn: %d reader JVMs, %d hot keys, %d changes/s"
          + " (invalidate and put in turn), bound %d ms, %d s per run%n", options.readers(),
          HOT_KEYS, CHANGES_PER_SECOND, options.stalenessMillis(), options.seconds()));
      List<List<String>> rows = new ArrayList<>();
      for (ChurnResult r : churn) {
        NearChecks.Staleness s = r.staleness();
        rows.add(List.of(r.run(), r.mode(), String.format("%,d", s.reads()),
            Long.toString(s.violations()), String.format("%,d", s.stale()),
            ms(s.maxStaleNanos()), ms(s.p999StaleNanos()), ms(s.p999OfStaleNanos()),
            String.format(Locale.ROOT, "%.1f %%", 100 * r.nearHitRatio()),
            String.format(Locale.ROOT, "%,.0f", r.storeReadsPerSecond()),
            r.changes() + (r.failedChanges() > 0 ? " (+" + r.failedChanges() + " threw)" : ""),
            r.recoveryMillis() < 0 ? (r.mode().equals("ttl") ? "-" : "never")
                : Long.toString(r.recoveryMillis()),
            String.format(Locale.ROOT, "%.1f", r.resetsPerReader()),
            String.format(Locale.ROOT, "%,.0f", r.stormPerSecond()), r.ok() ? "ok" : "FAILED"));
      }
      b.append(Scenarios.table(List.of("run", "reader", "reads", "violations", "stale_reads",
          "max_stale_ms", "p99.9_ms", "p99.9_of_stale_ms", "local_hits", "store_reads/s",
          "changes", "recovery_ms", "resets/reader", "storm/s", "check"), rows));
      b.append("""
          violations: reads that returned a value a change which had returned more than the
          bound before the read began had replaced (the ttl recipe has no bound to keep: its
          figure is what it would violate); stale_reads: reads of a replaced value at all;
          p99.9_ms over every read; local_hits: reads answered in the reader's JVM (near hits, or
          the recipe's hits); recovery_ms: from the fault's end until the near hit ratio
          of the affected readers was back to 90 % of its level before the fault (200 ms window);
          resets/reader: whole-tier drops per reader; storm/s: --storm's invalidations per second.
          """);
    }
    return b.toString();
  }

  private static double pct(long after, long before) {
    return before == 0 ? 0 : 100.0 * (after - before) / before;
  }

  private static String ms(long nanos) {
    return String.format(Locale.ROOT, "%.1f", nanos / 1e6);
  }

  private static String csv(List<ZipfResult> zipf, List<ChurnResult> churn) {
    StringBuilder b = new StringBuilder("run,cache_or_reader,reads,store_reads,db_loads,misses,"
        + "near_hits,violations,stale_reads,max_stale_ms,p999_stale_ms,near_hit_ratio,"
        + "store_reads_per_s,changes,failed_changes,recovery_ms,resets_per_reader,storm_per_s\n");
    for (ZipfResult r : zipf) {
      b.append(String.join(",", "zipf", r.cache().replace(",", ""), Long.toString(r.requests()),
          Long.toString(r.storeReads()), Long.toString(r.dbLoads()), Long.toString(r.misses()),
          Long.toString(r.nearHits()), "", "", "", "", "", "", "", "", "", "", ""))
          .append('\n');
    }
    for (ChurnResult r : churn) {
      NearChecks.Staleness s = r.staleness();
      b.append(String.join(",", r.run(), r.mode(), Long.toString(s.reads()), "", "", "", "",
          Long.toString(s.violations()), Long.toString(s.stale()), ms(s.maxStaleNanos()),
          ms(s.p999StaleNanos()), String.format(Locale.ROOT, "%.4f", r.nearHitRatio()),
          String.format(Locale.ROOT, "%.0f", r.storeReadsPerSecond()),
          Long.toString(r.changes()), Long.toString(r.failedChanges()),
          Long.toString(r.recoveryMillis()),
          String.format(Locale.ROOT, "%.1f", r.resetsPerReader()),
          String.format(Locale.ROOT, "%.0f", r.stormPerSecond()))).append('\n');
    }
    return b.toString();
  }

  private void charts(List<ZipfResult> zipf, Map<String, long[]> staleness, Path dir)
      throws IOException {
    Files.createDirectories(dir);
    if (!zipf.isEmpty()) {
      XYChart reads = new XYChartBuilder().width(900).height(450)
          .title("Store reads per second, Zipf 0.99 over 100,000 keys")
          .xAxisTitle("second").yAxisTitle("store reads / s").build();
      for (ZipfResult r : zipf) {
        double[] x = new double[r.storeReadsPerSecond().length];
        for (int i = 0; i < x.length; i++) {
          x[i] = i + 1;
        }
        reads.addSeries(r.cache(), x, r.storeReadsPerSecond()).setMarker(SeriesMarkers.NONE);
      }
      Charts.save(reads, dir.resolve("near-store-reads.png"));
    }
    if (!staleness.isEmpty()) {
      XYChart cdf = new XYChartBuilder().width(900).height(450)
          .title("Staleness of the reads that returned a replaced value")
          .xAxisTitle("ms from the replacing change's return to the read's start")
          .yAxisTitle("share of those reads at or below").build();
      for (Map.Entry<String, long[]> run : staleness.entrySet()) {
        long[] values = run.getValue();
        if (values.length == 0) {
          continue;
        }
        int points = Math.min(values.length, 400);
        double[] x = new double[points];
        double[] y = new double[points];
        for (int i = 0; i < points; i++) {
          int index = (int) ((long) (values.length - 1) * i / Math.max(1, points - 1));
          x[i] = values[index] / 1e6;
          y[i] = (index + 1.0) / values.length;
        }
        var series = cdf.addSeries(run.getKey().equals("ttl") ? "ttl (the recipe)"
            : run.getKey(), x, y);
        series.setMarker(SeriesMarkers.NONE);
        if (run.getKey().equals("ttl")) {
          series.setLineColor(java.awt.Color.BLACK);
          series.setLineWidth(3);
        }
      }
      Charts.save(cdf, dir.resolve("near-staleness.png"));
    }
  }
}
