package io.sustainablecache.lab;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code --scenario failingdb}: the database fails for 10 s. SUS, 5 keys at 50 req/s (the fault
 * suite's load), TTL 3 s (grace 2 s), DB 20 ms, default {@code failureBackoff} (1 s, doubling to
 * the TTL, randomized 50-150 %): 5 s healthy, 10 s failing, 12 s healthy (the first 3 s are
 * warm-up). One instance, and four with the fleet lease on and off. Loader calls per key during
 * the failure, against the number of back-off windows a single instance goes through (the mean
 * schedule 1 s, 2 s, 3 s, 3 s... from each key's first failed load); and what the callers got:
 * stale values (hits) or errors, and how fast.
 */
final class FailingDbScenario implements Scenarios.Scenario {

  static final String CSV_HEADER = "instances,lease,seed,failure_loads,failure_loads_per_key,"
      + "backoff_windows_per_key,loads_per_key_per_window,failure_requests,stale_or_hit,"
      + "errors,max_error_ms,max_ms,first_success_after_ms";

  static final long FAIL_FROM = 5_000;
  static final long FAIL_TO = 15_000;
  static final int KEYS = 5;

  /**
   * What one run showed during the failure.
   *
   * @param loads loader calls started during the failure (all failed)
   * @param windows back-off windows in the failure, summed over the keys (the mean schedule)
   * @param requests requests that arrived during the failure
   * @param hits of those, answered from the cache (stale within grace, or still fresh)
   * @param errors of those, failed ({@code CacheLoadException})
   * @param maxErrorMs the slowest failed request
   * @param maxMs the slowest request
   * @param recoveryMs from the end of the failure to the first successful load, or -1
   */
  record Failure(long loads, double windows, long requests, long hits, long errors,
      long maxErrorMs, long maxMs, long recoveryMs) {

    double loadsPerKey() {
      return (double) loads / KEYS;
    }

    double loadsPerWindow() {
      return windows == 0 ? 0 : loads / windows;
    }
  }

  @Override
  public Scenarios.Report run(Scenarios.Context context) throws IOException {
    List<RunConfig> configs = configs(context.options());
    List<RunResult> all = new ArrayList<>();
    List<RunResult> results = Scenarios.runs(context, configs, all, false);
    if (context.charts()) {
      Charts.compare("the database fails from 5 s to 15 s; 5 keys @50 req/s, TTL 3 s, DB 20 ms",
          "failingdb", results, r -> "x" + r.config().instances() + ", lease "
              + (Boolean.FALSE.equals(r.config().lease()) ? "off" : "on"), context.chartDir());
    }
    return report(results, all);
  }

  static List<RunConfig> configs(StampedeLab.Options o) {
    List<RunConfig> configs = new ArrayList<>();
    RunConfig.Tweaks failing = RunConfig.Tweaks.NONE.failing(FAIL_FROM, FAIL_TO);
    for (int n : List.of(1, 4)) {
      for (boolean lease : n == 1 ? List.of(true) : List.of(true, false)) {
        configs.add(new RunConfig(LabPolicy.Kind.SUS, n, 50, 3, 20, 9, KEYS, 0,
            o.dbSlowdown(), o.refreshThreads(), o.refreshQueue(), o.seed(), lease)
            .with(failing.variant("x" + n + (lease ? " lease" : " no lease"))));
      }
    }
    return configs;
  }

  static Scenarios.Report report(List<RunResult> results, List<RunResult> all) {
    List<List<String>> rows = new ArrayList<>();
    for (RunResult r : results) {
      Failure f = failure(r);
      rows.add(Scenarios.row(r.config().instances(),
          Boolean.FALSE.equals(r.config().lease()) ? "off" : "on", f.loads(), f.loadsPerKey(),
          f.windows() / KEYS, f.loadsPerWindow(), f.requests(), f.hits(), f.errors(),
          f.maxErrorMs(), f.maxMs(), f.recoveryMs()));
    }
    List<String> csv = new ArrayList<>();
    for (RunResult r : all) {
      Failure f = failure(r);
      csv.add(Scenarios.csv(r.config().instances(),
          Boolean.FALSE.equals(r.config().lease()) ? "off" : "on", r.config().seed(), f.loads(),
          f.loadsPerKey(), f.windows() / KEYS, f.loadsPerWindow(), f.requests(), f.hits(),
          f.errors(), f.maxErrorMs(), f.maxMs(), f.recoveryMs()));
    }
    String table = Scenarios.table(List.of("instances", "lease", "loads", "loads/key",
        "windows/key", "loads/key/window", "requests", "hits", "errors", "max_error_ms",
        "max_ms", "recovery_ms"), rows)
        + """
        during the 10 s failure: loads = loader calls (all failing), fleet-wide; windows/key: the
        back-off windows one instance goes through from each key's first failed load (mean
        schedule); loads/key/window: goal near 1 for one instance and for the fleet with the
        lease; hits: callers answered from the cache (stale within grace); errors: callers that
        got a CacheLoadException; recovery_ms: end of the failure to the first successful load.
        """;
    return new Scenarios.Report("failingdb", CSV_HEADER, csv, table);
  }

  /**
   * The back-off windows one instance goes through until {@code failureEnd}, summed over keys
   * whose first failed load started at {@code firstFailures}: the mean schedule {@code base},
   * {@code 2 base}, ... capped at {@code cap} (each window is drawn from 50-150 % of that). One
   * load per key per window is the least a key's callers can cause while the failure lasts.
   */
  static double backoffWindows(java.util.Collection<Long> firstFailures, long failureEnd,
      long base, long cap) {
    double windows = 0;
    for (long first : firstFailures) {
      long at = first;
      long window = base;
      windows++;
      while (at + window < failureEnd) {
        at += window;
        window = Math.min(cap, window * 2);
        windows++;
      }
    }
    return windows;
  }

  /** The failure window's figures, from the run's queries and requests. */
  static Failure failure(RunResult r) {
    long base = 1_000;
    long cap = Math.max(base, r.config().ttlSeconds() * 1000L);
    Map<String, Long> firstFailure = new HashMap<>();
    long loads = 0;
    long recovery = -1;
    for (SimulatedDatabase.Query q : r.series().queries()) {
      if (q.start() >= FAIL_FROM && q.start() < FAIL_TO) {
        loads += q.keys();
        firstFailure.merge(q.key(), q.start(), Math::min);
      } else if (q.start() >= FAIL_TO && !q.failed()
          && (recovery < 0 || q.end() - FAIL_TO < recovery)) {
        recovery = q.end() - FAIL_TO;
      }
    }
    double windows = backoffWindows(firstFailure.values(), FAIL_TO, base, cap);
    RunResult.Series s = r.series();
    long requests = 0;
    long hits = 0;
    long errors = 0;
    long maxError = 0;
    long max = 0;
    for (int i = 0; i < s.arrivals().length; i++) {
      if (s.arrivals()[i] < FAIL_FROM || s.arrivals()[i] >= FAIL_TO || s.outcomes()[i] == 0) {
        continue;
      }
      requests++;
      max = Math.max(max, s.latencies()[i]);
      if (s.outcomes()[i] == LabRun.HIT) {
        hits++;
      } else if (s.outcomes()[i] == LabRun.ERROR) {
        errors++;
        maxError = Math.max(maxError, s.latencies()[i]);
      }
    }
    return new Failure(loads, windows, requests, hits, errors, maxError, max, recovery);
  }
}
