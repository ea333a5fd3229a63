package io.sustainablecache.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sustainablecache.CacheSettings;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.jackson.JacksonCodec;
import io.sustainablecache.micrometer.SustainableCacheMeters;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.spring.CacheSpec;
import io.sustainablecache.spring.SustainableCacheManager;
import io.sustainablecache.spring.SustainableSpringCache;
import io.sustainablecache.testing.InMemoryStore;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.cache.autoconfigure.CacheAutoConfiguration;
import org.springframework.boot.cache.autoconfigure.metrics.CacheMetricsAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cache.Cache;
import org.springframework.cache.CacheManager;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.cache.concurrent.ConcurrentMapCacheManager;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.ByteArrayResource;

/** Every condition of the auto-configuration, over the in-memory store. */
final class SustainableCacheAutoConfigurationTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(SustainableCacheAutoConfiguration.class,
          CacheAutoConfiguration.class, CacheMetricsAutoConfiguration.class));

  record Book(String title, int year) implements Serializable {}

  /** String values; a cache {@code early} created at start-up, the others on first use. */
  private static final String[] EARLY_CACHE = {"sustainable-cache.settings.ttl=30s",
      "sustainable-cache.value-type=java.lang.String",
      "sustainable-cache.caches.early.settings.ttl=1m"};

  @Configuration(proxyBeanMethods = false)
  @EnableCaching
  static class Caching {}

  @Configuration(proxyBeanMethods = false)
  @EnableCaching
  static class WithStore {
    static final InMemoryStore STORE = InMemoryStore.create();

    @Bean
    CacheStore myStore() {
      return STORE;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class WithMeterRegistry {
    @Bean
    MeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class WithObservationRegistry {
    /** The names of the observations stopped. */
    static final List<String> STOPPED = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Bean
    io.micrometer.observation.ObservationRegistry observationRegistry() {
      io.micrometer.observation.ObservationRegistry registry =
          io.micrometer.observation.ObservationRegistry.create();
      registry.observationConfig().observationHandler(
          new io.micrometer.observation.ObservationHandler<>() {
            @Override
            public void onStop(io.micrometer.observation.Observation.Context context) {
              STOPPED.add(context.getName());
            }

            @Override
            public boolean supportsContext(
                io.micrometer.observation.Observation.Context context) {
              return true;
            }
          });
      return registry;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class WithUserCacheManager {
    @Bean
    CacheManager myCacheManager() {
      return new ConcurrentMapCacheManager("mine");
    }
  }

  static class BookService {
    final AtomicInteger queries = new AtomicInteger();

    @Cacheable(cacheNames = "books", sync = true)
    public Book find(long id) {
      queries.incrementAndGet();
      return id == 0 ? null : new Book("t" + id, 2000);
    }

    public int queries() {
      return queries.get();
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class WithBookService {
    @Bean
    BookService bookService() {
      return new BookService();
    }
  }

  /**
   * Issue 15: Spring Boot's {@code spring.cache.type} picks the cache provider; when it is set,
   * this starter backs off and Boot's choice stands (none: no caching; simple: a map).
   */
  @Test
  void springCacheTypeIsHonoured() {
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s", "spring.cache.type=none")
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(SustainableCacheManager.class);
          assertThat(context.getBean(CacheManager.class))
              .isInstanceOf(org.springframework.cache.support.NoOpCacheManager.class);
        });
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s", "spring.cache.type=simple")
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(SustainableCacheManager.class);
          assertThat(context.getBean(CacheManager.class))
              .isInstanceOf(ConcurrentMapCacheManager.class);
        });
  }

  /** Issue 15: Spring's allowNullValues, on by default as in Boot's own cache managers. */
  @Test
  void allowNullValuesIsBoundAndOnByDefault() {
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s", "sustainable-cache.value-type="
            + Book.class.getName())
        .run(context -> assertThat(((SustainableSpringCache) context
            .getBean(SustainableCacheManager.class).getCache("a")).isAllowNullValues()).isTrue());
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s", "sustainable-cache.value-type="
            + Book.class.getName(), "sustainable-cache.allow-null-values=false")
        .run(context -> {
          Cache cache = context.getBean(SustainableCacheManager.class).getCache("b");
          assertThat(((SustainableSpringCache) cache).isAllowNullValues()).isFalse();
          org.assertj.core.api.Assertions.assertThatThrownBy(() -> cache.put(1L, null))
              .isInstanceOf(IllegalArgumentException.class);
        });
  }

  /** Issue 21: transaction-aware by default, off with sustainable-cache.transaction-aware. */
  @Test
  void transactionAwareIsBoundAndOnByDefault() {
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s")
        .run(context -> assertThat(context.getBean(SustainableCacheManager.class)
            .isTransactionAware()).isTrue());
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s",
            "sustainable-cache.transaction-aware=false")
        .run(context -> assertThat(context.getBean(SustainableCacheManager.class)
            .isTransactionAware()).isFalse());
  }

  @Test
  void createsTheManagerOverAUserStoreWhichAlwaysWins() {
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s",
            "sustainable-cache.caches.books.value-type=" + Book.class.getName())
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).hasSingleBean(SustainableCacheManager.class);
          assertThat(context).doesNotHaveBean(CacheStoreFactory.OpenedStore.class);
          assertThat(context.getBean(CacheManager.class)).isInstanceOf(SustainableCacheManager.class);
          SustainableCacheManager manager = context.getBean(SustainableCacheManager.class);
          assertThat(manager.store()).isSameAs(WithStore.STORE);
          assertThat(manager.getCacheNames()).containsExactly("books");
          Cache books = manager.getCache("books");
          books.put(7L, new Book("seven", 2007));
          assertThat(books.get(7L, Book.class)).isEqualTo(new Book("seven", 2007));
          assertThat(WithStore.STORE.gets("books:l7;").join()).isPresent(); // namespace = name
        });
  }

  @Test
  void backsOffForAUserCacheManager() {
    runner.withUserConfiguration(WithStore.class, WithUserCacheManager.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s")
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(SustainableCacheManager.class);
          assertThat(context.getBean(CacheManager.class)).isInstanceOf(ConcurrentMapCacheManager.class);
        });
  }

  @Test
  void needsCachingToBeEnabled() {
    runner.withPropertyValues("sustainable-cache.settings.ttl=30s")
        .run(context -> assertThat(context).hasNotFailed()
            .doesNotHaveBean(SustainableCacheManager.class)
            .doesNotHaveBean(CacheStoreFactory.OpenedStore.class));
  }

  @Test
  void canBeDisabled() {
    // Boot's own choice without Caffeine (on this test classpath for the near cache) is a map
    runner.withClassLoader(new FilteredClassLoader(Caffeine.class))
        .withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.enabled=false", "sustainable-cache.settings.ttl=30s")
        .run(context -> assertThat(context).hasNotFailed()
            .doesNotHaveBean(SustainableCacheManager.class)
            .getBean(CacheManager.class).isInstanceOf(ConcurrentMapCacheManager.class));
  }

  /** Issue 31, part 5: the entry keys from properties, for every cache, with a rotation. */
  @Test
  void entryKeys_signEveryCachesEntries_andAPreviousKeyIsStillRead() {
    String key = java.util.Base64.getEncoder().encodeToString("k".repeat(32).getBytes());
    String next = java.util.Base64.getEncoder().encodeToString("n".repeat(32).getBytes());
    String[] common = {"sustainable-cache.settings.ttl=30s",
        "sustainable-cache.value-type=" + String.class.getName()};
    runner.withUserConfiguration(WithStore.class).withPropertyValues(common)
        .withPropertyValues("sustainable-cache.entry-keys[0]=" + key)
        .run(context -> context.getBean(SustainableCacheManager.class).getCache("signed")
            .put("id", "written signed"));
    runner.withUserConfiguration(WithStore.class).withPropertyValues(common)
        .run(context -> assertThat(context.getBean(SustainableCacheManager.class)
            .getCache("signed").get("id")).as("an unkeyed cache reads no signed entry").isNull());
    runner.withUserConfiguration(WithStore.class).withPropertyValues(common)
        .withPropertyValues("sustainable-cache.entry-keys[0]=" + next,
            "sustainable-cache.entry-keys[1]=" + key)
        .run(context -> assertThat(context.getBean(SustainableCacheManager.class)
            .getCache("signed").get("id").get()).isEqualTo("written signed"));
    runner.withUserConfiguration(WithStore.class).withPropertyValues(common)
        .withPropertyValues("sustainable-cache.entry-keys[0]=" + next)
        .run(context -> assertThat(context.getBean(SustainableCacheManager.class)
            .getCache("signed").get("id")).as("the old key no longer accepted").isNull());
  }

  @Test
  void aBadEntryKey_failsTheStart_withoutShowingIt() {
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s",
            "sustainable-cache.entry-keys[0]=not-base64-secret!")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("sustainable-cache.entry-keys[0]: not base64")
            .satisfies(e -> assertThat(stackTrace(e)).doesNotContain("not-base64-secret")));
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s",
            "sustainable-cache.entry-keys[0]=c2hvcnQ=") // "short"
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("sustainable-cache.entry-keys: entryKey must be at least 16"
                + " bytes"));
  }

  private static String stackTrace(Throwable e) {
    java.io.StringWriter out = new java.io.StringWriter();
    e.printStackTrace(new java.io.PrintWriter(out));
    return out.toString();
  }

  @Test
  void aConfiguredCacheWithoutACodecFailsTheStartNamingTheProperty() {
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s", "sustainable-cache.caches.books.settings.ttl=1m")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("cache 'books' has no value codec")
            .hasStackTraceContaining("sustainable-cache.caches.books.value-type"));
  }

  @Test
  void aCacheUsedByAnAnnotationWithoutACodecFailsTheStartNamingTheMethod() {
    runner.withUserConfiguration(WithStore.class, WithBookService.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("cache 'books' has no value codec")
            .hasStackTraceContaining("(used by BookService.find)"));
  }

  @Test
  void withoutATtlTheStartFails() {
    runner.withUserConfiguration(WithStore.class, WithBookService.class)
        .withPropertyValues("sustainable-cache.value-type=" + Book.class.getName())
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("cache 'books' has no TTL")
            .hasStackTraceContaining("sustainable-cache.settings.ttl"));
  }

  @Test
  void syncCacheableThroughTheAutoConfiguredManager() {
    runner.withUserConfiguration(WithStore.class, WithBookService.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s",
            "sustainable-cache.caches.books.value-type=" + Book.class.getName(),
            "sustainable-cache.caches.books.namespace=bk2")
        .run(context -> {
          assertThat(context).hasNotFailed();
          BookService service = context.getBean(BookService.class);
          assertThat(service.find(1)).isEqualTo(new Book("t1", 2000));
          assertThat(service.find(1)).isEqualTo(new Book("t1", 2000));
          assertThat(service.find(0)).isNull();
          assertThat(service.find(0)).isNull();
          assertThat(service.queries()).isEqualTo(2);
          assertThat(WithStore.STORE.gets("bk2:l1;").join()).isPresent();
        });
  }

  @Test
  void propertiesBindIntoEachCachesSpec() {
    runner.withUserConfiguration(WithStore.class)
        .withBean("titleCodec", ValueCodec.class, ValueCodec::utf8)
        .withPropertyValues(
            "sustainable-cache.settings.ttl=30s",
            "sustainable-cache.settings.grace=5s",
            "sustainable-cache.settings.no-value-ttl=2s",
            "sustainable-cache.settings.load-timeout=3s",
            "sustainable-cache.settings.fleet-lease=false",
            "sustainable-cache.namespace-prefix=svc.",
            "sustainable-cache.settings.refresh-threads=2",
            "sustainable-cache.settings.refresh-queue-capacity=16",
            "sustainable-cache.settings.refresh-policy=xfetch:2",
            "sustainable-cache.caches.books.value-type=" + Book.class.getName(),
            "sustainable-cache.caches.books.settings.ttl=5m",
            "sustainable-cache.caches.books.settings.refresh-policy=sustainable",
            "sustainable-cache.caches.books.settings.failure-backoff=1s:10s",
            "sustainable-cache.caches.legacy.codec=java-serialization",
            "sustainable-cache.caches.legacy.value-type=" + Book.class.getName(),
            "sustainable-cache.caches.legacy.allow-list=" + Book.class.getName(),
            "sustainable-cache.caches.titles.codec-bean=titleCodec",
            "sustainable-cache.caches.names.value-type=java.lang.String")
        .run(context -> {
          assertThat(context).hasNotFailed();
          SustainableCacheManager manager = context.getBean(SustainableCacheManager.class);
          assertThat(manager.getCacheNames())
              .containsExactlyInAnyOrder("books", "legacy", "titles", "names");
          CacheSpec books = manager.specOf("books");
          assertThat(books.settings()).isEqualTo(CacheSettings.parse("ttl=5m, grace=5s,"
              + " refresh-policy=sustainable, fleet-lease=false, no-value-ttl=2s, load-timeout=3s,"
              + " refresh-threads=2, refresh-queue-capacity=16, failure-backoff=1s:10s"));
          assertThat(books.codec()).get().isInstanceOf(JacksonCodec.class);
          assertThat(books.valueType()).contains(Book.class);
          assertThat(manager.specOf("legacy").codec().get().toString())
              .startsWith("ValueCodec.javaSerialization(");
          assertThat(manager.specOf("titles").codec()).contains(ValueCodec.utf8());
          assertThat(manager.specOf("names").codec()).contains(ValueCodec.utf8());
          assertThat(manager.specOf("other").settings()).isEqualTo(CacheSettings.parse(
              "ttl=30s, grace=5s, refresh-policy=xfetch:2, fleet-lease=false, no-value-ttl=2s,"
              + " load-timeout=3s, refresh-threads=2, refresh-queue-capacity=16"));

          Cache legacy = manager.getCache("legacy");
          legacy.put("k", new Book("old", 1999));
          assertThat(legacy.get("k", Book.class)).isEqualTo(new Book("old", 1999));
          assertThat(WithStore.STORE.gets("svc.legacy:s1:k").join()).isPresent();
        });
  }

  /** Every setting the core knows, with a value other than its default, by its key. */
  private static final Map<String, String> EVERY_SETTING = everySetting();

  private static Map<String, String> everySetting() {
    Map<String, String> every = new LinkedHashMap<>();
    every.put("ttl", "30s");
    every.put("grace", "5s");
    every.put("refresh-policy", "xfetch:2");
    every.put("fleet-lease", "false");
    every.put("no-value-ttl", "2s");
    every.put("load-timeout", "3s");
    every.put("refresh-threads", "2");
    every.put("refresh-queue-capacity", "16");
    every.put("failure-backoff", "1s:10s");
    every.put("serve-stale-on-error", "true");
    every.put("fail-writes-when-store-down", "true");
    every.put("max-clock-skew", "2s");
    every.put("ttl-jitter", "0.1");
    every.put("max-value-size", "100000");
    every.put("coalesce", "20:2ms");
    every.put("close-timeout", "2s");
    every.put("fence-timeout", "45s");
    every.put("near-cache", "100:1s");
    every.put("near-cache-copy", "true");
    every.put("invalidate-all-bound", "2s");
    every.put("store-probe-interval", "250ms");
    every.put("outage-reuse", "100ms");
    return every;
  }

  private void assertEverySettingIsBound(ApplicationContextRunner configured) {
    assertThat(EVERY_SETTING.keySet()).as("the test covers every setting")
        .containsExactlyInAnyOrderElementsOf(CacheSettings.keys());
    configured.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.value-type=java.lang.String").run(context -> {
      assertThat(context).hasNotFailed();
      SustainableCacheManager manager = context.getBean(SustainableCacheManager.class);
      assertThat(manager.specOf("any").settings()).isEqualTo(CacheSettings.from(EVERY_SETTING));
      assertThat(manager.specOf("books").settings()).isEqualTo(
          CacheSettings.parse("near-cache=200:1s").withDefaults(CacheSettings.from(EVERY_SETTING)));
    });
  }

  /** Issue 24: Spring Boot's relaxed binding of every setting, from properties with dashes. */
  @Test
  void everySettingBindsFromProperties() {
    List<String> properties = new ArrayList<>();
    EVERY_SETTING.forEach((key, value) ->
        properties.add("sustainable-cache.settings." + key + "=" + value));
    properties.add("sustainable-cache.caches.books.settings.near-cache=200:1s");
    assertEverySettingIsBound(runner.withPropertyValues(properties.toArray(String[]::new)));
  }

  /** Issue 24: the same from YAML. */
  @Test
  void everySettingBindsFromYaml() {
    StringBuilder yaml = new StringBuilder("sustainable-cache:\n  settings:\n");
    EVERY_SETTING.forEach((key, value) ->
        yaml.append("    ").append(key).append(": \"").append(value).append("\"\n"));
    yaml.append("  caches:\n    books:\n      settings:\n        near-cache: \"200:1s\"\n");
    assertEverySettingIsBound(runner.withInitializer(context -> {
      try {
        for (PropertySource<?> source : new YamlPropertySourceLoader().load("test.yaml",
            new ByteArrayResource(yaml.toString().getBytes(StandardCharsets.UTF_8)))) {
          context.getEnvironment().getPropertySources().addFirst(source);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }));
  }

  /**
   * Issue 24: the same from environment variables, through Spring Boot's own mapping of a
   * {@link SystemEnvironmentPropertySource}: each dash of a key an underscore ({@code
   * SUSTAINABLECACHE_SETTINGS_NEAR_CACHE}, which bound as {@code near.cache} and failed the
   * start) or left out ({@code ..._NEARCACHE}).
   */
  @Test
  void everySettingBindsFromEnvironmentVariables() {
    for (String dash : List.of("_", "")) {
      Map<String, Object> variables = new LinkedHashMap<>();
      EVERY_SETTING.forEach((key, value) -> variables.put("SUSTAINABLECACHE_SETTINGS_"
          + key.toUpperCase(Locale.ROOT).replace("-", dash), value));
      variables.put("SUSTAINABLECACHE_CACHES_BOOKS_SETTINGS_NEAR" + dash + "CACHE", "200:1s");
      assertEverySettingIsBound(runner.withInitializer(context -> context.getEnvironment()
          .getPropertySources().replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
              new SystemEnvironmentPropertySource(
                  StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables))));
    }
  }

  /** A setting given in two spellings is refused, naming it, rather than one silently winning. */
  @Test
  void aSettingGivenAsAPropertyAndAsAnEnvironmentVariableIsGivenTwice() {
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s",
            "sustainable-cache.settings.near-cache=100:1s")
        .withInitializer(context -> context.getEnvironment().getPropertySources().replace(
            StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
            new SystemEnvironmentPropertySource(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                Map.of("SUSTAINABLECACHE_SETTINGS_NEAR_CACHE", "200:1s"))))
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("sustainable-cache.settings: ")
            .hasStackTraceContaining("is given twice"));
  }

  @Test
  void settingsMistakesFailTheStartNamingTheProperty() {
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s",
            "sustainable-cache.caches.books.value-type=java.lang.String",
            "sustainable-cache.caches.books.settings.tll=5m")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("sustainable-cache.caches.books.settings: unknown key 'tll'"));
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=0s")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("sustainable-cache.settings: ttl=0s: ttl must be between 1 ms and 365 d"));
  }

  @Test
  void codecMistakesFailTheStartClearly() {
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s",
            "sustainable-cache.caches.legacy.codec=java-serialization",
            "sustainable-cache.caches.legacy.value-type=" + Book.class.getName())
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("cache 'legacy': codec java-serialization needs an allow-list")
            .hasStackTraceContaining("sustainable-cache.caches.legacy.allow-list"));
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s",
            "sustainable-cache.caches.titles.codec-bean=nope")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("there is no ValueCodec bean of that name"));
  }

  @Test
  void aUserJsonCodecFactoryIsUsedForValueTypes() {
    AtomicInteger calls = new AtomicInteger();
    runner.withUserConfiguration(WithStore.class)
        .withBean(JsonCodecFactory.class, () -> type -> {
          calls.incrementAndGet();
          return JacksonCodec.of(type);
        })
        .withPropertyValues("sustainable-cache.settings.ttl=30s",
            "sustainable-cache.caches.books.value-type=" + Book.class.getName())
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(calls).hasValue(1);
        });
  }

  @Test
  void customizersAddCaches() {
    runner.withUserConfiguration(WithStore.class)
        .withBean(SustainableCacheManagerCustomizer.class, () -> builder -> builder.cache("custom",
            CacheSpec.builder().codec(ValueCodec.utf8(), String.class).build()))
        .withPropertyValues("sustainable-cache.settings.ttl=30s")
        .run(context -> assertThat(context.getBean(SustainableCacheManager.class).getCacheNames())
            .containsExactly("custom"));
  }

  @Test
  void withoutAStoreOrAnAdapterTheStartFailsSayingWhatToAdd() {
    runner.withUserConfiguration(Caching.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s",
            "sustainable-cache.addresses=127.0.0.1:11211")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("No CacheStoreFactory on the class path")
            .hasStackTraceContaining("sustainable-cache-spymemcached"));
    runner.withUserConfiguration(Caching.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("sustainable-cache has no servers to connect to"));
  }

  @Test
  void metricsForCachesAtStartAndCachesCreatedLater() {
    runner.withUserConfiguration(WithStore.class, WithMeterRegistry.class)
        .withPropertyValues(EARLY_CACHE)
        .run(context -> {
          assertThat(context).hasNotFailed();
          MeterRegistry registry = context.getBean(MeterRegistry.class);
          SustainableCacheManager manager = context.getBean(SustainableCacheManager.class);
          Cache early = manager.getCache("early");
          early.get("k", () -> "v");
          early.get("k", () -> "v");
          assertThat(registry.get("cache.gets").tags("cache", "early", "result", "hit",
              "cache.manager", "cacheManager").functionCounter().count()).isEqualTo(1);

          Cache late = manager.getCache("late"); // created after start-up
          assertThat(late).isInstanceOf(SustainableSpringCache.class);
          late.get("k", () -> "v");
          assertThat(registry.get("cache.gets").tags("cache", "late", "result", "miss",
              "cache.manager", "cacheManager").functionCounter().count()).isEqualTo(1);
          assertThat(registry.get(SustainableCacheMeters.LOADS)
              .tags("cache", "late", "result", "success").functionCounter().count())
              .isEqualTo(1);
          assertThat(registry.find(SustainableCacheMeters.STALE_HITS).tags("cache", "late")
              .functionCounter()).isNotNull();
        });
  }

  @Test
  void withAnObservationRegistry_everyCacheIsObserved() {
    WithObservationRegistry.STOPPED.clear();
    runner.withUserConfiguration(WithStore.class, WithObservationRegistry.class)
        .withPropertyValues(EARLY_CACHE)
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).hasSingleBean(io.sustainablecache.CacheObserver.class);
          SustainableCacheManager manager = context.getBean(SustainableCacheManager.class);
          manager.getCache("early").get("observed-1", () -> "v"); // a cache of the properties
          manager.getCache("late").get("observed-2", () -> "v"); // one created on first use
          manager.getCache("late").get("observed-2", () -> "v"); // a hit: none
          assertThat(WithObservationRegistry.STOPPED).as("a load per miss, none for the hit")
              .filteredOn(io.sustainablecache.micrometer.SustainableCacheObservations.LOAD
                  .getName()::equals).hasSize(2);
        });
  }

  @Test
  void withoutAnObservationRegistry_orWithoutTheMicrometerModule_noCacheIsObserved() {
    runner.withUserConfiguration(WithStore.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s")
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(io.sustainablecache.CacheObserver.class);
        });
    runner.withUserConfiguration(WithStore.class, WithObservationRegistry.class)
        .withClassLoader(new FilteredClassLoader(
            io.sustainablecache.micrometer.SustainableCacheObservations.class))
        .withPropertyValues("sustainable-cache.settings.ttl=30s")
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(io.sustainablecache.CacheObserver.class);
        });
  }

  @Test
  void theMeterBinderProviderIsRegistered() {
    runner.withUserConfiguration(WithStore.class, WithMeterRegistry.class)
        .withPropertyValues("sustainable-cache.settings.ttl=30s")
        .run(context -> assertThat(context).hasSingleBean(SustainableCacheMeterBinderProvider.class));
  }

  @Test
  void managerTagValueFollowsSpringBoot() {
    assertThat(SustainableCacheAutoConfiguration.MetricsConfiguration.managerTagValue("cacheManager"))
        .isEqualTo("cacheManager");
    assertThat(SustainableCacheAutoConfiguration.MetricsConfiguration.managerTagValue(
        "ordersCacheManager")).isEqualTo("orders");
  }

  @SuppressWarnings("unused")
  private static final List<Class<?>> REFERENCED = List.of(Caching.class);
}
