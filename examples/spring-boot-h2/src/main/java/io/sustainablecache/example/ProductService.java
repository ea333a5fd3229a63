package io.sustainablecache.example;

import io.sustainablecache.spring.SustainableSpringCache;
import java.util.List;
import java.util.Map;
import org.springframework.cache.CacheManager;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.stereotype.Service;

/** The cached read: {@code sync = true} makes the method the cache's loader, refreshed ahead. */
@Service
public class ProductService {

  private final ProductRepository repository;
  private final SustainableSpringCache cache;

  /**
   * Creates the service.
   *
   * @param repository the slow repository
   * @param caches the cache manager, for the multi-id read
   */
  public ProductService(ProductRepository repository, CacheManager caches) {
    this.repository = repository;
    this.cache = (SustainableSpringCache) caches.getCache("products");
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

  /**
   * Several products: one read of the cache for all of them, one query for those it missed;
   * the same entries {@link #product} reads and writes.
   *
   * @param ids the product ids
   * @return the products found, by id, in the order of {@code ids}
   */
  // manual:getall:begin
  public Map<Long, Product> products(List<Long> ids) {
    return cache.getAll(ids); // the registered bulk loader: repository.findAll
  }
  // manual:getall:end
}
