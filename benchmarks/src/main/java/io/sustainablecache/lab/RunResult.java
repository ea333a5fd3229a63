package io.sustainablecache.lab;

import io.sustainablecache.CacheStats;
import java.util.List;
import java.util.Locale;

/**
 * What one run measured, over the periods after warm-up.
 *
 * @param config the run
 * @param requests requests issued after warm-up
 * @param misses requests that found no usable value, not counting each key's first fill
 * @param refreshWaits requests that waited for PER's inline recomputation
 * @param loads database loads (ids queried) started after warm-up
 * @param periods TTL periods after warm-up
 * @param loadsPerPeriod loads per key per period, over the keys requested after warm-up
 * @param p50Ms median request latency
 * @param p99Ms 99th percentile request latency
 * @param maxMs worst request latency
 * @param hitP99Ms 99th percentile latency of requests answered from the cache
 * @param maxDbConcurrency most concurrent database queries after warm-up
 * @param rejected refreshes the executors rejected
 * @param writes successful cache writes after warm-up
 * @param errors requests that failed
 * @param wallMillis how long the run took on this machine
 * @param series per-request data and events for the charts
 * @param refreshWrites values written over an earlier value (refreshes) after warm-up
 * @param wastedRefreshes refreshes no caller read before they were replaced or left the server
 * @param heapMiB used heap after GC at the end of the run, or -1 if not measured
 * @param totals the library instances' counters, summed (zero for the lab's own policies)
 */
record RunResult(RunConfig config, long requests, long misses, long refreshWaits, long loads,
    long periods, double loadsPerPeriod, double p50Ms, double p99Ms, double maxMs,
    double hitP99Ms, int maxDbConcurrency, long rejected, long writes, long errors,
    long wallMillis, Series series, long refreshWrites, long wastedRefreshes, double heapMiB,
    Totals totals) {

  /**
   * Raw data for the charts, times relative to the run's start in milliseconds.
   *
   * @param arrivals each request's arrival
   * @param latencies each request's latency
   * @param outcomes each request's outcome ({@link LabRun#HIT}, {@link LabRun#MISS}, ...)
   * @param queries every database query
   * @param expiries the logical expiry of each value written for the watched key
   * @param durationMillis the run's length
   * @param measureFromMillis the end of warm-up
   */
  record Series(long[] arrivals, long[] latencies, byte[] outcomes,
      List<SimulatedDatabase.Query> queries,
      List<Long> expiries, long durationMillis, long measureFromMillis) {}

  /**
   * Counters of the library's instances, summed over the fleet.
   *
   * @param staleHits answers with a value past its logical expiry (within grace)
   * @param absentHits answers from a cached absence
   * @param leaseWon fleet leases taken
   * @param leaseLost loads skipped or deferred because another instance held the lease
   * @param failureRemembered misses failed at once within a key's back-off
   * @param refreshBackoff refreshes skipped within a key's back-off
   * @param bulkLoads bulk loader calls
   */
  record Totals(long staleHits, long absentHits, long leaseWon, long leaseLost,
      long failureRemembered, long refreshBackoff, long bulkLoads) {

    static final Totals ZERO = new Totals(0, 0, 0, 0, 0, 0, 0);

    Totals plus(CacheStats s) {
      return new Totals(staleHits + s.count("stale_hit") + s.count("stale_on_error"),
          absentHits + s.count("no_value_hit"), leaseWon + s.count("lease_won"),
          leaseLost + s.count("lease_lost"), failureRemembered + s.count("failure_remembered"),
          refreshBackoff + s.count("refresh_backoff"), bulkLoads + s.count("bulk_load"));
    }

    Totals plus(Totals t) {
      return new Totals(staleHits + t.staleHits, absentHits + t.absentHits,
          leaseWon + t.leaseWon, leaseLost + t.leaseLost,
          failureRemembered + t.failureRemembered, refreshBackoff + t.refreshBackoff,
          bulkLoads + t.bulkLoads);
    }
  }

  /** The first 15 columns are the first release's; the rest were added with the scenarios. */
  static final String CSV_HEADER = "policy,instances,tps,ttl_s,db_ms,requests,misses,loads,"
      + "periods,loads_per_period,p50_ms,p99_ms,max_ms,max_db_concurrency,rejected,"
      + "variant,lease,hit_p99_ms,writes,errors,stale_hits,refresh_writes,wasted_refreshes,"
      + "heap_mib,seed";

  String csvRow() {
    return String.join(",", config.policy().toString(), Integer.toString(config.instances()),
        Integer.toString(config.tps()), Integer.toString(config.ttlSeconds()),
        Integer.toString(config.dbMillis()), Long.toString(requests), Long.toString(misses),
        Long.toString(loads), Long.toString(periods), fmt(loadsPerPeriod), fmt(p50Ms),
        fmt(p99Ms), fmt(maxMs), Integer.toString(maxDbConcurrency), Long.toString(rejected),
        config.tweaks().variant(), config.lease() == null ? "default" : config.lease() ? "on"
            : "off", fmt(hitP99Ms), Long.toString(writes), Long.toString(errors),
        Long.toString(totals.staleHits()), Long.toString(refreshWrites),
        Long.toString(wastedRefreshes), heapMiB < 0 ? "" : fmt(heapMiB),
        Long.toString(config.seed()));
  }

  /** Whether the run met SUS's goals: no miss, p99 within 1.2x the hit p99. */
  boolean latencyGoalMet() {
    return p99Ms <= 1.2 * hitP99Ms + 1e-9;
  }

  static String fmt(double value) {
    return String.format(Locale.ROOT, "%.2f", value);
  }
}
