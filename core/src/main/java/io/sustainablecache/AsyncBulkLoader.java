package io.sustainablecache;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * Loads the values of several keys asynchronously, for {@link SustainableCache#getAllAsync}.
 * The same rules as {@link BulkLoader} apply to the map the stage completes with.
 *
 * @param <V> the value type
 */
@FunctionalInterface
public interface AsyncBulkLoader<V> {

  /**
   * Starts loading the current values of {@code keys}.
   *
   * @param keys the caller's keys to load, without the namespace; never empty, not modifiable
   * @return a stage completing with a map from key to value (keys left out have no value), or
   *     exceptionally; never {@code null} itself
   * @throws Exception if the load cannot even be started; treated like a failed stage
   */
  CompletionStage<? extends Map<String, ? extends V>> loadAll(Set<String> keys) throws Exception;
}
