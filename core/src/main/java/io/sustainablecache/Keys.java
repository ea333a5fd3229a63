package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Turns caller keys into store keys: prefixes the namespace and enforces memcached's key rules
 * (printable ASCII without spaces or control characters, at most the store's length limit),
 * rejecting or hashing keys that break them according to the {@link KeyPolicy}. Immutable.
 */
final class Keys {

  /** How many characters of an invalid key the hashed form keeps, sanitized. */
  static final int HASHED_PREFIX_LENGTH = 40;

  private final String prefix;
  private final int maxLength;
  private final KeyPolicy policy;

  Keys(String namespace, int maxLength, KeyPolicy policy) {
    this.prefix = namespace.isEmpty() ? "" : namespace + ":";
    this.maxLength = maxLength;
    this.policy = policy;
  }

  String storeKey(String key) {
    requireNonNull(key, "key");
    if (key.isEmpty()) {
      throw new IllegalArgumentException("key must not be empty");
    }
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c <= ' ' || c >= 0x7F) {
        if (policy == KeyPolicy.HASH) {
          return hashed(key);
        }
        throw new IllegalArgumentException("key must be printable ASCII without spaces or control"
            + " characters (memcached protocol); found U+" + String.format("%04X", (int) c)
            + " at index " + i + " (KeyPolicy.HASH stores such keys under a digest)");
      }
    }
    int length = prefix.length() + key.length();
    if (length > maxLength) {
      if (policy == KeyPolicy.HASH) {
        return hashed(key);
      }
      throw new IllegalArgumentException("key is too long for the store: " + length
          + " bytes with the namespace, limit " + maxLength
          + " (KeyPolicy.HASH stores such keys under a digest)");
    }
    return prefix.isEmpty() ? key : prefix.concat(key);
  }

  private String hashed(String key) {
    StringBuilder b = new StringBuilder(prefix.length() + HASHED_PREFIX_LENGTH + 44);
    b.append(prefix);
    int keep = Math.min(key.length(), HASHED_PREFIX_LENGTH);
    for (int i = 0; i < keep; i++) {
      char c = key.charAt(i);
      b.append(c <= ' ' || c >= 0x7F || c == ':' ? '_' : c);
    }
    b.append('#').append(Base64.getUrlEncoder().withoutPadding().encodeToString(
        sha256(key.getBytes(StandardCharsets.UTF_8))));
    if (b.length() > maxLength) {
      throw new IllegalArgumentException("the store's key limit of " + maxLength
          + " bytes is too short even for a hashed key of " + b.length() + " bytes");
    }
    return b.toString();
  }

  private static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform provides SHA-256", e);
    }
  }
}
