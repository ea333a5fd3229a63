package io.sustainablecache.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Issue 23 (review 2026-11-27, section 5): {@link StoreItem} was a record over {@code byte[]},
 * whose generated {@code equals} compared the array by identity while looking like a value's,
 * and whose {@code toString} printed the array's identity. A final class now: the array handed
 * over and returned as is, identity equality stated, a {@code toString} without the bytes.
 */
class StoreItemTest {

  private final byte[] bytes = "secret".getBytes(StandardCharsets.US_ASCII);

  @Test
  void theValueIsTheArrayHandedOver_notACopy() {
    StoreItem item = new StoreItem(bytes, 7);

    assertThat(item.value()).isSameAs(bytes);
    assertThat(item.casToken()).isEqualTo(7);
  }

  @Test
  void itemsAreEqualOnlyToThemselves_evenOverTheSameArrayAndToken() {
    StoreItem item = new StoreItem(bytes, 7);

    assertThat(item).isEqualTo(item).isNotEqualTo(new StoreItem(bytes, 7));
  }

  @Test
  void toString_showsTheTokenAndLength_neverTheBytes() {
    assertThat(new StoreItem(bytes, 7)).hasToString("StoreItem[casToken=7, 6 bytes]");
  }

  @Test
  void aNullValueIsRefused() {
    assertThatNullPointerException().isThrownBy(() -> new StoreItem(null, 1))
        .withMessage("value");
  }
}
