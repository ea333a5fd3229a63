package io.sustainablecache.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.CacheSettings;
import io.sustainablecache.Namespaces;
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
  void namespacesAreDerivedFromTheNameByTheCoresRule_andMustNotBeShared() {
    manager = SustainableCacheManager.builder(store).defaults(defaults)
        .cache("chosen", CacheSpec.builder().namespace(Namespaces.derive("svc.", "a b")).build())
        .namespacePrefix("svc.").build();
    assertThat(manager.derivedNamespace("books")).isEqualTo("svc.books");
    assertThat(manager.derivedNamespace("my cache/v2")).isEqualTo(
        Namespaces.derive("svc.", "my cache/v2")).startsWith("svc.my_cache_v2+");
    assertThat(manager.derivedNamespace("a b")).as("names that sanitize alike stay apart")
        .isNotEqualTo(manager.derivedNamespace("a_b"));
    manager.getCache("a_b");
    assertThatThrownBy(() -> manager.getCache("a b"))
        .hasMessageContaining("caches 'chosen' and 'a b' would share the namespace '"
            + Namespaces.derive("svc.", "a b") + "'");
    manager.getCache("a_b").put("k", "v");
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
