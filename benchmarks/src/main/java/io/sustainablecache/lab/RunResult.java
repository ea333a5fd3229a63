package io.sustainablecache.lab;

import java.util.List;
import java.util.Locale;

/**
 * What one run measured, over the periods after warm-up.
 *
 * @param config the run
 * @param requests requests issued after warm-up
 * @param misses requests that found no usable value, not counting each key's first fill
 * @param refreshWaits requests that waited for PER's inline recomputation
 * @param loads database queries started after warm-up
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
 */
record RunResult(RunConfig config, long requests, long misses, long refreshWaits, long loads,
    long periods, double loadsPerPeriod, double p50Ms, double p99Ms, double maxMs,
    double hitP99Ms, int maxDbConcurrency, long rejected, long writes, long errors,
    long wallMillis, Series series) {

  /** Raw data for the charts, times relative to the run's start in milliseconds. */
  record Series(long[] arrivals, long[] latencies, List<Long> queryStarts, List<Long> expiries,
      long durationMillis) {}

  static final String CSV_HEADER = "policy,instances,tps,ttl_s,db_ms,requests,misses,loads,"
      + "periods,loads_per_period,p50_ms,p99_ms,max_ms,max_db_concurrency,rejected";

  String csvRow() {
    return String.join(",", config.policy().toString(), Integer.toString(config.instances()),
        Integer.toString(config.tps()), Integer.toString(config.ttlSeconds()),
        Integer.toString(config.dbMillis()), Long.toString(requests), Long.toString(misses),
        Long.toString(loads), Long.toString(periods), fmt(loadsPerPeriod), fmt(p50Ms),
        fmt(p99Ms), fmt(maxMs), Integer.toString(maxDbConcurrency), Long.toString(rejected));
  }

  static String fmt(double value) {
    return String.format(Locale.ROOT, "%.2f", value);
  }
}
