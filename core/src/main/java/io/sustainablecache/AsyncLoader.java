package io.sustainablecache;

import java.util.concurrent.CompletionStage;

/**
 * Computes the value for a key asynchronously, for {@link SustainableCache#getAsync} and {@link
 * SustainableCache#findAsync}.
 *
 * <p>The cache measures the time from the call to the completion of the returned stage and
 * stores it as the entry's load time. The call itself happens on the caller's thread (misses,
 * PER refreshes) or on the refresh executor (SUS), and should return quickly; the stage may
 * complete on any thread. The cache does not write to the store on the thread that completes the
 * stage (an asynchronous driver's event loop, say): writes are handed to the cache's executor.
 *
 * @param <V> the value type
 */
@FunctionalInterface
public interface AsyncLoader<V> {

  /**
   * Starts loading the current value for {@code key}.
   *
   * @param key the caller's key, without the cache's namespace; never {@code null}
   * @return a stage completing with the value, with {@code null} if there is none (cached as
   *     absent), or exceptionally; never {@code null} itself
   * @throws Exception if the load cannot even be started; treated like a failed stage
   */
  CompletionStage<? extends V> load(String key) throws Exception;
}
