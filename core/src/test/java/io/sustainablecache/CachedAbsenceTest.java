package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code findIfPresent} tells "cached as no value" from "nothing cached", and {@code putAbsent}
 * caches "no value" (issue 15: Spring's {@code allowNullValues} needs both).
 */
final class CachedAbsenceTest {

  private static final Duration TTL = Duration.ofSeconds(10);
  private static final Duration ABSENT_TTL = Duration.ofSeconds(3);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);
  private final AtomicInteger loads = new AtomicInteger();

  private SustainableCacheBuilder<String> builder() {
    return SustainableCache.builder(store).namespace("a").ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).refreshExecutor(new ManualExecutor())
        .random(FixedRandom.neverEarly());
  }

  private String load(String key) {
    loads.incrementAndGet();
    return "loaded " + key;
  }

  @Test
  void findIfPresent_tellsNoValueFromNothingCached_andNeverLoads() throws Exception {
    try (SustainableCache<String> cache = builder().absentTtl(ABSENT_TTL).build()) {
      assertThat(cache.findIfPresent("k")).isEqualTo(new Lookup.NotCached<>());
      assertThat(cache.findIfPresentAsync("k").get()).isEqualTo(new Lookup.NotCached<>());

      assertThat(cache.find("k", key -> null)).isEmpty(); // the loader found no row
      assertThat(cache.findIfPresent("k")).isEqualTo(new Lookup.CachedAbsent<>());
      assertThat(cache.findIfPresentAsync("k").get()).isEqualTo(new Lookup.CachedAbsent<>());
      assertThat(cache.getIfPresent("k")).isEmpty();

      cache.put("k", "v");
      assertThat(cache.findIfPresent("k")).isEqualTo(new Lookup.Hit<>("v"));
      assertThat(cache.findIfPresentAsync("k").get()).isEqualTo(new Lookup.Hit<>("v"));
      assertThat(loads).hasValue(0);
    }
  }

  @Test
  void putAbsent_cachesNoValueForTheAbsentTtl_overAnOldValue() {
    try (SustainableCache<String> cache = builder().absentTtl(ABSENT_TTL).build()) {
      assertThat(cache.get("k", this::load)).isEqualTo("loaded k");
      cache.putAbsent("k");

      assertThat(cache.findIfPresent("k")).isEqualTo(new Lookup.CachedAbsent<>());
      assertThat(cache.find("k", this::load)).isEmpty();
      assertThatThrownBy(() -> cache.get("k", this::load))
          .isInstanceOf(CacheLoadException.class).hasMessageContaining("no value");
      assertThat(loads).as("no load while no value is cached").hasValue(1);

      clock.advance(ABSENT_TTL.plusSeconds(3)); // past the absent TTL and its grace
      assertThat(cache.findIfPresent("k")).isEqualTo(new Lookup.NotCached<>());
      assertThat(cache.get("k", this::load)).isEqualTo("loaded k");
      assertThat(loads).hasValue(2);
    }
  }

  @Test
  void withAbsencesNotCached_putAbsentInvalidates() {
    try (SustainableCache<String> cache = builder().absentTtl(Duration.ZERO).build()) {
      cache.put("k", "old");
      cache.putAbsent("k");
      assertThat(cache.findIfPresent("k")).isEqualTo(new Lookup.NotCached<>());
      assertThat(cache.get("k", this::load)).isEqualTo("loaded k");
    }
  }
}
