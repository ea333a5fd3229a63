package io.sustainablecache.testing;

import io.sustainablecache.Ticker;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Simulated time for deterministic tests: a wall clock and a monotonic {@linkplain #ticker()
 * ticker} that move only when told to. {@link #advance} lets time pass (both move by the same
 * amount); {@link #setMillis} sets the wall clock alone, as NTP or an operator steps a host's
 * clock, while the ticker stays where it was. Pass the clock to {@code
 * SustainableCacheBuilder.clock} and {@link InMemoryStore#create(InstantSource)}, its ticker to
 * {@code SustainableCacheBuilder.ticker} and {@link ManualScheduler#on}.
 *
 * <p>Thread-safe. The wall clock is kept in epoch milliseconds, the ticker in nanoseconds.
 */
public final class FakeClock implements InstantSource {

  /** A round second in 2026: tick arithmetic in tests is easy to follow from here. */
  public static final long ROUND_SECOND_MILLIS = 1_790_000_000_000L;

  /**
   * Where every fake ticker starts, nanoseconds: far from 0 and from the wall clock's value, so
   * that a ticker reading taken for epoch time (or the reverse) shows in a test.
   */
  public static final long TICKER_START_NANOS = 7_000_000_000_000L;

  private final AtomicLong millis;
  private final AtomicLong nanos = new AtomicLong(TICKER_START_NANOS);
  private final Ticker ticker = nanos::get;

  private FakeClock(long startMillis) {
    this.millis = new AtomicLong(startMillis);
  }

  /**
   * A clock at the given epoch millisecond.
   *
   * @param epochMillis the start, epoch milliseconds, not negative
   * @return a new clock
   * @throws IllegalArgumentException if negative
   */
  public static FakeClock at(long epochMillis) {
    if (epochMillis < 0) {
      throw new IllegalArgumentException("epochMillis must not be negative: " + epochMillis);
    }
    return new FakeClock(epochMillis);
  }

  /**
   * A clock at {@link #ROUND_SECOND_MILLIS}.
   *
   * @return a new clock
   */
  public static FakeClock atRoundSecond() {
    return new FakeClock(ROUND_SECOND_MILLIS);
  }

  /**
   * The monotonic view: nanoseconds that move with {@link #advance} and {@link #advanceMillis},
   * never with {@link #setMillis}. Starts at {@link #TICKER_START_NANOS}.
   *
   * @return this clock's ticker; the same instance on every call
   */
  public Ticker ticker() {
    return ticker;
  }

  /**
   * Lets time pass: moves the wall clock and the ticker forward by the same amount, in whole
   * milliseconds (the clock's resolution: a remainder under a millisecond is dropped, for both).
   *
   * @param duration how far; not negative, at most {@code Long.MAX_VALUE} milliseconds
   * @throws IllegalArgumentException if negative
   */
  public void advance(Duration duration) {
    if (duration.isNegative()) {
      throw new IllegalArgumentException("a fake clock only moves forward: " + duration);
    }
    advanceMillis(duration.toMillis());
  }

  /**
   * Lets time pass: moves the wall clock and the ticker forward by the same amount.
   *
   * @param delta milliseconds; not negative
   * @throws IllegalArgumentException if negative
   */
  public void advanceMillis(long delta) {
    if (delta < 0) {
      throw new IllegalArgumentException("a fake clock only moves forward: " + delta);
    }
    nanos.addAndGet(Math.multiplyExact(delta, 1_000_000L));
    millis.addAndGet(delta);
  }

  /**
   * Sets the wall clock alone, forward or backward, as a host's clock is stepped: the {@linkplain
   * #ticker() ticker} does not move, and no time passes for what it measures.
   *
   * @param epochMillis the new time, epoch milliseconds
   */
  public void setMillis(long epochMillis) {
    millis.set(epochMillis);
  }

  @Override
  public long millis() {
    return millis.get();
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis.get());
  }

  @Override
  public String toString() {
    return "FakeClock[" + instant() + ", ticker " + nanos.get() + " ns]";
  }
}
