package io.sustainablecache.hibernate;

import java.util.List;
import org.hibernate.boot.registry.selector.SimpleStrategyRegistrationImpl;
import org.hibernate.boot.registry.selector.StrategyRegistration;
import org.hibernate.boot.registry.selector.StrategyRegistrationProvider;
import org.hibernate.cache.spi.RegionFactory;

/**
 * Registers {@link SustainableCacheRegionFactory} with Hibernate under its short name, {@value
 * SustainableCacheRegionFactory#SHORT_NAME}, found through {@link java.util.ServiceLoader}.
 * Stateless; not for application code.
 */
public final class SustainableCacheStrategies implements StrategyRegistrationProvider {

  /** Created by Hibernate's service loading. */
  public SustainableCacheStrategies() {}

  @Override
  public Iterable<StrategyRegistration<?>> getStrategyRegistrations() {
    return List.of(new SimpleStrategyRegistrationImpl<>(RegionFactory.class,
        SustainableCacheRegionFactory.class, SustainableCacheRegionFactory.SHORT_NAME,
        SustainableCacheRegionFactory.class.getName()));
  }
}
