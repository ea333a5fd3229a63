package io.sustainablecache.lab;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code --scenario jitter}: 10,000 keys loaded at once by one batch (one {@code getAll}, one bulk
 * query), then uniform traffic of 10,000 req/s (each key once a second on average) for three TTL
 * periods; SUS, one instance, TTL 10 s, DB 10 ms, 64 refresh threads (the burst rule of
 * docs/sizing.md asks for 10,000 x 10 ms / (1 s + 2 s) = 33). Without {@code ttlJitter} the keys
 * keep expiring together; with it each load's TTL is shortened by a random share. Database loads
 * per second over the three periods (the batch itself left out); goal with jitter: the busiest
 * second at most twice the mean.
 */
final class JitterScenario implements Scenarios.Scenario {

  static final double MAX_PEAK_TO_MEAN = 2.0;

  /**
   * Loads per second after the batch.
   *
   * @param mean the mean over whole seconds 1 to the end (second 0 holds the batch)
   * @param max the busiest second
   * @param maxLastPeriod the busiest second of the last TTL period
   */
  record Rate(double mean, double max, double maxLastPeriod) {

    double peakToMean() {
      return mean == 0 ? 0 : max / mean;
    }
  }

  @Override
  public Scenarios.Report run(Scenarios.Context context) throws IOException {
    List<RunConfig> configs = configs(context.options());
    if (context.realTime()) {
      context.out().println("[jitter] runs in virtual time only");
    }
    List<RunResult> all = new ArrayList<>();
    List<RunResult> results = Scenarios.runs(context, configs, all, true);
    RunConfig c = configs.get(0);
    if (context.charts()) {
      List<Charts.DbSeries> series = new ArrayList<>();
      for (RunResult r : results) {
        series.add(new Charts.DbSeries(r.config().tweaks().variant(), afterBatch(r)));
      }
      Charts.save(Charts.dbComparison(String.format("%,d keys loaded by one batch at 0 s, then"
          + " %,d req/s, TTL %d s, DB %d ms: database loads per second", c.keys(), c.tps(),
          c.ttlSeconds(), c.dbMillis()), series, results.get(0).series().durationMillis(), 1000,
          true), context.chartDir().resolve("jitter-db.png"));
    }
    List<List<String>> rows = new ArrayList<>();
    for (RunResult r : results) {
      Rate rate = rate(r);
      boolean jittered = r.config().tweaks().ttlJitter() > 0;
      rows.add(Scenarios.row(r.config().tweaks().variant(), r.requests(), r.misses(),
          r.loads() - r.config().keys(), rate.mean(), rate.max(), rate.peakToMean(),
          rate.maxLastPeriod(), r.maxDbConcurrency(), r.rejected(),
          jittered ? Scenarios.yesNo(rate.peakToMean() <= MAX_PEAK_TO_MEAN) : "-"));
    }
    String table = Scenarios.table(List.of("variant", "requests", "misses", "loads",
        "mean_loads/s", "max_loads/s", "max/mean", "max_loads/s_last_period", "max_db",
        "rejected", "goal"), rows)
        + """
        loads: database loads after the batch; mean and max over whole seconds from 1 s to the
        end (the batch is second 0); goal with jitter: max/mean <= 2.
        """;
    return new Scenarios.Report("jitter", RunResult.CSV_HEADER,
        all.stream().map(RunResult::csvRow).toList(), table);
  }

  static List<RunConfig> configs(StampedeLab.Options o) {
    int keys = o.keys() > 1 ? o.keys() : 10_000;
    int tps = o.rates() != null ? o.rates().get(0) : keys;
    int ttl = o.ttls() != null ? o.ttls().get(0) : 10;
    int db = o.dbs() != null ? o.dbs().get(0) : 10;
    int threads = o.refreshThreads() != 4 ? o.refreshThreads() : 64;
    List<RunConfig> configs = new ArrayList<>();
    for (double jitter : new double[] {0, 0.1, 0.25, 0.5}) {
      configs.add(new RunConfig(LabPolicy.Kind.SUS, 1, tps, ttl, db, 3, keys, 0,
          o.dbSlowdown(), threads, o.refreshQueue(), o.seed(), o.lease())
          .with(RunConfig.Tweaks.NONE.preloaded(jitter)
              .variant(String.format(Locale.ROOT, "ttlJitter %.2f", jitter))));
    }
    return configs;
  }

  /** The run's queries without the batch (the bulk query at the start). */
  static List<SimulatedDatabase.Query> afterBatch(RunResult r) {
    return r.series().queries().stream()
        .filter(q -> !(q.start() == 0 && q.keys() == r.config().keys())).toList();
  }

  static Rate rate(RunResult r) {
    int seconds = (int) (r.series().durationMillis() / 1000);
    double[] perSecond = new double[seconds];
    for (SimulatedDatabase.Query q : afterBatch(r)) {
      int s = (int) (q.start() / 1000);
      if (s >= 1 && s < seconds) {
        perSecond[s] += q.keys();
      }
    }
    double sum = 0;
    double max = 0;
    double maxLast = 0;
    int lastFrom = seconds - r.config().ttlSeconds();
    for (int s = 1; s < seconds; s++) {
      sum += perSecond[s];
      max = Math.max(max, perSecond[s]);
      if (s >= lastFrom) {
        maxLast = Math.max(maxLast, perSecond[s]);
      }
    }
    return new Rate(sum / (seconds - 1), max, maxLast);
  }
}
