package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

public final class RefreshPolicyTest {

  private static final long T0 = 1_790_000_000_000L;
  private static final int DRAWS = 200_000;

  /** Empirical share of reads that refresh at {@code remaining} ms before expiry. */
  private static double refreshRate(RefreshPolicy policy, long ttl, long load, long remaining,
      long seed) {
    RandomGenerator random = new SplittableRandom(seed);
    long expires = T0 + ttl;
    int refreshed = 0;
    for (int i = 0; i < DRAWS; i++) {
      if (policy.shouldRefresh(expires - remaining, T0, expires, load, random)) {
        refreshed++;
      }
    }
    return (double) refreshed / DRAWS;
  }

  @ParameterizedTest(name = "PER beta={0} load={1}ms remaining={2}ms")
  @CsvSource({"1.0, 500, 100", "1.0, 500, 1000", "1.0, 500, 2000", "2.0, 100, 150",
      "0.5, 1000, 300"})
  void xfetch_refreshProbabilityMatchesTheFormula(double beta, long load, long remaining) {
    double expected = Math.exp(-remaining / (load * beta));
    double measured = refreshRate(RefreshPolicy.xfetch(beta), 30_000, load, remaining, 42);
    // 200k Bernoulli draws: 5 standard deviations stay below 0.0056.
    assertThat(measured).isCloseTo(expected, within(0.0056));
  }

  @Test
  void xfetch_seedExample_500msLoadRefreshesOneReadInTenAtOneSecond() {
    // Seed 000: with a 500 ms load, ~1/10 of reads refresh with 0.9 to 1.0 s remaining.
    double measured = refreshRate(RefreshPolicy.xfetch(1.0), 30_000, 500, 1_150, 7);
    assertThat(measured).isCloseTo(0.1, within(0.005));
  }

  @ParameterizedTest(name = "SUS ttl={0}ms load={1}ms remaining={2}ms")
  @CsvSource({"10000, 5, 1000", "10000, 5, 500", "30000, 100, 3000", "3000, 50, 300",
      "3000, 1000, 1000"})
  void sustainable_usesMaxOfLoadTimeAndTenthOfTtl(long ttl, long load, long remaining) {
    double delta = Math.max(load, ttl / 10.0);
    double expected = Math.exp(-remaining / delta);
    double measured = refreshRate(RefreshPolicy.sustainable(), ttl, load, remaining, 3);
    assertThat(measured).isCloseTo(expected, within(0.0056));
  }

  @Test
  void sustainable_refreshesFastLoadersWherePerAlmostNeverDoes() {
    // 5 ms loader, TTL 10 s, read 1 s before expiry: PER's window has long closed.
    assertThat(refreshRate(RefreshPolicy.xfetch(1.0), 10_000, 5, 1_000, 1)).isZero();
    assertThat(refreshRate(RefreshPolicy.sustainable(), 10_000, 5, 1_000, 1))
        .isCloseTo(Math.exp(-1), within(0.0056));
  }

  @Test
  void sustainable_neverRefreshesBeforeTheLastDelta_evenAtHighRates() {
    // TTL 10 s, delta 1 s: 1.001 s before expiry no draw can refresh, however many reads.
    assertThat(refreshRate(RefreshPolicy.sustainable(), 10_000, 5, 1_001, 5)).isZero();
    assertThat(refreshRate(RefreshPolicy.sustainable(), 10_000, 5, 1_000, 5))
        .isCloseTo(Math.exp(-1), within(0.0056));
    // A load time above TTL/10 widens the window to the load time.
    assertThat(refreshRate(RefreshPolicy.sustainable(), 10_000, 2_000, 1_999, 5))
        .isCloseTo(Math.exp(-1_999 / 2_000.0), within(0.0056));
  }

  @Test
  void sustainable_customFractionWidensTheWindow() {
    RefreshPolicy policy = RefreshPolicy.sustainable(1.0, 0.5);
    double measured = refreshRate(policy, 10_000, 5, 5_000, 9);
    assertThat(measured).isCloseTo(Math.exp(-1), within(0.0056));
  }

  @Test
  void everyPolicyButNone_refreshesAtAndPastExpiry() {
    RandomGenerator random = new SplittableRandom(1);
    long expires = T0 + 1_000;
    for (RefreshPolicy policy : new RefreshPolicy[] {
        RefreshPolicy.xfetch(1.0), RefreshPolicy.sustainable()}) {
      assertThat(policy.shouldRefresh(expires, T0, expires, 0, random)).isTrue();
      assertThat(policy.shouldRefresh(expires + 5, T0, expires, 0, random)).isTrue();
    }
    assertThat(RefreshPolicy.none().shouldRefresh(expires + 5, T0, expires, 10, random)).isFalse();
  }

  @Test
  void xfetch_withZeroDeltaNeverRefreshesEarlyAndDrawsNothing() {
    RandomGenerator failing = new RandomGenerator() {
      @Override
      public long nextLong() {
        throw new AssertionError("no draw expected");
      }

      @Override
      public double nextDouble() {
        throw new AssertionError("no draw expected");
      }
    };
    assertThat(Policies.xfetch(T0, T0 + 1, 0.0, failing)).isFalse();
    assertThat(Policies.xfetch(T0 + 1, T0 + 1, 5.0, failing)).isTrue();
  }

  @Test
  void xfetch_isDecidedByTheDrawAtTheBoundaries() {
    RandomGenerator zero = fixed(0.0); // U = 1, ln U = 0: refresh only at expiry
    RandomGenerator nearlyOne = fixed(Math.nextDown(1.0)); // U tiny: refresh far ahead
    assertThat(Policies.xfetch(T0, T0 + 1, 1_000.0, zero)).isFalse();
    assertThat(Policies.xfetch(T0, T0 + 30_000, 1_000.0, nearlyOne)).isTrue();
  }

  @Test
  void onlyTheSustainablePolicies_refreshInTheBackground() {
    assertThat(Policies.inBackground(RefreshPolicy.none())).isFalse();
    assertThat(Policies.inBackground(RefreshPolicy.xfetch(1))).isFalse();
    assertThat(Policies.inBackground(RefreshPolicy.sustainable())).isTrue();
    assertThat(Policies.inBackground(RefreshPolicy.sustainable(2, 0.5))).isTrue();
  }

  @Test
  void factoriesRejectBadParameters() {
    assertThatThrownBy(() -> RefreshPolicy.xfetch(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("beta").hasMessageContaining("0.0");
    assertThatThrownBy(() -> RefreshPolicy.xfetch(Double.NaN))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NaN");
    assertThatThrownBy(() -> RefreshPolicy.xfetch(Double.POSITIVE_INFINITY))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RefreshPolicy.sustainable(1, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ttlFraction");
    assertThatThrownBy(() -> RefreshPolicy.sustainable(1, 1.5))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1.5");
  }

  public static RandomGenerator fixed(double value) {
    return new RandomGenerator() {
      @Override
      public long nextLong() {
        // the bases of the namespace's generation (on by default): pinned as the double is
        return (long) (value * Long.MAX_VALUE);
      }

      @Override
      public double nextDouble() {
        return value;
      }
    };
  }
}
