package io.sustainablecache;

import static java.util.Objects.requireNonNull;

/**
 * Turns caller keys into store keys: prefixes the namespace and enforces memcached's key rules
 * (printable ASCII without spaces or control characters, at most the store's length limit).
 * Immutable.
 */
final class Keys {

  private final String prefix;
  private final int maxLength;

  Keys(String namespace, int maxLength) {
    this.prefix = namespace.isEmpty() ? "" : namespace + ":";
    this.maxLength = maxLength;
  }

  String storeKey(String key) {
    requireNonNull(key, "key");
    if (key.isEmpty()) {
      throw new IllegalArgumentException("key must not be empty");
    }
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c <= ' ' || c >= 0x7F) {
        throw new IllegalArgumentException("key must be printable ASCII without spaces or control"
            + " characters (memcached protocol); found U+" + String.format("%04X", (int) c)
            + " at index " + i);
      }
    }
    int length = prefix.length() + key.length();
    if (length > maxLength) {
      throw new IllegalArgumentException("key is too long for the store: " + length
          + " bytes with the namespace, limit " + maxLength);
    }
    return prefix.isEmpty() ? key : prefix.concat(key);
  }
}
