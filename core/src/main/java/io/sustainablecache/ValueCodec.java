package io.sustainablecache;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Turns values into the bytes stored after the envelope header, and back.
 *
 * <p>Implementations must be thread-safe and stateless with respect to calls. {@link #decode}
 * sees whatever another process wrote under the key: it must not trust the bytes (no
 * unrestricted Java deserialization) and reports malformed input by throwing a {@link
 * RuntimeException}, which the cache turns into a miss counted in {@link
 * CacheStats#corruptEntryCount()}.
 *
 * @param <V> the value type
 */
public interface ValueCodec<V> {

  /**
   * Serializes a value.
   *
   * @param value never {@code null}
   * @return the bytes to store; the cache does not modify them
   * @throws RuntimeException if the value cannot be serialized; the write is skipped and counted
   */
  byte[] encode(V value);

  /**
   * Deserializes a value from {@code length} bytes of {@code bytes} starting at {@code offset}.
   *
   * @param bytes the stored item; must not be modified or retained past the call unless copied
   * @param offset where the payload starts
   * @param length the payload length, possibly zero
   * @return the value, never {@code null}
   * @throws RuntimeException if the bytes are not a valid encoding
   */
  V decode(byte[] bytes, int offset, int length);

  /**
   * The identity codec: values are byte arrays, stored as they are (copied on decode).
   *
   * @return a shared, stateless codec
   */
  static ValueCodec<byte[]> bytes() {
    return Codecs.BYTES;
  }

  /**
   * Strings as UTF-8. Malformed input is replaced, not rejected, as {@link String#String(byte[],
   * int, int, java.nio.charset.Charset)} does.
   *
   * @return a shared, stateless codec
   */
  static ValueCodec<String> utf8() {
    return Codecs.UTF8;
  }
}

/** The built-in codecs; package-private so the factories on {@link ValueCodec} stay the API. */
final class Codecs {

  static final ValueCodec<byte[]> BYTES = new ValueCodec<>() {
    @Override
    public byte[] encode(byte[] value) {
      return value;
    }

    @Override
    public byte[] decode(byte[] bytes, int offset, int length) {
      return Arrays.copyOfRange(bytes, offset, offset + length);
    }

    @Override
    public String toString() {
      return "ValueCodec.bytes()";
    }
  };

  static final ValueCodec<String> UTF8 = new ValueCodec<>() {
    @Override
    public byte[] encode(String value) {
      return value.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String decode(byte[] bytes, int offset, int length) {
      return new String(bytes, offset, length, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
      return "ValueCodec.utf8()";
    }
  };

  private Codecs() {}
}
