package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

final class ExptimeTest {

  private static final long NOW = 1_790_000_000_500L;

  @Test
  void roundsUpAndAddsOneTickSoTheServerNeverExpiresEarly() {
    assertThat(Exptime.of(1, NOW)).isEqualTo(2);
    assertThat(Exptime.of(1_000, NOW)).isEqualTo(2);
    assertThat(Exptime.of(1_001, NOW)).isEqualTo(3);
    assertThat(Exptime.of(5_000, NOW)).isEqualTo(6);
  }

  @Test
  void thirtyDaysIsStillRelative() {
    long thirtyDaysMinusATick = (Exptime.MAX_RELATIVE_SECONDS - 1) * 1000;
    assertThat(Exptime.of(thirtyDaysMinusATick, NOW)).isEqualTo(Exptime.MAX_RELATIVE_SECONDS);
  }

  @Test
  void longerLifetimesBecomeAbsoluteUnixSeconds() {
    long lifetime = Exptime.MAX_RELATIVE_SECONDS * 1000;
    int exptime = Exptime.of(lifetime, NOW);
    assertThat(exptime).isEqualTo(NOW / 1000 + Exptime.MAX_RELATIVE_SECONDS + 1);
    assertThat((long) exptime).isGreaterThan(Exptime.MAX_RELATIVE_SECONDS);
  }
}
