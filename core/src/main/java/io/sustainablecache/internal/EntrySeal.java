package io.sustainablecache.internal;

import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * What a cache's entries must carry to be read: the checksum only ({@link #NONE}, the default),
 * or a keyed tag too ({@link #keyed}), so that whoever can write to memcached but does not hold
 * the key cannot make an entry this cache reads.
 *
 * <p>With a key, every envelope the cache writes is of a keyed version (5 or 6, see {@link
 * Envelope}) whose tag is HMAC-SHA256 under the current key of everything before it (header,
 * payload, and so a fence's prior, itself a keyed envelope), its first 16 bytes. A read accepts
 * only keyed envelopes whose tag matches under the current key or one of the previous keys
 * (rotation: add the new key as current and the old one as previous on every instance, then,
 * once every entry written under the old key has expired, drop it). An entry without a tag, or
 * with a tag no key gives, is a miss counted as corrupt, as a flipped byte is.
 *
 * <p>Thread-safe: each tag is computed on a clone of a prototype {@link Mac}.
 */
final class EntrySeal {

  /** Entries carry a checksum only: versions 3 and 4. */
  static final EntrySeal NONE = new EntrySeal(null, List.of());

  private static final String ALGORITHM = "HmacSHA256";

  /** The current key's prototype; {@code null} for {@link #NONE}. */
  private final Mac current;

  /** The previous keys' prototypes, accepted on reads only. */
  private final List<Mac> previous;

  private EntrySeal(Mac current, List<Mac> previous) {
    this.current = current;
    this.previous = previous;
  }

  /**
   * The seal of a cache's configuration.
   *
   * @param keys the entry keys, the current one first, then the previous ones (as {@code
   *     SustainableCacheBuilder.entryKey} checked them); empty for {@link #NONE}
   */
  static EntrySeal of(List<byte[]> keys) {
    if (keys.isEmpty()) {
      return NONE;
    }
    List<Mac> macs = new ArrayList<>(keys.size());
    for (byte[] key : keys) {
      macs.add(mac(key));
    }
    return new EntrySeal(macs.get(0), List.copyOf(macs.subList(1, macs.size())));
  }

  private static Mac mac(byte[] key) {
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(new SecretKeySpec(key, ALGORITHM));
      mac.clone(); // fails here, not on the first write, if this provider cannot clone
      return mac;
    } catch (GeneralSecurityException | CloneNotSupportedException e) {
      throw new IllegalStateException(ALGORITHM + " is not available in this JVM", e);
    }
  }

  /** Whether entries carry a keyed tag. */
  boolean isKeyed() {
    return current != null;
  }

  /**
   * The envelope as this cache stores it.
   *
   * @param envelope a new envelope of version 3 or 4
   * @return {@code envelope} itself without a key; with one, its keyed version (a new array)
   */
  byte[] seal(byte[] envelope) {
    return current == null ? envelope : Envelope.keyed(envelope, (data, length, out, at) ->
        System.arraycopy(tag(current, data, length), 0, out, at, Envelope.TAG_SIZE));
  }

  /**
   * Whether this cache reads {@code bytes} as an envelope: {@link Envelope#isValid} without a
   * key; with one, a valid keyed envelope whose tag one of the keys gives.
   *
   * @param bytes any bytes; {@code null} is not valid
   */
  boolean isValid(byte[] bytes) {
    if (current == null) {
      return Envelope.isValid(bytes);
    }
    if (!Envelope.isValidKeyed(bytes)) {
      return false;
    }
    int body = bytes.length - Envelope.CHECKSUM_SIZE - Envelope.TAG_SIZE;
    if (matches(current, bytes, body)) {
      return true;
    }
    for (Mac old : previous) {
      if (matches(old, bytes, body)) {
        return true;
      }
    }
    return false;
  }

  /** Whether the tag after {@code body} is the key's, compared in constant time, in place. */
  private static boolean matches(Mac key, byte[] bytes, int body) {
    byte[] expected = tag(key, bytes, body);
    int difference = 0;
    for (int i = 0; i < Envelope.TAG_SIZE; i++) {
      difference |= expected[i] ^ bytes[body + i];
    }
    return difference == 0;
  }

  private static byte[] tag(Mac prototype, byte[] data, int length) {
    Mac mac;
    try {
      mac = (Mac) prototype.clone();
    } catch (CloneNotSupportedException e) {
      throw new IllegalStateException(e); // checked when the key was made
    }
    mac.update(data, 0, length);
    return mac.doFinal();
  }

  @Override
  public String toString() {
    return current == null ? "EntrySeal[checksum]"
        : "EntrySeal[" + ALGORITHM + ", " + previous.size() + " previous key(s)]";
  }
}
