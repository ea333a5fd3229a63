package io.sustainablecache;

import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** Placeholder while the v2 core is written; every operation is unsupported. */
final class DefaultSustainableCache<V> implements SustainableCache<V> {

  private final CacheConfig<V> config;

  DefaultSustainableCache(CacheConfig<V> config) {
    this.config = config;
  }

  private static UnsupportedOperationException todo() {
    return new UnsupportedOperationException("v2 core in progress");
  }

  @Override
  public V get(String key, Loader<? extends V> loader) {
    throw todo();
  }

  @Override
  public Optional<V> find(String key, Loader<? extends V> loader) {
    throw todo();
  }

  @Override
  public CompletableFuture<V> getAsync(String key, AsyncLoader<? extends V> loader) {
    throw todo();
  }

  @Override
  public CompletableFuture<Optional<V>> findAsync(String key, AsyncLoader<? extends V> loader) {
    throw todo();
  }

  @Override
  public Map<String, V> getAll(Collection<String> keys, BulkLoader<? extends V> loader) {
    throw todo();
  }

  @Override
  public CompletableFuture<Map<String, V>> getAllAsync(Collection<String> keys,
      AsyncBulkLoader<? extends V> loader) {
    throw todo();
  }

  @Override
  public Optional<V> getIfPresent(String key) {
    throw todo();
  }

  @Override
  public void put(String key, V value) {
    throw todo();
  }

  @Override
  public Optional<V> putIfAbsent(String key, V value) {
    throw todo();
  }

  @Override
  public void invalidate(String key) {
    throw todo();
  }

  @Override
  public void invalidateAll() {
    throw todo();
  }

  @Override
  public CacheStats stats() {
    return CacheStats.empty();
  }

  @Override
  public void close() {}

  @Override
  public String toString() {
    return "SustainableCache{" + config + "}";
  }
}
