package io.sustainablecache.internal;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.AsyncBulkLoader;
import io.sustainablecache.LoadingSustainableCache;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * The {@link LoadingSustainableCache} implementation: the cache, its bulk loader the {@link Batch}
 * of every read it makes without a per-call loader ({@link LoadPipeline#loading}), whose flights
 * the {@link LoadPipeline} offers to the cache's {@link Coalescer}. The read paths are the cache's
 * own: a hit takes the same steps and allocates no more. Made by {@link Engine#loadingCache}.
 */
final class DefaultLoadingSustainableCache<V> extends DefaultSustainableCache<V>
    implements LoadingSustainableCache<V> {

  private final Batch<V> loader;

  /**
   * @param config the cache's configuration
   * @param bulk the bulk loader every read of this cache loads with
   */
  DefaultLoadingSustainableCache(CacheConfig<V> config, AsyncBulkLoader<? extends V> bulk) {
    super(config);
    this.loader = pipeline().loading(bulk);
  }

  @Override
  public V get(String key) {
    return valueOrThrow(reads().read(requireNonNull(key, "key"), loader, Function.identity()));
  }

  @Override
  public Optional<V> find(String key) {
    return optional(reads().read(requireNonNull(key, "key"), loader, Function.identity()));
  }

  @Override
  public CompletableFuture<V> getAsync(String key) {
    return reads().readAsync(requireNonNull(key, "key"), loader, Function.identity())
        .thenApply(this::valueOrThrow);
  }

  @Override
  public CompletableFuture<Optional<V>> findAsync(String key) {
    return reads().readAsync(requireNonNull(key, "key"), loader, Function.identity())
        .thenApply(this::optional);
  }

  @Override
  public Map<String, V> getAll(Collection<String> keys) {
    return bulk().getAll(requireNonNull(keys, "keys"), loader);
  }

  @Override
  public CompletableFuture<Map<String, V>> getAllAsync(Collection<String> keys) {
    return bulk().getAllAsync(requireNonNull(keys, "keys"), loader);
  }

}
