package io.sustainablecache.memcached;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 24, defect 7: a negative exptime ("expires at once" in the store contract) is sent as an
 * absolute time in January 1970, which every memcached and ARCUS server expires at once, instead
 * of a negative number, which ARCUS reads as "sticky" ({@code -1}: never expires) or adds to its
 * clock. Every other exptime is sent unchanged.
 */
class ExptimesTest {

  @ParameterizedTest
  @ValueSource(ints = {-1, -2, -60, -2_592_000, Integer.MIN_VALUE})
  void aNegativeExptimeIsSentAsTheFirstAbsoluteSecondAfterThirtyDays(int exptime) {
    assertThat(Exptimes.toServer(exptime)).isEqualTo(2_592_001);
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 3, 2_592_000, 2_592_001, 1_800_000_000, Integer.MAX_VALUE})
  void everyOtherExptimeIsSentUnchanged(int exptime) {
    assertThat(Exptimes.toServer(exptime)).isEqualTo(exptime);
  }

  @ParameterizedTest
  @ValueSource(ints = {-1, -5})
  void theExptimeSentIsAnAbsoluteTimeAtOrBeforeAnyServersStart(int exptime) {
    int sent = Exptimes.toServer(exptime);
    assertThat(sent).as("above memcached's 30-day limit: an absolute Unix time")
        .isGreaterThan(60 * 60 * 24 * 30);
    assertThat((long) sent).as("in January 1970").isLessThan(31L * 24 * 60 * 60);
  }
}
