package io.sustainablecache.hibernate;

import io.sustainablecache.ReadStart;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.WriteFence;
import io.sustainablecache.spi.StoreException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.hibernate.cache.CacheException;
import org.hibernate.cache.spi.DomainDataRegion;
import org.hibernate.cache.spi.access.AccessType;
import org.hibernate.cache.spi.access.CachedDomainDataAccess;
import org.hibernate.cache.spi.access.SoftLock;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.engine.spi.TransactionCompletionCallbacks.AfterCompletionCallback;
import org.hibernate.engine.spi.TransactionCompletionCallbacks.BeforeCompletionCallback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The access to a region for one access type, what entities, collections and natural ids share.
 * Hibernate's calls, per access type:
 *
 * <table>
 *   <caption>Hibernate's calls and what they do</caption>
 *   <tr><th>call</th><th>READ_ONLY</th><th>NONSTRICT_READ_WRITE</th><th>READ_WRITE</th></tr>
 *   <tr><td>get</td><td colspan="3">{@link SustainableCache#getIfPresent}: a value (under
 *       another transaction's fence until its commit, and for at most 100 ms of its commit
 *       step, the value the fence replaced), or a miss (nothing, a tombstone, a fence past
 *       that, a corrupt entry, a store failure); a
 *       key the session's own transaction fenced is a miss, so the session reads its own change
 *       from the database</td></tr>
 *   <tr><td>putFromLoad, afterInsert</td><td colspan="3">{@link SustainableCache#putLoaded}
 *       with the session's transaction start (NONSTRICT: not after an insert)</td></tr>
 *   <tr><td>lockItem</td><td>nothing</td><td>nothing</td><td>{@link SustainableCache#fence}:
 *       a fence on the store, held by the returned lock; {@link WriteFence#beforeCommit} right
 *       before the transaction commits (a failure there fails the commit)</td></tr>
 *   <tr><td>update</td><td>refused</td><td>invalidate</td><td>nothing (the fence stands)</td></tr>
 *   <tr><td>afterUpdate (committed)</td><td>refused</td><td>invalidate</td><td>{@link
 *       WriteFence#committed(Object)}</td></tr>
 *   <tr><td>remove</td><td>invalidate</td><td>invalidate</td><td>nothing (the fence stands)</td></tr>
 *   <tr><td>unlockItem (a delete, a rollback, a collection change)</td><td>invalidate</td>
 *       <td>invalidate</td><td>{@link WriteFence#committed()}: a tombstone</td></tr>
 * </table>
 *
 * During a {@link Prefetch} of the region for the session ({@link SustainableHibernate}), {@code
 * get} answers the keys it peeked from it, and {@code putFromLoad} issues its write through it,
 * not awaited. Reads never throw store failures (they are misses); puts never do (not cached). A fence that
 * cannot be placed fails the transaction ({@link CacheException}); an invalidation that fails is
 * logged and counted by the cache. Values are converted to what the region's codec stores by
 * {@link #toStored} and back by {@link #fromStored}. Thread-safe.
 */
abstract class DataAccess implements CachedDomainDataAccess {

  private static final Logger LOG = LoggerFactory.getLogger(DataAccess.class);
  /** The reasons values were not cached, so each is logged once. */
  private static final Set<String> REPORTED = ConcurrentHashMap.newKeySet();

  private final DomainRegion region;
  private final AccessType accessType;
  private final SustainableCache<Object> cache;
  /**
   * The keys of this region that each session's open transaction fenced: until its commit the
   * cache answers them with the values the fences replaced, and the session reads its own
   * changes from the database. Empty but for sessions inside READ_WRITE changes.
   */
  private final Map<SharedSessionContractImplementor, Set<String>> fencedBy =
      new ConcurrentHashMap<>();

  DataAccess(DomainRegion region, AccessType accessType) {
    if (accessType == AccessType.TRANSACTIONAL) {
      throw new CacheException("region " + region.getName() + ": sustainable-cache does not"
          + " support the TRANSACTIONAL access type (memcached has no transactions); use"
          + " READ_WRITE, whose soft locks are write fences on the store");
    }
    this.region = region;
    this.accessType = accessType;
    this.cache = region.cache();
  }

  /** The lock of a READ_WRITE change: the fence its transaction holds. */
  record FenceLock(WriteFence<Object> fence) implements SoftLock {}

  /** Hibernate's value as the region's codec stores it. */
  abstract Object toStored(Object value);

  /** A stored value as Hibernate takes it. */
  abstract Object fromStored(Object stored);

  @Override
  public DomainDataRegion getRegion() {
    return region;
  }

  @Override
  public AccessType getAccessType() {
    return accessType;
  }

  @Override
  public Object get(SharedSessionContractImplementor session, Object key) {
    String storeKey = storeKey(key);
    if (!fencedBy.isEmpty() && fencedBy.getOrDefault(session, Set.of()).contains(storeKey)) {
      return null; // this session's change: read from its transaction
    }
    Prefetch prefetch = Prefetch.of(cache, session);
    if (prefetch != null && prefetch.peeked(storeKey)) {
      Object peeked = prefetch.value(storeKey);
      return peeked == null ? null : fromStored(peeked);
    }
    return cache.getIfPresent(storeKey).map(this::fromStored).orElse(null);
  }

  /** The region's cache, for {@link SustainableHibernate#prefetch}. */
  final SustainableCache<Object> cache() {
    return cache;
  }

  @Override
  public boolean putFromLoad(SharedSessionContractImplementor session, Object key, Object value,
      Object version) {
    return putFromLoad(session, key, value);
  }

  @Override
  public boolean putFromLoad(SharedSessionContractImplementor session, Object key, Object value,
      Object version, boolean minimalPutOverride) {
    return putFromLoad(session, key, value);
  }

  /**
   * A value loaded in the session: during a {@link Prefetch} of this region and session, its
   * write is issued and not awaited (the prefetch waits for it, and counts it in the statistics
   * if it stored, so {@code false} here), otherwise cached as {@link #putLoaded} does.
   */
  private boolean putFromLoad(SharedSessionContractImplementor session, Object key,
      Object value) {
    Prefetch prefetch = Prefetch.of(cache, session);
    if (prefetch == null) {
      return putLoaded(session, key, value);
    }
    try {
      prefetch.putLoaded(storeKey(key), toStored(value), readStart(session));
    } catch (IllegalArgumentException e) {
      notCacheable(e);
    }
    return false;
  }

  /** Caches a value read in the session's transaction; store failures are not cached, not thrown. */
  final boolean putLoaded(SharedSessionContractImplementor session, Object key, Object value) {
    try {
      return cache.putLoaded(storeKey(key), toStored(value), readStart(session));
    } catch (StoreException e) {
      return false; // counted and logged by the cache
    } catch (IllegalArgumentException e) {
      notCacheable(e);
      return false;
    }
  }

  /** When the session's reads began, as {@code putLoaded} takes it. */
  private static ReadStart readStart(SharedSessionContractImplementor session) {
    return SessionReadStart.of(session);
  }

  private static void notCacheable(IllegalArgumentException e) {
    if (REPORTED.add(e.getMessage())) {
      LOG.warn("a cache entry was not cached: {} (logged once per reason)", e.getMessage());
    }
  }

  @Override
  public SoftLock lockItem(SharedSessionContractImplementor session, Object key, Object version) {
    if (accessType != AccessType.READ_WRITE) {
      return null;
    }
    String storeKey = storeKey(key);
    WriteFence<Object> fence;
    try {
      fence = cache.fence(storeKey);
    } catch (StoreException e) {
      throw new CacheException("the write fence of " + key + " could not be placed, so the"
          + " change would not be protected from stale cache entries; the transaction should"
          + " not change the row", e);
    }
    Set<String> fenced = fencedBy.get(session);
    if (fenced == null) { // the session's first change of this region in this transaction
      fenced = ConcurrentHashMap.newKeySet();
      fencedBy.put(session, fenced);
      session.getTransactionCompletionCallbacks().registerCallback(
          (AfterCompletionCallback) (success, s) -> fencedBy.remove(session));
    }
    fenced.add(storeKey);
    session.getTransactionCompletionCallbacks().registerCallback(
        (BeforeCompletionCallback) s -> fence.beforeCommit());
    return new FenceLock(fence);
  }

  @Override
  public void unlockItem(SharedSessionContractImplementor session, Object key, SoftLock lock) {
    if (lock instanceof FenceLock held) {
      held.fence().committed(); // a tombstone: a delete, a rollback, or a change not cached
    } else {
      invalidate(key);
    }
  }

  /** After an insert committed: READ_ONLY and READ_WRITE cache the state, NONSTRICT does not. */
  final boolean cacheAfterInsert(SharedSessionContractImplementor session, Object key,
      Object value) {
    return accessType != AccessType.NONSTRICT_READ_WRITE && putLoaded(session, key, value);
  }

  /** An update in the flush: refused READ_ONLY, invalidated NONSTRICT, fenced READ_WRITE. */
  final boolean updateInFlush(Object key) {
    switch (accessType) {
      case READ_ONLY -> throw new UnsupportedOperationException(
          "Can't update an entry cached READ_ONLY: " + key);
      case NONSTRICT_READ_WRITE -> invalidate(key);
      default -> { } // READ_WRITE: the fence stands until afterUpdate or unlockItem
    }
    return false;
  }

  /** After an update committed: the committed state replaces READ_WRITE's fence. */
  final boolean cacheAfterUpdate(Object key, Object value, SoftLock lock) {
    if (accessType == AccessType.READ_ONLY) {
      throw new UnsupportedOperationException("Can't update an entry cached READ_ONLY: " + key);
    }
    if (!(lock instanceof FenceLock held)) {
      invalidate(key);
      return false;
    }
    try {
      held.fence().committed(toStored(value));
      return true;
    } catch (IllegalArgumentException e) { // not encodable, or too large: not cached
      notCacheable(e);
      try {
        held.fence().committed();
      } catch (IllegalStateException completedAlready) {
        // committed(value) replaced the fence with a tombstone before it failed
      }
      return false;
    }
  }

  @Override
  public void remove(SharedSessionContractImplementor session, Object key) {
    if (accessType != AccessType.READ_WRITE) {
      invalidate(key);
    } // READ_WRITE: Hibernate calls remove between lockItem and unlockItem; the fence stands
  }

  @Override
  public void removeAll(SharedSessionContractImplementor session) {
    evictAll();
  }

  @Override
  public boolean contains(Object key) {
    return cache.getIfPresent(storeKey(key)).isPresent();
  }

  @Override
  public SoftLock lockRegion() {
    return null;
  }

  @Override
  public void unlockRegion(SoftLock lock) {
    evictAll();
  }

  @Override
  public void evict(Object key) {
    try {
      cache.invalidate(storeKey(key));
    } catch (StoreException e) {
      throw new CacheException("evicting " + key + " failed", e);
    }
  }

  @Override
  public void evictAll() {
    try {
      cache.invalidateAll();
    } catch (UnsupportedOperationException e) {
      throw new CacheException("region " + region.getName() + " cannot be emptied on this store:"
          + " plain memcached has no prefix flush, and the region has no generation"
          + " (invalidate-all-bound=0 in its settings, or a store without counters); leave"
          + " invalidate-all-bound at its default (or give it a near cache,"
          + " near-cache=<size>:<bound>), which empties a region on any store, or use ARCUS",
          e);
    } catch (StoreException e) {
      throw new CacheException("emptying region " + region.getName() + " failed", e);
    }
  }

  /** Invalidates a key after a change; a store failure is counted and logged, not thrown. */
  private void invalidate(Object key) {
    try {
      cache.invalidate(storeKey(key));
    } catch (StoreException e) {
      LOG.warn("invalidating {} in region {} failed; the old entry may be served until it"
          + " expires", key, region.getName(), e);
    }
  }

  static String storeKey(Object key) {
    return ((CacheKey) key).storeKey();
  }
}
