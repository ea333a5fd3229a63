package io.sustainablecache.spring.boot.starter.memcached;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.spring.SustainableCacheManager;
import io.sustainablecache.spring.boot.autoconfigure.SustainableCacheAutoConfiguration;
import io.sustainablecache.spymemcached.SpymemcachedStoreFactory;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
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
 * The memcached starter against a real memcached: the starter finds the spymemcached factory, and
 * the store it opens is connected once the context has started. (Steady load through this
 * starter, no miss after warm-up and about one query per TTL period, is the example
 * application's {@code ExampleApplicationIT}: the same experiment is not run twice.)
 */
final class MemcachedStarterIT {

  private static final Duration TTL = Duration.ofSeconds(1);

  static class PriceService {
    private final AtomicInteger loads = new AtomicInteger();

    @Cacheable(cacheNames = "prices", sync = true)
    public String price(long id) throws InterruptedException {
      loads.incrementAndGet();
      Thread.sleep(20); // the "database"
      return "price of " + id;
    }

    public int loads() {
      return loads.get();
    }
  }

  /**
   * Writes nobody waits for, issued as the context closes, just before the client's bean is
   * destroyed (it depends on the store, so Spring destroys it first): what a cache's last
   * write-backs and lease releases are to the client.
   */
  static final class LastWrites {
    static final int WRITES = 2_000;
    private final CacheStore store;
    private final List<String> keys = new ArrayList<>(WRITES);

    LastWrites(CacheStore store) {
      this.store = store;
      String prefix = "drain-" + UUID.randomUUID().toString().substring(0, 8) + "-";
      for (int i = 0; i < WRITES; i++) {
        keys.add(prefix + i);
      }
    }

    List<String> keys() {
      return keys;
    }

    void writeAll() {
      byte[] value = new byte[1_024];
      for (String key : keys) {
        store.set(key, value, 300); // not awaited
      }
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class WritesAtClose {
    @Bean(destroyMethod = "writeAll")
    LastWrites lastWrites(CacheStore store) {
      return new LastWrites(store);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableCaching
  static class App {
    @Bean
    PriceService priceService() {
      return new PriceService();
    }
  }

  private static String address() {
    InetSocketAddress a = MemcachedServer.shared().address();
    return a.getHostString() + ":" + a.getPort();
  }

  /**
   * The starter over the shared memcached, with an application configuration and a namespace
   * prefix of its own (the ITs of this module share the server).
   */
  static ApplicationContextRunner starter(Class<?> app) {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(SustainableCacheAutoConfiguration.class,
            CacheAutoConfiguration.class))
        .withUserConfiguration(app)
        .withPropertyValues(
            "sustainable-cache.addresses=" + address(),
            "sustainable-cache.namespace-prefix=it" + UUID.randomUUID().toString().substring(0, 8)
                + ".");
  }

  private ApplicationContextRunner runner() {
    return starter(App.class)
        .withPropertyValues(
            "sustainable-cache.settings.ttl=" + TTL.toMillis() + "ms",
            "sustainable-cache.caches.prices.value-type=java.lang.String");
  }

  @Test
  void theServiceLoaderFindsTheSpymemcachedFactory() {
    assertThat(CacheStoreFactory.find(null, getClass().getClassLoader()))
        .isInstanceOf(SpymemcachedStoreFactory.class);
  }

  /**
   * A near cache through Boot's settings: hits after the first load make no store read, and
   * {@code clear()} ({@code @CacheEvict(allEntries = true)}) works on plain memcached, which
   * cannot flush a prefix: a new generation of the namespace.
   */
  @Test
  void aNearCache_servesHitsInTheJvm_andClearWorksOnPlainMemcached() {
    runner().withPropertyValues("sustainable-cache.caches.prices.settings.ttl=10m",
            // no early refresh: every read here is a hit of the one load, counted exactly
            "sustainable-cache.caches.prices.settings.refresh-policy=none",
            "sustainable-cache.caches.prices.settings.near-cache=1000:2s")
        .run(context -> {
          assertThat(context).hasNotFailed();
          PriceService service = context.getBean(PriceService.class);
          org.springframework.cache.Cache prices = context.getBean(SustainableCacheManager.class)
              .getCache("prices");
          SustainableCache<?> cache = (SustainableCache<?>) prices.getNativeCache();
          assertThat(service.price(1)).isEqualTo("price of 1");
          // The load's write is asynchronous: the value is near once it has landed.
          long giveUp = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
          while (cache.stats().count("near_hit") == 0) {
            assertThat(System.nanoTime()).as("a near hit within 5 s").isLessThan(giveUp);
            service.price(1);
            Thread.sleep(5);
          }
          long nearHits = cache.stats().count("near_hit");
          for (int i = 0; i < 10; i++) {
            assertThat(service.price(1)).isEqualTo("price of 1");
          }
          assertThat(cache.stats().count("near_hit") - nearHits).as("near hits").isEqualTo(10);
          assertThat(service.loads()).isEqualTo(1);

          prices.clear();
          assertThat(prices.get(1L)).as("cleared").isNull();
          int loads = service.loads();
          assertThat(service.price(1)).isEqualTo("price of 1");
          assertThat(service.loads()).as("loaded again").isGreaterThan(loads);
          assertThat(cache.stats().storeErrorCount()).isZero();
        });
  }

  /**
   * Issue 15: the store the starter opens is connected when the context has started, so the
   * first put right after start-up is stored (it failed 10 to 12 times in 20).
   */
  @Test
  void theFirstPutAfterStartUpIsStored() {
    for (int i = 0; i < 20; i++) {
      runner().run(context -> {
        assertThat(context).hasNotFailed();
        org.springframework.cache.Cache prices = context.getBean(SustainableCacheManager.class)
            .getCache("prices");
        prices.put(7L, "seven");
        SustainableCache<?> cache = (SustainableCache<?>) prices.getNativeCache();
        assertThat(cache.stats().storeErrorCount()).as("store errors").isZero();
        assertThat(prices.get(7L, String.class)).isEqualTo("seven");
      });
    }
  }

  /**
   * Issue 31, part 4: the client the starter created is drained before it is shut down with the
   * context, so what it still had queued then (a cache's last write-backs and lease releases;
   * here, writes nobody waited for) reaches the server instead of being dropped.
   */
  @Test
  void closingTheContext_sendsWhatTheClientStillHadQueued_beforeShuttingItDown()
      throws Exception {
    List<String> keys = new ArrayList<>();
    runner().withUserConfiguration(WritesAtClose.class)
        .withPropertyValues("sustainable-cache.shutdown-timeout=10s").run(context -> {
          assertThat(context).hasNotFailed();
          keys.addAll(context.getBean(LastWrites.class).keys());
        }); // closing: LastWrites issues its writes, then the client's bean is destroyed
    try (CacheStoreFactory.OpenedStore check = CacheStoreFactory.find(null,
        getClass().getClassLoader()).open(CacheStoreFactory.Settings.builder()
            .addresses(List.of(address()))
            // a bulk read of 2,000 keys: a loaded machine took longer than the default 700 ms
            .operationTimeout(Duration.ofSeconds(10)).build())) {
      assertThat(check.store().getsAll(keys).get(10, TimeUnit.SECONDS))
          .as("writes queued when the client's bean was destroyed, on the server")
          .hasSize(LastWrites.WRITES);
    }
  }
}
