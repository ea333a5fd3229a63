package io.sustainablecache.internal;

/**
 * The stored format of a cache entry: a 16-byte header followed by the codec's payload.
 * Public so that benchmarks and other-language readers can use it; not part of the supported API.
 *
 * <pre>
 * offset  size  field
 *      0     1  magic 0xC5
 *      1     1  kind (high nibble) and format version (low nibble, 1):
 *                 0x01 a value, 0x11 "no value" (a cached absence), 0x21 a tombstone
 *      2     6  fetchedAt: epoch milliseconds when the value was loaded, unsigned big-endian
 *      8     6  expiresAt: logical expiry, epoch milliseconds, unsigned big-endian
 *     14     2  loadMillis: measured load time in milliseconds, unsigned, saturating at 65535
 *     16     n  payload (values only; absences and tombstones have none)
 * </pre>
 *
 * <p>48-bit millisecond timestamps reach the year 10889. No valid UTF-8 text and no Java
 * serialization stream starts with {@code 0xC5 0x01}, so foreign values are recognised cheaply;
 * {@link #isValid} also checks the length, the kind and that {@code fetchedAt <= expiresAt}. A
 * value envelope is byte-for-byte the first format version's, so hosts running an older version
 * read values written by this one, and see absences and tombstones as entries of another version
 * (a miss).
 *
 * <p>Stateless and thread-safe; the static methods never allocate except {@link #encode}.
 */
public final class Envelope {

  /** The header's size in bytes: the envelope's overhead over the payload. */
  public static final int HEADER_SIZE = 16;

  /** The first byte of every envelope. */
  public static final byte MAGIC = (byte) 0xC5;

  /** The format version this code writes and reads (the low nibble of byte 1). */
  public static final byte VERSION = 1;

  /** Byte 1 of a value envelope. */
  public static final byte KIND_VALUE = 0x01;

  /** Byte 1 of a cached absence: the loader found no value for the key. */
  public static final byte KIND_ABSENT = 0x11;

  /**
   * Byte 1 of a tombstone: the entry was invalidated at {@code fetchedAt}. A tombstone is a miss
   * whose CAS token fences out writes of loads that read the entry before the invalidation.
   */
  public static final byte KIND_TOMBSTONE = 0x21;

  /** The largest value a 48-bit timestamp field holds. */
  public static final long MAX_TIMESTAMP = (1L << 48) - 1;

  /** The largest value of the load-time field; longer loads are stored as this. */
  public static final int MAX_LOAD_MILLIS = 0xFFFF;

  private Envelope() {}

  /**
   * Builds an envelope around a payload.
   *
   * @param fetchedAtMillis when the value was loaded, epoch milliseconds, in {@code [0,
   *     MAX_TIMESTAMP]}
   * @param expiresAtMillis the logical expiry, epoch milliseconds, in {@code [fetchedAtMillis,
   *     MAX_TIMESTAMP]}
   * @param loadMillis the measured load time; negative values are stored as 0, values above
   *     {@link #MAX_LOAD_MILLIS} as that maximum
   * @param payload the encoded value; copied
   * @return a new array of {@code HEADER_SIZE + payload.length} bytes
   * @throws IllegalArgumentException if a timestamp is out of range
   * @throws NullPointerException if {@code payload} is {@code null}
   */
  public static byte[] encode(long fetchedAtMillis, long expiresAtMillis, long loadMillis,
      byte[] payload) {
    return encode(KIND_VALUE, fetchedAtMillis, expiresAtMillis, loadMillis, payload);
  }

  /**
   * Builds a cached absence: "the loader found no value for this key".
   *
   * @param fetchedAtMillis when the load completed, epoch milliseconds
   * @param expiresAtMillis until when the absence counts as fresh, epoch milliseconds
   * @param loadMillis the measured load time
   * @return a new array of {@code HEADER_SIZE} bytes
   * @throws IllegalArgumentException if a timestamp is out of range
   */
  public static byte[] encodeAbsent(long fetchedAtMillis, long expiresAtMillis,
      long loadMillis) {
    return encode(KIND_ABSENT, fetchedAtMillis, expiresAtMillis, loadMillis, new byte[0]);
  }

  /**
   * Builds a tombstone: the entry was invalidated at {@code atMillis}.
   *
   * @param atMillis when, epoch milliseconds
   * @return a new array of {@code HEADER_SIZE} bytes
   * @throws IllegalArgumentException if the timestamp is out of range
   */
  public static byte[] encodeTombstone(long atMillis) {
    return encode(KIND_TOMBSTONE, atMillis, atMillis, 0, new byte[0]);
  }

  private static byte[] encode(byte kind, long fetchedAtMillis, long expiresAtMillis,
      long loadMillis, byte[] payload) {
    if (fetchedAtMillis < 0 || fetchedAtMillis > MAX_TIMESTAMP) {
      throw new IllegalArgumentException("fetchedAt out of range: " + fetchedAtMillis);
    }
    if (expiresAtMillis < fetchedAtMillis || expiresAtMillis > MAX_TIMESTAMP) {
      throw new IllegalArgumentException(
          "expiresAt out of range: " + expiresAtMillis + " (fetchedAt " + fetchedAtMillis + ")");
    }
    int load = (int) Math.max(0, Math.min(MAX_LOAD_MILLIS, loadMillis));
    byte[] out = new byte[HEADER_SIZE + payload.length];
    out[0] = MAGIC;
    out[1] = kind;
    put48(out, 2, fetchedAtMillis);
    put48(out, 8, expiresAtMillis);
    out[14] = (byte) (load >>> 8);
    out[15] = (byte) load;
    System.arraycopy(payload, 0, out, HEADER_SIZE, payload.length);
    return out;
  }

  /**
   * Whether {@code bytes} is an envelope this version can read.
   *
   * @param bytes any bytes, possibly foreign or truncated; {@code null} is not valid
   * @return {@code true} if the header is complete, carries the magic, this version and a known
   *     kind, absences and tombstones have no payload, and the timestamps are consistent
   */
  public static boolean isValid(byte[] bytes) {
    if (bytes == null || bytes.length < HEADER_SIZE || bytes[0] != MAGIC) {
      return false;
    }
    byte kind = bytes[1];
    boolean known = kind == KIND_VALUE
        || ((kind == KIND_ABSENT || kind == KIND_TOMBSTONE) && bytes.length == HEADER_SIZE);
    return known && get48(bytes, 2) <= get48(bytes, 8);
  }

  /**
   * The kind of an envelope that {@link #isValid}: {@link #KIND_VALUE}, {@link #KIND_ABSENT} or
   * {@link #KIND_TOMBSTONE}.
   *
   * @param bytes a valid envelope
   * @return the kind byte
   */
  public static byte kind(byte[] bytes) {
    return bytes[1];
  }

  /**
   * The load time of an envelope that {@link #isValid}.
   *
   * @param bytes a valid envelope
   * @return epoch milliseconds
   */
  public static long fetchedAt(byte[] bytes) {
    return get48(bytes, 2);
  }

  /**
   * The logical expiry of an envelope that {@link #isValid}.
   *
   * @param bytes a valid envelope
   * @return epoch milliseconds
   */
  public static long expiresAt(byte[] bytes) {
    return get48(bytes, 8);
  }

  /**
   * The measured load time of an envelope that {@link #isValid}.
   *
   * @param bytes a valid envelope
   * @return milliseconds in {@code [0, MAX_LOAD_MILLIS]}
   */
  public static int loadMillis(byte[] bytes) {
    return ((bytes[14] & 0xFF) << 8) | (bytes[15] & 0xFF);
  }

  /**
   * The payload's length in an envelope that {@link #isValid}; it starts at {@link #HEADER_SIZE}.
   *
   * @param bytes a valid envelope
   * @return a non-negative length
   */
  public static int payloadLength(byte[] bytes) {
    return bytes.length - HEADER_SIZE;
  }

  private static void put48(byte[] b, int at, long v) {
    for (int i = 5; i >= 0; i--) {
      b[at + i] = (byte) v;
      v >>>= 8;
    }
  }

  private static long get48(byte[] b, int at) {
    long v = 0;
    for (int i = 0; i < 6; i++) {
      v = (v << 8) | (b[at + i] & 0xFF);
    }
    return v;
  }
}
