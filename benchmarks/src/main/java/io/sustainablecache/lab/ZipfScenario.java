package io.sustainablecache.lab;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code --scenario zipf}: 100,000 keys with Zipf-distributed popularity (exponent 0.99) at
 * 2,000 req/s, TTL 10 s, DB 20 ms, one instance, 12 periods (11 measured): none, lock and SUS.
 * Misses, database loads per second, refreshes nobody read before the value left the server
 * ("wasted refreshes", from the store's writes and the callers' reads: see {@link
 * CountingStore}), and the heap after GC at the end of each run. Virtual time only.
 */
final class ZipfScenario implements Scenarios.Scenario {

  @Override
  public Scenarios.Report run(Scenarios.Context context) throws IOException {
    List<RunConfig> configs = configs(context.options());
    RunConfig c = configs.get(0);
    if (context.realTime()) {
      context.out().println("[zipf] runs in virtual time only");
    }
    List<RunResult> all = new ArrayList<>();
    List<RunResult> results = Scenarios.runs(context, configs, all, true);
    if (context.charts()) {
      Charts.compare(String.format("%,d keys, Zipf %.2f @%,d req/s, TTL %d s, DB %d ms",
          c.keys(), c.zipf(), c.tps(), c.ttlSeconds(), c.dbMillis()), "zipf", results,
          r -> r.config().policy().toString(), context.chartDir());
    }
    return report(results, all);
  }

  static List<RunConfig> configs(StampedeLab.Options o) {
    List<LabPolicy.Kind> policies = o.policies() != null ? o.policies()
        : List.of(LabPolicy.Kind.NONE, LabPolicy.Kind.LOCK, LabPolicy.Kind.SUS);
    int tps = o.rates() != null ? o.rates().get(0) : 2_000;
    int ttl = o.ttls() != null ? o.ttls().get(0) : 10;
    int db = o.dbs() != null ? o.dbs().get(0) : 20;
    int keys = o.keys() > 1 ? o.keys() : 100_000;
    double zipf = o.zipf() != 1.0 ? o.zipf() : 0.99;
    int periods = o.periods() != null ? o.periods() : 12;
    List<RunConfig> configs = new ArrayList<>();
    for (LabPolicy.Kind policy : policies) {
      configs.add(new RunConfig(policy, 1, tps, ttl, db, periods, keys, zipf, o.dbSlowdown(),
          o.refreshThreads(), o.refreshQueue(), o.seed(), o.lease())
          .with(RunConfig.Tweaks.NONE.heap()));
    }
    return configs;
  }

  static Scenarios.Report report(List<RunResult> results, List<RunResult> all) {
    List<List<String>> rows = new ArrayList<>();
    for (RunResult r : results) {
      double seconds = r.periods() * r.config().ttlSeconds();
      rows.add(Scenarios.row(r.config().policy(), r.requests(), r.misses(),
          String.format("%.1f %%", 100.0 * r.misses() / Math.max(1, r.requests())),
          r.loads() / seconds, r.refreshWrites() / seconds, r.wastedRefreshes(),
          r.refreshWrites() == 0 ? "-" : String.format("%.1f %%",
              100.0 * r.wastedRefreshes() / r.refreshWrites()),
          r.rejected(), r.p99Ms(), r.heapMiB()));
    }
    String table = Scenarios.table(List.of("policy", "requests", "misses", "miss_rate",
        "db_loads/s", "refreshes/s", "wasted", "wasted_share", "rejected", "p99_ms",
        "heap_mib"), rows)
        + """
        misses exclude each key's first fill; refreshes: values loaded by background refreshes;
        wasted: refreshes no caller read before they were replaced or left the server (refreshes
        still unread on the server at the end are not counted); heap_mib: used heap after GC at
        the end, with the in-memory store's items and the run's per-request arrays.
        """;
    return new Scenarios.Report("zipf", RunResult.CSV_HEADER,
        all.stream().map(RunResult::csvRow).toList(), table);
  }
}
