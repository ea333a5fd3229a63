package io.sustainablecache.spi;

import static java.util.Objects.requireNonNull;

/**
 * An item read by {@link CacheStore#gets}: the stored bytes and the CAS token that identifies
 * this version of the item.
 *
 * <p><b>Ownership of the bytes.</b> The array is handed over, not copied (a read's bytes are
 * the largest thing the cache touches): once an adapter created an item over an array, nothing
 * modifies that array any more (a fresh array per read is simplest; the client's own buffer
 * must not be handed over). {@link #value()} returns that same array, which the cache and every
 * other reader only read; whoever needs to change the bytes copies them first.
 *
 * <p><b>Equality.</b> An item is one answer of one read: {@code equals} and {@code hashCode} are
 * {@link Object}'s (identity). To tell whether two reads saw the same version of an item,
 * compare their {@link #casToken()}s; to compare contents, {@link java.util.Arrays#equals(byte[],
 * byte[])} over {@link #value()}.
 *
 * <p><b>Thread-safety:</b> immutable under the ownership rule above, and safe to publish between
 * threads. <b>Nulls:</b> the value is never {@code null}.
 */
public final class StoreItem {

  private final byte[] value;
  private final long casToken;

  /**
   * Creates an item, taking ownership of {@code value} (see the class documentation).
   *
   * @param value the stored bytes exactly as written; never {@code null}, not kept or modified
   *     by the caller afterwards
   * @param casToken the version token for {@link CacheStore#cas}
   * @throws NullPointerException if {@code value} is {@code null}
   */
  public StoreItem(byte[] value, long casToken) {
    this.value = requireNonNull(value, "value");
    this.casToken = casToken;
  }

  /**
   * The stored bytes, exactly as written: the array this item was created with, not a copy.
   * Read it; do not modify it.
   *
   * @return the bytes; never {@code null}
   */
  public byte[] value() {
    return value;
  }

  /**
   * The version token of this item, for {@link CacheStore#cas}: the same token means the same
   * version of the item.
   *
   * @return the token the server gave this version
   */
  public long casToken() {
    return casToken;
  }

  /**
   * The token and the length of the bytes, never the bytes themselves (they may be private data).
   *
   * @return e.g. {@code StoreItem[casToken=42, 120 bytes]}
   */
  @Override
  public String toString() {
    return "StoreItem[casToken=" + casToken + ", " + value.length + " bytes]";
  }
}
