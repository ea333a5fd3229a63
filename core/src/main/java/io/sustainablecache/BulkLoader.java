package io.sustainablecache;

import java.util.Map;
import java.util.Set;

/**
 * Loads the values of several keys at once, for {@link SustainableCache#getAll}: typically one
 * {@code SELECT ... WHERE id IN (...)}.
 *
 * <p>Called on the caller's thread for the keys that missed, and on the refresh executor for keys
 * refreshed together in the background. It must be safe to call from any thread, and must not
 * call the cache for the keys it is loading.
 *
 * @param <V> the value type
 */
@FunctionalInterface
public interface BulkLoader<V> {

  /**
   * Loads the current values of {@code keys}.
   *
   * @param keys the caller's keys to load, without the namespace; never empty, not modifiable
   * @return a map from key to value; a key left out (or mapped to {@code null}) has no value and
   *     is cached as "no value"; keys that were not asked for are ignored; never {@code null}
   * @throws Exception on failure: every caller waiting for one of these keys receives it wrapped
   *     in a {@link CacheLoadException}
   */
  Map<String, ? extends V> loadAll(Set<String> keys) throws Exception;
}
