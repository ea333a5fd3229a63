package io.sustainablecache.lab;

import io.sustainablecache.testing.InMemoryStore;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * {@code --scenario coldstart}: N instances (4 and 16; separate caches over the one store, each
 * with its own client in real time) miss one key at the same instant, with the fleet lease on
 * and off; SUS, TTL 3 s, DB 100 ms. Goal (with the lease): one database load. The losers of the
 * lease poll for the winner's value; their wait is reported too.
 */
final class ColdStartScenario implements Scenarios.Scenario {

  static final String CSV_HEADER = "instances,lease,trial,db_loads,callers,errors,"
      + "p50_ms,max_ms,leases_won,leases_lost";

  private static final int DB_MILLIS = 100;
  private static final int TTL_SECONDS = 3;

  /**
   * One trial: N callers on N instances, one key, one instant.
   *
   * @param instances the instances (one caller each)
   * @param lease the fleet lease
   * @param dbLoads database loads of the key
   * @param errors callers that failed
   * @param latencies each caller's wait, ms
   * @param queries the database's queries, ms from the instant
   * @param totals the instances' counters
   */
  record Trial(int instances, boolean lease, long dbLoads, long errors, long[] latencies,
      List<SimulatedDatabase.Query> queries, RunResult.Totals totals) {

    double p50() {
      long[] sorted = latencies.clone();
      Arrays.sort(sorted);
      return LabRun.percentile(sorted, 0.5);
    }

    double max() {
      return Arrays.stream(latencies).max().orElse(0);
    }
  }

  @Override
  public Scenarios.Report run(Scenarios.Context context) throws IOException {
    StampedeLab.Options o = context.options();
    List<Integer> sizes = o.instances() != null ? o.instances() : List.of(4, 16);
    List<Boolean> leases = o.lease() != null ? List.of(o.lease()) : List.of(true, false);
    int trials = context.realTime() ? Math.max(5, o.repeat()) : 1;
    List<String> csv = new ArrayList<>();
    List<List<String>> rows = new ArrayList<>();
    List<Charts.DbSeries> db = new ArrayList<>();
    List<Charts.LatencySeries> latency = new ArrayList<>();
    for (int n : sizes) {
      for (boolean lease : leases) {
        List<Trial> done = new ArrayList<>();
        for (int t = 0; t < trials; t++) {
          Trial trial = context.realTime() ? real(context.handle(), n, lease)
              : virtual(n, lease, o.seed() + t);
          done.add(trial);
          csv.add(Scenarios.csv(n, lease ? "on" : "off", t + 1, trial.dbLoads(),
              trial.latencies().length, trial.errors(), trial.p50(), trial.max(),
              trial.totals().leaseWon(), trial.totals().leaseLost()));
        }
        context.out().printf("[coldstart] x%d lease %s: DB loads %s%n", n, lease ? "on" : "off",
            done.stream().map(tr -> Long.toString(tr.dbLoads())).toList());
        Trial first = done.get(0);
        String label = "x" + n + ", lease " + (lease ? "on" : "off");
        db.add(new Charts.DbSeries(label, first.queries()));
        latency.add(new Charts.LatencySeries(label, first.latencies()));
        double loads = Repeats.m(done, Trial::dbLoads);
        rows.add(Scenarios.row(n, lease ? "on" : "off", trials, loads,
            done.stream().mapToLong(Trial::dbLoads).max().orElse(0),
            Repeats.m(done, Trial::errors), Repeats.m(done, Trial::p50),
            Repeats.m(done, Trial::max), lease ? Scenarios.yesNo(loads <= 1) : "-"));
      }
    }
    if (context.charts()) {
      Charts.save(Charts.dbComparison("cold start: N instances miss one key at once (t = 0),"
          + " DB 100 ms: database loads per 50 ms", db, 1_000, 50, true),
          context.chartDir().resolve("coldstart-db.png"));
      Charts.save(Charts.latencyComparison("cold start: the callers' wait", latency),
          context.chartDir().resolve("coldstart-latency.png"));
    }
    String table = Scenarios.table(List.of("instances", "lease", "trials", "db_loads",
        "max_db_loads", "errors", "p50_ms", "max_ms", "goal"), rows)
        + "db_loads, errors, p50_ms, max_ms: medians over the trials (one caller per instance);"
        + " goal with the lease: 1 load.\n";
    return new Scenarios.Report("coldstart", CSV_HEADER, csv, table);
  }

  /** One trial in virtual time: every instance's caller at the same virtual instant. */
  static Trial virtual(int n, boolean lease, long seed) {
    VirtualTimeline timeline = new VirtualTimeline(1_790_000_000_000L + Math.floorMod(seed, 1000));
    InMemoryStore memory = InMemoryStore.create(timeline);
    CountingStore store = new CountingStore(memory, timeline, "cold:key");
    SimulatedDatabase db = new SimulatedDatabase(timeline, DB_MILLIS, 0);
    List<LabPolicy> instances = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      instances.add(LabPolicy.create(LabPolicy.Kind.SUS, new LabPolicy.Context(timeline,
          i == 0 ? store : store.on(memory), db, "cold", Duration.ofSeconds(TTL_SECONDS),
          new SplittableRandom(seed * 31 + i), new SimExecutor(timeline, 4, 1024), 4, 1024,
          lease, RunConfig.Tweaks.NONE)));
    }
    long at = timeline.millis() + 1_000;
    long[] latencies = new long[n];
    long[] errors = new long[1];
    for (int i = 0; i < n; i++) {
      int caller = i;
      timeline.schedule(at, () -> instances.get(caller).get("key").whenComplete((o, e) -> {
        latencies[caller] = timeline.millis() - at;
        errors[0] += e == null ? 0 : 1;
      }));
    }
    timeline.runUntil(at + 60_000);
    return finish(n, lease, db, at, latencies, errors[0], instances, null);
  }

  /** One trial in real time: N threads released together, each calling its own instance. */
  static Trial real(StampedeLab.StoreHandle handle, int n, boolean lease) {
    try (RealTimeline timeline = new RealTimeline()) {
      CountingStore store = new CountingStore(handle.store(0), timeline, "");
      SimulatedDatabase db = new SimulatedDatabase(timeline, DB_MILLIS, 0);
      String namespace = "cold-" + Long.toHexString(System.nanoTime() & 0xFFFFFFFL);
      List<LabPolicy> instances = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        instances.add(LabPolicy.create(LabPolicy.Kind.SUS, new LabPolicy.Context(timeline,
            i == 0 ? store : store.on(handle.store(i)), db, namespace,
            Duration.ofSeconds(TTL_SECONDS), new java.util.Random(), null, 4, 1024, lease,
            RunConfig.Tweaks.NONE)));
      }
      // Warm each instance's connection and code path on another key first.
      for (LabPolicy instance : instances) {
        instance.get("warm").join();
      }
      List<io.sustainablecache.CacheStats> before = instances.stream().map(LabPolicy::stats)
          .toList();
      ExecutorService threads = Executors.newFixedThreadPool(n);
      CountDownLatch ready = new CountDownLatch(n);
      CountDownLatch go = new CountDownLatch(1);
      long[] latencies = new long[n];
      long[] errors = new long[1];
      long[] at = new long[1];
      List<CompletableFuture<?>> calls = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int caller = i;
        calls.add(CompletableFuture.runAsync(() -> {
          ready.countDown();
          try {
            go.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          long t0 = System.nanoTime();
          try {
            instances.get(caller).get("key").join();
          } catch (RuntimeException e) {
            synchronized (errors) {
              errors[0]++;
            }
          }
          latencies[caller] = (System.nanoTime() - t0) / 1_000_000;
        }, threads));
      }
      try {
        ready.await();
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      at[0] = timeline.millis();
      go.countDown();
      CompletableFuture.allOf(calls.toArray(new CompletableFuture<?>[0])).join();
      threads.shutdown();
      try {
        threads.awaitTermination(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return finish(n, lease, db, at[0], latencies, errors[0], instances, before);
    }
  }

  private static Trial finish(int n, boolean lease, SimulatedDatabase db, long at,
      long[] latencies, long errors, List<LabPolicy> instances,
      List<io.sustainablecache.CacheStats> before) {
    RunResult.Totals totals = RunResult.Totals.ZERO;
    for (int i = 0; i < instances.size(); i++) {
      io.sustainablecache.CacheStats stats = instances.get(i).stats();
      totals = totals.plus(before == null ? stats : stats.minus(before.get(i)));
      instances.get(i).close();
    }
    List<SimulatedDatabase.Query> queries = db.queries().stream()
        .filter(q -> q.key().equals("key"))
        .map(q -> q.shifted(at)).toList();
    return new Trial(n, lease, queries.size(), errors, latencies, queries, totals);
  }
}
