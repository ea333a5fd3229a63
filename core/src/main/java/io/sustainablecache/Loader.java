package io.sustainablecache;

/**
 * Computes the value for a key on a miss or a refresh: typically a database query.
 *
 * <p>A loader may be called on the caller's thread (cold misses, and every early refresh under
 * {@link RefreshPolicy#xfetch(double) PER}) or on the cache's refresh executor ({@link
 * RefreshPolicy#sustainable() SUS}), so it must be safe to call from any thread. The time it takes
 * is measured and stored next to the value (the "delta" of XFetch). It must not call the cache
 * for the key it is loading: that fails with {@link IllegalStateException}.
 *
 * @param <V> the value type
 */
@FunctionalInterface
public interface Loader<V> {

  /**
   * Loads the current value for {@code key}.
   *
   * @param key the caller's key, without the cache's namespace; never {@code null}
   * @return the value, or {@code null} if there is none: the absence is cached for {@code
   *     noValueTtl}, {@link SustainableCache#find} returns empty and {@link SustainableCache#get}
   *     throws {@link CacheLoadException}
   * @throws Exception on failure: on a miss the caller receives it wrapped in a {@link
   *     CacheLoadException}; in a background refresh it is logged, counted and the cached value
   *     keeps being served
   */
  V load(String key) throws Exception;
}
