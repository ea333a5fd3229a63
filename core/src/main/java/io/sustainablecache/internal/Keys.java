package io.sustainablecache.internal;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.KeyPolicy;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Turns caller keys into store keys: prefixes the namespace and enforces memcached's key rules
 * (printable ASCII without spaces or control characters, at most the store's length limit),
 * rejecting or hashing keys that break them according to the {@link KeyPolicy}. Also derives the
 * cache's internal keys (leases), which contain the byte {@code 0x7F} that no caller key can
 * produce. Immutable.
 *
 * <p>The mapping is injective: two different caller keys never share a store key. Under {@link
 * KeyPolicy#HASH} a key is hashed if it is invalid as it is <em>or contains {@code '#'}</em>, so
 * no plain key can look like a hashed one (hashed keys are the only store keys of the cache with
 * a {@code '#'}), and the digest covers the key's UTF-16 code units, so keys that differ only in
 * unpaired surrogates (which UTF-8 would both turn into {@code '?'}) stay distinct.
 */
final class Keys {

  /** How many characters of a hashed key the derived form keeps, sanitized. */
  static final int HASHED_PREFIX_LENGTH = 40;

  /** Separates a store key from the suffix of an internal key; never in a caller's key. */
  static final char INTERNAL_MARK = '\u007F';

  private static final String LEASE_SUFFIX = INTERNAL_MARK + "lease";

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
    if (isPlain(key)) {
      return prefix.isEmpty() ? key : prefix.concat(key);
    }
    if (key.isEmpty()) {
      throw new IllegalArgumentException("key must not be empty");
    }
    if (policy == KeyPolicy.HASH) {
      return hashed(key); // a character memcached refuses, a '#', or too long
    }
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c <= ' ' || c >= 0x7F) {
        throw new IllegalArgumentException("key must be printable ASCII without spaces or control"
            + " characters (memcached protocol); found U+" + String.format("%04X", (int) c)
            + " at index " + i + " (KeyPolicy.HASH stores such keys under a digest)");
      }
    }
    throw new IllegalArgumentException("key is too long for the store: "
        + (prefix.length() + key.length()) + " bytes with the namespace, limit " + maxLength
        + " (KeyPolicy.HASH stores such keys under a digest)");
  }

  /**
   * The key the near cache holds a caller's key under, without allocating for the usual case: the
   * key itself when its store key is the namespace's prefix followed by it (a plain key), else its
   * store key (a hashed key, which contains {@code '#'}). Checks the key as {@link #storeKey}
   * does. {@link #nearKeyOf} maps a store key to the same key.
   */
  String nearKey(String key) {
    requireNonNull(key, "key");
    return isPlain(key) ? key : storeKey(key);
  }

  /** The near cache's key of a store key of this cache: see {@link #nearKey}. */
  String nearKeyOf(String storeKey) {
    if (!storeKey.startsWith(prefix)) {
      return storeKey;
    }
    String rest = storeKey.substring(prefix.length());
    return policy == KeyPolicy.HASH && rest.indexOf('#') >= 0 ? storeKey : rest;
  }

  /**
   * Whether a key the near cache holds an entry under ({@link #nearKeyOf} of a store key of this
   * cache) is a hashed key's store key rather than a caller's plain key: only hashed keys contain
   * {@code '#'} under {@link KeyPolicy#HASH}, and there are none under the other policy.
   */
  boolean isHashedNearKey(String nearKey) {
    return policy == KeyPolicy.HASH && nearKey.indexOf('#') >= 0;
  }

  /** Whether {@link #storeKey} of the key is the prefix followed by the key, unchanged. */
  private boolean isPlain(String key) {
    if (key.isEmpty() || prefix.length() + key.length() > maxLength) {
      return false;
    }
    boolean hash = policy == KeyPolicy.HASH;
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c <= ' ' || c >= 0x7F || (c == '#' && hash)) {
        return false;
      }
    }
    return true;
  }

  /**
   * A key of the cache's own, in its namespace: the namespace's prefix, {@code 0x7F} and {@code
   * name} (for example the near cache's log, {@code "near:seq"}).
   */
  String internalKey(String name) {
    return prefix + INTERNAL_MARK + name;
  }

  /**
   * The key of the fleet lease of {@code storeKey}: the store key followed by {@code 0x7F} and
   * {@code "lease"}, or, when that would exceed the store's limit, the namespace followed by the
   * mark and a digest of the store key.
   */
  String leaseKey(String storeKey) {
    if (storeKey.length() + LEASE_SUFFIX.length() <= maxLength) {
      return storeKey.concat(LEASE_SUFFIX);
    }
    return prefix + LEASE_SUFFIX + '#' + digest(storeKey);
  }

  private String hashed(String key) {
    StringBuilder b = new StringBuilder(prefix.length() + HASHED_PREFIX_LENGTH + 44);
    b.append(prefix);
    int keep = Math.min(key.length(), HASHED_PREFIX_LENGTH);
    for (int i = 0; i < keep; i++) {
      char c = key.charAt(i);
      b.append(c <= ' ' || c >= 0x7F || c == ':' || c == '#' ? '_' : c);
    }
    b.append('#').append(digest(key));
    if (b.length() > maxLength) {
      throw new IllegalArgumentException("the store's key limit of " + maxLength
          + " bytes is too short even for a hashed key of " + b.length() + " bytes");
    }
    return b.toString();
  }

  /** Unpadded base64url SHA-256 of the string's UTF-16 code units: defined for every string. */
  private static String digest(String s) {
    ByteBuffer units = ByteBuffer.allocate(s.length() * 2);
    for (int i = 0; i < s.length(); i++) {
      units.putChar(s.charAt(i));
    }
    return Base64.getUrlEncoder().withoutPadding().encodeToString(sha256(units.array()));
  }

  private static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform provides SHA-256", e);
    }
  }

  /** For messages: the namespace prefix, e.g. {@code "user:"}, or empty. */
  String prefix() {
    return prefix;
  }
}
