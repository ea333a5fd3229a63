package io.sustainablecache.example;

import io.sustainablecache.spring.boot.autoconfigure.SustainableCacheManagerCustomizer;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * The example service: {@code GET /products/{id}}, {@code GET /products?ids=1,2,3}, {@code GET
 * /stats}, Actuator metrics.
 */
@SpringBootApplication
@EnableCaching
@EnableScheduling
public class ExampleApplication {

  /**
   * Starts the service.
   *
   * @param args Spring Boot arguments, e.g. {@code --sustainable-cache.addresses=host:11211}
   */
  public static void main(String[] args) {
    SpringApplication.run(ExampleApplication.class, args);
  }

  /**
   * Coalescing: the "products" cache loads its misses with one query for many ids, so
   * concurrent {@code @Cacheable} misses of different products become few queries.
   *
   * @param repository the repository
   * @return the customizer registering the bulk loader
   */
  // manual:coalescing:begin
  @Bean
  SustainableCacheManagerCustomizer productLoader(ProductRepository repository) {
    return manager -> manager.bulkLoader("products", Long.class, repository::findAll);
  }
  // manual:coalescing:end
}
