package io.sustainablecache.lab;

import java.time.Duration;

/**
 * One run of the lab: a policy under a fixed request rate for a number of TTL periods. The first
 * period is warm-up; everything is measured over the rest.
 *
 * @param policy the strategy
 * @param instances simulated app instances sharing the store and the database
 * @param tps requests per second over all instances, issued open-loop
 * @param ttlSeconds the TTL
 * @param dbMillis the database query time
 * @param periods the run's length in TTL periods, including one of warm-up
 * @param keys distinct keys; 1 means one hot key
 * @param zipf the Zipf exponent of key popularity when {@code keys > 1}
 * @param dbSlowdown extra query time per additional concurrent query, as a fraction
 * @param refreshThreads refresh executor threads per instance (library policies)
 * @param refreshQueue refresh executor queue per instance (library policies)
 * @param seed the random seed (arrival keys, decisions in virtual time)
 * @param lease the fleet lease of library policies: {@code null} for the library's default (on
 *     for SUS), or forced on or off
 * @param tweaks what the scenarios beyond the policy comparison change ({@link Tweaks#NONE} for
 *     the comparison)
 */
record RunConfig(LabPolicy.Kind policy, int instances, int tps, int ttlSeconds, int dbMillis,
    int periods, int keys, double zipf, double dbSlowdown, int refreshThreads, int refreshQueue,
    long seed, Boolean lease, Tweaks tweaks) {

  /**
   * Scenario settings.
   *
   * @param variant a label for the run within its scenario ("" for none)
   * @param warmupPeriods TTL periods not measured at the start (1, or 0 after a preload)
   * @param absentShare the share of requests for ids that do not exist
   * @param absentIds how many such ids, requested uniformly
   * @param noValueTtl the caches' {@code noValueTtl}, or {@code null} for the default (the TTL)
   * @param ttlJitter the caches' {@code ttlJitter}
   * @param preload whether instance 0 loads every key with one {@code getAll} at the start
   * @param failFromMillis start of the database's failure window, ms after the run's start (-1:
   *     none)
   * @param failToMillis its end
   * @param measureHeap whether to measure the used heap after GC at the end of the run
   */
  record Tweaks(String variant, int warmupPeriods, double absentShare, int absentIds,
      java.time.Duration noValueTtl, double ttlJitter, boolean preload, long failFromMillis,
      long failToMillis, boolean measureHeap) {

    static final Tweaks NONE = new Tweaks("", 1, 0, 0, null, 0, false, -1, -1, false);

    Tweaks {
      check(warmupPeriods >= 0, "warm-up periods must not be negative: " + warmupPeriods);
      check(absentShare >= 0 && absentShare < 1, "absent share must be in [0, 1): "
          + absentShare);
      check(absentShare == 0 || absentIds >= 1, "absent ids must be at least 1");
      check(ttlJitter >= 0 && ttlJitter <= 0.5, "ttl jitter must be in [0, 0.5]: " + ttlJitter);
    }

    Tweaks variant(String label) {
      return new Tweaks(label, warmupPeriods, absentShare, absentIds, noValueTtl, ttlJitter,
          preload, failFromMillis, failToMillis, measureHeap);
    }

    Tweaks absent(double share, int ids, java.time.Duration ttl) {
      return new Tweaks(variant, warmupPeriods, share, ids, ttl, ttlJitter, preload,
          failFromMillis, failToMillis, measureHeap);
    }

    Tweaks preloaded(double jitter) {
      return new Tweaks(variant, 0, absentShare, absentIds, noValueTtl, jitter, true,
          failFromMillis, failToMillis, measureHeap);
    }

    Tweaks failing(long fromMillis, long toMillis) {
      return new Tweaks(variant, warmupPeriods, absentShare, absentIds, noValueTtl, ttlJitter,
          preload, fromMillis, toMillis, measureHeap);
    }

    Tweaks heap() {
      return new Tweaks(variant, warmupPeriods, absentShare, absentIds, noValueTtl, ttlJitter,
          preload, failFromMillis, failToMillis, true);
    }
  }

  /** A run of the policy comparison (no scenario tweaks). */
  RunConfig(LabPolicy.Kind policy, int instances, int tps, int ttlSeconds, int dbMillis,
      int periods, int keys, double zipf, double dbSlowdown, int refreshThreads,
      int refreshQueue, long seed, Boolean lease) {
    this(policy, instances, tps, ttlSeconds, dbMillis, periods, keys, zipf, dbSlowdown,
        refreshThreads, refreshQueue, seed, lease, Tweaks.NONE);
  }

  RunConfig with(Tweaks newTweaks) {
    return new RunConfig(policy, instances, tps, ttlSeconds, dbMillis, periods, keys, zipf,
        dbSlowdown, refreshThreads, refreshQueue, seed, lease, newTweaks);
  }

  RunConfig withSeed(long newSeed) {
    return new RunConfig(policy, instances, tps, ttlSeconds, dbMillis, periods, keys, zipf,
        dbSlowdown, refreshThreads, refreshQueue, newSeed, lease, tweaks);
  }

  RunConfig {
    check(instances >= 1, "instances must be at least 1: " + instances);
    check(tps >= 1 && tps <= 100_000, "rate must be in [1, 100000] req/s: " + tps);
    check(ttlSeconds >= 1, "ttl must be at least 1 s: " + ttlSeconds);
    check(dbMillis >= 0, "db time must not be negative: " + dbMillis);
    check(periods >= 2, "periods must be at least 2 (one is warm-up): " + periods);
    check(keys >= 1, "keys must be at least 1: " + keys);
    check(zipf >= 0, "zipf exponent must not be negative: " + zipf);
    check(dbSlowdown >= 0, "db slowdown must not be negative: " + dbSlowdown);
    check(refreshThreads >= 1, "refresh threads must be at least 1: " + refreshThreads);
    check(refreshQueue >= 0, "refresh queue must not be negative: " + refreshQueue);
    check(tweaks != null, "tweaks must not be null");
    check(periods > tweaks.warmupPeriods(), "periods must be more than the warm-up periods: "
        + periods);
  }

  private static void check(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }

  Duration ttl() {
    return Duration.ofSeconds(ttlSeconds);
  }

  /** TTL periods measured after warm-up. */
  int measuredPeriods() {
    return periods - tweaks.warmupPeriods();
  }

  long durationMillis() {
    return periods * ttlSeconds * 1000L;
  }

  int requests() {
    return Math.toIntExact(durationMillis() * tps / 1000);
  }

  /** A file-name-safe label, e.g. {@code SUS-x1-100tps-ttl3s-db100ms}. */
  String name() {
    return policy + "-x" + instances + "-" + tps + "tps-ttl" + ttlSeconds + "s-db" + dbMillis
        + "ms" + (keys > 1 ? "-keys" + keys : "") + (lease == null ? "" : lease ? "-lease" : "-nolease")
        + (tweaks.variant().isEmpty() ? "" : "-" + tweaks.variant().replaceAll("[^A-Za-z0-9.]+", ""));
  }

  String describe() {
    return String.format("%-4s x%d @%5d req/s, TTL %2d s, DB %3d ms%s%s%s", policy, instances,
        tps, ttlSeconds, dbMillis, keys > 1 ? ", " + keys + " keys (zipf " + zipf + ")" : "",
        lease == null ? "" : lease ? ", lease on" : ", lease off",
        tweaks.variant().isEmpty() ? "" : ", " + tweaks.variant());
  }
}
