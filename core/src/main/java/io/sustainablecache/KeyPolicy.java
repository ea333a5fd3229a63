package io.sustainablecache;

/**
 * What the cache does with a key that memcached cannot hold as it is: longer than the store's
 * limit once namespaced, or containing spaces, control characters or non-ASCII characters. Empty
 * and {@code null} keys are always rejected.
 */
public enum KeyPolicy {

  /**
   * Reject the key with an {@link IllegalArgumentException} that names the rule it breaks. The
   * default: a key that cannot be stored usually points at a bug, and a rejected key never shares
   * an entry with another one.
   */
  REJECT,

  /**
   * Store the entry under a derived key: the namespace, up to 40 characters of the key with every
   * character memcached cannot hold (and {@code ':'} and {@code '#'}) replaced by {@code '_'} (so
   * the key stays recognisable in server statistics), {@code '#'}, and the unpadded base64url
   * SHA-256 of the key's UTF-16 code units. Keys that are valid as they are and contain no
   * {@code '#'} stay unchanged; keys with a {@code '#'} are always derived, so a plain key can
   * never collide with a derived one. A derived key is at most 84 characters plus the namespace.
   * Two different keys share an entry only on a SHA-256 collision.
   */
  HASH
}
