package io.sustainablecache.example;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.CacheStats;
import io.sustainablecache.hibernate.SustainableCacheRegionFactory;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.spring.SustainableCacheManager;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import jakarta.persistence.EntityManagerFactory;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.stat.CacheRegionStatistics;
import org.hibernate.stat.Statistics;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The example service against a real memcached (testkit's {@link MemcachedServer}): the cached
 * query, negative caching, the Actuator cache meters, steady load with a short TTL, and a JPA
 * entity read from Hibernate's second-level cache over the starter's store.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "example.query-delay=50ms",
    "sustainable-cache.settings.ttl=1s"})
final class ExampleApplicationIT {

  private static final Duration TTL = Duration.ofSeconds(1);
  private static final int PERIODS = 5;

  @DynamicPropertySource
  static void memcached(DynamicPropertyRegistry registry) {
    InetSocketAddress a = MemcachedServer.shared().address();
    registry.add("sustainable-cache.addresses", () -> a.getHostString() + ":" + a.getPort());
    // every run its own keys on a shared server
    String prefix = "ex" + UUID.randomUUID().toString().substring(0, 8) + ".";
    registry.add("sustainable-cache.namespace-prefix", () -> prefix);
    registry.add("spring.jpa.properties.hibernate.cache.sustainable.namespace-prefix",
        () -> prefix);
  }

  @LocalServerPort
  int port;

  @Autowired
  ProductRepository repository;

  @Autowired
  SustainableCacheManager cacheManager;

  @Autowired
  EntityManagerFactory entityManagerFactory;

  private final HttpClient http = HttpClient.newHttpClient();

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private SustainableCache<?> products() {
    return (SustainableCache<?>) cacheManager.getCache("products").getNativeCache();
  }

  /** Waits until the client is connected: a second read of a key is a hit. */
  private void awaitConnected() throws Exception {
    long giveUp = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (products().stats().hitCount() == 0 && System.nanoTime() < giveUp) {
      get("/products/5");
      Thread.sleep(50);
    }
    assertThat(products().stats().hitCount()).as("a hit within 20 s").isPositive();
  }

  @Test
  void cachedQueryNegativeCachingAndActuatorMeters() throws Exception {
    awaitConnected();
    long before = repository.queries();
    assertThat(get("/products/2").body()).contains("\"name\":\"teapot\"");
    assertThat(get("/products/2").body()).contains("\"name\":\"teapot\"");
    assertThat(get("/products/99").statusCode()).isEqualTo(404);
    assertThat(get("/products/99").statusCode()).isEqualTo(404);
    assertThat(repository.queries() - before).isEqualTo(2); // one per id

    HttpResponse<String> gets = get("/actuator/metrics/cache.gets?tag=cache:products");
    assertThat(gets.statusCode()).isEqualTo(200);
    assertThat(gets.body()).contains("\"name\":\"cache.gets\"").contains("result");
    assertThat(get("/actuator/metrics/cache.load?tag=cache:products").statusCode()).isEqualTo(200);
    assertThat(get("/actuator/metrics/cache.refresh.requests").statusCode()).isEqualTo(200);
    assertThat(get("/stats").body()).contains("\"dbQueries\"");
  }

  /**
   * Issue 33: a page of ids is one cache read and one query for its misses, over the entries
   * the single-id endpoint uses (both ways round).
   */
  @Test
  void aPageOfProductsQueriesOnlyItsMissesOnceOverTheSingleIdEntries() throws Exception {
    awaitConnected();
    products().invalidateAll();
    assertThat(get("/products/3").body()).contains("\"name\":\"mug\"");
    long before = repository.queries();
    HttpResponse<String> page = get("/products?ids=3,4,5,98");
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.body()).contains("\"mug\"", "\"tray\"", "\"strainer\"")
        .doesNotContain("\"id\":98");
    assertThat(repository.queries() - before).as("one query for 4, 5 and 98").isOne();
    assertThat(get("/products/4").body()).contains("\"name\":\"tray\"");
    assertThat(get("/products/98").statusCode()).isEqualTo(404);
    assertThat(repository.queries() - before).as("the single-id reads hit the page's entries")
        .isOne();
  }

  @Test
  void steadyLoadKeepsTheDatabaseFlat() throws Exception {
    awaitConnected();
    long warmUpEnd = System.nanoTime() + TTL.toNanos();
    while (System.nanoTime() < warmUpEnd) {
      assertThat(get("/products/1").statusCode()).isEqualTo(200);
      Thread.sleep(20);
    }
    CacheStats before = products().stats();
    long queriesBefore = repository.queries();
    long end = System.nanoTime() + TTL.multipliedBy(PERIODS).toNanos();
    int requests = 0;
    while (System.nanoTime() < end) {
      assertThat(get("/products/1").statusCode()).isEqualTo(200);
      requests++;
      Thread.sleep(20);
    }
    CacheStats during = products().stats().minus(before);
    long queries = repository.queries() - queriesBefore;
    assertThat(requests).isGreaterThan(PERIODS * 10);
    assertThat(during.missCount()).as("misses after warm-up").isZero();
    assertThat(queries).as("database queries over %d TTL periods", PERIODS)
        .isBetween((long) PERIODS - 1, (long) Math.ceil(PERIODS * 1.5) + 1);
  }

  @Test
  void aCoupon_isReadFromHibernatesSecondLevelCache_overTheStartersStore() throws Exception {
    awaitConnected();
    SessionFactoryImplementor sessionFactory =
        entityManagerFactory.unwrap(SessionFactoryImplementor.class);
    Statistics statistics = sessionFactory.getStatistics();
    assertThat(sessionFactory.getCache().getRegionFactory())
        .isInstanceOf(SustainableCacheRegionFactory.class);
    SustainableCacheRegionFactory provider =
        (SustainableCacheRegionFactory) sessionFactory.getCache().getRegionFactory();
    CacheRegionStatistics region = statistics.getDomainDataRegionStatistics(Coupon.REGION);

    assertThat(get("/coupons/2").body()).contains("\"code\":\"SPRING25\"");
    long hits = region.getHitCount();
    long statements = statistics.getPrepareStatementCount();
    assertThat(get("/coupons/2").body()).contains("\"percentOff\":25");
    assertThat(region.getHitCount() - hits).as("a second-level cache hit (region: %s; library: %s)",
        region, provider.stats(Coupon.REGION)).isEqualTo(1);
    assertThat(statistics.getPrepareStatementCount()).as("no SQL").isEqualTo(statements);
    CacheStats library = provider.stats(Coupon.REGION).orElseThrow();
    assertThat(library.hitCount()).as("read from memcached").isPositive();
    assertThat(library.storeErrorCount()).isZero();
    HttpResponse<String> meter = get(
        "/actuator/metrics/cache.gets?tag=cache:coupon&tag=cache.manager:hibernate&tag=result:hit");
    assertThat(meter.statusCode()).as("the region's meters in Actuator").isEqualTo(200);
    assertThat(meter.body()).contains("\"name\":\"cache.gets\"");

    HttpResponse<String> updated = http.send(HttpRequest.newBuilder(URI.create(
            "http://127.0.0.1:" + port + "/coupons/2?percentOff=30"))
        .PUT(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(updated.statusCode()).isEqualTo(200);
    statements = statistics.getPrepareStatementCount();
    assertThat(get("/coupons/2").body()).as("the committed state, cached by the update (READ_WRITE)")
        .contains("\"percentOff\":30");
    assertThat(statistics.getPrepareStatementCount()).isEqualTo(statements);
  }
}
