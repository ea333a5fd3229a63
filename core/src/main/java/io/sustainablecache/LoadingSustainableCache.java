package io.sustainablecache;

import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A {@link SustainableCache} built with a bulk loader ({@link SustainableCacheBuilder#build(
 * BulkLoader)}, {@link SustainableCacheBuilder#buildAsync}): its reads need no loader per call,
 * and concurrent misses of <em>different</em> keys are coalesced into few calls of the bulk loader
 * (one {@code SELECT ... WHERE id IN (...)} instead of one query per id).
 *
 * <p>How misses are coalesced: a miss of an idle cache loads at once (no timer); misses arriving
 * while a call of the loader runs form the next batch, which starts when that call is over, when
 * it holds {@link SustainableCacheBuilder#coalesce(int) maxBatchSize} keys, or after the optional
 * maximum wait. Misses from {@link #get}, {@link #getAsync}, {@link #getAll} and the background
 * refreshes of every thread join the same batches. Every key of a call takes the fleet lease and
 * is fenced as a single key's load is ({@code invalidate} during a call voids that key's load; a
 * read that starts after {@code invalidate} returned never sees the value loaded before). A key
 * the loader leaves out is cached as "no value". Concurrent misses of one key share one load, as
 * always.
 * A call runs on the thread of the miss that starts it (a miss of an idle cache, or the one that
 * fills a batch), whose caller is the loader and waits for it as a plain cache's caller waits for
 * its own loader; a batch that starts later runs on a refresh thread. Every other caller waits at
 * most the load timeout after its miss, sync or async, even if the loader never returns.
 *
 * <p>The methods inherited from {@link SustainableCache} that take a loader use that loader and
 * never join a batch.
 *
 * <p><b>Thread-safety:</b> thread-safe. <b>Nulls:</b> no method accepts or returns {@code null}.
 *
 * <p><b>Implementations:</b> this library's; a test double or a decorator may implement it too,
 * but later releases may add methods to it (with default implementations where they can).
 *
 * @param <V> the value type
 */
public interface LoadingSustainableCache<V> extends SustainableCache<V> {

  /**
   * Returns the cached value for {@code key}, loading it with the cache's bulk loader on a miss,
   * together with other keys missing at the same time.
   *
   * @param key the caller's key, as for {@link SustainableCache#get(String, Loader)}
   * @return the cached or loaded value, never {@code null}
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if {@code key} is {@code null}
   * @throws CacheLoadException if the bulk loader failed (every caller of its batch gets the
   *     failure) or timed out, if the key backs off after a failure, or if there is no value
   * @throws IllegalStateException if called by the bulk loader for a key it is loading
   */
  V get(String key);

  /**
   * Like {@link #get(String)}, but a key without a value is returned as empty.
   *
   * @param key the caller's key
   * @return the value, or empty if there is none
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if {@code key} is {@code null}
   * @throws CacheLoadException if the bulk loader failed or timed out
   */
  Optional<V> find(String key);

  /**
   * Asynchronous {@link #get(String)}: joins the same batches as synchronous misses.
   *
   * @param key the caller's key
   * @return a future of the value, failing as {@link #get(String)} throws (a key without a value
   *     fails it with {@link CacheLoadException})
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if {@code key} is {@code null}
   */
  CompletableFuture<V> getAsync(String key);

  /**
   * Asynchronous {@link #find(String)}.
   *
   * @param key the caller's key
   * @return a future of the value, or of empty if there is none
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if {@code key} is {@code null}
   */
  CompletableFuture<Optional<V>> findAsync(String key);

  /**
   * The values of {@code keys}: one bulk read, and the misses loaded with the bulk loader,
   * coalesced with other misses (a call holds at most {@code maxBatchSize} keys, so a larger set
   * is loaded in several calls).
   *
   * @param keys the caller's keys; duplicates are read once
   * @return the keys with a value, in the order given; keys without one are left out
   * @throws IllegalArgumentException if a key is invalid
   * @throws NullPointerException if {@code keys} or one of them is {@code null}
   * @throws CacheLoadException if a key's load failed or timed out
   */
  Map<String, V> getAll(Collection<String> keys);

  /**
   * Asynchronous {@link #getAll(Collection)}.
   *
   * @param keys the caller's keys
   * @return a future of the keys with a value, in the order given
   * @throws IllegalArgumentException if a key is invalid
   * @throws NullPointerException if {@code keys} or one of them is {@code null}
   */
  CompletableFuture<Map<String, V>> getAllAsync(Collection<String> keys);
}
