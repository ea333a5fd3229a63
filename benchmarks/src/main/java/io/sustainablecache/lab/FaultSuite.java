package io.sustainablecache.lab;

import io.sustainablecache.CacheStats;
import io.sustainablecache.Loader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.arcus.ArcusStore;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.testkit.memcached.FaultExperiment;
import io.sustainablecache.testkit.memcached.FaultProxy;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.FailureMode;

/**
 * The lab's fault suite ({@code --faults}): the library (SUS, through the ARCUS adapter) under
 * steady load against a real memcached behind a {@link FaultProxy}, through four faults: the
 * server down, the server slow, the database failing (for one instance, and for four instances
 * sharing the fleet lease, each with its own connection), and a refresh executor saturated by
 * ten thousand keys due at once. The first three are the testkit's {@link FaultExperiment}, the
 * experiment the adapters' fault-tolerance contract asserts on, on a longer preset.
 */
final class FaultSuite {

  static final String CSV_HEADER =
      "scenario,requests,caller_errors,loads,max_latency_ms,recovery_ms,rejected,stale_served,"
      + "instances,fault_loads,fault_loads_per_key_window";

  private static final Duration TTL = Duration.ofSeconds(3);
  private static final Duration OPERATION_TIMEOUT = Duration.ofMillis(300);
  /** 50 requests/s in all. */
  private static final int THREADS = 2;
  private static final int RATE_PER_THREAD = 25;
  private static final int KEYS = 5;
  private static final long DB_MILLIS = 20;
  private static final Duration HEALTHY_FOR = Duration.ofSeconds(5);
  private static final Duration FAULT_FOR = Duration.ofSeconds(10);
  private static final Duration AFTER_FOR = Duration.ofSeconds(10);
  private static final Duration SLOW_DELAY = Duration.ofSeconds(2);

  /**
   * One scenario's outcome.
   *
   * @param scenario the fault
   * @param requests requests issued
   * @param callerErrors requests that ended with an exception
   * @param loads database queries
   * @param maxLatencyMs the slowest request
   * @param recoveryMs from the end of the fault to the first request served from the cache again
   *     (saturation: until every accepted refresh finished); -1 if it did not happen
   * @param rejected refreshes the executor rejected
   * @param staleServed requests answered with a stale value (within the grace period)
   * @param instances caches (app instances) sharing the server, each with its own connection
   * @param faultLoads loader calls started during the fault, over all instances
   * @param loadsPerKeyWindow database failing: fault loads per key per back-off window of one
   *     instance (the mean schedule from each key's first failed load; see {@link
   *     FailingDbScenario#backoffWindows}), or -1
   */
  record FaultResult(String scenario, long requests, long callerErrors, long loads,
      long maxLatencyMs, long recoveryMs, long rejected, long staleServed, int instances,
      long faultLoads, double loadsPerKeyWindow) {

    /** A result of the first release's columns (one instance, no fault-window figures). */
    FaultResult(String scenario, long requests, long callerErrors, long loads, long maxLatencyMs,
        long recoveryMs, long rejected, long staleServed) {
      this(scenario, requests, callerErrors, loads, maxLatencyMs, recoveryMs, rejected,
          staleServed, 1, -1, -1);
    }

    String csvRow() {
      return String.join(",", scenario, Long.toString(requests), Long.toString(callerErrors),
          Long.toString(loads), Long.toString(maxLatencyMs), Long.toString(recoveryMs),
          Long.toString(rejected), Long.toString(staleServed), Integer.toString(instances),
          faultLoads < 0 ? "" : Long.toString(faultLoads),
          loadsPerKeyWindow < 0 ? "" : RunResult.fmt(loadsPerKeyWindow));
    }
  }

  private final InetSocketAddress memcached;
  private final PrintStream out;

  FaultSuite(InetSocketAddress memcached, PrintStream out) {
    this.memcached = memcached;
    this.out = out;
  }

  List<FaultResult> run() {
    List<FaultResult> results = new ArrayList<>();
    attempt("down", () -> steadyLoadThrough("down", FaultExperiment.Fault.SERVER_DOWN, 1),
        results);
    attempt("slow", () -> steadyLoadThrough("slow", FaultExperiment.Fault.SLOW_SERVER, 1),
        results);
    attempt("loader_failing",
        () -> steadyLoadThrough("loader_failing", FaultExperiment.Fault.LOADER_FAILING, 1),
        results);
    attempt("loader_failing_x4",
        () -> steadyLoadThrough("loader_failing_x4", FaultExperiment.Fault.LOADER_FAILING, 4),
        results);
    attempt("saturation", this::saturation, results);
    return results;
  }

  /**
   * Runs one scenario; one that cannot run (its own set-up failed: a store timing out on a
   * loaded machine, a port taken) is reported with its cause and left out of the results, so the
   * others still run and the suite ends normally.
   */
  private void attempt(String scenario, Supplier<FaultResult> run,
      List<FaultResult> results) {
    try {
      results.add(run.get());
    } catch (RuntimeException e) {
      out.printf("%n[faults] %s could not run: %s%n", scenario, e);
      out.flush();
    }
  }

  /** Per scenario, the median of each figure over repeated runs of the suite. */
  static List<FaultResult> medians(List<FaultResult> results) {
    java.util.Map<String, List<FaultResult>> byScenario = new java.util.LinkedHashMap<>();
    results.forEach(r -> byScenario.computeIfAbsent(r.scenario(), s -> new ArrayList<>()).add(r));
    List<FaultResult> out = new ArrayList<>();
    for (List<FaultResult> runs : byScenario.values()) {
      FaultResult first = runs.get(0);
      out.add(new FaultResult(first.scenario(), Math.round(Repeats.m(runs, FaultResult::requests)),
          Math.round(Repeats.m(runs, FaultResult::callerErrors)),
          Math.round(Repeats.m(runs, FaultResult::loads)),
          Math.round(Repeats.m(runs, FaultResult::maxLatencyMs)),
          Math.round(Repeats.m(runs, FaultResult::recoveryMs)),
          Math.round(Repeats.m(runs, FaultResult::rejected)),
          Math.round(Repeats.m(runs, FaultResult::staleServed)), first.instances(),
          Math.round(Repeats.m(runs, FaultResult::faultLoads)),
          Repeats.m(runs, FaultResult::loadsPerKeyWindow)));
    }
    return out;
  }

  static String table(List<FaultResult> results) {
    StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
        "%-17s %8s %13s %6s %14s %11s %8s %12s %4s %11s %16s%n", "scenario", "requests",
        "caller_errors", "loads", "max_latency_ms", "recovery_ms", "rejected", "stale_served",
        "inst", "fault_loads", "loads/key/window"));
    for (FaultResult r : results) {
      b.append(String.format(Locale.ROOT, "%-17s %8d %13d %6d %14d %11d %8d %12d %4d %11s %16s%n",
          r.scenario(), r.requests(), r.callerErrors(), r.loads(), r.maxLatencyMs(),
          r.recoveryMs(), r.rejected(), r.staleServed(), r.instances(),
          r.faultLoads() < 0 ? "-" : Long.toString(r.faultLoads()),
          r.loadsPerKeyWindow() < 0 ? "-" : RunResult.fmt(r.loadsPerKeyWindow())));
    }
    return b.toString();
  }

  /**
   * The testkit's {@link FaultExperiment} (the one the adapters' fault-tolerance contract
   * asserts on) on the lab's preset: {@link #THREADS} threads of {@link #RATE_PER_THREAD}
   * requests/s over {@link #KEYS} keys, {@link #HEALTHY_FOR} healthy, {@link #FAULT_FOR} of the
   * fault, {@link #AFTER_FOR} healthy again; {@code instances} caches, each over its own ARCUS
   * client through the proxy, round robin.
   */
  private FaultResult steadyLoadThrough(String name, FaultExperiment.Fault fault, int instances) {
    out.printf("[faults] %-17s %s%d s healthy, %d s %s, %d s healthy ... ", name,
        instances > 1 ? instances + " instances (fleet lease), " : "", HEALTHY_FOR.toSeconds(),
        FAULT_FOR.toSeconds(), describe(fault), AFTER_FOR.toSeconds());
    out.flush();
    Map<CacheStore, Connection> connections = new IdentityHashMap<>();
    FaultExperiment.Result r = FaultExperiment.through((address, timeout) -> {
          Connection connection = Connection.to(address, timeout);
          connections.put(connection.store, connection);
          return connection.store;
        }, store -> connections.remove(store).close(), memcached, "faults-" + name)
        .ttl(TTL).operationTimeout(OPERATION_TIMEOUT).loadTime(Duration.ofMillis(DB_MILLIS))
        .load(KEYS, THREADS, RATE_PER_THREAD).instances(instances)
        .phases(HEALTHY_FOR, FAULT_FOR, AFTER_FOR).slowDelay(SLOW_DELAY)
        .run(fault);
    double perWindow = -1;
    if (fault == FaultExperiment.Fault.LOADER_FAILING) {
      double windows = FailingDbScenario.backoffWindows(r.firstFailureMillis(),
          r.faultEndMillis(), 1_000, Math.max(1_000, TTL.toMillis()));
      perWindow = windows == 0 ? 0 : r.loadsDuringFault() / windows;
    }
    FaultResult result = new FaultResult(name,
        r.phases().stream().mapToLong(FaultExperiment.Phase::requests).sum(),
        r.phases().stream().mapToLong(FaultExperiment.Phase::callerErrors).sum(), r.loads(),
        r.phases().stream().mapToLong(FaultExperiment.Phase::maxLatencyMillis).max().orElse(0),
        r.recoveryMillis(), r.whole().count("refresh_rejected"),
        r.whole().count("stale_hit") + r.whole().count("stale_on_error"), instances,
        r.loadsDuringFault(), perWindow);
    out.printf("%d errors, recovery %d ms%n", result.callerErrors(), result.recoveryMs());
    return result;
  }

  /**
   * Ten thousand keys written together, read together once they are all stale: every read asks
   * for a refresh at once, against an executor of 2 threads and a queue of 100.
   */
  private FaultResult saturation() {
    int keys = 10_000;
    out.printf("[faults] %-15s %d keys due at once, 2 refresh threads, queue 100 ... ",
        "saturation", keys);
    out.flush();
    LongAdder loads = new LongAdder();
    Loader<String> db = key -> {
      loads.increment();
      Thread.sleep(DB_MILLIS);
      return key + "@" + System.currentTimeMillis();
    };
    try (FaultProxy proxy = FaultProxy.start(memcached);
        Connection connection = Connection.to(proxy.address(), OPERATION_TIMEOUT);
        SustainableCache<String> cache = SustainableCache.builder(connection.store)
            .namespace("faults-saturation").ttl(Duration.ofSeconds(2))
            .grace(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).refreshThreads(2)
            .refreshQueueCapacity(100).build()) {
      int unwritten = 0;
      for (int i = 0; i < keys; i++) {
        try {
          cache.put("k" + i, "v");
        } catch (StoreException e) {
          unwritten++; // a cold key: its read loads instead of refreshing
        }
      }
      if (unwritten > 0) {
        out.printf("(%d of %d keys not written: the store timed out; they load cold) ",
            unwritten, keys);
      }
      sleepUntil(System.currentTimeMillis() + 2_200); // all logically expired, within grace
      ExecutorService readers = Executors.newFixedThreadPool(8);
      AtomicLong maxLatency = new AtomicLong();
      AtomicInteger errors = new AtomicInteger();
      for (int i = 0; i < keys; i++) {
        String key = "k" + i;
        readers.execute(() -> {
          long t0 = System.nanoTime();
          try {
            cache.get(key, db);
          } catch (RuntimeException e) {
            errors.incrementAndGet();
          }
          maxLatency.accumulateAndGet((System.nanoTime() - t0) / 1_000_000, Math::max);
        });
      }
      readers.shutdown();
      awaitTermination(readers, 60);
      long readsDone = System.currentTimeMillis();
      long drained = -1;
      long deadline = readsDone + 30_000;
      while (System.currentTimeMillis() < deadline) {
        CacheStats s = cache.stats();
        if (s.refreshSuccessCount() + s.refreshFailureCount() + s.count("stale_set_discard")
            >= s.count("refresh_scheduled")) {
          drained = System.currentTimeMillis() - readsDone;
          break;
        }
        sleepUntil(System.currentTimeMillis() + 10);
      }
      CacheStats stats = cache.stats();
      FaultResult result = new FaultResult("saturation", keys, errors.get(), loads.sum(),
          maxLatency.get(), drained, stats.count("refresh_rejected"), stats.count("stale_hit"));
      out.printf("%d errors, %d rejected, max latency %d ms%n", result.callerErrors(),
          result.rejected(), result.maxLatencyMs());
      return result;
    }
  }

  private static String describe(FaultExperiment.Fault fault) {
    return switch (fault) {
      case SERVER_DOWN -> "server down";
      case SLOW_SERVER -> SLOW_DELAY.toSeconds() + " s added per direction";
      case HANGING_SERVER -> "server hanging";
      case LOADER_FAILING -> "database failing";
    };
  }

  /** An ARCUS client connected to the proxy with the settings the adapter recommends. */
  private static final class Connection implements AutoCloseable {
    final ArcusClient client;
    final ArcusStore store;

    private Connection(ArcusClient client, Duration operationTimeout) {
      this.client = client;
      this.store = ArcusStore.builder(client).operationTimeout(operationTimeout).build();
    }

    static Connection to(InetSocketAddress address, Duration operationTimeout) {
      return new Connection(client(address, operationTimeout), operationTimeout);
    }

    @Override
    public void close() {
      client.shutdown();
    }
  }

  /**
   * An ARCUS client of one server with the settings the adapter recommends for faults ({@code
   * FailureMode.Cancel}, the client's timeout the store's), once it is connected (at most 10 s).
   */
  static ArcusClient client(InetSocketAddress address, Duration operationTimeout) {
    try {
      ArcusClient client = new ArcusClient(new ConnectionFactoryBuilder()
          .setFailureMode(FailureMode.Cancel)
          .setOpTimeout(operationTimeout.toMillis())
          .build(), List.of(address));
      long deadline = System.currentTimeMillis() + 10_000;
      while (!client.getAvailableServers().contains(address)
          && System.currentTimeMillis() < deadline) {
        sleepUntil(System.currentTimeMillis() + 10);
      }
      return client;
    } catch (IOException e) {
      throw new IllegalStateException("cannot connect to " + address + ": " + e, e);
    }
  }

  static void sleepUntil(long atMillis) {
    long wait = atMillis - System.currentTimeMillis();
    if (wait <= 0) {
      return;
    }
    try {
      Thread.sleep(wait);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private static void awaitTermination(ExecutorService pool, int seconds) {
    try {
      pool.awaitTermination(seconds, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
