package io.sustainablecache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

/**
 * The near tier's map: a Caffeine cache bounded by entries (W-TinyLFU decides what stays). The
 * only class that touches Caffeine, the core's optional dependency: it is loaded only for a
 * cache with a near cache. Maintenance runs on the calling thread (no pool threads). Thread-safe.
 */
final class CaffeineEntries<E> implements NearTier.EntryMap<E> {

  private final Cache<String, E> cache;

  private CaffeineEntries(Cache<String, E> cache) {
    this.cache = cache;
  }

  /** A map of at most {@code maximumSize} entries; {@code evicted} runs for each eviction. */
  static <E> CaffeineEntries<E> bounded(long maximumSize, Runnable evicted) {
    return new CaffeineEntries<>(Caffeine.newBuilder().maximumSize(maximumSize)
        .executor(Runnable::run)
        .<String, E>evictionListener((key, entry, cause) -> evicted.run()).build());
  }

  @Override
  public E get(String key) {
    return cache.getIfPresent(key);
  }

  @Override
  public void put(String key, E entry) {
    cache.put(key, entry);
  }

  @Override
  public void remove(String key, E entry) {
    cache.asMap().remove(key, entry);
  }

  @Override
  public void remove(String key) {
    cache.invalidate(key);
  }

  @Override
  public void clear() {
    cache.invalidateAll();
  }
}
