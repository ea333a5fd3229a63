package io.sustainablecache.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.sustainablecache.CacheObserver;
import io.sustainablecache.hibernate.SustainableCacheRegionFactory;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testing.InMemoryStore;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.cache.autoconfigure.CacheAutoConfiguration;
import org.springframework.boot.hibernate.autoconfigure.HibernatePropertiesCustomizer;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Issue 22: the store bean (and the meter registry, and the cache observer: issue 31 §6) handed
 * to Hibernate's second-level cache provider through {@link HibernatePropertiesCustomizer}s, when
 * the Hibernate module is on the class path.
 */
final class HibernateStoreAutoConfigurationTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(SustainableCacheAutoConfiguration.class,
          CacheAutoConfiguration.class))
      .withPropertyValues("sustainable-cache.settings.ttl=30s");

  @Configuration(proxyBeanMethods = false)
  @EnableCaching
  static class WithStore {
    static final InMemoryStore STORE = InMemoryStore.create();

    @Bean
    CacheStore myStore() {
      return STORE;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class WithMeterRegistry {
    static final MeterRegistry REGISTRY = new SimpleMeterRegistry();

    @Bean
    MeterRegistry meterRegistry() {
      return REGISTRY;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class WithObservationRegistry {
    @Bean
    ObservationRegistry observationRegistry() {
      return ObservationRegistry.create();
    }
  }

  /** The JPA properties after every customizer, as Spring Boot applies them. */
  private static Map<String, Object> customized(ApplicationContext context,
      Map<String, Object> given) {
    Map<String, Object> properties = new HashMap<>(given);
    context.getBeansOfType(HibernatePropertiesCustomizer.class).values()
        .forEach(customizer -> customizer.customize(properties));
    return properties;
  }

  @Test
  void theStoreBean_becomesTheProvidersStore() {
    runner.withUserConfiguration(WithStore.class).run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(customized(context, Map.of()))
          .containsEntry(SustainableCacheRegionFactory.STORE, WithStore.STORE);
    });
  }

  @Test
  void theEntryKeys_becomeTheProvidersEntryKeys_unlessTheJpaPropertiesNameThem() {
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.entry-keys[0]=" + "A".repeat(24),
            "sustainable-cache.entry-keys[1]=" + "B".repeat(24))
        .run(context -> {
          assertThat(customized(context, Map.of())).containsEntry(
              SustainableCacheRegionFactory.ENTRY_KEYS, "A".repeat(24) + "," + "B".repeat(24));
          assertThat(customized(context, Map.of(SustainableCacheRegionFactory.ENTRY_KEYS, "x")))
              .containsEntry(SustainableCacheRegionFactory.ENTRY_KEYS, "x");
        });
    runner.withUserConfiguration(WithStore.class).run(context -> assertThat(
        customized(context, Map.of())).doesNotContainKey(SustainableCacheRegionFactory.ENTRY_KEYS));
  }

  @Test
  void aStoreGivenInTheJpaProperties_isKept() {
    Object mine = "com.example.MyStoreSupplier";
    runner.withUserConfiguration(WithStore.class).run(context -> assertThat(customized(
        context, Map.of(SustainableCacheRegionFactory.STORE, mine)))
        .containsEntry(SustainableCacheRegionFactory.STORE, mine));
  }

  @Test
  void withoutAStoreBean_nothingIsPut() {
    runner.run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(customized(context, Map.of()))
          .doesNotContainKey(SustainableCacheRegionFactory.STORE)
          .doesNotContainKey(SustainableCacheRegionFactory.METER_REGISTRY);
    });
  }

  @Test
  void theMeterRegistry_becomesTheProvidersRegistry_unlessTheJpaPropertiesNameOne() {
    runner.withUserConfiguration(WithStore.class, WithMeterRegistry.class).run(context -> {
      assertThat(customized(context, Map.of()))
          .containsEntry(SustainableCacheRegionFactory.STORE, WithStore.STORE)
          .containsEntry(SustainableCacheRegionFactory.METER_REGISTRY, WithMeterRegistry.REGISTRY);
      Object mine = new SimpleMeterRegistry();
      assertThat(customized(context, Map.of(SustainableCacheRegionFactory.METER_REGISTRY, mine)))
          .containsEntry(SustainableCacheRegionFactory.METER_REGISTRY, mine);
    });
  }

  @Test
  void theCacheObserverBean_becomesTheProvidersObserver_unlessTheJpaPropertiesNameOne() {
    runner.withUserConfiguration(WithStore.class, WithObservationRegistry.class).run(context -> {
      CacheObserver observer = context.getBean(CacheObserver.class);
      assertThat(customized(context, Map.of()))
          .containsEntry(SustainableCacheRegionFactory.OBSERVER, observer);
      CacheObserver mine = step -> outcome -> { };
      assertThat(customized(context, Map.of(SustainableCacheRegionFactory.OBSERVER, mine)))
          .containsEntry(SustainableCacheRegionFactory.OBSERVER, mine);
    });
    runner.withUserConfiguration(WithStore.class).run(context -> assertThat(
        customized(context, Map.of())).doesNotContainKey(SustainableCacheRegionFactory.OBSERVER));
  }

  @Test
  void withoutTheMicrometerModule_theStoreIsStillPut_andNoRegistry() {
    runner.withUserConfiguration(WithStore.class, WithMeterRegistry.class)
        .withClassLoader(new FilteredClassLoader(
            io.sustainablecache.micrometer.SustainableCacheMetrics.class))
        .run(context -> assertThat(customized(context, Map.of()))
            .containsEntry(SustainableCacheRegionFactory.STORE, WithStore.STORE)
            .doesNotContainKey(SustainableCacheRegionFactory.METER_REGISTRY));
  }

  @Test
  void withoutTheHibernateModule_thereIsNoCustomizer() {
    runner.withUserConfiguration(WithStore.class)
        .withClassLoader(new FilteredClassLoader(SustainableCacheRegionFactory.class))
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(HibernatePropertiesCustomizer.class);
        });
  }

  @Test
  void withoutHibernate_thereIsNoCustomizer() {
    runner.withUserConfiguration(WithStore.class)
        .withClassLoader(new FilteredClassLoader("org.hibernate."))
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(HibernatePropertiesCustomizer.class);
        });
  }
}
