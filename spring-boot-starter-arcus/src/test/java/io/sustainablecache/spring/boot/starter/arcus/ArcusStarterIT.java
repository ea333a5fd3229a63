package io.sustainablecache.spring.boot.starter.arcus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.arcus.ArcusStoreFactory;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.spring.boot.autoconfigure.SustainableCacheAutoConfiguration;
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
import org.springframework.cache.Cache;
import org.springframework.cache.CacheManager;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The ARCUS starter against a real memcached (the ARCUS client talks to memcached servers
 * directly when given addresses instead of a ZooKeeper ensemble).
 */
final class ArcusStarterIT {

  static class NameService {
    private final AtomicInteger loads = new AtomicInteger();

    @Cacheable(cacheNames = "names", sync = true)
    public String name(String id) {
      loads.incrementAndGet();
      return id.equals("none") ? null : "name of " + id;
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
    NameService nameService() {
      return new NameService();
    }
  }

  @Test
  void theServiceLoaderFindsTheArcusFactory() {
    assertThat(CacheStoreFactory.find(null, getClass().getClassLoader()))
        .isInstanceOf(ArcusStoreFactory.class);
  }

  @Test
  void syncCacheableOverTheArcusClient() {
    InetSocketAddress a = MemcachedServer.shared().address();
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(SustainableCacheAutoConfiguration.class,
            CacheAutoConfiguration.class))
        .withUserConfiguration(App.class)
        .withPropertyValues("sustainable-cache.client=arcus",
            "sustainable-cache.addresses=" + a.getHostString() + ":" + a.getPort(),
            "sustainable-cache.namespace-prefix=it" + UUID.randomUUID().toString().substring(0, 8)
                + ".",
            "sustainable-cache.settings.ttl=1m",
            "sustainable-cache.value-type=java.lang.String")
        .run(context -> {
          assertThat(context).hasNotFailed();
          NameService service = context.getBean(NameService.class);
          // The client connects in the background; until it has, reads fail (counted as store
          // errors) and every call loads. Once connected, the second call of a key is a hit.
          await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(service.name("42")).isEqualTo("name of 42");
            int before = service.loads();
            assertThat(service.name("42")).isEqualTo("name of 42");
            assertThat(service.loads()).isEqualTo(before);
          });
          await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(service.name("none")).isNull(); // cached as "no value"
            int before = service.loads();
            assertThat(service.name("none")).isNull();
            assertThat(service.loads()).isEqualTo(before);
          });
        });
  }

  /**
   * Issue 21: Spring's {@code clear()} is a new generation of the cache's namespace (the core's
   * default {@code invalidate-all-bound}), so it works on servers given by address whatever
   * {@code sustainable-cache.arcus.prefix-flush} says, and sends no {@code flush_prefix} (which
   * this plain memcached would answer with {@code ERROR}: before, {@code clear()} was refused, or
   * with {@code arcus.prefix-flush=true} failed with that answer).
   */
  @Test
  void clearOnServersGivenByAddress_isANewGeneration_whateverTheyAreSaidToBe() {
    InetSocketAddress a = MemcachedServer.shared().address();
    ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(SustainableCacheAutoConfiguration.class,
            CacheAutoConfiguration.class))
        .withUserConfiguration(App.class)
        .withPropertyValues("sustainable-cache.client=arcus",
            "sustainable-cache.addresses=" + a.getHostString() + ":" + a.getPort(),
            "sustainable-cache.settings.ttl=1m",
            "sustainable-cache.value-type=java.lang.String");
    for (ApplicationContextRunner each : List.of(runner,
        runner.withPropertyValues("sustainable-cache.arcus.prefix-flush=true"))) {
      each.run(context -> {
        Cache names = context.getBean(CacheManager.class).getCache("names");
        names.put("k", "v");
        names.clear();
        assertThat(names.get("k")).isNull();
        names.put("k", "again");
        assertThat(names.get("k", String.class)).isEqualTo("again");
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
    InetSocketAddress a = MemcachedServer.shared().address();
    String address = a.getHostString() + ":" + a.getPort();
    List<String> keys = new ArrayList<>();
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(SustainableCacheAutoConfiguration.class,
            CacheAutoConfiguration.class))
        .withUserConfiguration(App.class, WritesAtClose.class)
        .withPropertyValues("sustainable-cache.client=arcus",
            "sustainable-cache.addresses=" + address,
            "sustainable-cache.shutdown-timeout=10s",
            "sustainable-cache.settings.ttl=1m",
            "sustainable-cache.value-type=java.lang.String")
        .run(context -> {
          assertThat(context).hasNotFailed();
          keys.addAll(context.getBean(LastWrites.class).keys());
        }); // closing: LastWrites issues its writes, then the client's bean is destroyed
    try (CacheStoreFactory.OpenedStore check = new ArcusStoreFactory().open(
        CacheStoreFactory.Settings.builder().addresses(List.of(address))
            // a bulk read of 2,000 keys: a loaded machine took longer than the default 700 ms
            .operationTimeout(Duration.ofSeconds(10)).build())) {
      assertThat(check.store().getsAll(keys).get(10, TimeUnit.SECONDS))
          .as("writes queued when the client's bean was destroyed, on the server")
          .hasSize(LastWrites.WRITES);
    }
  }
}
