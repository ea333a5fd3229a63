package io.sustainablecache.example;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.ResponseEntity;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** The HTTP API: products, and the database query counter the load driver watches. */
@RestController
public class ProductController {

  private static final Logger LOG = LoggerFactory.getLogger(ProductController.class);

  private final ProductService products;
  private final ProductRepository repository;
  private final AtomicLong requests = new AtomicLong();
  private long lastQueries;
  private long lastRequests;

  /**
   * Creates the controller.
   *
   * @param products the cached service
   * @param repository the repository, for its query counter
   */
  public ProductController(ProductService products, ProductRepository repository) {
    this.products = products;
    this.repository = repository;
  }

  /**
   * A product.
   *
   * @param id the product id
   * @return 200 with the product, or 404
   * @throws InterruptedException if interrupted while querying
   */
  @GetMapping("/products/{id}")
  public ResponseEntity<Product> product(@PathVariable("id") long id) throws InterruptedException {
    requests.incrementAndGet();
    Product p = products.product(id);
    return p == null ? ResponseEntity.notFound().build() : ResponseEntity.ok(p);
  }

  /**
   * Several products, one cache read and at most one query.
   *
   * @param ids the product ids
   * @return the products found, in the order asked for
   */
  @GetMapping("/products")
  public List<Product> products(@RequestParam("ids") List<Long> ids) {
    requests.incrementAndGet();
    return List.copyOf(products.products(ids).values());
  }

  /**
   * The counters: requests served and database queries run since start.
   *
   * @return {@code {"requests": n, "dbQueries": n}}
   */
  @GetMapping("/stats")
  public Map<String, Long> stats() {
    Map<String, Long> stats = new LinkedHashMap<>();
    stats.put("requests", requests.get());
    stats.put("dbQueries", repository.queries());
    return stats;
  }

  /** Logs requests and database queries of the last 5 seconds. */
  @Scheduled(fixedRate = 5000)
  public synchronized void logRates() {
    long q = repository.queries();
    long r = requests.get();
    if (r != lastRequests) {
      LOG.info("last 5 s: {} requests, {} database queries", r - lastRequests, q - lastQueries);
    }
    lastQueries = q;
    lastRequests = r;
  }
}
