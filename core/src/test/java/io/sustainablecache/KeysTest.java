package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

final class KeysTest {

  @Test
  void arcusLimitAllowsLongKeys() {
    Keys arcus = new Keys("ns", 4000, KeyPolicy.REJECT);
    assertThat(arcus.storeKey("k".repeat(3997))).hasSize(4000);
    assertThatThrownBy(() -> arcus.storeKey("k".repeat(3998)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("4001");
  }

  @Test
  void hashedKeysAreDeterministicDistinctAndFitTheLimit() {
    Keys keys = new Keys("ns", 250, KeyPolicy.HASH);
    String a = keys.storeKey("a".repeat(300));
    String b = keys.storeKey("a".repeat(299) + "b");

    assertThat(a).isEqualTo(keys.storeKey("a".repeat(300))).isNotEqualTo(b);
    assertThat(a).startsWith("ns:" + "a".repeat(40) + "#").hasSize(3 + 40 + 1 + 43);
    assertThat(keys.storeKey("name:with:colons and space")).startsWith("ns:name_with_colons_and");
  }

  @Test
  void emptyAndNullKeysAreRejectedWhateverThePolicy() {
    Keys keys = new Keys("", 250, KeyPolicy.HASH);
    assertThatThrownBy(() -> keys.storeKey("")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> keys.storeKey(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void aLimitTooShortForAHashedKeyIsReported() {
    Keys tiny = new Keys("ns", 50, KeyPolicy.HASH);
    assertThatThrownBy(() -> tiny.storeKey("x".repeat(60)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("too short");
  }
}
