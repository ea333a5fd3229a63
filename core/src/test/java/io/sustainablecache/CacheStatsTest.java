package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.testing.InMemoryStore;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CacheStatsTest {

  @Test
  void headlineAccessors_readTheCountersOfTheSameName() {
    CacheStats stats = CacheStats.of(Map.ofEntries(Map.entry("hit", 7L), Map.entry("miss", 3L),
        Map.entry("load_success", 2L), Map.entry("load_failure", 1L),
        Map.entry("load_time_millis", 40L), Map.entry("refresh_success", 5L),
        Map.entry("refresh_failure", 4L), Map.entry("invalidation", 6L),
        Map.entry("store_error", 9L), Map.entry("invalidation_owed", 8L),
        Map.entry("invalidation_paid", 5L)));

    assertThat(stats.hitCount()).isEqualTo(stats.count("hit")).isEqualTo(7);
    assertThat(stats.missCount()).isEqualTo(3);
    assertThat(stats.requestCount()).isEqualTo(10);
    assertThat(stats.hitRate()).isEqualTo(0.7);
    assertThat(stats.loadSuccessCount()).isEqualTo(2);
    assertThat(stats.loadFailureCount()).isEqualTo(1);
    assertThat(stats.loadCount()).isEqualTo(3);
    assertThat(stats.totalLoadTimeMillis()).isEqualTo(40);
    assertThat(stats.refreshSuccessCount()).isEqualTo(5);
    assertThat(stats.refreshFailureCount()).isEqualTo(4);
    assertThat(stats.invalidationCount()).isEqualTo(6);
    assertThat(stats.storeErrorCount()).isEqualTo(9);
    assertThat(stats.keysAwaitingInvalidation()).isEqualTo(3);
    assertThat(stats.count("stale_hit")).isZero();
  }

  @Test
  void everyCounterName_isReadable_andTheEmptySnapshotHoldsZeroForEach() {
    assertThat(CacheStats.counterNames()).contains("hit", "stale_hit", "near_hit", "fence",
        "outage_load").doesNotHaveDuplicates().allMatch(n -> n.matches("[a-z]+(_[a-z]+)*"));
    for (String name : CacheStats.counterNames()) {
      assertThat(CacheStats.empty().count(name)).as(name).isZero();
    }
    assertThat(CacheStats.empty().hitRate()).isEqualTo(1.0);
  }

  @Test
  void anUnknownName_isRefused_namingTheCounters() {
    assertThatThrownBy(() -> CacheStats.empty().count("staleHitCount"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no counter named 'staleHitCount'")
        .hasMessageContaining("stale_hit");
    assertThatThrownBy(() -> CacheStats.of(Map.of("hits", 1L)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> CacheStats.of(Map.of("hit", -1L)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("hit=-1");
    assertThatThrownBy(() -> CacheStats.empty().count(null))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void minus_toString_andEquality_goCounterByCounter() {
    CacheStats earlier = CacheStats.of(Map.of("hit", 2L, "miss", 1L));
    CacheStats later = CacheStats.of(Map.of("hit", 5L, "miss", 1L, "near_hit", 3L));

    CacheStats interval = later.minus(earlier);

    assertThat(interval).isEqualTo(CacheStats.of(Map.of("hit", 3L, "near_hit", 3L)));
    assertThat(interval.toString()).isEqualTo("CacheStats{hit=3, near_hit=3}");
    assertThat(interval.hashCode()).isEqualTo(
        CacheStats.of(Map.of("hit", 3L, "near_hit", 3L)).hashCode());
    // in the wrong order: zeros, never a negative count (every accessor promises one)
    assertThat(earlier.minus(later)).isEqualTo(CacheStats.empty());
    assertThat(earlier.minus(later).hitCount()).isZero();
  }

  @Test
  void aCachesSnapshot_countsByName_whatTheAccessorsCount() {
    try (SustainableCache<String> cache = SustainableCache.builder(InMemoryStore.create())
        .namespace("stats").ttl(Duration.ofMinutes(1)).codec(ValueCodec.utf8()).build()) {
      cache.get("a", k -> "A");
      cache.get("a", k -> "A");
      cache.find("none", k -> null);
      cache.find("none", k -> null);

      CacheStats stats = cache.stats();

      assertThat(stats.hitCount()).isEqualTo(2);
      assertThat(stats.missCount()).isEqualTo(2);
      assertThat(stats.count("no_value_hit")).isEqualTo(1);
      assertThat(stats.count("no_value_load")).isEqualTo(1);
      assertThat(stats.count("loader_call")).isEqualTo(2);
      assertThat(stats.loadSuccessCount()).isEqualTo(2);
    }
  }
}
