package io.sustainablecache.hibernate;

import io.sustainablecache.SustainableCache;
import org.hibernate.cache.CacheException;
import org.hibernate.cache.cfg.spi.CollectionDataCachingConfig;
import org.hibernate.cache.cfg.spi.DomainDataRegionBuildingContext;
import org.hibernate.cache.cfg.spi.DomainDataRegionConfig;
import org.hibernate.cache.cfg.spi.EntityDataCachingConfig;
import org.hibernate.cache.cfg.spi.NaturalIdDataCachingConfig;
import org.hibernate.cache.internal.DefaultCacheKeysFactory;
import org.hibernate.cache.spi.RegionFactory;
import org.hibernate.cache.spi.access.AccessType;
import org.hibernate.cache.spi.access.CollectionDataAccess;
import org.hibernate.cache.spi.access.EntityDataAccess;
import org.hibernate.cache.spi.access.NaturalIdDataAccess;
import org.hibernate.cache.spi.support.AbstractDomainDataRegion;

/**
 * A region of entities over one {@link SustainableCache}. Its entries are keyed by {@link
 * StoreKeys} (Hibernate's keys factory is not used). Thread-safe.
 */
final class DomainRegion extends AbstractDomainDataRegion {

  private final SustainableCache<Object> cache;

  DomainRegion(DomainDataRegionConfig config, RegionFactory factory,
      DomainDataRegionBuildingContext context, SustainableCache<Object> cache) {
    super(config, factory, DefaultCacheKeysFactory.INSTANCE, context);
    this.cache = cache;
    completeInstantiation(config, context);
  }

  SustainableCache<Object> cache() {
    return cache;
  }

  @Override
  protected EntityDataAccess generateEntityAccess(EntityDataCachingConfig config) {
    if (config.getAccessType() == AccessType.TRANSACTIONAL) {
      throw new CacheException("region " + getName() + ", " + config.getNavigableRole()
          + ": sustainable-cache does not support the TRANSACTIONAL access type (memcached has"
          + " no transactions); use READ_WRITE, whose soft locks are write fences on the store");
    }
    return new EntityAccess(this, config.getAccessType());
  }

  @Override
  protected CollectionDataAccess generateCollectionAccess(CollectionDataCachingConfig config) {
    throw new CacheException("region " + getName() + ": cached collections are not built yet");
  }

  @Override
  protected NaturalIdDataAccess generateNaturalIdAccess(NaturalIdDataCachingConfig config) {
    throw new CacheException("region " + getName() + ": cached natural ids are not built yet");
  }

  @Override
  public void destroy() {
    super.destroy();
    cache.close();
  }
}
