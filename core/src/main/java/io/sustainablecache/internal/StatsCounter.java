package io.sustainablecache.internal;

import io.sustainablecache.CacheStats;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * The cache's live counters: contention-free adders, read into a {@link CacheStats}.
 *
 * <p>A near hit is also a hit, and is counted once: {@link Counter#NEAR_HIT}'s adder holds the
 * near hits, {@link Counter#HIT}'s the other hits, and {@link Counter#HIT} reads their sum (one
 * adder written per near hit instead of two). Every counter reads exactly what was counted before
 * the read (in the happens-before order), as each adder does.
 */
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

  /**
   * Counts a hit of {@code entry}: as {@code counter} ({@link Counter#HIT}, or {@link
   * Counter#NEAR_HIT}, which is also a hit), and as an absent and a stale hit where it is one.
   */
  void hit(Counter counter, Decision.Action action, Entry<?> entry) {
    increment(counter);
    if (entry.value() == null) {
      increment(Counter.NO_VALUE_HIT);
    }
    if (entry.kind() == Entry.Kind.PRIOR) {
      increment(Counter.FENCED_HIT);
    }
    if (action == Decision.Action.STALE) {
      increment(Counter.STALE_HIT);
    }
  }

  long get(Counter counter) {
    long sum = adders[counter.ordinal()].sum();
    return counter == Counter.HIT ? sum + adders[Counter.NEAR_HIT.ordinal()].sum() : sum;
  }

  void recordLoad(long millis, boolean absent) {
    increment(Counter.LOAD_SUCCESS);
    if (absent) {
      increment(Counter.NO_VALUE_LOAD);
    }
    add(Counter.LOAD_TIME_MILLIS, millis);
  }

  void recordLoadFailure(long millis) {
    increment(Counter.LOAD_FAILURE);
    add(Counter.LOAD_TIME_MILLIS, millis);
  }

  CacheStats snapshot() {
    Map<String, Long> counts = new HashMap<>();
    for (Counter counter : Counter.ALL) {
      long value = get(counter);
      if (value != 0) {
        counts.put(counter.counterName(), value);
      }
    }
    return CacheStats.of(counts);
  }
}
