package io.sustainablecache.arcus;

import static java.util.Objects.requireNonNull;

import net.spy.memcached.CachedData;
import net.spy.memcached.transcoders.Transcoder;

/**
 * The identity transcoder: values travel as the raw bytes the cache hands over, with no
 * serialization and no compression.
 *
 * <p>It replaces the client's default {@code SerializingTranscoder}, which compresses large values
 * and runs Java deserialization on anything flagged as serialized. Encoding writes the bytes with
 * {@link #FLAGS}; decoding returns the stored bytes <em>whatever their flags</em>, so an item
 * written by another client reaches the cache as bytes and the cache's own envelope check turns
 * it into a miss instead of this class guessing at a foreign format.
 *
 * <p>Stateless and thread-safe; use {@link #INSTANCE}.
 */
final class RawBytesTranscoder implements Transcoder<byte[]> {

  /**
   * The memcached flags written with every item: {@code 8 << 8}, the "byte array, neither
   * serialized nor compressed" marker of the ARCUS and spymemcached {@code SerializingTranscoder},
   * so a client using its default transcoder reads these items as {@code byte[]} too.
   */
  static final int FLAGS = 8 << 8;

  /** The only instance. */
  static final RawBytesTranscoder INSTANCE = new RawBytesTranscoder();

  private RawBytesTranscoder() {}

  /**
   * Returns {@code false}: decoding is the identity, so it runs inline on the client's I/O
   * thread instead of being handed to the client's transcoding executor. ({@link ArcusStore}
   * reads items through its own callbacks and applies the same identity without this class.)
   */
  @Override
  public boolean asyncDecode(CachedData data) {
    return false;
  }

  /**
   * Wraps a copy of the bytes. The client keeps the encoded array while the operation is queued
   * and may read it again after the store's future has completed (a request resent after a
   * replication switchover, a {@code CLIENT_ERROR} it logs), so the caller's array must not be
   * handed over.
   *
   * @throws NullPointerException if {@code value} is {@code null}
   */
  @Override
  public CachedData encode(byte[] value) {
    requireNonNull(value, "value");
    return new CachedData(FLAGS, value.clone(), getMaxSize());
  }

  /** Returns the stored bytes unchanged, ignoring the flags. */
  @Override
  public byte[] decode(CachedData data) {
    return data.getData();
  }

  /**
   * Returns {@link Integer#MAX_VALUE}: the client never refuses a value on size, the server does
   * (memcached's and ARCUS's item size limit is a server setting, 1 MiB by default), and its
   * refusal reaches the cache as a {@link io.sustainablecache.spi.StoreException}. The same limit
   * bounds what {@code gets} accepts, so an item stored by a server with a larger item size is
   * still readable.
   */
  @Override
  public int getMaxSize() {
    return Integer.MAX_VALUE;
  }

  @Override
  public String toString() {
    return "RawBytesTranscoder[flags=" + FLAGS + "]";
  }
}
