package io.sustainablecache.internal;

/**
 * The stored format of a cache entry: a 16-byte header followed by the codec's payload, or, for
 * a cache with a near cache, a 24-byte header that also carries the namespace's generation; then
 * a 4-byte checksum of everything before it. Public so that benchmarks and other-language readers
 * can use it; not part of the supported API.
 *
 * <pre>
 * offset  size  field
 *      0     1  magic 0xC5
 *      1     1  kind (high nibble) and format version (low nibble, 3 or 4):
 *                 0x03 a value, 0x13 "no value" (a cached absence), 0x23 a tombstone, 0x33 a
 *                 write fence (version 3; 0x04, 0x14, 0x24, 0x34 in version 4). The kind
 *                 constants here ({@link #KIND_VALUE}, ...) carry a low nibble of 1 whatever the
 *                 version: {@link #kind} maps a stored byte to them
 *      2     6  fetchedAt: epoch milliseconds when the value was loaded, unsigned big-endian
 *      8     6  expiresAt: logical expiry, epoch milliseconds, unsigned big-endian
 *     14     2  loadMillis: measured load time in milliseconds, unsigned, saturating at 65535
 *     16     8  generation (version 2 only): the namespace's generation the entry belongs to,
 *                 positive, big-endian; an entry of another generation is a miss (see the near
 *                 cache's {@code invalidateAll} in docs/near-cache.md)
 * 16 or 24   n  payload: a value's codec bytes; none for absences and tombstones; for a write
 *                 fence: a flags byte (bit 0: more than one writer has held it; bit 1: a
 *                 holder is <em>committing</em>, it called {@code beforeCommit()} at the
 *                 fence's time, and its prior answers reads only for the commit window after
 *                 it), the number of
 *                 holders h (1 byte, 1 to 255), h holders of 16 bytes each (an id and until when
 *                 that writer holds the fence, epoch milliseconds, both 8 bytes big-endian), then
 *                 the <em>prior</em>: the whole envelope (a value or an absence) that the fence
 *                 replaced, which is the database's committed data until a holder commits, or
 *                 nothing
 * end-20    16  tag (format versions 5 and 6 only, a cache with {@code entryKey}): HMAC-SHA256 of
 *                 every byte before it under the cache's key, its first 16 bytes; versions 5 and 6
 *                 are otherwise 3 and 4
 *  end-4     4  checksum: CRC32C of every byte before it, big-endian
 * </pre>
 *
 * <p>The checksum makes a changed byte (a bit flipped on the wire or in memory, a truncated or
 * spliced item, a hand-edited one) a miss, never a value: {@link #isValid} checks it on every
 * store read. It is not a defence against whoever can write to memcached, which has no
 * authentication: such a writer can compute it too. The tag is (see {@code
 * SustainableCacheBuilder.entryKey}).
 *
 * <p>A write fence stands in a key while a database transaction changes the key's data (see
 * {@code docs/design.md}, "Writes inside database transactions"): {@code fetchedAt} is when it
 * was last changed, {@code expiresAt} the latest of its holders' ends.
 *
 * <p>48-bit millisecond timestamps reach the year 10889. No valid UTF-8 text and no Java
 * serialization stream starts with {@code 0xC5 0x03} or {@code 0xC5 0x04}, so foreign values are
 * recognised cheaply; {@link #isValid} also checks the length, the kind, that {@code fetchedAt <=
 * expiresAt} and the checksum. Format versions 1 and 2 (before 0.1.0, without the checksum) read
 * as foreign: a miss that the next load overwrites.
 *
 * <p>Stateless and thread-safe; the static methods never allocate except {@link #encode}.
 */
public final class Envelope {

  /** The header's size in bytes in format version 1: the envelope's overhead over the payload. */
  public static final int HEADER_SIZE = 16;

  /** The header's size in bytes in format version 2, which carries a generation. */
  public static final int GENERATION_HEADER_SIZE = 24;

  /** The first byte of every envelope. */
  public static final byte MAGIC = (byte) 0xC5;

  /** The format version without a generation (the low nibble of byte 1). */
  public static final byte VERSION = 3;

  /** The format version with a generation. */
  public static final byte GENERATION_VERSION = 4;

  /** The size of the checksum that ends every envelope. */
  public static final int CHECKSUM_SIZE = 4;

  /**
   * Format version 5: as 3, with a {@linkplain #TAG_SIZE keyed tag} before the checksum (a cache
   * built with {@code entryKey}).
   */
  public static final byte KEYED_VERSION = 5;

  /** Format version 6: as 4 (a generation), with a keyed tag before the checksum. */
  public static final byte KEYED_GENERATION_VERSION = 6;

  /**
   * The size of the keyed tag of versions 5 and 6: HMAC-SHA256 of every byte before it, under the
   * cache's entry key, its first 16 bytes.
   */
  public static final int TAG_SIZE = 16;

  /** Byte 1 of a value envelope. */
  public static final byte KIND_VALUE = 0x01;

  /** Byte 1 of a cached absence: the loader found no value for the key. */
  public static final byte KIND_ABSENT = 0x11;

  /**
   * Byte 1 of a tombstone: the entry was invalidated at {@code fetchedAt}. A tombstone is a miss
   * whose CAS token fences out writes of loads that read the entry before the invalidation.
   */
  public static final byte KIND_TOMBSTONE = 0x21;

  /**
   * Byte 1 of a write fence: a database transaction is changing the key's data. A fence answers
   * reads with its prior while it carries one; otherwise it is a miss whose loads are never
   * cached. Its CAS token fences out loads that read the key before.
   */
  public static final byte KIND_FENCE = 0x31;

  /** A write fence's flag: more than one writer has held it. */
  private static final int FENCE_SHARED = 1;

  /** A write fence's flag: a holder is committing (see {@link #fenceCommitting}). */
  private static final int FENCE_COMMITTING = 2;

  /** The size of a write fence's payload without holders and prior: flags, holder count. */
  public static final int FENCE_FIXED_SIZE = 2;

  /** The size of one holder of a write fence: its id and its end. */
  public static final int FENCE_HOLDER_SIZE = 16;

  /** The most holders a write fence records. */
  public static final int MAX_FENCE_HOLDERS = 255;

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
   * @return a new array of {@code HEADER_SIZE + payload.length + CHECKSUM_SIZE} bytes
   * @throws IllegalArgumentException if a timestamp is out of range
   * @throws NullPointerException if {@code payload} is {@code null}
   */
  public static byte[] encode(long fetchedAtMillis, long expiresAtMillis, long loadMillis,
      byte[] payload) {
    return encode(KIND_VALUE, fetchedAtMillis, expiresAtMillis, loadMillis, 0, payload);
  }

  /**
   * Builds an envelope of a generation (format version 2), or of none (version 1) if {@code
   * generation} is 0; otherwise as {@link #encode(long, long, long, byte[])}.
   *
   * @param generation the namespace's generation, positive, or 0 for none
   * @throws IllegalArgumentException if a timestamp is out of range or the generation negative
   */
  public static byte[] encode(long fetchedAtMillis, long expiresAtMillis, long loadMillis,
      long generation, byte[] payload) {
    return encode(KIND_VALUE, fetchedAtMillis, expiresAtMillis, loadMillis, generation, payload);
  }

  /**
   * Builds a cached absence: "the loader found no value for this key".
   *
   * @param fetchedAtMillis when the load completed, epoch milliseconds
   * @param expiresAtMillis until when the absence counts as fresh, epoch milliseconds
   * @param loadMillis the measured load time
   * @return a new array of {@code HEADER_SIZE + CHECKSUM_SIZE} bytes
   * @throws IllegalArgumentException if a timestamp is out of range
   */
  public static byte[] encodeAbsent(long fetchedAtMillis, long expiresAtMillis,
      long loadMillis) {
    return encodeAbsent(fetchedAtMillis, expiresAtMillis, loadMillis, 0);
  }

  /**
   * Builds a cached absence of a generation (0: none); see {@link #encode(long, long, long,
   * long, byte[])}.
   */
  public static byte[] encodeAbsent(long fetchedAtMillis, long expiresAtMillis,
      long loadMillis, long generation) {
    return encode(KIND_ABSENT, fetchedAtMillis, expiresAtMillis, loadMillis, generation,
        new byte[0]);
  }

  /**
   * Builds a tombstone: the entry was invalidated at {@code atMillis}.
   *
   * @param atMillis when, epoch milliseconds
   * @return a new array of {@code HEADER_SIZE + CHECKSUM_SIZE} bytes
   * @throws IllegalArgumentException if the timestamp is out of range
   */
  public static byte[] encodeTombstone(long atMillis) {
    return encodeTombstone(atMillis, 0);
  }

  /** Builds a tombstone of a generation (0: none); see {@link #encodeTombstone(long)}. */
  public static byte[] encodeTombstone(long atMillis, long generation) {
    return encode(KIND_TOMBSTONE, atMillis, atMillis, 0, generation, new byte[0]);
  }

  /**
   * Builds a write fence of a generation (0: none).
   *
   * @param atMillis when it is placed or changed, epoch milliseconds
   * @param shared whether more than one writer has held it
   * @param holderIds the holders' ids
   * @param holderUntils until when each holder holds it, epoch milliseconds, none before {@code
   *     atMillis}
   * @param prior the value or absence envelope the fence replaced, or {@code null} for none
   * @param generation the namespace's generation, or 0 for none
   * @return a new array
   * @throws IllegalArgumentException if a timestamp is out of range, or there are no holders, more
   *     than {@link #MAX_FENCE_HOLDERS}, or not as many ends as ids
   */
  public static byte[] encodeFence(long atMillis, boolean shared, long[] holderIds,
      long[] holderUntils, byte[] prior, long generation) {
    return encodeFence(atMillis, shared, false, holderIds, holderUntils, prior, generation);
  }

  /**
   * {@link #encodeFence(long, boolean, long[], long[], byte[], long)} with its committing mark:
   * {@code committing} says that a holder called {@code beforeCommit()} at {@code atMillis}, and
   * that readers answer with the prior only for a short window after it (the commit and the
   * release follow at once).
   *
   * @return a new array
   * @throws IllegalArgumentException as the other overload
   */
  public static byte[] encodeFence(long atMillis, boolean shared, boolean committing,
      long[] holderIds, long[] holderUntils, byte[] prior, long generation) {
    int holders = holderIds.length;
    if (holders == 0 || holders > MAX_FENCE_HOLDERS || holderUntils.length != holders) {
      throw new IllegalArgumentException("a fence has 1 to " + MAX_FENCE_HOLDERS
          + " holders, each with an end: " + holders + " ids, " + holderUntils.length + " ends");
    }
    int priorLength = prior == null ? 0 : prior.length;
    byte[] payload = new byte[FENCE_FIXED_SIZE + holders * FENCE_HOLDER_SIZE + priorLength];
    payload[0] = (byte) ((shared ? FENCE_SHARED : 0) | (committing ? FENCE_COMMITTING : 0));
    payload[1] = (byte) holders;
    long until = 0;
    for (int i = 0; i < holders; i++) {
      int at = FENCE_FIXED_SIZE + i * FENCE_HOLDER_SIZE;
      put64(payload, at, holderIds[i]);
      put64(payload, at + 8, holderUntils[i]);
      until = Math.max(until, holderUntils[i]);
    }
    if (priorLength > 0) {
      System.arraycopy(prior, 0, payload, payload.length - priorLength, priorLength);
    }
    return encode(KIND_FENCE, Math.min(atMillis, until), until, 0, generation, payload);
  }

  /** Whether more than one writer has held a valid write fence. */
  public static boolean fenceShared(byte[] bytes) {
    return (bytes[payloadOffset(bytes)] & FENCE_SHARED) != 0;
  }

  /**
   * Whether a valid write fence is marked committing: a holder called {@code beforeCommit()},
   * and its release follows the commit.
   */
  public static boolean fenceCommitting(byte[] bytes) {
    return (bytes[payloadOffset(bytes)] & FENCE_COMMITTING) != 0;
  }

  /** How many writers a valid write fence records: 1 to {@link #MAX_FENCE_HOLDERS}. */
  public static int fenceHolders(byte[] bytes) {
    return bytes[payloadOffset(bytes) + 1] & 0xFF;
  }

  /** The id of holder {@code i} of a valid write fence. */
  public static long fenceHolderId(byte[] bytes, int i) {
    return get64(bytes, payloadOffset(bytes) + FENCE_FIXED_SIZE + i * FENCE_HOLDER_SIZE);
  }

  /** Until when holder {@code i} of a valid write fence holds it, epoch milliseconds. */
  public static long fenceHolderUntil(byte[] bytes, int i) {
    return get64(bytes, payloadOffset(bytes) + FENCE_FIXED_SIZE + i * FENCE_HOLDER_SIZE + 8);
  }

  /**
   * The prior of a valid write fence: the envelope it replaced, as stored (not validated).
   *
   * @return a copy, or {@code null} if the fence carries none
   */
  public static byte[] fencePrior(byte[] bytes) {
    int from = payloadOffset(bytes) + FENCE_FIXED_SIZE + fenceHolders(bytes) * FENCE_HOLDER_SIZE;
    int end = payloadEnd(bytes);
    return from == end ? null : java.util.Arrays.copyOfRange(bytes, from, end);
  }

  private static byte[] encode(byte kind, long fetchedAtMillis, long expiresAtMillis,
      long loadMillis, long generation, byte[] payload) {
    if (generation < 0) {
      throw new IllegalArgumentException("generation must not be negative: " + generation);
    }
    if (fetchedAtMillis < 0 || fetchedAtMillis > MAX_TIMESTAMP) {
      throw new IllegalArgumentException("fetchedAt out of range: " + fetchedAtMillis);
    }
    if (expiresAtMillis < fetchedAtMillis || expiresAtMillis > MAX_TIMESTAMP) {
      throw new IllegalArgumentException(
          "expiresAt out of range: " + expiresAtMillis + " (fetchedAt " + fetchedAtMillis + ")");
    }
    int load = (int) Math.max(0, Math.min(MAX_LOAD_MILLIS, loadMillis));
    int header = generation == 0 ? HEADER_SIZE : GENERATION_HEADER_SIZE;
    byte[] out = new byte[header + payload.length + CHECKSUM_SIZE];
    out[0] = MAGIC;
    out[1] = (byte) ((kind & 0xF0) | (generation == 0 ? VERSION : GENERATION_VERSION));
    put48(out, 2, fetchedAtMillis);
    put48(out, 8, expiresAtMillis);
    out[14] = (byte) (load >>> 8);
    out[15] = (byte) load;
    if (generation != 0) {
      for (int i = 7; i >= 0; i--) {
        out[HEADER_SIZE + i] = (byte) generation;
        generation >>>= 8;
      }
    }
    System.arraycopy(payload, 0, out, header, payload.length);
    seal(out);
    return out;
  }

  /** Writes the checksum of {@code bytes} into its last {@link #CHECKSUM_SIZE} bytes. */
  private static void seal(byte[] bytes) {
    int checksum = checksum(bytes);
    for (int i = 3; i >= 0; i--) {
      bytes[bytes.length - CHECKSUM_SIZE + i] = (byte) checksum;
      checksum >>>= 8;
    }
  }

  /**
   * {@code bytes} with its checksum computed again, for tests that change one field of an
   * envelope and check that the field's own rule rejects it.
   */
  static byte[] resealed(byte[] bytes) {
    byte[] out = bytes.clone();
    seal(out);
    return out;
  }

  /**
   * {@code envelope} (version 3 or 4, as the {@code encode} methods make it) in its keyed version
   * (5 or 6): the same header and payload, then {@code tag}'s {@link #TAG_SIZE} bytes computed over
   * them, then the checksum.
   *
   * @param envelope a valid envelope of version 3 or 4; not changed
   * @param tag computes the tag of {@code length} bytes of the array it is given, from 0
   * @return a new array, {@link #TAG_SIZE} bytes longer
   */
  static byte[] keyed(byte[] envelope, Tagger tag) {
    int body = envelope.length - CHECKSUM_SIZE;
    byte[] out = new byte[body + TAG_SIZE + CHECKSUM_SIZE];
    System.arraycopy(envelope, 0, out, 0, body);
    out[1] = (byte) ((out[1] & 0xF0)
        | ((out[1] & 0x0F) == GENERATION_VERSION ? KEYED_GENERATION_VERSION : KEYED_VERSION));
    tag.tag(out, body, out, body);
    seal(out);
    return out;
  }

  /**
   * Computes a keyed tag: {@link #TAG_SIZE} bytes over {@code data[0, length)}, written into
   * {@code out} from {@code at}.
   */
  @FunctionalInterface
  interface Tagger {
    void tag(byte[] data, int length, byte[] out, int at);
  }

  /** Whether a valid envelope is of a keyed version (5 or 6). */
  static boolean isKeyed(byte[] bytes) {
    int version = bytes[1] & 0x0F;
    return version == KEYED_VERSION || version == KEYED_GENERATION_VERSION;
  }

  /** Where the payload of a valid envelope ends: before its tag, if keyed, and checksum. */
  private static int payloadEnd(byte[] bytes) {
    return bytes.length - CHECKSUM_SIZE - (isKeyed(bytes) ? TAG_SIZE : 0);
  }

  /** Whether a version carries a generation (4 and 6). */
  private static boolean hasGeneration(int version) {
    return version == GENERATION_VERSION || version == KEYED_GENERATION_VERSION;
  }

  /** CRC32C of every byte of {@code bytes} before its last {@link #CHECKSUM_SIZE}. */
  private static int checksum(byte[] bytes) {
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(bytes, 0, bytes.length - CHECKSUM_SIZE);
    return (int) crc.getValue();
  }

  /**
   * Whether {@code bytes} is an envelope this version can read without a key.
   *
   * @param bytes any bytes, possibly foreign or truncated; {@code null} is not valid
   * @return {@code true} if the header is complete, carries the magic, a version this code reads
   *     without a key (3, or 4 with a positive generation) and a known kind, absences and
   *     tombstones have no payload, the timestamps are consistent and the checksum matches
   */
  public static boolean isValid(byte[] bytes) {
    return isValid(bytes, false);
  }

  /**
   * Whether {@code bytes} is an envelope of a keyed version (5, or 6 with a positive generation)
   * that is valid as {@link #isValid} checks it; its tag is not checked here (the cache's key
   * does that).
   */
  static boolean isValidKeyed(byte[] bytes) {
    return isValid(bytes, true);
  }

  private static boolean isValid(byte[] bytes, boolean keyed) {
    if (bytes == null || bytes.length < HEADER_SIZE + CHECKSUM_SIZE || bytes[0] != MAGIC) {
      return false;
    }
    int version = bytes[1] & 0x0F;
    int tag = keyed ? TAG_SIZE : 0;
    int header;
    if (version == (keyed ? KEYED_VERSION : VERSION)) {
      header = HEADER_SIZE;
    } else if (version == (keyed ? KEYED_GENERATION_VERSION : GENERATION_VERSION)
        && bytes.length >= GENERATION_HEADER_SIZE + tag + CHECKSUM_SIZE
        && generation(bytes) > 0) {
      header = GENERATION_HEADER_SIZE;
    } else {
      return false;
    }
    int end = bytes.length - CHECKSUM_SIZE - tag;
    if (end < header) {
      return false;
    }
    byte kind = kind(bytes);
    boolean known = kind == KIND_VALUE
        || ((kind == KIND_ABSENT || kind == KIND_TOMBSTONE) && end == header)
        || (kind == KIND_FENCE && validFence(bytes, header, end));
    return known && get48(bytes, 2) <= get48(bytes, 8)
        && checksum(bytes) == (int) get(bytes, bytes.length - CHECKSUM_SIZE, CHECKSUM_SIZE);
  }

  /**
   * The kind of an envelope that {@link #isValid}, whatever its version: {@link #KIND_VALUE},
   * {@link #KIND_ABSENT}, {@link #KIND_TOMBSTONE} or {@link #KIND_FENCE}.
   *
   * @param bytes a valid envelope
   * @return the kind byte
   */
  public static byte kind(byte[] bytes) {
    return (byte) ((bytes[1] & 0xF0) | 0x01);
  }

  /**
   * The generation of an envelope that {@link #isValid}.
   *
   * @param bytes a valid envelope
   * @return the generation, positive, or 0 for an envelope of format version 1 (none)
   */
  public static long generation(byte[] bytes) {
    if (!hasGeneration(bytes[1] & 0x0F)) {
      return 0;
    }
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (bytes[HEADER_SIZE + i] & 0xFF);
    }
    return v;
  }

  /**
   * Where the payload of an envelope that {@link #isValid} starts: {@link #HEADER_SIZE} or {@link
   * #GENERATION_HEADER_SIZE}.
   *
   * @param bytes a valid envelope
   * @return an offset into {@code bytes}
   */
  public static int payloadOffset(byte[] bytes) {
    return hasGeneration(bytes[1] & 0x0F) ? GENERATION_HEADER_SIZE : HEADER_SIZE;
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
   * The payload's length in an envelope that {@link #isValid}; it starts at {@link
   * #payloadOffset}.
   *
   * @param bytes a valid envelope
   * @return a non-negative length
   */
  public static int payloadLength(byte[] bytes) {
    return payloadEnd(bytes) - payloadOffset(bytes);
  }

  /**
   * Whether a fence's payload is whole: known flags, 1 to 255 holders, each end within the
   * timestamp range and none after the header's end (the latest of them).
   */
  private static boolean validFence(byte[] bytes, int header, int end) {
    if (end < header + FENCE_FIXED_SIZE
        || (bytes[header] & ~(FENCE_SHARED | FENCE_COMMITTING)) != 0) {
      return false;
    }
    int holders = bytes[header + 1] & 0xFF;
    if (holders == 0 || end < header + FENCE_FIXED_SIZE + holders * FENCE_HOLDER_SIZE) {
      return false;
    }
    long until = get48(bytes, 8);
    for (int i = 0; i < holders; i++) {
      long holderEnd = get64(bytes, header + FENCE_FIXED_SIZE + i * FENCE_HOLDER_SIZE + 8);
      if (holderEnd < 0 || holderEnd > until) {
        return false;
      }
    }
    return true;
  }

  private static void put64(byte[] b, int at, long v) {
    for (int i = 7; i >= 0; i--) {
      b[at + i] = (byte) v;
      v >>>= 8;
    }
  }

  private static long get64(byte[] b, int at) {
    return get(b, at, 8);
  }

  /** {@code n} bytes from {@code at}, big-endian. */
  private static long get(byte[] b, int at, int n) {
    long v = 0;
    for (int i = 0; i < n; i++) {
      v = (v << 8) | (b[at + i] & 0xFF);
    }
    return v;
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
