package io.sustainablecache;

import io.sustainablecache.spi.CacheStore;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A demand-fill cache over a shared memcached or ARCUS store that refreshes hot entries before
 * they expire, so that callers never wait for a reload after warm-up and the database sees about
 * one load per key per TTL period instead of a stampede.
 *
 * <p>Each value is stored in an envelope with the time it was loaded, its logical expiry and the
 * measured load time. On every read the {@link RefreshPolicy} decides whether to refresh early;
 * the default {@linkplain RefreshPolicy#sustainable() sustainable policy} does so in the
 * background with per-key deduplication. The item's physical expiry on the server is longer than
 * its logical TTL by a grace period, so the server's one-second expiry tick never removes an item
 * before the cache has had the chance to refresh it.
 *
 * <pre>{@code
 * SustainableCache<String> cache = SustainableCache.builder(ArcusStore.of(arcusClient))
 *     .namespace("user")
 *     .ttl(Duration.ofSeconds(30))
 *     .codec(ValueCodec.utf8())
 *     .build();
 * String name = cache.get("42", key -> userRepository.findName(key));
 * }</pre>
 *
 * <p><b>Thread-safety:</b> implementations are thread-safe. <b>Nulls:</b> no method accepts or
 * returns {@code null}. <b>Keys</b> are the caller's keys; the cache prefixes them with its
 * namespace and rejects keys the store cannot hold (see {@link #get}).
 *
 * @param <V> the value type
 */
public interface SustainableCache<V> extends AutoCloseable {

  /**
   * Starts building a cache over a store. Values are byte arrays until {@link
   * SustainableCacheBuilder#codec} chooses another type.
   *
   * @param store the store adapter, e.g. {@code ArcusStore.of(client)}; the cache does not own or
   *     close it
   * @return a new builder
   * @throws NullPointerException if {@code store} is {@code null}
   */
  static SustainableCacheBuilder<byte[]> builder(CacheStore store) {
    return new SustainableCacheBuilder<>(store);
  }

  /**
   * Returns the cached value for {@code key}, loading it on a miss.
   *
   * <ul>
   *   <li><b>Hit:</b> the cached value is returned; the refresh policy may schedule an early
   *       refresh (SUS, in the background) or recompute on this thread (PER).</li>
   *   <li><b>Miss</b> (absent, not a valid envelope, or expired under a policy that does not
   *       serve stale values): {@code loader} is called on this thread, the result is stored and
   *       returned. Concurrent misses of one key in this JVM share one loader call.</li>
   *   <li><b>Store failure</b> (server down, timeout): treated as a miss; the caller still gets
   *       the loaded value and the error is counted, never thrown.</li>
   * </ul>
   *
   * @param key the caller's key: non-empty, printable ASCII without spaces, short enough for the
   *     store once namespaced
   * @param loader computes the value on a miss or refresh; must not return {@code null}
   * @return the cached or loaded value, never {@code null}
   * @throws IllegalArgumentException if the key is empty, too long or has characters memcached
   *     cannot hold
   * @throws NullPointerException if an argument is {@code null}
   * @throws CacheLoadException if the value had to be loaded and the loader failed
   */
  V get(String key, Loader<? extends V> loader);

  /**
   * The asynchronous form of {@link #get}: the same decisions, with a loader that returns a
   * {@link java.util.concurrent.CompletionStage}. The store is read on the calling thread; on a
   * hit the returned future is already complete. Concurrent misses of one key share one load.
   *
   * @param key the caller's key, as for {@link #get}
   * @param loader starts loading the value on a miss or refresh
   * @return a future completing with the value, or exceptionally with a {@link
   *     CacheLoadException} if the value had to be loaded and the loader failed; cancelling it
   *     does not cancel a load other callers share
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if an argument is {@code null}
   */
  CompletableFuture<V> getAsync(String key, AsyncLoader<? extends V> loader);

  /**
   * Returns the cached value without loading or refreshing: the value if the item is present,
   * a valid envelope, and not logically expired (or expired within the grace period, under a
   * policy that serves stale values). Store failures are counted and read as empty.
   *
   * @param key the caller's key, as for {@link #get}
   * @return the value, or empty
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if {@code key} is {@code null}
   */
  Optional<V> getIfPresent(String key);

  /**
   * Stores a value unconditionally, as if it had just been loaded (its load time is recorded as
   * zero). Any refresh or load in flight for the key will not overwrite it.
   *
   * @param key the caller's key, as for {@link #get}
   * @param value the value; never {@code null}
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if an argument is {@code null}
   * @throws io.sustainablecache.spi.StoreException if the store failed; the value may not be
   *     stored
   */
  void put(String key, V value);

  /**
   * Removes the cached value, typically after the source data changed. A refresh or a cold-miss
   * load of this JVM that is in flight will not write its (possibly outdated) result back.
   *
   * @param key the caller's key, as for {@link #get}
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if {@code key} is {@code null}
   * @throws io.sustainablecache.spi.StoreException if the store failed: the item may still be
   *     there, so the caller must retry or otherwise handle it
   */
  void invalidate(String key);

  /**
   * A snapshot of the counters.
   *
   * @return an immutable snapshot, never {@code null}
   */
  CacheStats stats();

  /**
   * Stops scheduling background refreshes and shuts down the refresh executor if the cache owns
   * it, waiting a bounded time for running refreshes. Reads, writes and invalidations keep
   * working afterwards, without background refreshes. Idempotent. The store is not closed.
   */
  @Override
  void close();
}
