package io.sustainablecache;

import java.util.concurrent.atomic.LongAdder;

/** The cache's live counters: contention-free adders, read into a {@link CacheStats}. */
final class StatsCounter {

  private final LongAdder[] adders = new LongAdder[Counter.ALL.length];

  StatsCounter() {
    for (int i = 0; i < adders.length; i++) {
      adders[i] = new LongAdder();
    }
  }

  void increment(Counter counter) {
    adders[counter.ordinal()].increment();
  }

  void add(Counter counter, long amount) {
    adders[counter.ordinal()].add(amount);
  }

  long get(Counter counter) {
    return adders[counter.ordinal()].sum();
  }

  void recordLoad(long millis, boolean absent) {
    increment(Counter.LOAD_SUCCESS);
    if (absent) {
      increment(Counter.ABSENT_LOAD);
    }
    add(Counter.LOAD_TIME_MILLIS, millis);
  }

  void recordLoadFailure(long millis) {
    increment(Counter.LOAD_FAILURE);
    add(Counter.LOAD_TIME_MILLIS, millis);
  }

  CacheStats snapshot() {
    long[] values = new long[adders.length];
    for (int i = 0; i < values.length; i++) {
      values[i] = adders[i].sum();
    }
    return CacheStats.of(values);
  }
}
