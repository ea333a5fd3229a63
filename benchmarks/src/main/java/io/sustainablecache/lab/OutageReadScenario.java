package io.sustainablecache.lab;

import io.sustainablecache.Loader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.arcus.ArcusStore;
import io.sustainablecache.testkit.memcached.FaultProxy;
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
import java.util.concurrent.atomic.AtomicLongArray;
import net.spy.memcached.ArcusClient;

/**
 * {@code --outage-reads} (issue 31, parts 1 and 3, the read side of section 7): readers of one
 * hot key in two app instances (each a cache over its own ARCUS client, in one process) against a
 * real memcached behind the lab's fault proxy: healthy, the server hung (the proxy takes requests
 * and never answers, as under SIGSTOP or a partition) for 10 s, healthy, the server dead
 * (connections dropped and refused) for 10 s, healthy. Side by side in one run: the library's
 * defaults, the same with the node breaker and the outage reuse off (the behaviour before issue
 * 31), and the same readers without a cache (every read queries the database).
 *
 * <p>Each instance has 8 closed-loop reader threads, each reading the hot key and then pausing
 * 20 ms (about 400 reads/s per instance while the cache answers); the database takes 20 ms per
 * query. Per phase and variant: reads/s per instance, p50 and p99 latency, database loads/s per
 * instance (mean, and the worst second), and after each fault the time until the first hit.
 *
 * <pre>
 * java -jar benchmarks/target/stampede-lab.jar --outage-reads [--repeat 3] [--quick]
 *     [--memcached H:P] [--out DIR]
 * </pre>
 */
final class OutageReadScenario {

  private static final String USAGE = """
      stampede-lab --outage-reads: readers of one hot key in 2 instances while memcached hangs
      (10 s), then dies (10 s); the defaults vs the breaker and outage reuse off vs no cache
        --repeat N        runs of the three variants, interleaved (default 3); medians reported
        --quick           2 s healthy, 4 s per fault (smoke)
        --memcached H:P   the server (default auto: the testkit's)
        --out DIR         outage-reads.csv (default lab-results)
      """;

  static final int INSTANCES = 2;
  static final int READERS = 8;
  static final long PAUSE_MS = 20;
  static final long DB_MS = 20;
  static final Duration OPERATION_TIMEOUT = Duration.ofMillis(700);
  private static final String HOT = "hot";

  enum Variant { DEFAULTS, BREAKER_OFF, NO_CACHE }

  /** One variant's figures for one phase (the hang or the kill). */
  record Row(String variant, String phase, double readsPerSecond, double p50Ms, double p99Ms,
      double loadsPerSecond, long worstSecondLoads, long recoveryMs) {}

  static boolean requested(String[] args) {
    return Arrays.asList(args).contains("--outage-reads");
  }

  static int run(String[] args, PrintStream out) {
    if (ScenarioStart.help(args, USAGE, out)) {
      return 0;
    }
    ScenarioStart.prepare("net.spy.memcached", "error", "io.sustainablecache", "error",
        "io.sustainablecache.testkit", "warn");
    int repeat = 3;
    boolean quick = false;
    String memcached = "auto";
    Path dir = Path.of("lab-results");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--outage-reads" -> { }
        case "--repeat" -> repeat = Integer.parseInt(args[++i]);
        case "--quick" -> quick = true;
        case "--memcached" -> memcached = args[++i];
        case "--out" -> dir = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    InetSocketAddress address = StampedeLab.memcached(memcached).address();
    long healthyMs = quick ? 2_000 : 5_000;
    long faultMs = quick ? 4_000 : 10_000;
    out.printf("stampede-lab --outage-reads: %d instances x %d readers (pause %d ms), DB %d ms,"
        + " operation timeout %d ms; healthy %d s, hung %d s, healthy, dead %d s, healthy;"
        + " %d run(s); load average %s%n", INSTANCES, READERS, PAUSE_MS, DB_MS,
        OPERATION_TIMEOUT.toMillis(), healthyMs / 1000, faultMs / 1000, faultMs / 1000, repeat,
        loadAverage());
    List<Row> all = new ArrayList<>();
    for (int r = 0; r < repeat; r++) {
      for (Variant variant : Variant.values()) {
        out.printf("[outage-reads] run %d, %s ... ", r + 1, name(variant));
        out.flush();
        List<Row> rows = new Run(address, variant, healthyMs, faultMs).run();
        all.addAll(rows);
        out.printf("done (load average %s)%n", loadAverage());
      }
    }
    String table = table(medians(all), repeat);
    out.println();
    out.print(table);
    try {
      Files.createDirectories(dir);
      StringBuilder csv = new StringBuilder("variant,phase,reads_per_s_per_instance,p50_ms,"
          + "p99_ms,db_loads_per_s_per_instance,worst_second_loads,recovery_ms\n");
      for (Row row : all) {
        csv.append(String.format(Locale.ROOT, "%s,%s,%.1f,%.1f,%.1f,%.1f,%d,%d%n", row.variant(),
            row.phase(), row.readsPerSecond(), row.p50Ms(), row.p99Ms(), row.loadsPerSecond(),
            row.worstSecondLoads(), row.recoveryMs()));
      }
      Files.writeString(dir.resolve("outage-reads.csv"), csv, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot write outage-reads.csv: " + e, e);
    }
    out.printf("%nWrote %s%n", dir.resolve("outage-reads.csv"));
    return 0;
  }

  static String name(Variant variant) {
    return switch (variant) {
      case DEFAULTS -> "defaults";
      case BREAKER_OFF -> "breaker+reuse off";
      case NO_CACHE -> "no cache";
    };
  }

  static List<Row> medians(List<Row> all) {
    Map<String, List<Row>> groups = new LinkedHashMap<>();
    all.forEach(row -> groups.computeIfAbsent(row.phase() + "|" + row.variant(),
        k -> new ArrayList<>()).add(row));
    List<Row> out = new ArrayList<>();
    for (List<Row> rows : groups.values()) {
      Row first = rows.get(0);
      out.add(new Row(first.variant(), first.phase(), median(rows, Row::readsPerSecond),
          median(rows, Row::p50Ms), median(rows, Row::p99Ms), median(rows, Row::loadsPerSecond),
          Math.round(median(rows, r -> r.worstSecondLoads())),
          Math.round(median(rows, r -> r.recoveryMs()))));
    }
    out.sort((a, b) -> a.phase().compareTo(b.phase()));
    return out;
  }

  private static double median(List<Row> rows, java.util.function.ToDoubleFunction<Row> f) {
    double[] values = rows.stream().mapToDouble(f).sorted().toArray();
    int n = values.length;
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  }

  static String table(List<Row> rows, int repeat) {
    StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
        "%-6s %-18s %12s %8s %8s %13s %12s %11s%n", "phase", "variant", "reads/s/inst",
        "p50_ms", "p99_ms", "loads/s/inst", "worst_sec", "recovery_ms"));
    for (Row r : rows) {
      b.append(String.format(Locale.ROOT, "%-6s %-18s %12.0f %8.1f %8.1f %13.1f %12d %11s%n",
          r.phase(), r.variant(), r.readsPerSecond(), r.p50Ms(), r.p99Ms(), r.loadsPerSecond(),
          r.worstSecondLoads(), r.recoveryMs() < 0 ? "-" : Long.toString(r.recoveryMs())));
    }
    return b.append("(medians of ").append(repeat).append(" run(s); per instance; loads: the"
        + " hot key's database queries)\n").toString();
  }

  static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    } catch (IOException | RuntimeException e) {
      return "?";
    }
  }

  /** One variant through the whole timeline. */
  private static final class Run {
    private final InetSocketAddress memcached;
    private final Variant variant;
    private final long healthyMs;
    private final long faultMs;
    /** 0 healthy, 1 hung, 2 dead; the phase a read is counted in is the one it ends in. */
    private volatile int phase;
    private volatile boolean running = true;
    /** Latencies (ns) per fault phase (1, 2), per reader thread. */
    private final List<List<long[]>> latencies = new ArrayList<>();
    /** Loads per instance per second since the start. */
    private final AtomicLongArray[] loadsPerSecond = new AtomicLongArray[INSTANCES];
    private long start;

    Run(InetSocketAddress memcached, Variant variant, long healthyMs, long faultMs) {
      this.memcached = memcached;
      this.variant = variant;
      this.healthyMs = healthyMs;
      this.faultMs = faultMs;
    }

    List<Row> run() {
      List<ArcusClient> clients = new ArrayList<>();
      List<SustainableCache<String>> caches = new ArrayList<>();
      List<Thread> readers = new ArrayList<>();
      String namespace = "outage-" + variant.name().toLowerCase(Locale.ROOT) + "-"
          + Long.toString(System.nanoTime(), 36);
      long totalSeconds = (3 * healthyMs + 2 * faultMs) / 1000 + 5;
      long[] hungAt = new long[2];
      long[] deadAt = new long[2];
      long[] recovery = {-1, -1};
      try (FaultProxy proxy = FaultProxy.start(memcached)) {
        for (int i = 0; i < INSTANCES; i++) {
          loadsPerSecond[i] = new AtomicLongArray((int) totalSeconds);
          ArcusClient client = FaultSuite.client(proxy.address(), OPERATION_TIMEOUT);
          clients.add(client);
          SustainableCacheBuilder<String> builder = SustainableCache.builder(
                  ArcusStore.builder(client).operationTimeout(OPERATION_TIMEOUT).build())
              .namespace(namespace).ttl(Duration.ofMinutes(10)).codec(ValueCodec.utf8());
          if (variant == Variant.BREAKER_OFF) {
            builder.storeProbeInterval(Duration.ZERO).outageReuse(Duration.ZERO);
          }
          caches.add(builder.build());
        }
        start = System.currentTimeMillis();
        for (int i = 0; i < INSTANCES; i++) {
          for (int t = 0; t < READERS; t++) {
            List<long[]> mine = new ArrayList<>();
            latencies.add(mine);
            int instance = i;
            Thread reader = new Thread(() -> read(caches.get(instance), instance, mine),
                "outage-reader-" + i + "-" + t);
            reader.setDaemon(true);
            readers.add(reader);
            reader.start();
          }
        }
        FaultSuite.sleepUntil(start + healthyMs);
        proxy.blackhole();
        phase = 1;
        hungAt[0] = System.currentTimeMillis();
        FaultSuite.sleepUntil(hungAt[0] + faultMs);
        phase = 0;
        proxy.passThrough();
        hungAt[1] = System.currentTimeMillis();
        recovery[0] = awaitHit(caches, hungAt[1] + healthyMs);
        FaultSuite.sleepUntil(hungAt[1] + healthyMs);
        proxy.refuse();
        proxy.dropConnections();
        phase = 2;
        deadAt[0] = System.currentTimeMillis();
        FaultSuite.sleepUntil(deadAt[0] + faultMs);
        phase = 0;
        proxy.passThrough();
        deadAt[1] = System.currentTimeMillis();
        recovery[1] = awaitHit(caches, deadAt[1] + healthyMs);
        FaultSuite.sleepUntil(deadAt[1] + healthyMs);
        running = false;
        for (Thread reader : readers) {
          reader.join(5_000);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      } finally {
        running = false;
        caches.forEach(SustainableCache::close);
        clients.forEach(ArcusClient::shutdown);
      }
      return List.of(row("hung", 1, hungAt, recovery[0]), row("dead", 2, deadAt, recovery[1]));
    }

    private Row row(String name, int index, long[] window, long recoveryMs) {
      List<Long> all = new ArrayList<>();
      synchronized (latencies) {
        for (List<long[]> mine : latencies) {
          synchronized (mine) {
            for (long[] sample : mine) {
              if (sample.length == 2 && sample[0] == index) {
                all.add(sample[1]);
              }
            }
          }
        }
      }
      long[] sorted = all.stream().mapToLong(Long::longValue).sorted().toArray();
      double seconds = (window[1] - window[0]) / 1000.0;
      long loads = 0;
      long worst = 0;
      int from = (int) ((window[0] - start) / 1000);
      int to = (int) ((window[1] - start) / 1000);
      for (AtomicLongArray perSecond : loadsPerSecond) {
        for (int s = from; s < Math.min(to, perSecond.length()); s++) {
          long n = perSecond.get(s);
          loads += n;
          if (s > from) { // the first second is partly healthy
            worst = Math.max(worst, n);
          }
        }
      }
      double loadSeconds = Math.max(1, to - from);
      return new Row(name(variant), name, sorted.length / seconds / INSTANCES,
          percentile(sorted, 0.50), percentile(sorted, 0.99), loads / loadSeconds / INSTANCES,
          worst, variant == Variant.NO_CACHE ? -1 : recoveryMs);
    }

    private static double percentile(long[] sorted, double p) {
      if (sorted.length == 0) {
        return Double.NaN;
      }
      return sorted[(int) Math.min(sorted.length - 1, Math.floor(p * sorted.length))] / 1e6;
    }

    private void read(SustainableCache<String> cache, int instance, List<long[]> samples) {
      Loader<String> db = key -> {
        int second = (int) ((System.currentTimeMillis() - start) / 1000);
        if (second < loadsPerSecond[instance].length()) {
          loadsPerSecond[instance].incrementAndGet(second);
        }
        Thread.sleep(DB_MS);
        return key + "@" + System.currentTimeMillis();
      };
      while (running) {
        long t0 = System.nanoTime();
        try {
          if (variant == Variant.NO_CACHE) {
            db.load(HOT);
          } else {
            cache.get(HOT, db);
          }
        } catch (Exception e) {
          // counted as a read all the same; the table has no error column: none expected
        }
        long nanos = System.nanoTime() - t0;
        int now = phase;
        if (now != 0) {
          synchronized (samples) {
            samples.add(new long[] {now, nanos});
          }
        }
        try {
          Thread.sleep(PAUSE_MS);
        } catch (InterruptedException e) {
          return;
        }
      }
    }

    /** Milliseconds from now until some instance serves a hit, or -1 before {@code until}. */
    private long awaitHit(List<SustainableCache<String>> caches, long until) {
      long from = System.currentTimeMillis();
      long hits = caches.stream().mapToLong(c -> c.stats().hitCount()).sum();
      while (System.currentTimeMillis() < until) {
        if (caches.stream().mapToLong(c -> c.stats().hitCount()).sum() > hits) {
          return System.currentTimeMillis() - from;
        }
        FaultSuite.sleepUntil(System.currentTimeMillis() + 5);
      }
      return -1;
    }
  }
}
