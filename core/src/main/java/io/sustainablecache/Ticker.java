package io.sustainablecache;

/**
 * A monotonic time source, in nanoseconds, for everything the cache measures as a duration or a
 * bound on this host: the near cache's staleness bound and fence window, load times, the load
 * timeout, failure back-off windows, fleet-lease waits and polls, refresh pauses, rate-limited
 * logs. It is not a wall clock: its value has no meaning on its own, only the difference of two
 * readings does, and it never steps back when the wall clock is set. What crosses hosts (an
 * envelope's load time, an entry's logical expiry, a fleet lease's end) is on the {@linkplain
 * SustainableCacheBuilder#clock clock} instead; the cache never uses one for the other.
 *
 * <p>The default, {@link #systemTicker()}, reads {@link System#nanoTime()}. Inject another (with
 * {@link SustainableCacheBuilder#ticker}) to run the cache in simulated time; a simulated clock
 * then usually comes with it.
 *
 * <p>Implementations must be thread-safe, must not block, and must never go backwards.
 */
@FunctionalInterface
public interface Ticker {

  /**
   * The current time: nanoseconds since an arbitrary origin, fixed for this ticker.
   *
   * @return nanoseconds; only differences between two readings are meaningful (they may
   *     overflow, so compare {@code t1 - t0}, never {@code t0 < t1})
   */
  long read();

  /**
   * The system's monotonic time, {@link System#nanoTime()}.
   *
   * @return the shared system ticker
   */
  static Ticker systemTicker() {
    return SystemTicker.INSTANCE;
  }
}
