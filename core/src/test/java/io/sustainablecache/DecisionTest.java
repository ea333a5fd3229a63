package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.Decision.Action;
import io.sustainablecache.testing.FixedRandom;
import java.util.random.RandomGenerator;
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

    assertThat(Decision.decide(entry, T0 + at, Policies.modeOf(policy), policy, random))
        .isEqualTo(expected);
  }
}
