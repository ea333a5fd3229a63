package io.sustainablecache.memcached;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class StoreKeysTest {

  @ParameterizedTest
  @ValueSource(strings = {"k", "user-name:42", "user-name:42\u007Flease", "tab\tinside",
      "ctrl\u0001char", "\u00e9t\u00e9", "emoji-\uD83D\uDE00"})
  void keysTheTextProtocolCanCarryAreValid(String key) {
    assertThat(StoreKeys.problem(key, 250)).isNull();
  }

  static Stream<Arguments> invalidKeys() {
    return Stream.of(
        Arguments.of("has space", "the key contains a space"),
        Arguments.of("cr\rhere", "the key contains a line break"),
        Arguments.of("lf\nhere", "the key contains a line break"));
  }

  @ParameterizedTest
  @MethodSource("invalidKeys")
  void keysTheTextProtocolCannotCarryAreNamedWithoutRepeatingTheKey(String key, String problem) {
    assertThat(StoreKeys.problem(key, 250)).isEqualTo(problem).doesNotContain(key);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "nul\0byte"})
  void emptyKeysAndNulBytesAreInvalid(String key) {
    assertThat(StoreKeys.problem(key, 250))
        .isIn("the key is empty", "the key contains a NUL character");
  }

  /** The limit counts UTF-8 bytes, as clients and servers do. */
  @ParameterizedTest
  @CsvSource({"1, 10, 10", "1, 11, 11", "2, 5, 10", "2, 6, 12", "3, 3, 9", "3, 4, 12"})
  void theLengthLimitCountsUtf8Bytes(int bytesPerChar, int chars, int bytes) {
    String c = switch (bytesPerChar) {
      case 1 -> "a";
      case 2 -> "\u00e9";
      default -> "\u20ac";
    };
    String key = c.repeat(chars);
    assertThat(StoreKeys.problem(key, 10))
        .isEqualTo(bytes > 10 ? "the key is longer than 10 bytes" : null);
  }

  @ParameterizedTest
  @CsvSource({"2, 8", "3, 12"})
  void aSurrogatePairIsFourBytes(int pairs, int bytes) {
    String key = "\uD83D\uDE00".repeat(pairs);
    assertThat(StoreKeys.problem(key, 8))
        .isEqualTo(bytes > 8 ? "the key is longer than 8 bytes" : null);
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1})
  void anUnpairedSurrogateIsOneByteAsUtf8EncodingMakesIt(int extra) {
    String key = "\uD83D" + "a".repeat(9 + extra);
    assertThat(StoreKeys.problem(key, 10))
        .isEqualTo(extra == 0 ? null : "the key is longer than 10 bytes");
    assertThat(key.getBytes(java.nio.charset.StandardCharsets.UTF_8)).hasSize(10 + extra);
  }

  @org.junit.jupiter.api.Test
  void nullIsRejected() {
    assertThatNullPointerException().isThrownBy(() -> StoreKeys.problem(null, 250));
  }
}
