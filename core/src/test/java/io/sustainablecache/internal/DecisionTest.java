package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.RefreshPolicy;
import io.sustainablecache.internal.Decision.Action;
import io.sustainablecache.testing.FixedRandom;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The refresh decision as a table: entry kind x time x policy x draw. */
final class DecisionTest {

  private static final long T0 = 1_790_000_000_000L;
  private static final long TTL = 10_000;

  @ParameterizedTest(name = "{0} at +{1} ms, {2}, draw {3} -> {4}")
  @CsvSource({
      // kind,    at,     policy, draw,  action
      "absent-key, 0,     SUS,    never, MISS",
      "TOMBSTONE, 0,      SUS,    always, MISS",
      "CORRUPT,   0,      SUS,    always, MISS",
      "VALUE,     0,      SUS,    always, FRESH",          // outside the last tenth
      "VALUE,     8999,   SUS,    always, FRESH",
      "VALUE,     9000,   SUS,    always, REFRESH_BACKGROUND",
      "VALUE,     9000,   SUS,    never,  FRESH",
      "VALUE,     9999,   SUS,    never,  FRESH",
      "VALUE,     10000,  SUS,    never,  STALE",
      "ABSENT,    9500,   SUS,    always, REFRESH_BACKGROUND",
      "ABSENT,    10000,  SUS,    never,  STALE",
      "VALUE,     0,      none,   always, FRESH",
      "VALUE,     9999,   none,   always, FRESH",
      "VALUE,     10000,  none,   never,  MISS",
      "VALUE,     9999,   PER,    always, REFRESH_INLINE",
      "VALUE,     9999,   PER,    never,  FRESH",
      "VALUE,     10000,  PER,    never,  MISS",
  })
  void decides(String kind, long at, String policyName, String draw, Action expected) {
    RefreshPolicy policy = switch (policyName) {
      case "SUS" -> RefreshPolicy.sustainable();
      case "PER" -> RefreshPolicy.xfetch(1.0);
      default -> RefreshPolicy.none();
    };
    RandomGenerator random = draw.equals("always") ? FixedRandom.alwaysEarly()
        : FixedRandom.neverEarly();
    Entry<String> entry = kind.equals("absent-key") ? null : new Entry<>(Entry.Kind.valueOf(kind),
        kind.equals("VALUE") ? "v" : null, T0, T0 + TTL, 50, 7);

    assertThat(Decision.decide(entry, T0 + at, RefreshMode.of(policy), policy, random))
        .isEqualTo(expected);
  }

  /**
   * A near hit skips the decision before {@link Decision#freshUntil}: before it, every decision
   * is FRESH without a draw (a random that fails if drawn), for entries of every shape; and for
   * SUS it is no more than two milliseconds before the window, so near hits skip nearly all of an
   * entry's life.
   */
  @Test
  void freshUntil_isNeverPastTheFirstReadThatMayDraw_andSusIsWithinTwoMillisecondsOfIts() {
    RandomGenerator noDraw = new RandomGenerator() {
      @Override
      public long nextLong() {
        throw new AssertionError("drew before freshUntil");
      }

      @Override
      public double nextDouble() {
        throw new AssertionError("drew before freshUntil");
      }
    };
    SplittableRandom shapes = new SplittableRandom(23);
    RefreshPolicy[] policies = {RefreshPolicy.sustainable(), RefreshPolicy.sustainable(2.5, 0.3),
        RefreshPolicy.sustainable(0.7, 1.0), RefreshPolicy.none(), RefreshPolicy.xfetch(1.0)};
    for (int i = 0; i < 20_000; i++) {
      RefreshPolicy policy = policies[i % policies.length];
      RefreshMode mode = RefreshMode.of(policy);
      long ttl = 1 + shapes.nextLong(3_600_000);
      long loadMillis = shapes.nextLong(2 * ttl);
      Entry<String> entry = new Entry<>(shapes.nextBoolean() ? Entry.Kind.VALUE
          : Entry.Kind.ABSENT, "v", T0, T0 + ttl, loadMillis, 7);
      long freshUntil = Decision.freshUntil(entry, mode, policy);
      if (freshUntil == Long.MIN_VALUE) {
        assertThat(mode).as("only PER has no quiet part").isEqualTo(RefreshMode.INLINE);
        continue;
      }
      for (long now : new long[] {freshUntil - 1, freshUntil - 2, T0, T0 - 1,
          T0 + shapes.nextLong(ttl)}) {
        if (now < freshUntil) {
          assertThat(Decision.decide(entry, now, mode, policy, noDraw)).as("%s %s at %d", policy,
              entry, now).isEqualTo(Action.FRESH);
        }
      }
      if (policy instanceof RefreshWindow sus) {
        double window = sus.window(entry.fetchedAt(), entry.expiresAt(), loadMillis);
        assertThat((double) freshUntil).as("%s %s", policy, entry)
            .isGreaterThanOrEqualTo(entry.expiresAt() - window - 2);
      } else {
        assertThat(freshUntil).isEqualTo(entry.expiresAt());
      }
    }
    Entry<String> tombstone = new Entry<>(Entry.Kind.TOMBSTONE, null, T0, T0 + TTL, 5, 7);
    assertThat(Decision.freshUntil(tombstone, RefreshMode.BACKGROUND,
        RefreshPolicy.sustainable())).as("an entry that does not answer").isEqualTo(Long.MIN_VALUE);
  }

  @Test
  void theModeOfEachBuiltInPolicy() {
    assertThat(RefreshMode.of(RefreshPolicy.none())).isEqualTo(RefreshMode.NONE);
    assertThat(RefreshMode.of(RefreshPolicy.xfetch(1))).isEqualTo(RefreshMode.INLINE);
    assertThat(RefreshMode.of(RefreshPolicy.sustainable())).isEqualTo(RefreshMode.BACKGROUND);
    assertThat(RefreshMode.of(RefreshPolicy.sustainable(2, 0.5))).isEqualTo(RefreshMode.BACKGROUND);
  }
}
