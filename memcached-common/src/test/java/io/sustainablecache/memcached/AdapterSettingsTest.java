package io.sustainablecache.memcached;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class AdapterSettingsTest {

  @ParameterizedTest
  @ValueSource(strings = {"PT0.001S", "PT0.7S", "PT10M"})
  void operationTimeoutsFromOneMillisecondToTenMinutesAreAccepted(String text) {
    Duration timeout = Duration.parse(text);
    assertThat(AdapterSettings.checkOperationTimeout(timeout)).isSameAs(timeout);
  }

  @ParameterizedTest
  @ValueSource(strings = {"PT0S", "PT-1S", "PT0.000999999S", "PT10M0.000000001S", "PT24H"})
  void otherOperationTimeoutsAreRejectedNamingTheValue(String text) {
    Duration timeout = Duration.parse(text);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> AdapterSettings.checkOperationTimeout(timeout))
        .withMessage("operationTimeout must be between 1 ms and 10 min, was " + timeout);
  }

  @Test
  void aNullOperationTimeoutIsRejected() {
    assertThatNullPointerException().isThrownBy(() -> AdapterSettings.checkOperationTimeout(null))
        .withMessage("operationTimeout");
  }

  @ParameterizedTest
  @CsvSource({"1, 250", "250, 250", "4000, 4000"})
  void keyLengthsWithinTheLimitAreAccepted(int bytes, int limit) {
    assertThat(AdapterSettings.checkMaxKeyLength(bytes, limit)).isEqualTo(bytes);
  }

  @ParameterizedTest
  @CsvSource({"0, 250", "-1, 250", "251, 250", "4001, 4000"})
  void keyLengthsOutsideTheLimitAreRejectedNamingTheValueAndTheLimit(int bytes, int limit) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> AdapterSettings.checkMaxKeyLength(bytes, limit))
        .withMessage("maxKeyLength must be between 1 and " + limit + " bytes, was " + bytes);
  }

  @ParameterizedTest
  @CsvSource({"PT0.7S, 700 ms", "PT0.0015S, 1.5 ms", "PT0.000000001S, 0.000001 ms",
      "PT10M, 600000 ms", "PT0S, 0 ms"})
  void durationsAreDescribedInMilliseconds(String duration, String text) {
    assertThat(AdapterSettings.describe(Duration.parse(duration))).isEqualTo(text);
  }

  /**
   * The drain waits the shutdown timeout, but no longer than twice the operation timeout: past
   * that every operation queued before the drain was answered or cancelled at its deadline, and a
   * server down or hung would only hold the client's barrier. Then the client is shut down,
   * drained or not.
   */
  @ParameterizedTest
  @CsvSource({"PT3S, PT2S, true, 3000", "PT5S, PT0.7S, false, 1400"})
  void drainThenShutdown_drainsWithTheShorterBound_thenShutsDown(String shutdownTimeout,
      String operationTimeout, boolean drained, long drainMillis) {
    List<String> calls = new ArrayList<>();
    AdapterSettings.drainThenShutdown("test", Duration.parse(shutdownTimeout),
        Duration.parse(operationTimeout), (timeout, unit) -> {
          calls.add("drain " + unit.toMillis(timeout) + " ms");
          return drained;
        }, () -> calls.add("shutdown")).run();
    assertThat(calls).containsExactly("drain " + drainMillis + " ms", "shutdown");
  }

  @Test
  void drainThenShutdown_shutsDownAllTheSame_whenTheDrainTimesOutOrFails() {
    List<String> calls = new ArrayList<>();
    AdapterSettings.drainThenShutdown("test", Duration.ofSeconds(1), Duration.ofSeconds(1),
        (timeout, unit) -> false,
        () -> calls.add("shutdown after a timeout")).run();
    AdapterSettings.drainThenShutdown("test", Duration.ofSeconds(1), Duration.ofSeconds(1),
        (timeout, unit) -> {
          throw new IllegalStateException("Shutting down");
        }, () -> calls.add("shutdown after a failure")).run();
    assertThat(calls).containsExactly("shutdown after a timeout", "shutdown after a failure");
  }

  @Test
  void drainThenShutdown_withZero_shutsDownAtOnce() {
    List<String> calls = new ArrayList<>();
    AdapterSettings.drainThenShutdown("test", Duration.ZERO, Duration.ofSeconds(1),
        (timeout, unit) -> {
          calls.add("drain");
          return true;
        }, () -> calls.add("shutdown")).run();
    assertThat(calls).containsExactly("shutdown");
  }

  @Test
  void drainThenShutdown_keepsTheInterruptOfAThreadInterruptedWhileDraining() {
    try {
      AdapterSettings.drainThenShutdown("test", Duration.ofSeconds(1), Duration.ofSeconds(1),
          (timeout, unit) -> {
            throw new RuntimeException("Interrupted waiting for queues",
                new InterruptedException());
          }, () -> { }).run();
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }
}
