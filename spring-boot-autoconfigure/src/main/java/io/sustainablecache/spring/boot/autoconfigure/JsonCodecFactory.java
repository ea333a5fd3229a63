package io.sustainablecache.spring.boot.autoconfigure;

import io.sustainablecache.ValueCodec;

/**
 * Creates the JSON codec of a cache whose values are configured by type ({@code
 * sustainable-cache.caches.<name>.value-type}). The auto-configuration provides one over {@code
 * JacksonCodec.of(type)} (Jackson 3's default mapper, unknown properties rejected, bounded reads)
 * when {@code sustainable-cache-jackson} is on the class path; define your own bean to use your
 * {@code JsonMapper}, e.g. {@code type -> JacksonCodec.of(jsonMapper, type)} (a mapper with
 * polymorphic default typing is refused by {@code JacksonCodec}).
 *
 * <p>Implementations must be thread-safe and return codecs that are.
 */
@FunctionalInterface
public interface JsonCodecFactory {

  /**
   * Creates the codec for a value type.
   *
   * @param type the value type; never {@code null}
   * @return a codec reading and writing that type as JSON
   * @throws IllegalArgumentException if the type cannot be handled
   */
  ValueCodec<?> codecFor(Class<?> type);
}
