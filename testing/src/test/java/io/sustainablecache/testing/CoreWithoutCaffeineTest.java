package io.sustainablecache.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The core without its optional dependency, Caffeine (which only the near cache needs): this
 * module's classpath has the core and not Caffeine, as a user's has unless they add it. A cache
 * without a near cache works; one with a near cache fails to build with a message that says what
 * to add.
 */
final class CoreWithoutCaffeineTest {

  @Test
  void caffeineIsNotOnThisClasspath() {
    assertThatThrownBy(() -> Class.forName("com.github.benmanes.caffeine.cache.Caffeine"))
        .isInstanceOf(ClassNotFoundException.class);
  }

  @Test
  void aCacheWithoutANearCache_works() {
    try (SustainableCache<String> cache = SustainableCache.builder(InMemoryStore.create())
        .ttl(Duration.ofMinutes(1)).codec(ValueCodec.utf8()).build()) {
      assertThat(cache.get("k", key -> "v")).isEqualTo("v");
      assertThat(cache.get("k", key -> "again")).isEqualTo("v");
    }
  }

  @Test
  void aNearCache_failsToBuild_sayingWhatToAdd() {
    assertThatThrownBy(() -> SustainableCache.builder(InMemoryStore.create())
        .ttl(Duration.ofMinutes(1)).nearCache(100, Duration.ofSeconds(1)).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("com.github.ben-manes.caffeine:caffeine");
  }
}
