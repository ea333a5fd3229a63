package io.sustainablecache.lab;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the near scenario's churn runs are checked for ({@link NearScenario}), on their record
 * alone: the writer's log of changes and every read of every reader. Times are {@code
 * System.nanoTime()} of one machine (Linux's monotonic clock, common to its processes).
 *
 * <p>A read of key {@code k} that began at {@code s} and returned version {@code v} is <em>stale
 * by</em> {@code s - T} if the first change of {@code k} to a version after {@code v} that
 * returned normally returned at {@code T < s}; otherwise by 0. It is a <em>violation</em> if it
 * is stale by more than the bound {@code Δ}. Changes that threw promise nothing and are skipped
 * (the next one that returned bounds the old value).
 */
final class NearChecks {

  private NearChecks() {}

  /**
   * A change that returned normally: the source of key {@code key} moved to {@code version}
   * (versions of a key increase by one per change), then the cache's change call returned at
   * {@code returnedNanos}.
   */
  record Change(int key, long version, long returnedNanos) {}

  /**
   * What a run's reads were found to be.
   *
   * @param reads reads checked
   * @param stale reads stale by more than 0
   * @param violations reads stale by more than the bound
   * @param maxStaleNanos the largest staleness
   * @param p999StaleNanos the 99.9th percentile of staleness over every read
   * @param p999OfStaleNanos the 99.9th percentile over the stale reads only (0 if none)
   */
  record Staleness(long reads, long stale, long violations, long maxStaleNanos,
      long p999StaleNanos, long p999OfStaleNanos) {}

  /**
   * Checks reads against the changes.
   *
   * @param changes every change that returned normally, in any order
   * @param keys per read, the key
   * @param versions per read, the version it returned
   * @param starts per read, when it began
   * @param count how many reads of the arrays to check
   * @param boundNanos {@code Δ}
   */
  static Staleness check(List<Change> changes, int[] keys, long[] versions, long[] starts,
      int count, long boundNanos) {
    long[] staleness = stalenessOfEach(changes, keys, versions, starts, count);
    long stale = 0;
    long violations = 0;
    long max = 0;
    for (long by : staleness) {
      if (by > 0) {
        stale++;
      }
      if (by > boundNanos) {
        violations++;
      }
      max = Math.max(max, by);
    }
    long[] onlyStale = staleOnly(staleness);
    Arrays.sort(staleness);
    return new Staleness(count, stale, violations, max, percentile(staleness, 0.999),
        percentile(onlyStale, 0.999));
  }

  /** The staleness of each read, nanoseconds (0: not stale); arguments as {@link #check}. */
  static long[] stalenessOfEach(List<Change> changes, int[] keys, long[] versions, long[] starts,
      int count) {
    Map<Integer, List<Change>> byKey = new HashMap<>();
    for (Change change : changes) {
      byKey.computeIfAbsent(change.key(), k -> new ArrayList<>()).add(change);
    }
    Map<Integer, long[][]> index = new HashMap<>();
    byKey.forEach((key, list) -> {
      list.sort((x, y) -> Long.compare(x.version(), y.version()));
      long[] v = new long[list.size()];
      long[] t = new long[list.size()];
      for (int i = 0; i < list.size(); i++) {
        v[i] = list.get(i).version();
        t[i] = list.get(i).returnedNanos();
      }
      index.put(key, new long[][] {v, t});
    });
    long[] staleness = new long[count];
    for (int i = 0; i < count; i++) {
      long[][] ofKey = index.get(keys[i]);
      if (ofKey != null) {
        int at = Arrays.binarySearch(ofKey[0], versions[i] + 1);
        int next = at >= 0 ? at : -at - 1; // the first change to a version after the one read
        if (next < ofKey[0].length) {
          staleness[i] = Math.max(0, starts[i] - ofKey[1][next]);
        }
      }
    }
    return staleness;
  }

  /** The positive values, sorted. */
  static long[] staleOnly(long[] staleness) {
    return Arrays.stream(staleness).filter(x -> x > 0).sorted().toArray();
  }

  /** The {@code q}-quantile of sorted values (nearest rank); 0 for none. */
  static long percentile(long[] sorted, double q) {
    if (sorted.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(q * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank))];
  }

  /**
   * How long after {@code faultEndNanos} the near hit ratio came back: the end of the first
   * window of {@code windowNanos}, starting at or after the fault's end, whose near hit ratio is
   * at least {@code share} of the ratio before the fault; -1 if it never did.
   *
   * @param samples per sample {@code {nanos, reads, nearHits}}, cumulative counters, in time order
   * @param faultStartNanos when the fault began: the ratio before is measured from {@code
   *     baselineFromNanos} to here
   */
  static long recoveryNanos(List<long[]> samples, long baselineFromNanos, long faultStartNanos,
      long faultEndNanos, long windowNanos, double share) {
    double before = ratio(samples, baselineFromNanos, faultStartNanos);
    if (Double.isNaN(before)) {
      return -1;
    }
    for (long[] sample : samples) {
      long from = sample[0];
      if (from < faultEndNanos) {
        continue;
      }
      double after = ratio(samples, from, from + windowNanos);
      if (!Double.isNaN(after) && after >= share * before) {
        return from + windowNanos - faultEndNanos;
      }
    }
    return -1;
  }

  /** The near hit ratio between two times, from the samples nearest them; NaN without reads. */
  static double ratio(List<long[]> samples, long fromNanos, long toNanos) {
    long[] first = null;
    long[] last = null;
    for (long[] sample : samples) {
      if (first == null && sample[0] >= fromNanos) {
        first = sample;
      }
      if (sample[0] <= toNanos) {
        last = sample;
      }
    }
    if (first == null || last == null || last[0] <= first[0]) {
      return Double.NaN;
    }
    long reads = last[1] - first[1];
    return reads <= 0 ? Double.NaN : (double) (last[2] - first[2]) / reads;
  }
}
