package io.sustainablecache.testing;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A wall clock that moves only when told to, for deterministic tests of expiry and refresh
 * decisions: pass it to {@code SustainableCacheBuilder.clock} and to {@link
 * InMemoryStore#create(InstantSource)}.
 *
 * <p>Thread-safe. Time is kept in epoch milliseconds.
 */
public final class FakeClock implements InstantSource {

  /** A round second in 2026: tick arithmetic in tests is easy to follow from here. */
  public static final long ROUND_SECOND_MILLIS = 1_790_000_000_000L;

  private final AtomicLong millis;

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
   * Moves the clock forward.
   *
   * @param duration how far; not negative
   * @throws IllegalArgumentException if negative
   */
  public void advance(Duration duration) {
    advanceMillis(duration.toMillis());
  }

  /**
   * Moves the clock forward.
   *
   * @param delta milliseconds; not negative
   * @throws IllegalArgumentException if negative
   */
  public void advanceMillis(long delta) {
    if (delta < 0) {
      throw new IllegalArgumentException("a fake clock only moves forward: " + delta);
    }
    millis.addAndGet(delta);
  }

  /**
   * Sets the clock, forward or backward (a wall clock may step back).
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
    return "FakeClock[" + instant() + "]";
  }
}
