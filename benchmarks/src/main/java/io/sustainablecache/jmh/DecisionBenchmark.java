package io.sustainablecache.jmh;

import io.sustainablecache.RefreshPolicy;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of one refresh decision, {@link RefreshPolicy#shouldRefresh}, which runs on every
 * cache hit. The goal: at most 25 ns/op and 0 B/op.
 *
 * <p>Parameters:
 * <ul>
 *   <li>{@code policy}: {@code none} ({@link RefreshPolicy#none()}), {@code per} ({@link
 *       RefreshPolicy#xfetch(double) xfetch(1.0)}) and {@code sus} ({@link
 *       RefreshPolicy#sustainable()}).</li>
 *   <li>{@code read}: where the read falls in an entry with a 30 s TTL and a 50 ms load time.
 *       {@code early}: 29 s before expiry (SUS returns without a random draw; PER still draws,
 *       because its only shortcut is "already expired"). {@code window}: 1.5 s before expiry,
 *       inside SUS's last-10 % window (3 s), so SUS and PER both draw a random number and take a
 *       logarithm. {@code expired}: 100 ms past expiry (PER and SUS answer {@code true} without
 *       a draw).</li>
 * </ul>
 * The random source is a per-thread {@link SplittableRandom}, so the draw itself is cheap and
 * uncontended; the cache's default source is {@code ThreadLocalRandom}, which is comparable.
 * {@link #randomDrawAndLog} is the baseline of what a draw costs: {@code ln(1 - nextDouble())}.
 * The timestamps are non-final state fields, so the JIT cannot fold the decision into a constant.
 *
 * <p>Run (allocation is measured by the GC profiler as {@code gc.alloc.rate.norm}, B/op):
 * <pre>{@code
 * mvn -B -DskipTests package
 * java -jar benchmarks/target/benchmarks.jar DecisionBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -prof gc
 * }</pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class DecisionBenchmark {

  /** TTL of the simulated entry. */
  static final long TTL_MILLIS = 30_000;

  /** Measured load time of the simulated entry: PER's delta. */
  static final long LOAD_MILLIS = 50;

  /** A realistic epoch-millisecond load time (2024-01-01T00:00:00Z). */
  static final long FETCHED_AT = 1_704_067_200_000L;

  /** The policy under test and the read's position relative to the entry's expiry. */
  @State(Scope.Thread)
  public static class Decision {

    @Param({"none", "per", "sus"})
    public String policy;

    @Param({"early", "window", "expired"})
    public String read;

    RefreshPolicy refreshPolicy;
    SplittableRandom random;
    long now;
    long fetchedAt;
    long expiresAt;
    long loadMillis;

    @Setup
    public void setUp() {
      refreshPolicy = switch (policy) {
        case "none" -> RefreshPolicy.none();
        case "per" -> RefreshPolicy.xfetch(1.0);
        case "sus" -> RefreshPolicy.sustainable();
        default -> throw new IllegalArgumentException("policy: none, per or sus: " + policy);
      };
      fetchedAt = FETCHED_AT;
      expiresAt = FETCHED_AT + TTL_MILLIS;
      loadMillis = LOAD_MILLIS;
      now = switch (read) {
        case "early" -> fetchedAt + 1_000;
        case "window" -> expiresAt - 1_500;
        case "expired" -> expiresAt + 100;
        default -> throw new IllegalArgumentException("read: early, window or expired: " + read);
      };
      random = new SplittableRandom(42);
    }
  }

  /** Only a random source, so the baseline runs once rather than for every parameter pair. */
  @State(Scope.Thread)
  public static class Rng {
    SplittableRandom random;

    @Setup
    public void setUp() {
      random = new SplittableRandom(42);
    }
  }

  /**
   * One refresh decision.
   *
   * @param s the policy and timestamps
   * @return the decision, consumed by JMH
   */
  @Benchmark
  public boolean shouldRefresh(Decision s) {
    return s.refreshPolicy.shouldRefresh(s.now, s.fetchedAt, s.expiresAt, s.loadMillis, s.random);
  }

  /**
   * Baseline: the uniform draw and logarithm that XFetch needs when the outcome is open.
   *
   * @param s the random source
   * @return {@code ln(U)}, consumed by JMH
   */
  @Benchmark
  public double randomDrawAndLog(Rng s) {
    return Math.log(1.0 - s.random.nextDouble());
  }
}
