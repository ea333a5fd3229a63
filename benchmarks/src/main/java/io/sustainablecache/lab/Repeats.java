package io.sustainablecache.lab;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Medians of repeated runs ({@code --repeat N}): runs of the same configuration but for the seed
 * are summarized metric by metric (each metric's own median; with an even count, the mean of the
 * middle two). The series (charts) are the first repetition's.
 */
final class Repeats {

  private Repeats() {}

  static List<RunResult> medians(List<RunResult> all, int repeat) {
    if (repeat <= 1) {
      return all;
    }
    Map<RunConfig, List<RunResult>> groups = new LinkedHashMap<>();
    for (RunResult r : all) {
      groups.computeIfAbsent(r.config().withSeed(0), c -> new ArrayList<>()).add(r);
    }
    List<RunResult> out = new ArrayList<>();
    for (List<RunResult> runs : groups.values()) {
      out.add(median(runs));
    }
    return out;
  }

  static RunResult median(List<RunResult> runs) {
    RunResult first = runs.get(0);
    return new RunResult(first.config(), lm(runs, RunResult::requests),
        lm(runs, RunResult::misses), lm(runs, RunResult::refreshWaits), lm(runs, RunResult::loads),
        first.periods(), m(runs, RunResult::loadsPerPeriod), m(runs, RunResult::p50Ms),
        m(runs, RunResult::p99Ms), m(runs, RunResult::maxMs), m(runs, RunResult::hitP99Ms),
        (int) Math.round(m(runs, RunResult::maxDbConcurrency)), lm(runs, RunResult::rejected),
        lm(runs, RunResult::writes), lm(runs, RunResult::errors), lm(runs, RunResult::wallMillis),
        first.series(), lm(runs, RunResult::refreshWrites), lm(runs, RunResult::wastedRefreshes),
        m(runs, RunResult::heapMiB), first.totals());
  }

  /** The median of a metric over runs. */
  static <T> double m(List<T> runs, ToDoubleFunction<T> metric) {
    double[] values = runs.stream().mapToDouble(metric).sorted().toArray();
    return median(values);
  }

  static double median(double[] sorted) {
    double[] v = sorted.clone();
    Arrays.sort(v);
    int n = v.length;
    return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  private static <T> long lm(List<T> runs, ToDoubleFunction<T> metric) {
    return Math.round(m(runs, metric));
  }
}
