package io.sustainablecache.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.CacheSettings;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.InMemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.cache.Cache;

final class SustainableCacheManagerTest {

  private final InMemoryStore store = InMemoryStore.create();
  private final CacheSpec defaults =
      CacheSpec.builder().settings(CacheSettings.parse("ttl=30s")).codec(ValueCodec.utf8(), String.class).build();
  private SustainableCacheManager manager;

  @AfterEach
  void close() {
    if (manager != null) {
      manager.close();
    }
  }

  @Test
  void configuredCachesAreCreatedByBuild() {
    manager = SustainableCacheManager.builder(store).defaults(defaults)
        .cache("books", CacheSpec.builder().settings(CacheSettings.parse("ttl=5m")).build())
        .cacheNames(List.of("authors"))
        .build();
    assertThat(manager.getCacheNames()).containsExactly("books", "authors");
    assertThat(manager.specOf("books").settings().ttl()).contains(Duration.ofMinutes(5));
    assertThat(manager.specOf("authors").settings().ttl()).contains(Duration.ofSeconds(30));
  }

  @Test
  void aConfiguredCacheWithoutACodecFailsTheBuildNamingTheCacheAndTheFix() {
    assertThatThrownBy(() -> SustainableCacheManager.builder(store)
        .defaults(CacheSpec.builder().settings(CacheSettings.parse("ttl=30s")).build())
        .cache("books", CacheSpec.empty())
        .cache("authors", CacheSpec.builder().codec(ValueCodec.utf8()).build())
        .build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cache 'books' has no value codec")
        .hasMessageContaining("sustainable-cache.caches.books.value-type")
        .hasMessageNotContaining("'authors'");
  }

  @Test
  void aCacheWithoutATtlFails() {
    assertThatThrownBy(() -> SustainableCacheManager.builder(store)
        .cache("books", CacheSpec.builder().codec(ValueCodec.utf8()).build()).build())
        .hasMessageContaining("cache 'books' has no TTL");
  }

  @Test
  void dynamicCachesComeFromTheDefaultsAndTellTheListeners() {
    manager = SustainableCacheManager.builder(store).defaults(defaults).build();
    List<String> created = new ArrayList<>();
    manager.onCacheCreated(c -> created.add(c.getName()));
    Cache cache = manager.getCache("late");
    assertThat(cache).isNotNull();
    assertThat(manager.getCache("late")).isSameAs(cache);
    assertThat(created).containsExactly("late");
    assertThat(manager.getCacheNames()).containsExactly("late");
  }

  @Test
  void aDynamicCacheWithoutACodecFailsWithTheMessage() {
    manager = SustainableCacheManager.builder(store)
        .defaults(CacheSpec.builder().settings(CacheSettings.parse("ttl=1s")).build()).build();
    assertThatThrownBy(() -> manager.getCache("late"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cache 'late' has no value codec");
  }

  @Test
  void aStaticManagerKnowsOnlyItsCaches() {
    manager = SustainableCacheManager.builder(store).defaults(defaults)
        .cacheNames(List.of("books")).dynamic(false).build();
    assertThat(manager.getCache("books")).isNotNull();
    assertThat(manager.getCache("other")).isNull();
    assertThatThrownBy(() -> manager.validate(Map.of("other", List.of("Service.find"))))
        .hasMessageContaining("cache 'other' (used by Service.find) is not configured");
  }

  @Test
  void namespacesDefaultToTheSanitizedNameAndMustNotBeShared() {
    manager = SustainableCacheManager.builder(store).defaults(defaults)
        .namespacePrefix("svc.").build();
    assertThat(manager.derivedNamespace("books")).isEqualTo("svc.books");
    assertThat(SustainableCacheManager.sanitize("my cache/v2")).isEqualTo("my_cache_v2");
    assertThat(SustainableCacheManager.sanitize("-x")).isEqualTo("_x");
    assertThat(SustainableCacheManager.sanitize("x".repeat(100))).hasSize(64);
    manager.getCache("a b");
    assertThatThrownBy(() -> manager.getCache("a_b"))
        .hasMessageContaining("caches 'a b' and 'a_b' would share the namespace 'svc.a_b'");
    manager.getCache("a b").put("k", "v");
    assertThat(store.gets("svc.a_b:s1:k").join()).isPresent();
  }

  @Test
  void validateReportsEveryProblemAtOnce() {
    manager = SustainableCacheManager.builder(store)
        .defaults(CacheSpec.builder().settings(CacheSettings.parse("ttl=1s")).build()).build();
    assertThatThrownBy(() -> manager.validate(Map.of("x", List.of("A.a"), "y", List.of("B.b"))))
        .hasMessageContaining("cannot create 2 caches")
        .hasMessageContaining("cache 'x' has no value codec")
        .hasMessageContaining("(used by A.a)")
        .hasMessageContaining("(used by B.b)");
  }

  @Test
  void closedManagersCreateNoCaches() {
    manager = SustainableCacheManager.builder(store).defaults(defaults).build();
    manager.close();
    assertThatThrownBy(() -> manager.getCache("late")).hasMessageContaining("closed");
  }
}
