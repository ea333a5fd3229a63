package io.sustainablecache.hibernate;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Region namespaces and key text: valid for the store, the same everywhere, never shared. */
final class StoreKeysTest {

  @Test
  void aValidRegionName_isItsNamespace_afterThePrefix() {
    assertThat(StoreKeys.namespace("shop-", "io.example.Coupon")).isEqualTo(
        "shop-io.example.Coupon");
  }

  @Test
  void otherCharacters_andLongNames_getAValidNamespaceOfTheirOwn() {
    String inner = StoreKeys.namespace("", "io.example.Shop$Line");
    String other = StoreKeys.namespace("", "io.example.Shop#Line");
    String naturalIds = StoreKeys.namespace("", "shop##NaturalId");
    String longName = StoreKeys.namespace("p-", "x".repeat(100));

    for (String namespace : new String[] {inner, other, naturalIds, longName}) {
      assertThat(namespace).matches("[A-Za-z0-9_.+][A-Za-z0-9_.+-]{0,63}");
    }
    assertThat(inner).startsWith("io.example.Shop_Line+").isNotEqualTo(other);
    assertThat(longName).hasSize(64).startsWith("p-xxx");
    assertThat(StoreKeys.namespace("", "io.example.Shop$Line")).as("the same on every instance")
        .isEqualTo(inner);
  }

  @Test
  void escaping_keepsOnlyKeyCharacters_andIsInjective() {
    StringBuilder slash = new StringBuilder();
    StoreKeys.escape("a/b c%ü", slash);
    assertThat(slash.toString()).isEqualTo("a%2Fb%20c%25%C3%BC");
    StringBuilder percent = new StringBuilder();
    StoreKeys.escape("a%2Fb c%ü", percent);
    assertThat(percent.toString()).isNotEqualTo(slash.toString());
  }
}
