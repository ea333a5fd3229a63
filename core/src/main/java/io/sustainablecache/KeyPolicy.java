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
   * character memcached cannot hold replaced by {@code '_'} (so the key stays recognisable in
   * server statistics), {@code '#'}, and the unpadded base64url SHA-256 of the key's UTF-8 bytes.
   * Keys that are valid as they are stay unchanged. A derived key is at most 85 characters plus
   * the namespace. Two different keys share an entry only if a caller uses, as a plain key, the
   * derived form of another key.
   */
  HASH
}
