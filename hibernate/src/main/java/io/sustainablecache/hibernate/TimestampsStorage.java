package io.sustainablecache.hibernate;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.spi.StoreException;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.hibernate.cache.CacheException;
import org.hibernate.cache.spi.support.StorageAccess;
import org.hibernate.engine.spi.SharedSessionContractImplementor;

/**
 * The timestamps region's storage: each table's last update, which Hibernate compares with a
 * cached query result's timestamp. Never near-cached (a near copy could hide an update for up to
 * its bound). A timestamp that is not in the store (evicted, expired, never written) is taken to
 * be now, and written so, if nothing was meanwhile (every timestamp written is later than
 * Hibernate's by the region's {@code max-clock-skew}): results cached before are stale, results
 * cached from now on valid; with the store down, every result is stale. Hibernate's default
 * would take a missing timestamp for "no update", and serve results cached before an update
 * whose timestamp memcached evicted. A timestamp that cannot be written fails the transaction that
 * changes the table ({@link CacheException}: Hibernate writes one in the flush, before the commit,
 * and one after it): other instances could not see the change. Thread-safe.
 */
final class TimestampsStorage implements StorageAccess {

  private final SustainableCache<Object> cache;
  private final LongSupplier now;
  private final long skewMillis;

  /**
   * @param now Hibernate's timestamps (wall-clock milliseconds)
   * @param skewMillis how far apart the hosts' clocks may be: added to every update's timestamp,
   *     so that a result cached by a host whose clock runs ahead, from a read before the update,
   *     does not look newer than the update
   */
  TimestampsStorage(SustainableCache<Object> cache, LongSupplier now, long skewMillis) {
    this.cache = cache;
    this.now = now;
    this.skewMillis = skewMillis;
  }

  private static String storeKey(Object space) {
    StringBuilder key = new StringBuilder("t");
    StoreKeys.escape(String.valueOf(space), key);
    return key.toString();
  }

  @Override
  public Object getFromCache(Object space, SharedSessionContractImplementor session) {
    String key = storeKey(space);
    Optional<Object> found = cache.getIfPresent(key);
    if (found.isPresent()) {
      return found.get();
    }
    Long assumed = now.getAsLong() + skewMillis;
    try {
      return cache.putIfAbsent(key, assumed).orElse(assumed);
    } catch (StoreException e) {
      return Long.MAX_VALUE; // nothing known: no cached result is up to date
    }
  }

  @Override
  public void putIntoCache(Object space, Object timestamp, SharedSessionContractImplementor session) {
    try {
      cache.put(storeKey(space), (Long) timestamp + skewMillis);
    } catch (StoreException e) {
      throw new CacheException("the update timestamp of " + space + " could not be written, so"
          + " other instances could serve query results from before this change", e);
    }
  }

  @Override
  public boolean contains(Object space) {
    return cache.getIfPresent(storeKey(space)).isPresent();
  }

  @Override
  public void evictData() {
    // The timestamps are not emptied: a lost timestamp is read as now anyway.
  }

  @Override
  public void evictData(Object space) {
    // As evictData().
  }

  @Override
  public void release() {
    cache.close();
  }
}
