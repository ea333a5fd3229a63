package io.sustainablecache.internal;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;

/**
 * The near tier's map: a Caffeine cache bounded by entries or by weight (W-TinyLFU decides what
 * stays). The only class that touches Caffeine, the core's optional dependency: it is loaded only
 * for a cache with a near cache. Maintenance runs on the calling thread (no pool threads).
 * Thread-safe.
 */
final class CaffeineEntries<E> implements NearTier.EntryMap<E> {

  private final Cache<String, E> cache;

  private CaffeineEntries(Cache<String, E> cache) {
    this.cache = cache;
  }

  /**
   * A map of at most {@code maximum} entries, or, with a {@code weigher}, of entries whose
   * weights add up to at most {@code maximum}; {@code evicted} runs for each eviction.
   */
  static <E> CaffeineEntries<E> bounded(long maximum, ToIntFunction<E> weigher,
      Runnable evicted) {
    Caffeine<Object, Object> builder = Caffeine.newBuilder().executor(Runnable::run);
    if (weigher == null) {
      builder.maximumSize(maximum);
    } else {
      builder.maximumWeight(maximum).weigher((String key, E entry) -> weigher.applyAsInt(entry));
    }
    return new CaffeineEntries<>(builder
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
  public void removeIf(Predicate<E> filter) {
    cache.asMap().values().removeIf(filter);
  }

  @Override
  public void clear() {
    cache.invalidateAll();
  }
}
