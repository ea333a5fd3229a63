package io.sustainablecache.spi;

import static java.util.Objects.requireNonNull;

/**
 * An item read by {@link CacheStore#gets}: the stored bytes and the CAS token that identifies
 * this version of the item.
 *
 * <p>Immutable apart from the array, which the store hands over: the cache never modifies it and
 * an adapter must not reuse it.
 *
 * @param value the stored bytes exactly as written; never {@code null}
 * @param casToken the version token for {@link CacheStore#cas}
 */
public record StoreItem(byte[] value, long casToken) {

  /**
   * Creates an item.
   *
   * @param value the stored bytes exactly as written; never {@code null}
   * @param casToken the version token for {@link CacheStore#cas}
   * @throws NullPointerException if {@code value} is {@code null}
   */
  public StoreItem {
    requireNonNull(value, "value");
  }
}
