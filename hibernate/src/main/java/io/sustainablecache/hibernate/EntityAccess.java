package io.sustainablecache.hibernate;

import org.hibernate.cache.spi.access.AccessType;
import org.hibernate.cache.spi.access.EntityDataAccess;
import org.hibernate.cache.spi.access.SoftLock;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.persister.entity.EntityPersister;

/**
 * An entity's access to its region (see {@link DataAccess} for each call). Hibernate's order:
 * an update is {@code lockItem}, {@code update} in the flush, then {@code afterUpdate} (committed)
 * or {@code unlockItem}; a delete {@code lockItem}, {@code remove}, then {@code unlockItem}; an
 * insert {@code insert}, then {@code afterInsert} (committed). Thread-safe.
 */
final class EntityAccess extends DataAccess implements EntityDataAccess {

  EntityAccess(DomainRegion region, AccessType accessType) {
    super(region, accessType);
  }

  @Override
  Object toStored(Object value) {
    return value; // Hibernate's StandardCacheEntryImpl, encoded as it is
  }

  @Override
  Object fromStored(Object stored) {
    return stored;
  }

  @Override
  public Object generateCacheKey(Object id, EntityPersister persister,
      SessionFactoryImplementor factory, String tenantIdentifier) {
    return StoreKeys.entity(id, persister, factory, tenantIdentifier);
  }

  @Override
  public Object getCacheKeyId(Object cacheKey) {
    return ((CacheKey) cacheKey).id();
  }

  @Override
  public boolean insert(SharedSessionContractImplementor session, Object key, Object value,
      Object version) {
    return false; // cached after the commit, if at all
  }

  @Override
  public boolean afterInsert(SharedSessionContractImplementor session, Object key, Object value,
      Object version) {
    return cacheAfterInsert(session, key, value);
  }

  @Override
  public boolean update(SharedSessionContractImplementor session, Object key, Object value,
      Object currentVersion, Object previousVersion) {
    return updateInFlush(key);
  }

  @Override
  public boolean afterUpdate(SharedSessionContractImplementor session, Object key, Object value,
      Object currentVersion, Object previousVersion, SoftLock lock) {
    return cacheAfterUpdate(key, value, lock);
  }
}
