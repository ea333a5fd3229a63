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
 * {@code lookup} tells "cached as no value" from "nothing cached", and {@code putNoValue}
 * caches "no value" (issue 15: Spring's {@code allowNullValues} needs both).
 */
final class CachedAbsenceTest {

  private static final Duration TTL = Duration.ofSeconds(10);
  private static final Duration NO_VALUE_TTL = Duration.ofSeconds(3);

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
  void lookup_tellsNoValueFromNothingCached_andNeverLoads() throws Exception {
    try (SustainableCache<String> cache = builder().noValueTtl(NO_VALUE_TTL).build()) {
      assertThat(cache.lookup("k")).isEqualTo(new Lookup.NotCached<>());
      assertThat(cache.lookupAsync("k").get()).isEqualTo(new Lookup.NotCached<>());

      assertThat(cache.find("k", key -> null)).isEmpty(); // the loader found no row
      assertThat(cache.lookup("k")).isEqualTo(new Lookup.NoValue<>());
      assertThat(cache.lookupAsync("k").get()).isEqualTo(new Lookup.NoValue<>());
      assertThat(cache.getIfPresent("k")).isEmpty();

      cache.put("k", "v");
      assertThat(cache.lookup("k")).isEqualTo(new Lookup.Hit<>("v"));
      assertThat(cache.lookupAsync("k").get()).isEqualTo(new Lookup.Hit<>("v"));
      assertThat(loads).hasValue(0);
    }
  }

  @Test
  void putNoValue_cachesNoValueForTheAbsentTtl_overAnOldValue() {
    try (SustainableCache<String> cache = builder().noValueTtl(NO_VALUE_TTL).build()) {
      assertThat(cache.get("k", this::load)).isEqualTo("loaded k");
      cache.putNoValue("k");

      assertThat(cache.lookup("k")).isEqualTo(new Lookup.NoValue<>());
      assertThat(cache.find("k", this::load)).isEmpty();
      assertThatThrownBy(() -> cache.get("k", this::load))
          .isInstanceOf(CacheLoadException.class).hasMessageContaining("no value");
      assertThat(loads).as("no load while no value is cached").hasValue(1);

      clock.advance(NO_VALUE_TTL.plusSeconds(3)); // past the no-value TTL and its grace
      assertThat(cache.lookup("k")).isEqualTo(new Lookup.NotCached<>());
      assertThat(cache.get("k", this::load)).isEqualTo("loaded k");
      assertThat(loads).hasValue(2);
    }
  }

  @Test
  void withAbsencesNotCached_putNoValueInvalidates() {
    try (SustainableCache<String> cache = builder().noValueTtl(Duration.ZERO).build()) {
      cache.put("k", "old");
      cache.putNoValue("k");
      assertThat(cache.lookup("k")).isEqualTo(new Lookup.NotCached<>());
      assertThat(cache.get("k", this::load)).isEqualTo("loaded k");
    }
  }
}
