package io.sustainablecache.hibernate;

import java.io.Serializable;
import org.hibernate.cache.spi.access.AccessType;
import org.hibernate.cache.spi.access.CollectionDataAccess;
import org.hibernate.cache.spi.entry.CollectionCacheEntry;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.persister.collection.CollectionPersister;

/**
 * A collection role's access to its region (see {@link DataAccess} for each call). Hibernate's
 * order for a change of the collection: {@code lockItem} before the statements, {@code remove}
 * in them, {@code unlockItem} after the transaction: READ_WRITE fences the collection's key for
 * the transaction and leaves a tombstone; the next load caches the committed elements.
 * Thread-safe.
 */
final class CollectionAccess extends DataAccess implements CollectionDataAccess {

  private final String role;

  CollectionAccess(DomainRegion region, AccessType accessType, String role) {
    super(region, accessType);
    this.role = role;
  }

  @Override
  Object toStored(Object value) {
    if (!(value instanceof CollectionCacheEntry entry)) {
      throw new IllegalArgumentException("not a collection entry: " + (value == null ? "null"
          : value.getClass().getName()) + " (structured entries are not supported)");
    }
    Serializable[] state = entry.getState();
    return new CollectionValue(role, state);
  }

  @Override
  Object fromStored(Object stored) {
    return ((CollectionValue) stored).toEntry();
  }

  @Override
  public Object generateCacheKey(Object id, CollectionPersister persister,
      SessionFactoryImplementor factory, String tenantIdentifier) {
    return StoreKeys.collection(id, persister, factory, tenantIdentifier);
  }

  @Override
  public Object getCacheKeyId(Object cacheKey) {
    return ((CacheKey) cacheKey).id();
  }
}
