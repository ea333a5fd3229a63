/**
 * JSON values for sustainable-cache through Jackson 3: {@link
 * io.sustainablecache.jackson.JacksonCodec}, a {@link io.sustainablecache.ValueCodec} that writes
 * values as UTF-8 JSON and reads back only what it can read safely.
 *
 * <p>Built against Jackson 3.1 ({@code tools.jackson.core:jackson-databind}, packages {@code
 * tools.jackson.*}): the Jackson line that Spring Boot 4.1, the newest Spring Boot release line,
 * manages by default. Jackson 2 ({@code com.fasterxml.jackson.databind}) is not supported; the
 * two lines live in different packages and can sit side by side on a class path, so an
 * application still on Jackson 2 can use this module next to it, with a Jackson 3 mapper of its
 * own.
 *
 * <p>Everything here is thread-safe and immutable once built. Bytes under a cache key may have
 * been written by anyone who can reach the cache server, so the codec reads them as untrusted
 * input: no polymorphic default typing, bounded nesting, string, number, name and document
 * sizes, no trailing content, no {@code null} values. See {@link
 * io.sustainablecache.jackson.JacksonCodec} for the details.
 */
package io.sustainablecache.jackson;
