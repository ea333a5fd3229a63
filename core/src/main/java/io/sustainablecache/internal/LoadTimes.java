package io.sustainablecache.internal;

import java.util.concurrent.atomic.LongAdder;

/**
 * This instance's estimate of how long a load takes, from its successful loads only: the input
 * of the fleet lease's length and of a losing miss's wait when the entry carries no measured time.
 * Kept apart from the statistics, which only observe. Thread-safe.
 */
final class LoadTimes {

  /** Assumed before any load succeeded. */
  static final long DEFAULT_MILLIS = 1_000;

  private final LongAdder millis = new LongAdder();
  private final LongAdder loads = new LongAdder();

  /**
   * Records a successful load call.
   *
   * @param elapsedMillis how long the call took
   * @param keys how many loads it counts as (the pipeline counts a bulk call as one: each of its
   *     keys appears after the whole call, which is what a peer waiting for one expects)
   */
  void recordSuccess(long elapsedMillis, int keys) {
    millis.add(Math.max(0, elapsedMillis));
    loads.add(keys);
  }

  /** The mean time of a successful load, milliseconds; {@link #DEFAULT_MILLIS} before any. */
  long meanMillis() {
    long count = loads.sum();
    return count == 0 ? DEFAULT_MILLIS : millis.sum() / count;
  }
}
