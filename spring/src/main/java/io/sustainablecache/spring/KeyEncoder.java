package io.sustainablecache.spring;

/**
 * Turns the {@code Object} keys of Spring's cache abstraction (method parameters, {@code
 * SimpleKey}s of several parameters, SpEL results) into the {@code String} keys of a {@link
 * io.sustainablecache.SustainableCache}.
 *
 * <p>An encoder must be <b>injective</b> with respect to {@link Object#equals}: keys that are not
 * equal must never produce the same string (they would share a cache entry and one caller would
 * get another's value), and equal keys should produce the same string (otherwise they merely miss
 * more often). The result may be of any length and contain any characters: the caches of this
 * module store it with {@link io.sustainablecache.KeyPolicy#HASH}, which keeps short printable
 * ASCII keys readable and stores the others under a SHA-256 digest, injectively.
 *
 * <p>Implementations must be thread-safe.
 */
@FunctionalInterface
public interface KeyEncoder {

  /**
   * Encodes a key.
   *
   * @param key the key Spring passes to the cache; never {@code null}
   * @return a non-empty string, never {@code null}
   * @throws IllegalArgumentException if the key has no injective encoding (for example an object
   *     of a type the encoder does not know how to compare)
   */
  String encode(Object key);

  /**
   * The inverse of {@link #encode}, for ids of one type: what a {@link BulkCacheLoader}
   * registered for a cache ({@link SustainableCacheManager.Builder#bulkLoader}) receives, since
   * the cache hands its loader the encoded keys, including those of background refreshes, whose
   * callers are long gone. The default refuses: an encoder of your own that is used with a
   * registered bulk loader implements it.
   *
   * @param encoded a string {@link #encode} returned for a key of type {@code type}
   * @param type the type of the ids
   * @param <K> the type of the ids
   * @return the key {@code k} of type {@code type} with {@code encode(k).equals(encoded)}; never
   *     {@code null}
   * @throws IllegalArgumentException if {@code encoded} is not the encoding of a {@code type}
   * @throws UnsupportedOperationException if this encoder cannot decode keys of {@code type}
   */
  default <K> K decode(String encoded, Class<K> type) {
    throw new UnsupportedOperationException(getClass().getName() + " does not decode keys;"
        + " implement KeyEncoder.decode to use it with a bulk loader");
  }

  /**
   * The default encoder: a type-tagged, self-delimiting encoding, injective for the types it
   * accepts. Each value is written as a one-letter type tag and a payload that says where it ends:
   *
   * <table>
   *   <caption>encodings</caption>
   *   <tr><th>key</th><th>encoding</th><th>example</th></tr>
   *   <tr><td>{@code String}</td><td>{@code s} length {@code :} characters</td>
   *       <td>{@code "42"} → {@code s2:42}</td></tr>
   *   <tr><td>{@code Integer}, {@code Long}, {@code Short}, {@code Byte}</td>
   *       <td>{@code i}, {@code l}, {@code h}, {@code b}, decimal, {@code ;}</td>
   *       <td>{@code 42} → {@code i42;}, {@code 42L} → {@code l42;}</td></tr>
   *   <tr><td>{@code Double}, {@code Float}</td><td>{@code d}, {@code f}, the hex bits, {@code
   *       ;}</td><td>{@code 1.5} → {@code d3ff8000000000000;}</td></tr>
   *   <tr><td>{@code BigInteger}, {@code BigDecimal}</td><td>{@code I}, {@code D}, {@code
   *       toString()}, {@code ;}</td><td>{@code 1.50} → {@code D1.50;}</td></tr>
   *   <tr><td>{@code Boolean}, {@code Character}, {@code null}</td><td>{@code T}/{@code F},
   *       {@code c} and the character, {@code n}</td><td></td></tr>
   *   <tr><td>{@code UUID}</td><td>{@code u} and the 36 characters</td><td></td></tr>
   *   <tr><td>enum constant</td><td>{@code e}, the class name and the constant name as
   *       strings</td><td>{@code es19:java.time.DayOfWeeks6:MONDAY}</td></tr>
   *   <tr><td>{@code SimpleKey} (several parameters)</td><td>{@code K} count {@code (} elements
   *       {@code )}</td><td>{@code ("a", 1)} → {@code K2(s1:ai1;)}</td></tr>
   *   <tr><td>arrays, {@code List}s</td><td>{@code a} / {@code p}+element tag / {@code L},
   *       count, elements</td><td></td></tr>
   *   <tr><td>{@code Set}s, {@code Map}s, {@code Optional}</td><td>{@code S}, {@code M}: the
   *       encoded elements (entries) sorted, so equal sets (maps) encode alike; {@code O}</td>
   *       <td></td></tr>
   *   <tr><td>records</td><td>{@code r}, the class name, the encoded components</td>
   *       <td></td></tr>
   *   <tr><td>{@code java.time} values, {@code java.util.Date}</td><td>{@code t}, the class
   *       name, the ISO text; {@code w}, the class name, the epoch milliseconds</td>
   *       <td></td></tr>
   *   <tr><td>other {@code Serializable} objects</td><td>{@code j}, the class name, the SHA-256
   *       of their Java serialization</td><td></td></tr>
   * </table>
   *
   * <p>Other objects are rejected with an {@link IllegalArgumentException} naming their type:
   * their {@code toString()} is not a safe key (two different objects can print alike, and
   * {@code Object.toString()} differs in every JVM). Make such a key a record, give the
   * annotation a {@code key} expression ({@code key = "#order.id"}), or supply your own encoder.
   * Records compare their components; a record that overrides {@code equals} to ignore some must
   * not be used as a key with this encoder.
   *
   * <p>It {@link #decode decodes} keys of the scalar types: {@code String}, {@code Long}, {@code
   * Integer}, {@code Short}, {@code Byte}, {@code BigInteger}, {@code BigDecimal}, {@code UUID},
   * {@code Boolean}, {@code Character} and enums.
   *
   * @return the shared, stateless default encoder
   */
  static KeyEncoder typeTagged() {
    return TypeTaggedKeyEncoder.INSTANCE;
  }
}
