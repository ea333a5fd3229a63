package io.sustainablecache.memcached;

import static java.util.Objects.requireNonNull;

import net.spy.memcached.CachedData;
import net.spy.memcached.transcoders.Transcoder;

/**
 * Stores byte arrays as they are: no serialization, no compression, no size check.
 *
 * <p>Writes use {@link #FLAGS}, the flags spymemcached's default {@code SerializingTranscoder}
 * gives an uncompressed {@code byte[]}, so that other spymemcached clients read the items as
 * byte arrays too. Reads return the item's bytes whatever its flags: an item written by another
 * client reaches the cache as bytes, which its envelope check then treats as a miss.
 *
 * <p>The maximum size is unbounded on purpose: the server, not the client, decides which items
 * are too large, and its refusal becomes a {@link io.sustainablecache.spi.StoreException}.
 *
 * <p>Used by both store adapters (ARCUS's front cache and spymemcached's own reads go through
 * it). Stateless and thread-safe.
 */
public enum RawBytesTranscoder implements Transcoder<byte[]> {
  /** The only instance. */
  INSTANCE;

  /** The flags of every item this transcoder writes: {@code SerializingTranscoder}'s byte array. */
  public static final int FLAGS = 8 << 8;

  /**
   * Decodes on the I/O thread: returning the bytes costs nothing.
   *
   * @param data ignored
   * @return {@code false}
   */
  @Override
  public boolean asyncDecode(CachedData data) {
    return false;
  }

  /**
   * Wraps a copy of the value. The client keeps a reference to the encoded bytes until the
   * request is written, which after a timeout may be later than the store operation returns,
   * and the store promises not to retain the caller's array.
   *
   * @param value the bytes to store
   * @return the copy, with {@link #FLAGS}
   * @throws NullPointerException if {@code value} is {@code null}
   */
  @Override
  public CachedData encode(byte[] value) {
    requireNonNull(value, "value");
    return new CachedData(FLAGS, value.clone(), Integer.MAX_VALUE);
  }

  /**
   * Returns the stored bytes, whatever the item's flags. The array is fresh for every response,
   * so it is handed over without a copy.
   *
   * @param data the item as read; never {@code null}
   * @return its bytes
   */
  @Override
  public byte[] decode(CachedData data) {
    return data.getData();
  }

  /**
   * No client-side limit.
   *
   * @return {@link Integer#MAX_VALUE}
   */
  @Override
  public int getMaxSize() {
    return Integer.MAX_VALUE;
  }
}
