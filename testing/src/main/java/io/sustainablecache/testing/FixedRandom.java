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
   * Never an early refresh ({@code nextDouble() == 0}, as {@link #neverEarly()}), but the {@code
   * nextLong()}s of {@code longs}: for tests in which the cache draws random numbers of its own
   * (the bases of a near cache's log and generation), which a fixed value would make the same
   * every time they are created again. As thread-safe as {@code longs}.
   *
   * @param longs where {@code nextLong()} comes from, e.g. a seeded {@link
   *     java.util.SplittableRandom}
   * @return a source
   * @throws NullPointerException if {@code longs} is {@code null}
   */
  public static RandomGenerator neverEarly(RandomGenerator longs) {
    java.util.Objects.requireNonNull(longs, "longs");
    return new RandomGenerator() {
      @Override
      public long nextLong() {
        return longs.nextLong();
      }

      @Override
      public double nextDouble() {
        return 0;
      }

      @Override
      public String toString() {
        return "FixedRandom.neverEarly[" + longs + "]";
      }
    };
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
