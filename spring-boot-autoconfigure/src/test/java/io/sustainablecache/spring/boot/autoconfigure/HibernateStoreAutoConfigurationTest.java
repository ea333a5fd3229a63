package io.sustainablecache.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

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
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Issue 22: the store bean handed to Hibernate's second-level cache provider through a {@link
 * HibernatePropertiesCustomizer}, when the Hibernate module is on the class path.
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

  private static Map<String, Object> customized(HibernatePropertiesCustomizer customizer,
      Map<String, Object> given) {
    Map<String, Object> properties = new HashMap<>(given);
    customizer.customize(properties);
    return properties;
  }

  @Test
  void theStoreBean_becomesTheProvidersStore() {
    runner.withUserConfiguration(WithStore.class).run(context -> {
      assertThat(context).hasNotFailed();
      HibernatePropertiesCustomizer customizer = context.getBean(
          HibernatePropertiesCustomizer.class);
      assertThat(customized(customizer, Map.of()))
          .containsEntry(SustainableCacheRegionFactory.STORE, WithStore.STORE);
    });
  }

  @Test
  void aStoreGivenInTheJpaProperties_isKept() {
    Object mine = "com.example.MyStoreSupplier";
    runner.withUserConfiguration(WithStore.class).run(context -> assertThat(customized(
        context.getBean(HibernatePropertiesCustomizer.class),
        Map.of(SustainableCacheRegionFactory.STORE, mine)))
        .containsEntry(SustainableCacheRegionFactory.STORE, mine));
  }

  @Test
  void withoutAStoreBean_nothingIsPut() {
    runner.run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(customized(context.getBean(HibernatePropertiesCustomizer.class), Map.of()))
          .doesNotContainKey(SustainableCacheRegionFactory.STORE);
    });
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
