package io.sustainablecache.testing;

import java.util.random.RandomGenerator;

/**
 * A random source whose {@link #nextDouble()} always returns the same value, to pin the XFetch
 * draw in tests: {@code U = 1 - nextDouble()}, so {@link #neverEarly()} makes every refresh
 * decision "not yet" until the logical expiry, and {@link #alwaysEarly()} makes every decision
 * inside the refresh window "now". Thread-safe and immutable.
 */
public final class FixedRandom implements RandomGenerator {

  private final double value;

  private FixedRandom(double value) {
    this.value = value;
  }

  /**
   * A source returning {@code value} from every {@link #nextDouble()}.
   *
   * @param value in {@code [0, 1)}
   * @return a new source
   * @throws IllegalArgumentException if out of range
   */
  public static FixedRandom of(double value) {
    if (!(value >= 0 && value < 1)) {
      throw new IllegalArgumentException("value must be in [0, 1): " + value);
    }
    return new FixedRandom(value);
  }

  /**
   * {@code nextDouble() == 0}: {@code U = 1}, {@code ln U = 0}, so no early refresh ever fires.
   *
   * @return a source
   */
  public static FixedRandom neverEarly() {
    return new FixedRandom(0.0);
  }

  /**
   * {@code nextDouble()} just below 1: {@code -ln U} is huge, so every draw inside the policy's
   * window refreshes.
   *
   * @return a source
   */
  public static FixedRandom alwaysEarly() {
    return new FixedRandom(Math.nextDown(1.0));
  }

  @Override
  public double nextDouble() {
    return value;
  }

  /** Derived from the fixed double, so that bounded draws are pinned too. */
  @Override
  public long nextLong() {
    return (long) (value * Long.MAX_VALUE);
  }

  @Override
  public String toString() {
    return "FixedRandom[" + value + "]";
  }
}
