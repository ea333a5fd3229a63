package io.sustainablecache.hibernate;

import org.hibernate.cache.spi.access.AccessType;
import org.hibernate.cache.spi.access.NaturalIdDataAccess;
import org.hibernate.cache.spi.access.SoftLock;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.persister.entity.EntityPersister;

/**
 * An entity's natural-id resolutions (natural id to id) in its region (see {@link DataAccess} for
 * each call). When a mutable natural id changes, Hibernate locks and removes the old key and
 * locks the new one in the flush, then unlocks the old one and calls {@code afterUpdate} (or
 * {@code unlockItem}) for the new one after the transaction. Thread-safe.
 */
final class NaturalIdAccess extends DataAccess implements NaturalIdDataAccess {

  private final String entityName;

  NaturalIdAccess(DomainRegion region, AccessType accessType, String entityName) {
    super(region, accessType);
    this.entityName = entityName;
  }

  @Override
  Object toStored(Object value) {
    return new NaturalIdValue(entityName, value);
  }

  @Override
  Object fromStored(Object stored) {
    return ((NaturalIdValue) stored).id();
  }

  @Override
  public Object generateCacheKey(Object naturalIdValues, EntityPersister persister,
      SharedSessionContractImplementor session) {
    return StoreKeys.naturalId(naturalIdValues, persister, session.getTenantIdentifier());
  }

  @Override
  public Object getNaturalIdValues(Object cacheKey) {
    return ((CacheKey) cacheKey).id();
  }

  @Override
  public boolean insert(SharedSessionContractImplementor session, Object key, Object value) {
    return false; // cached after the commit, if at all
  }

  @Override
  public boolean afterInsert(SharedSessionContractImplementor session, Object key, Object value) {
    return cacheAfterInsert(session, key, value);
  }

  @Override
  public boolean update(SharedSessionContractImplementor session, Object key, Object value) {
    return updateInFlush(key);
  }

  @Override
  public boolean afterUpdate(SharedSessionContractImplementor session, Object key, Object value,
      SoftLock lock) {
    return cacheAfterUpdate(key, value, lock);
  }
}
