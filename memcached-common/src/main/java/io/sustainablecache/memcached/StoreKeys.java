package io.sustainablecache.memcached;

import io.sustainablecache.spi.StoreException;

/**
 * The key rules of memcached's text protocol, as the memcached clients enforce them before
 * sending anything: a key is 1 to {@code maxLength} bytes of UTF-8 and contains no space, line
 * feed, carriage return or NUL. Every other byte, including control characters such as DEL
 * ({@code 0x7F}), is allowed.
 *
 * <p>For adapter authors: an adapter checks each key with {@link #problem} before handing it to
 * its client, and fails the operation's future with a {@link StoreException} naming the problem
 * (never the key, which may be personal data). The check allocates nothing for a valid key.
 * Stateless and thread-safe.
 */
public final class StoreKeys {

  private StoreKeys() {}

  /**
   * Says what is wrong with a key, if anything.
   *
   * @param key the key; never {@code null}
   * @param maxLength the longest key, in UTF-8 bytes, the adapter accepts
   * @return {@code null} for a valid key, otherwise a description of the problem that does not
   *     contain the key, for example {@code "the key contains a space"}
   * @throws NullPointerException if {@code key} is {@code null}
   */
  public static String problem(String key, int maxLength) {
    int length = key.length();
    if (length == 0) {
      return "the key is empty";
    }
    if (length > maxLength) {
      return "the key is longer than " + maxLength + " bytes";
    }
    int bytes = 0;
    for (int i = 0; i < length; i++) {
      char c = key.charAt(i);
      if (c < 0x80) {
        switch (c) {
          case ' ':
            return "the key contains a space";
          case '\n':
          case '\r':
            return "the key contains a line break";
          case '\0':
            return "the key contains a NUL character";
          default:
            bytes++;
        }
      } else if (c < 0x800) {
        bytes += 2;
      } else if (Character.isHighSurrogate(c) && i + 1 < length
          && Character.isLowSurrogate(key.charAt(i + 1))) {
        bytes += 4;
        i++;
      } else if (Character.isSurrogate(c)) {
        bytes++; // an unpaired surrogate is encoded as '?'
      } else {
        bytes += 3;
      }
    }
    if (bytes > maxLength) {
      return "the key is longer than " + maxLength + " bytes";
    }
    return null;
  }
}
