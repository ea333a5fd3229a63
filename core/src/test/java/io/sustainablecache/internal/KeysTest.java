package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.KeyPolicy;
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

  /**
   * The near cache looks keys up by {@code nearKey} (no store key built for a plain key) and drops
   * what the log names by {@code nearKeyOf(storeKey)}: both must name the same entry, for every
   * kind of key, under both policies, with and without a namespace; and different keys never
   * share one.
   */
  @Test
  void nearKeysOfCallerKeysAndOfTheirStoreKeysAgree_andStayDistinct() {
    for (KeyPolicy policy : KeyPolicy.values()) {
      for (String namespace : new String[] {"ns", ""}) {
        Keys keys = new Keys(namespace, 250, policy);
        java.util.Map<String, String> seen = new java.util.HashMap<>();
        for (String key : new String[] {"plain", "with:colons", "a#b", "ns:plain", "x".repeat(247),
            "x".repeat(260), "with space", "caf\u00e9", "#"}) {
          String near;
          try {
            near = keys.nearKey(key);
          } catch (IllegalArgumentException rejected) {
            assertThatThrownBy(() -> keys.storeKey(key)).as("%s %s", policy, key)
                .isInstanceOf(IllegalArgumentException.class);
            continue;
          }
          assertThat(keys.nearKeyOf(keys.storeKey(key))).as("%s '%s' %s", policy, namespace, key)
              .isEqualTo(near);
          assertThat(seen.put(near, key)).as("two keys share the near key %s", near).isNull();
        }
      }
    }
    Keys keys = new Keys("ns", 250, KeyPolicy.HASH);
    assertThat(keys.nearKey("plain")).isSameAs("plain");
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
