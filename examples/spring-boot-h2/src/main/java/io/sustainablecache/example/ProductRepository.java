package io.sustainablecache.example;

import java.time.Duration;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowCallbackHandler;
import org.springframework.stereotype.Repository;

/**
 * The "slow query": a {@code SELECT} on the embedded H2 database plus a deliberate delay (the
 * {@code example.query-delay} property), standing in for an expensive report query. Counts its
 * queries. Thread-safe.
 */
@Repository
public class ProductRepository {

  private final JdbcTemplate jdbc;
  private final Duration delay;
  private final AtomicLong queries = new AtomicLong();

  /**
   * Creates the repository.
   *
   * @param jdbc the H2 database
   * @param delay how long each query takes on top of the {@code SELECT}
   */
  public ProductRepository(JdbcTemplate jdbc,
      @Value("${example.query-delay:200ms}") Duration delay) {
    this.jdbc = jdbc;
    this.delay = delay;
  }

  /**
   * Reads a product, slowly.
   *
   * @param id the product id
   * @return the product, or {@code null} if there is none
   * @throws InterruptedException if interrupted during the delay
   */
  public Product find(long id) throws InterruptedException {
    queries.incrementAndGet();
    Thread.sleep(delay.toMillis());
    List<Product> rows = jdbc.query("SELECT id, name, price_cents FROM product WHERE id = ?",
        (rs, n) -> new Product(rs.getLong(1), rs.getString(2), rs.getLong(3)), id);
    return rows.isEmpty() ? null : rows.get(0);
  }

  /**
   * Reads several products in one query, slowly (one delay for all): the cache's bulk loader
   * (see {@link ExampleApplication#productLoader}).
   *
   * @param ids the product ids
   * @return the products found, by id; ids without a product are left out
   * @throws InterruptedException if interrupted during the delay
   */
  public Map<Long, Product> findAll(Collection<Long> ids) throws InterruptedException {
    queries.incrementAndGet();
    Thread.sleep(delay.toMillis());
    String in = String.join(",", Collections.nCopies(ids.size(), "?"));
    Map<Long, Product> found = new HashMap<>();
    jdbc.query("SELECT id, name, price_cents FROM product WHERE id IN (" + in + ")",
        (RowCallbackHandler) rs -> found.put(rs.getLong(1),
            new Product(rs.getLong(1), rs.getString(2), rs.getLong(3))), ids.toArray());
    return found;
  }

  /**
   * The number of queries so far.
   *
   * @return a non-negative count
   */
  public long queries() {
    return queries.get();
  }
}
