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
 */
record RunConfig(LabPolicy.Kind policy, int instances, int tps, int ttlSeconds, int dbMillis,
    int periods, int keys, double zipf, double dbSlowdown, int refreshThreads, int refreshQueue,
    long seed, Boolean lease) {

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
  }

  private static void check(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }

  Duration ttl() {
    return Duration.ofSeconds(ttlSeconds);
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
        + "ms" + (keys > 1 ? "-keys" + keys : "") + (lease == null ? "" : lease ? "-lease" : "-nolease");
  }

  String describe() {
    return String.format("%-4s x%d @%5d req/s, TTL %2d s, DB %3d ms%s%s", policy, instances, tps,
        ttlSeconds, dbMillis, keys > 1 ? ", " + keys + " keys (zipf " + zipf + ")" : "",
        lease == null ? "" : lease ? ", lease on" : ", lease off");
  }
}
