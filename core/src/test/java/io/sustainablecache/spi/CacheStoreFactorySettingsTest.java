package io.sustainablecache.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 23 (review 2026-11-27, section 3): the SPI's settings carry what every adapter reads, and
 * an adapter's own settings as options it documents, instead of ARCUS's fields.
 */
class CacheStoreFactorySettingsTest {

  @Test
  void options_areKeptAsGiven_sortedByKey_andImmutable() {
    CacheStoreFactory.Settings settings = CacheStoreFactory.Settings.builder()
        .addresses(List.of("a:11211")).option("b", "2").option("a", "1").option("b", "3").build();

    assertThat(settings.options()).containsExactly(entry("a", "1"), entry("b", "3"));
    assertThatThrownBy(() -> settings.options().put("c", "4"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(settings).hasToString("Settings[addresses=[a:11211], operationTimeout=null,"
        + " maxKeyLength=0, options={a=1, b=3}]");
  }

  @Test
  void withoutOptions_theMapIsEmpty() {
    assertThat(CacheStoreFactory.Settings.builder().build().options()).isEmpty();
  }

  @Test
  void anOptionNeedsAKeyAndAValue() {
    CacheStoreFactory.Settings.Builder builder = CacheStoreFactory.Settings.builder();

    assertThatIllegalArgumentException().isThrownBy(() -> builder.option("", "x"))
        .withMessage("an option's key must not be empty");
    assertThatNullPointerException().isThrownBy(() -> builder.option(null, "x"))
        .withMessage("key");
    assertThatNullPointerException().isThrownBy(() -> builder.option("k", null))
        .withMessage("value");
  }

  @Test
  void shutdownTimeout_defaultsToFiveSeconds_takesZeroToADay_andShowsWhenSet() {
    assertThat(CacheStoreFactory.Settings.builder().build().shutdownTimeout())
        .isEqualTo(Duration.ofSeconds(5));
    CacheStoreFactory.Settings.Builder builder = CacheStoreFactory.Settings.builder();
    assertThat(builder.shutdownTimeout(Duration.ZERO).build().shutdownTimeout()).isZero();
    assertThat(builder.shutdownTimeout(Duration.ofDays(1)).build())
        .hasToString("Settings[addresses=[], operationTimeout=null, maxKeyLength=0,"
            + " shutdownTimeout=PT24H]");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> builder.shutdownTimeout(Duration.ofMillis(-1)))
        .withMessage("shutdownTimeout must be between 0 and 1 day: PT-0.001S");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> builder.shutdownTimeout(Duration.ofDays(1).plusNanos(1)))
        .withMessageStartingWith("shutdownTimeout must be between 0 and 1 day");
    assertThatNullPointerException().isThrownBy(() -> builder.shutdownTimeout(null))
        .withMessage("shutdownTimeout");
  }

  private static java.util.Map.Entry<String, String> entry(String key, String value) {
    return java.util.Map.entry(key, value);
  }
}
