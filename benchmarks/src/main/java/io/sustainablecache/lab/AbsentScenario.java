package io.sustainablecache.lab;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code --scenario absent}: the "cache penetration" of seed 004. 1,000 ids with a row (Zipf
 * 0.99) and 100 ids without one; 20 % of 1,000 req/s ask for the latter; one instance, TTL 10 s,
 * DB 20 ms, 7 periods (6 measured). SUS with negative caching (the default: a loader's "no
 * value" is cached for {@code noValueTtl} = the TTL) against {@code noValueTtl(Duration.ZERO)},
 * and plain demand-fill code (which does not cache "no row") for reference: database loads for
 * the absent ids.
 */
final class AbsentScenario implements Scenarios.Scenario {

  static final double ABSENT_SHARE = 0.2;
  static final int ABSENT_IDS = 100;

  @Override
  public Scenarios.Report run(Scenarios.Context context) throws IOException {
    List<RunConfig> configs = configs(context.options());
    List<RunResult> all = new ArrayList<>();
    List<RunResult> results = Scenarios.runs(context, configs, all, false);
    RunConfig first = configs.get(0);
    if (context.charts()) {
      Charts.compare(String.format("%d %% of %,d req/s for %d absent ids, TTL %d s, DB %d ms",
          Math.round(ABSENT_SHARE * 100), first.tps(), ABSENT_IDS, first.ttlSeconds(),
          first.dbMillis()), "absent", results,
          r -> r.config().policy() + ", " + r.config().tweaks().variant(), context.chartDir());
    }
    return report(results, all);
  }

  static List<RunConfig> configs(StampedeLab.Options o) {
    int tps = o.rates() != null ? o.rates().get(0) : 1_000;
    int ttl = o.ttls() != null ? o.ttls().get(0) : 10;
    int db = o.dbs() != null ? o.dbs().get(0) : 20;
    int periods = o.periods() != null ? o.periods() : 7;
    int keys = o.keys() > 1 ? o.keys() : 1_000;
    RunConfig base = new RunConfig(LabPolicy.Kind.SUS, 1, tps, ttl, db, periods, keys, 0.99,
        o.dbSlowdown(), o.refreshThreads(), o.refreshQueue(), o.seed(), o.lease());
    RunConfig.Tweaks absent = RunConfig.Tweaks.NONE.absent(ABSENT_SHARE, ABSENT_IDS, null);
    return List.of(
        base.with(absent.variant("noValueTtl = TTL (default)")),
        base.with(absent.absent(ABSENT_SHARE, ABSENT_IDS, Duration.ZERO)
            .variant("noValueTtl = 0")),
        new RunConfig(LabPolicy.Kind.NONE, 1, tps, ttl, db, periods, keys, 0.99, o.dbSlowdown(),
            o.refreshThreads(), o.refreshQueue(), o.seed(), null)
            .with(absent.variant("plain demand-fill")));
  }

  static Scenarios.Report report(List<RunResult> results, List<RunResult> all) {
    List<List<String>> rows = new ArrayList<>();
    for (RunResult r : results) {
      double seconds = r.periods() * r.config().ttlSeconds();
      long[] loads = absentLoads(r);
      long absentRequests = absentRequests(r);
      rows.add(Scenarios.row(r.config().policy() + ", " + r.config().tweaks().variant(),
          r.requests(), absentRequests, loads[0], loads[0] / seconds,
          (double) loads[0] / Math.max(1, absentRequests), loads[1] / seconds, r.misses(),
          r.totals().absentHits(), r.errors(), r.p99Ms()));
    }
    String table = Scenarios.table(List.of("variant", "requests", "absent_requests",
        "no_value_loads", "no_value_loads/s", "no_value_loads/request", "other_loads/s", "misses",
        "no_value_hits", "errors", "p99_ms"), rows)
        + """
        after warm-up; no_value_loads: database queries for ids without a row; misses exclude each
        id's first fill.
        """;
    return new Scenarios.Report("absent", RunResult.CSV_HEADER,
        all.stream().map(RunResult::csvRow).toList(), table);
  }

  /** Loads after warm-up for absent ids, and for the others. */
  static long[] absentLoads(RunResult r) {
    long[] loads = new long[2];
    for (SimulatedDatabase.Query q : r.series().queries()) {
      if (q.start() >= r.series().measureFromMillis() && q.start() < r.series().durationMillis()) {
        loads[q.key().startsWith(LabRun.ABSENT_PREFIX) ? 0 : 1] += q.keys();
      }
    }
    return loads;
  }

  static long absentRequests(RunResult r) {
    String[] keys = LabRun.keySequence(r.config());
    long n = 0;
    for (int i = 0; i < keys.length; i++) {
      if (r.series().arrivals()[i] >= r.series().measureFromMillis()
          && keys[i].startsWith(LabRun.ABSENT_PREFIX)) {
        n++;
      }
    }
    return n;
  }
}
