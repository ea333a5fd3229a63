package io.sustainablecache.hibernate;

import io.sustainablecache.SustainableCache;
import org.hibernate.cache.cfg.spi.CollectionDataCachingConfig;
import org.hibernate.cache.cfg.spi.DomainDataRegionBuildingContext;
import org.hibernate.cache.cfg.spi.DomainDataRegionConfig;
import org.hibernate.cache.cfg.spi.EntityDataCachingConfig;
import org.hibernate.cache.cfg.spi.NaturalIdDataCachingConfig;
import org.hibernate.cache.internal.DefaultCacheKeysFactory;
import org.hibernate.cache.spi.RegionFactory;
import org.hibernate.cache.spi.access.CollectionDataAccess;
import org.hibernate.cache.spi.access.EntityDataAccess;
import org.hibernate.cache.spi.access.NaturalIdDataAccess;
import org.hibernate.cache.spi.support.AbstractDomainDataRegion;

/**
 * A region of entities, collections or natural ids over one {@link SustainableCache}. Its entries are keyed by {@link
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
    return new EntityAccess(this, config.getAccessType());
  }

  @Override
  protected CollectionDataAccess generateCollectionAccess(CollectionDataCachingConfig config) {
    return new CollectionAccess(this, config.getAccessType(),
        config.getNavigableRole().getFullPath());
  }

  @Override
  protected NaturalIdDataAccess generateNaturalIdAccess(NaturalIdDataCachingConfig config) {
    return new NaturalIdAccess(this, config.getAccessType(),
        config.getNavigableRole().getFullPath());
  }

  @Override
  public void destroy() {
    super.destroy();
    cache.close();
  }
}
