package io.sustainablecache.example;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.scheduling.annotation.EnableScheduling;

/** The example service: {@code GET /products/{id}}, {@code GET /stats}, Actuator metrics. */
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
}
