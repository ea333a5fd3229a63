package io.sustainablecache.spring;

import java.util.Map;
import java.util.Set;

/**
 * Loads the values of several ids of a Spring cache at once: the query behind a cache's coalesced
 * misses ({@link SustainableCacheManager.Builder#bulkLoader}) and behind a multi-key read ({@link
 * SustainableSpringCache#getAll(java.util.Collection, BulkCacheLoader)}). The ids are the keys
 * {@code @Cacheable} methods use (a method's single parameter, or its {@code key} expression),
 * never the cache's encoded string keys.
 *
 * <pre>{@code
 * BulkCacheLoader<Long, Book> books = ids -> repository.findAllById(ids).stream()
 *     .collect(Collectors.toMap(Book::id, book -> book));
 * }</pre>
 *
 * <p>Implementations must be thread-safe: calls may run at once on several threads (callers'
 * threads and the cache's refresh threads).
 *
 * @param <K> the type of the ids
 * @param <V> the type of the values
 */
@FunctionalInterface
public interface BulkCacheLoader<K, V> {

  /**
   * Loads the values of the ids.
   *
   * @param ids the ids to load, never empty, never containing {@code null}; unmodifiable
   * @return the values found, by id; an id left out (or mapped to {@code null}) has no value and
   *     is cached as "no value"; ids that were not asked for are ignored. Never {@code null}
   * @throws Exception if the values cannot be loaded: every caller waiting for one of the ids
   *     gets it (a {@code @Cacheable} method's caller as itself)
   */
  Map<K, ? extends V> loadAll(Set<K> ids) throws Exception;
}
