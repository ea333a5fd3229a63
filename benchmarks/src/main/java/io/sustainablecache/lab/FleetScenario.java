package io.sustainablecache.lab;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code --scenario fleet}: SUS on one hot key with 1, 4 and 16 instances (separate caches over
 * the one store; in real time 4, each with its own client), the fleet lease on and off, at 10 and
 * 100 req/s in all, TTL 3 s, DB 100 ms. The issue's goals, with the lease: no miss after warm-up,
 * at most 1.12 loads per key per TTL period fleet-wide, at most one database query at a time, and
 * a request p99 within 1.2x the hit p99. With {@code --processes N} (real time) the same runs
 * also go to N separate JVMs ({@link FleetProcesses}).
 */
final class FleetScenario implements Scenarios.Scenario {

  static final double MAX_LOADS_PER_PERIOD = 1.12;

  @Override
  public Scenarios.Report run(Scenarios.Context context) throws IOException {
    StampedeLab.Options o = context.options();
    List<RunConfig> configs = plan(o, context.realTime());
    List<RunResult> all = new ArrayList<>();
    List<RunResult> results = new ArrayList<>(Scenarios.runs(context, configs, all, false));
    if (o.processes() > 0) {
      List<RunResult> viaProcesses = new ArrayList<>();
      for (int r = 0; r < o.repeat(); r++) {
        for (RunConfig config : processPlan(o)) {
          RunResult result = FleetProcesses.run(context, config.withSeed(config.seed() + r));
          viaProcesses.add(result);
          all.add(result);
        }
      }
      results.addAll(Repeats.medians(viaProcesses, o.repeat()));
    }
    if (context.charts()) {
      Map<Integer, List<RunResult>> byRate = new LinkedHashMap<>();
      for (RunResult r : results) {
        byRate.computeIfAbsent(r.config().tps(), t -> new ArrayList<>()).add(r);
      }
      for (var rate : byRate.entrySet()) {
        Charts.compare("fleet, SUS, one hot key @" + rate.getKey() + " req/s, TTL 3 s, DB 100 ms",
            "fleet-" + rate.getKey() + "tps", rate.getValue(), FleetScenario::label,
            context.chartDir());
      }
    }
    List<String> rows = all.stream().map(RunResult::csvRow).toList();
    return new Scenarios.Report("fleet", RunResult.CSV_HEADER, rows,
        table(results) + (context.realTime() && o.repeat() > 1
            ? "(real time: medians of " + o.repeat() + " runs each)\n" : ""));
  }

  static String label(RunResult r) {
    String variant = r.config().tweaks().variant();
    return "x" + r.config().instances() + (variant.isEmpty() ? "" : " " + variant) + ", lease "
        + (Boolean.FALSE.equals(r.config().lease()) ? "off" : "on");
  }

  static List<RunConfig> plan(StampedeLab.Options o, boolean realTime) {
    List<Integer> instances = o.instances() != null ? o.instances()
        : realTime ? List.of(4) : List.of(1, 4, 16);
    return plan(o, realTime ? 11 : 10, instances);
  }

  /** The fleet of {@code --processes N}: N separate JVMs, lease on and off, in real time. */
  static List<RunConfig> processPlan(StampedeLab.Options o) {
    RunConfig.Tweaks jvms = RunConfig.Tweaks.NONE.variant(o.processes() + " JVMs");
    return plan(o, 11, List.of(o.processes())).stream().map(c -> c.with(jvms)).toList();
  }

  private static List<RunConfig> plan(StampedeLab.Options o, int defaultPeriods,
      List<Integer> instances) {
    int periods = o.periods() != null ? o.periods() : defaultPeriods;
    List<Integer> rates = o.rates() != null ? o.rates() : List.of(10, 100);
    int ttl = o.ttls() != null ? o.ttls().get(0) : 3;
    int db = o.dbs() != null ? o.dbs().get(0) : 100;
    List<Boolean> leases = o.lease() != null ? List.of(o.lease()) : List.of(true, false);
    List<RunConfig> configs = new ArrayList<>();
    for (int rate : rates) {
      for (int n : instances) {
        for (boolean lease : n == 1 ? List.of(leases.get(0)) : leases) {
          configs.add(new RunConfig(LabPolicy.Kind.SUS, n, rate, ttl, db, periods, 1, 1.0,
              o.dbSlowdown(), o.refreshThreads(), o.refreshQueue(), o.seed(), lease));
        }
      }
    }
    return configs;
  }

  /** Whether a run met the issue's goals (for runs with the lease, or one instance). */
  static boolean goalsMet(RunResult r) {
    return r.misses() == 0 && r.errors() == 0 && r.loadsPerPeriod() <= MAX_LOADS_PER_PERIOD
        && r.maxDbConcurrency() <= 1 && r.latencyGoalMet();
  }

  static String table(List<RunResult> results) {
    List<List<String>> rows = new ArrayList<>();
    for (RunResult r : results) {
      RunConfig c = r.config();
      boolean lease = !Boolean.FALSE.equals(c.lease());
      rows.add(Scenarios.row(c.instances() + (c.tweaks().variant().isEmpty() ? ""
              : " (" + c.tweaks().variant() + ")"), lease ? "on" : "off", c.tps(),
          r.requests(), r.misses(), r.loads(), r.loadsPerPeriod(), r.maxDbConcurrency(),
          r.p50Ms(), r.p99Ms(), r.hitP99Ms(), r.totals().leaseWon(), r.totals().leaseLost(),
          lease || c.instances() == 1 ? Scenarios.yesNo(goalsMet(r)) : "-"));
    }
    return Scenarios.table(List.of("instances", "lease", "req/s", "requests", "misses", "loads",
        "loads/period", "max_db", "p50_ms", "p99_ms", "hit_p99_ms", "leases_won",
        "leases_lost", "goals"), rows)
        + """
        loads/period: DB loads per TTL period, fleet-wide (one key). goals (with the lease): 0
        misses, <= 1.12 loads/period, max_db 1, p99 <= 1.2 x hit p99.
        """;
  }
}
