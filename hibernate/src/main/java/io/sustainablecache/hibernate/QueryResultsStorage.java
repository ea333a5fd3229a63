package io.sustainablecache.hibernate;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.spi.StoreException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.UncheckedIOException;
import org.hibernate.cache.CacheException;
import org.hibernate.cache.spi.support.StorageAccess;
import org.hibernate.engine.spi.SharedSessionContractImplementor;

/**
 * The query-results region's storage. A query's key is the SHA-256 of Hibernate's {@code QueryKey}
 * (SQL, parameter values, limits, filters) as Java serialization writes it (writing only: nothing
 * is ever deserialized), with the session's tenant. Whether a cached result is still valid is
 * Hibernate's to decide, from the result's timestamp and the timestamps region; so results are
 * written unconditionally, and a failure to write is not thrown. Thread-safe.
 */
final class QueryResultsStorage implements StorageAccess {

  private final SustainableCache<Object> cache;

  QueryResultsStorage(SustainableCache<Object> cache) {
    this.cache = cache;
  }

  private static String storeKey(Object key, SharedSessionContractImplementor session) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(key);
      out.writeObject(session == null ? null : session.getTenantIdentifier());
    } catch (IOException e) {
      throw new UncheckedIOException("a query key could not be written", e);
    }
    return "q" + StoreKeys.sha256(bytes.toString(java.nio.charset.StandardCharsets.ISO_8859_1));
  }

  @Override
  public Object getFromCache(Object key, SharedSessionContractImplementor session) {
    return cache.getIfPresent(storeKey(key, session)).orElse(null);
  }

  @Override
  public void putIntoCache(Object key, Object value, SharedSessionContractImplementor session) {
    try {
      cache.put(storeKey(key, session), value);
    } catch (StoreException | IllegalArgumentException e) {
      // not cached: a store failure (counted by the cache), or a value off the allow-list
    }
  }

  @Override
  public boolean contains(Object key) {
    return cache.getIfPresent(storeKey(key, null)).isPresent();
  }

  @Override
  public void evictData() {
    try {
      cache.invalidateAll();
    } catch (UnsupportedOperationException | StoreException e) {
      throw new CacheException("the query cache cannot be emptied on this store: " + e, e);
    }
  }

  @Override
  public void evictData(Object key) {
    try {
      cache.invalidate(storeKey(key, null));
    } catch (StoreException e) {
      throw new CacheException("evicting a query result failed", e);
    }
  }

  @Override
  public void release() {
    cache.close();
  }
}
