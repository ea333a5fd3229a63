package io.sustainablecache;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputFilter;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * Turns values into the bytes stored after the envelope header, and back.
 *
 * <p>Implementations must be thread-safe and stateless with respect to calls. {@link #decode}
 * sees whatever another process wrote under the key: it must not trust the bytes (no
 * unrestricted Java deserialization) and reports malformed input by throwing a {@link
 * RuntimeException}, which the cache turns into a miss counted in {@code
 * corrupt_entry}.
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

  /**
   * Java serialization, restricted to an allow-list. Anyone who can write to the cache can put
   * bytes under a key, so unrestricted deserialization of cache contents would hand them code
   * execution through "gadget" classes on the classpath; this codec deserializes only the classes
   * the allow-list names, and rejects everything else before it is instantiated (an {@link
   * ObjectInputFilter}). Arrays are allowed whatever their element type (creating one runs no
   * code; each element is checked when it is read), so {@code ArrayList}, {@code HashMap} and
   * other collections work with just their own class and their elements' classes listed.
   *
   * <p>What one decode may cost is bounded by the stored item itself: at most as many bytes as
   * the payload has, no array longer than the payload (a 70-byte payload cannot claim a
   * two-billion-element array), at most 100,000 references, and a graph at most 16 objects deep
   * (nested {@code HashSet}s, whose cost doubles with every level, stay cheap). A rejected or
   * malformed value is a miss, counted as corrupt and logged at WARN (rate-limited).
   *
   * <p>Prefer a data format (JSON, Protocol Buffers) through your own {@link ValueCodec} where you
   * can; this codec exists for existing {@link Serializable} value types.
   *
   * @param type the value type; a decoded object of another type is rejected
   * @param allowList {@link ObjectInputFilter.Config#createFilter} patterns of every class the
   *     values may contain, separated by {@code ';'}, e.g. {@code
   *     "com.example.dto.*;java.util.ArrayList;java.util.HashMap;java.lang.String;java.lang.Long;java.lang.Number"};
   *     {@code "!*"} is appended, so anything not listed is rejected
   * @param <V> the value type
   * @return a new stateless codec
   * @throws IllegalArgumentException if the allow-list is blank or not a valid filter pattern
   */
  static <V extends Serializable> ValueCodec<V> javaSerialization(Class<V> type,
      String allowList) {
    return new Codecs.JavaSerialization<>(type, allowList);
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

  /** See {@link ValueCodec#javaSerialization}. */
  static final class JavaSerialization<V extends Serializable> implements ValueCodec<V> {
    static final int MAX_DEPTH = 16;
    static final int MAX_REFERENCES = 100_000;

    private final Class<V> type;
    private final String allowList;
    private final ObjectInputFilter classes;

    JavaSerialization(Class<V> type, String allowList) {
      this.type = Objects.requireNonNull(type, "type");
      Objects.requireNonNull(allowList, "allowList");
      if (allowList.isBlank()) {
        throw new IllegalArgumentException("allowList must name at least one class pattern");
      }
      this.allowList = allowList.strip();
      this.classes = ObjectInputFilter.Config.createFilter(this.allowList + ";!*");
    }

    @Override
    public byte[] encode(V value) {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
        out.writeObject(value);
      } catch (IOException e) {
        throw new UncheckedIOException("value could not be serialized", e);
      }
      return bytes.toByteArray();
    }

    @Override
    public V decode(byte[] bytes, int offset, int length) {
      try (ObjectInputStream in = new ObjectInputStream(
          new ByteArrayInputStream(bytes, offset, length))) {
        in.setObjectInputFilter(info -> check(info, length));
        Object value = in.readObject();
        if (!type.isInstance(value)) {
          throw new IllegalArgumentException("stored value is a "
              + (value == null ? "null" : value.getClass().getName()) + ", not a "
              + type.getName());
        }
        return type.cast(value);
      } catch (IOException | ClassNotFoundException e) {
        // InvalidClassException "filter status: REJECTED" lands here too.
        throw new IllegalArgumentException("not a deserializable " + type.getName()
            + " within the allow-list and limits: " + e, e);
      }
    }

    /** The limits, bounded by the payload's length, then the allow-list for non-arrays. */
    private ObjectInputFilter.Status check(ObjectInputFilter.FilterInfo info, int length) {
      if (info.depth() > MAX_DEPTH || info.references() > MAX_REFERENCES
          || info.streamBytes() > length || info.arrayLength() > length) {
        return ObjectInputFilter.Status.REJECTED;
      }
      Class<?> serialClass = info.serialClass();
      if (serialClass == null || serialClass.isArray()) {
        return ObjectInputFilter.Status.ALLOWED; // a limits check, or an array: runs no code
      }
      return classes.checkInput(info) == ObjectInputFilter.Status.ALLOWED
          ? ObjectInputFilter.Status.ALLOWED : ObjectInputFilter.Status.REJECTED;
    }

    @Override
    public String toString() {
      return "ValueCodec.javaSerialization(" + type.getName() + ", \"" + allowList + "\")";
    }
  }

  private Codecs() {}
}
