package io.sustainablecache.spring.boot.starter.arcus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.example.Product;
import io.sustainablecache.spring.SustainableCacheManager;
import io.sustainablecache.spring.SustainableSpringCache;
import io.sustainablecache.spring.boot.autoconfigure.SustainableCacheAutoConfiguration;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.cache.autoconfigure.CacheAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The manual's "Migrating from arcus-spring" example (docs/manual.md): its properties block,
 * with a memcached given by address instead of the ZooKeeper lines, starts the ARCUS starter,
 * and each mapped setting does what the section's table says.
 */
final class MigrationFromArcusSpringIT {

  static class ProductService {
    private final AtomicInteger loads;

    ProductService(AtomicInteger loads) {
      this.loads = loads;
    }

    @Cacheable(cacheNames = "testCache", sync = true)
    public Product product(long id) {
      loads.incrementAndGet();
      return id == 999 ? null : new Product(id, "product " + id);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableCaching
  static class App {
    @Bean
    AtomicInteger loads() {
      return new AtomicInteger();
    }

    @Bean
    ProductService productService(AtomicInteger loads) {
      return new ProductService(loads);
    }
  }

  /** A key as arcus-spring's key generators return it: neither a record nor Serializable. */
  static final class LegacyStringKey {
    private final String key;

    LegacyStringKey(String key) {
      this.key = key;
    }

    @Override
    public String toString() {
      return key;
    }
  }

  /** The section's properties block, without the ZooKeeper lines. */
  static List<String> manualProperties() throws IOException {
    String manual = Files.readString(Path.of("..", "docs", "manual.md"), StandardCharsets.UTF_8);
    int section = manual.indexOf("### Migrating from arcus-spring");
    assertThat(section).as("the manual's migration section").isNotNegative();
    int from = manual.indexOf("```properties", section) + "```properties".length();
    List<String> properties = new ArrayList<>();
    for (String line : manual.substring(from, manual.indexOf("```", from)).strip().lines()
        .toList()) {
      if (!line.startsWith("#") && !line.startsWith("sustainable-cache.arcus.")) {
        properties.add(line);
      }
    }
    return properties;
  }

  @Test
  void theManualsMappingStartsTheArcusStarterAndEachSettingHolds() throws IOException {
    List<String> properties = manualProperties();
    assertThat(properties).as("the block maps TTL, namespace, near cache and codec")
        .contains("sustainable-cache.caches.testCache.settings.ttl=60s",
            "sustainable-cache.caches.testCache.namespace=TEST-PRODUCT");
    InetSocketAddress a = MemcachedServer.shared().address();
    properties.add("sustainable-cache.client=arcus");
    properties.add("sustainable-cache.addresses=" + a.getHostString() + ":" + a.getPort());
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(SustainableCacheAutoConfiguration.class,
            CacheAutoConfiguration.class))
        .withUserConfiguration(App.class)
        .withPropertyValues(properties.toArray(String[]::new))
        .run(context -> {
          assertThat(context).hasNotFailed();
          SustainableCacheManager manager = context.getBean(SustainableCacheManager.class);
          assertThat(manager.specOf("testCache").settings().ttl())
              .contains(Duration.ofSeconds(60));
          assertThat(manager.specOf("testCache").settings().hasNearCache()).isTrue();
          assertThat(manager.specOf("testCache").namespace()).contains("TEST-PRODUCT");
          SustainableSpringCache cache = (SustainableSpringCache) manager.getCache("testCache");
          cache.clear();
          ProductService service = context.getBean(ProductService.class);
          AtomicInteger loads = context.getBean(AtomicInteger.class);
          // the client connects in the background: once it has, a second call is a hit
          await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(service.product(1)).isEqualTo(new Product(1, "product 1"));
            int before = loads.get();
            assertThat(service.product(1)).isEqualTo(new Product(1, "product 1"));
            assertThat(loads.get()).isEqualTo(before);
          });
          // the value is Java-serialized, and read back through the allow-list
          assertThat(cache.getNativeCache().getIfPresent(cache.encodeKey(1L)))
              .contains(new Product(1, "product 1"));
          // allowNullValues: a null is cached, the method runs once
          int before = loads.get();
          assertThat(service.product(999)).isNull();
          assertThat(service.product(999)).isNull();
          assertThat(loads.get() - before).isOne();
          // arcus-spring's key generators' keys are refused, naming the type
          assertThatThrownBy(() -> cache.get(new LegacyStringKey("1"), () -> "x"))
              .isInstanceOf(IllegalArgumentException.class)
              .hasMessageContaining("LegacyStringKey");
          // a value of another type than the allow-listed one is refused at the call
          assertThatThrownBy(() -> cache.put(2L, "not a product"))
              .isInstanceOf(IllegalArgumentException.class);
        });
  }
}
