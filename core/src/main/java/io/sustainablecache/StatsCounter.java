package io.sustainablecache;

import java.util.concurrent.atomic.LongAdder;

/** The cache's live counters: contention-free adders, read into a {@link CacheStats}. */
final class StatsCounter {

  final LongAdder hits = new LongAdder();
  final LongAdder staleHits = new LongAdder();
  final LongAdder misses = new LongAdder();
  final LongAdder loadSuccesses = new LongAdder();
  final LongAdder loadFailures = new LongAdder();
  final LongAdder loadTimeMillis = new LongAdder();
  final LongAdder refreshesScheduled = new LongAdder();
  final LongAdder refreshesDeduped = new LongAdder();
  final LongAdder refreshesRejected = new LongAdder();
  final LongAdder refreshSuccesses = new LongAdder();
  final LongAdder refreshFailures = new LongAdder();
  final LongAdder refreshBackoffs = new LongAdder();
  final LongAdder staleOnErrors = new LongAdder();
  final LongAdder staleSetDiscards = new LongAdder();
  final LongAdder skippedWrites = new LongAdder();
  final LongAdder storeErrors = new LongAdder();
  final LongAdder corruptEntries = new LongAdder();

  void recordLoad(long millis) {
    loadSuccesses.increment();
    loadTimeMillis.add(millis);
  }

  void recordLoadFailure(long millis) {
    loadFailures.increment();
    loadTimeMillis.add(millis);
  }

  CacheStats snapshot() {
    return new CacheStats(
        hits.sum(),
        staleHits.sum(),
        misses.sum(),
        loadSuccesses.sum(),
        loadFailures.sum(),
        loadTimeMillis.sum(),
        refreshesScheduled.sum(),
        refreshesDeduped.sum(),
        refreshesRejected.sum(),
        refreshSuccesses.sum(),
        refreshFailures.sum(),
        refreshBackoffs.sum(),
        staleOnErrors.sum(),
        staleSetDiscards.sum(),
        skippedWrites.sum(),
        storeErrors.sum(),
        corruptEntries.sum());
  }
}
