package io.sustainablecache.example;

import org.springframework.cache.annotation.Cacheable;
import org.springframework.stereotype.Service;

/** The cached read: {@code sync = true} makes the method the cache's loader, refreshed ahead. */
@Service
public class ProductService {

  private final ProductRepository repository;

  /**
   * Creates the service.
   *
   * @param repository the slow repository
   */
  public ProductService(ProductRepository repository) {
    this.repository = repository;
  }

  /**
   * A product, from the cache; the database is asked on a miss and, in the background, shortly
   * before the cached value expires.
   *
   * @param id the product id
   * @return the product, or {@code null} if there is none (cached as "no value" too)
   * @throws InterruptedException if interrupted while querying
   */
  @Cacheable(cacheNames = "products", sync = true)
  public Product product(long id) throws InterruptedException {
    return repository.find(id);
  }
}
