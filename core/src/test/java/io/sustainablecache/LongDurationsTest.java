package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.InMemoryStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Issue 15: very long durations gave an {@link ArithmeticException} instead of a clear error, and
 * the longest accepted ones must work, not overflow later.
 */
final class LongDurationsTest {

  private static final Duration HUGE = Duration.ofSeconds(Long.MAX_VALUE);

  @Test
  void everyDurationSetter_rejectsAHugeValueWithAClearError() {
    List<Consumer<SustainableCacheBuilder<byte[]>>> setters = List.of(
        b -> b.ttl(HUGE), b -> b.grace(HUGE), b -> b.noValueTtl(HUGE),
        b -> b.failureBackoff(HUGE), b -> b.failureBackoff(Duration.ofSeconds(1), HUGE),
        b -> b.maxClockSkew(HUGE), b -> b.loadTimeout(HUGE), b -> b.closeTimeout(HUGE),
        b -> b.coalesce(10, HUGE));
    for (Consumer<SustainableCacheBuilder<byte[]>> setter : setters) {
      assertThatThrownBy(() -> setter.accept(SustainableCache.builder(InMemoryStore.create())))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(HUGE.toString());
    }
  }

  @Test
  void theLongestAcceptedDurations_buildACacheThatWorks() {
    FakeClock clock = FakeClock.at(Instant.parse("2037-06-01T00:00:00Z").toEpochMilli());
    InMemoryStore store = InMemoryStore.create(clock);
    Duration year = CacheSettings.MAX_TTL;
    try (SustainableCache<byte[]> cache = SustainableCache.builder(store).clock(clock)
        .ticker(clock.ticker())
        .ttl(year).grace(year).noValueTtl(year).failureBackoff(year, year).maxClockSkew(year)
        .loadTimeout(CacheSettings.MAX_TIMEOUT).build()) {
      assertThat(cache.get("k", key -> new byte[] {1})).containsExactly(1);
      cache.put("p", new byte[] {2});
      assertThat(cache.getIfPresent("p")).hasValueSatisfying(v -> assertThat(v).containsExactly(2));
      assertThat(cache.find("absent", key -> null)).isEmpty();
      cache.invalidate("k");
      assertThat(cache.get("k", key -> new byte[] {3})).containsExactly(3);
    }
  }
}
