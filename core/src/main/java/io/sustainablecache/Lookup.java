package io.sustainablecache;

import static java.util.Objects.requireNonNull;

/**
 * What a peek at a key found ({@link SustainableCache#lookup}): a {@linkplain Hit value},
 * the key {@linkplain NoValue cached as having no value}, or {@linkplain NotCached nothing
 * cached}. Exactly one of the three; test which with {@code instanceof} (or, on Java 21, a
 * {@code switch} over the sealed type):
 *
 * <pre>{@code
 * Lookup<User> found = users.lookup("42");
 * if (found instanceof Lookup.Hit<User> hit) {
 *   render(hit.value());
 * } else if (found instanceof Lookup.NoValue) {
 *   renderNotFound();      // a load found no user 42, and the cache remembers it
 * } else {
 *   renderFromDatabase();  // nothing cached (or the store could not be read)
 * }
 * }</pre>
 *
 * <p><b>Thread-safety:</b> every implementation is an immutable record, safe to share between
 * threads. <b>Nulls:</b> a {@link Hit} never holds {@code null}; "no value" is {@link
 * NoValue}. <b>Equality:</b> by content, as records compare: two hits are equal if their
 * values are; all {@code NoValue} are equal, and so are all {@code NotCached}.
 *
 * @param <V> the value type
 */
public sealed interface Lookup<V> permits Lookup.Hit, Lookup.NoValue, Lookup.NotCached {

  /**
   * The key holds a value.
   *
   * @param value the cached value; never {@code null}
   * @param <V> the value type
   */
  record Hit<V>(V value) implements Lookup<V> {

    /**
     * Creates a hit.
     *
     * @param value the cached value
     * @throws NullPointerException if {@code value} is {@code null}
     */
    public Hit {
      requireNonNull(value, "value");
    }
  }

  /**
   * The key is cached as having no value: a load returned {@code null} (a bulk load left the key
   * out) or {@link SustainableCache#putNoValue} was called, less than {@link
   * SustainableCacheBuilder#noValueTtl noValueTtl} ago. {@link SustainableCache#get} would fail
   * for it without calling its loader; {@link SustainableCache#find} would answer empty.
   *
   * @param <V> the value type
   */
  record NoValue<V>() implements Lookup<V> {
  }

  /**
   * Nothing usable is cached for the key: no item, a tombstone, an entry expired beyond what the
   * refresh policy serves, an unreadable entry, a fenced key, or a store that could not be read.
   * A read with a loader would load it.
   *
   * @param <V> the value type
   */
  record NotCached<V>() implements Lookup<V> {
  }
}
