package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The rule for namespaces ({@link SustainableCacheBuilder#namespace}): which strings are valid,
 * and how an integration turns a cache's name into one. Spring's cache manager and Hibernate's
 * region factory both derive their caches' namespaces here ({@link #derive}), so a name maps to
 * the same namespace in either.
 *
 * <p>A valid namespace has 1 to {@value #MAX_LENGTH} characters of {@code [A-Za-z0-9_.+-]} and
 * does not start with {@code '-'} (the ARCUS prefix rules). Stateless and thread-safe.
 */
public final class Namespaces {

  /** The longest namespace, in characters. */
  static final int MAX_LENGTH = 64;

  /** The length of the suffix {@link #derive} adds to a name it changed: {@code '+'} and 8 hex digits. */
  private static final int SUFFIX_LENGTH = 9;

  private Namespaces() {}

  /**
   * The namespace of a cache named {@code name} under {@code prefix}: {@code prefix + name} when
   * that is a valid namespace; otherwise that text with every character outside {@code
   * [A-Za-z0-9_.+-]} (and a leading {@code '-'}) replaced by {@code '_'}, cut to 55 characters,
   * and {@code '+'} and the first 8 hex digits of the SHA-256 of {@code prefix + name} (UTF-8)
   * appended. So a name that is already valid keeps it, and two names that sanitize alike (such
   * as {@code "a b"} and {@code "a:b"}, or two long names with the same first 64 characters) get
   * different namespaces; every instance derives the same one. A caller that also lets users
   * choose namespaces freely should still refuse two caches with one namespace (a chosen one can
   * equal a derived one).
   *
   * @param prefix put before the name, e.g. {@code "orders."}; may be empty
   * @param name the cache's name, any text, may be empty
   * @return a valid namespace, the same for the same arguments
   * @throws NullPointerException if an argument is {@code null}
   */
  public static String derive(String prefix, String name) {
    requireNonNull(prefix, "prefix");
    requireNonNull(name, "name");
    String plain = prefix + name;
    if (problem(plain) == null) {
      return plain;
    }
    int keep = Math.min(plain.length(), MAX_LENGTH - SUFFIX_LENGTH);
    StringBuilder out = new StringBuilder(keep + SUFFIX_LENGTH);
    for (int i = 0; i < keep; i++) {
      char c = plain.charAt(i);
      out.append(allowed(c) && !(i == 0 && c == '-') ? c : '_');
    }
    return out.append('+').append(sha256(plain), 0, SUFFIX_LENGTH - 1).toString();
  }

  /**
   * Checks a namespace, with the builder's messages.
   *
   * @throws IllegalArgumentException naming what is wrong
   */
  static void check(String namespace) {
    String problem = problem(namespace);
    if (problem != null) {
      throw new IllegalArgumentException(problem);
    }
  }

  /** What is wrong with {@code namespace}, or {@code null} if it is valid. */
  private static String problem(String namespace) {
    if (namespace.isEmpty() || namespace.length() > MAX_LENGTH) {
      return "namespace must have 1 to " + MAX_LENGTH + " characters: \"" + namespace + "\" has "
          + namespace.length();
    }
    if (namespace.charAt(0) == '-') {
      return "namespace must not start with '-' (an ARCUS prefix rule): \"" + namespace + "\"";
    }
    for (int i = 0; i < namespace.length(); i++) {
      char c = namespace.charAt(i);
      if (!allowed(c)) {
        return "namespace may only contain [A-Za-z0-9_.+-]: \"" + namespace + "\" has '" + c
            + "' at index " + i;
      }
    }
    return null;
  }

  private static boolean allowed(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || c == '_' || c == '.' || c == '+' || c == '-';
  }

  private static String sha256(String text) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
          .digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every Java platform", e);
    }
  }
}
