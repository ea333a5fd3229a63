package io.sustainablecache.micrometer;

import io.sustainablecache.RefreshPolicy;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import java.time.Duration;

/** The cache the module's unit tests observe and measure. */
final class TestCaches {

  private TestCaches() {}

  /**
   * A cache of strings, namespace {@code books}, TTL 10 s, in {@code clock}'s time; every hit
   * asks for a refresh (SUS over the whole TTL, always early), which {@code refreshes} runs.
   */
  static SustainableCacheBuilder<String> books(InMemoryStore store, FakeClock clock,
      ManualExecutor refreshes) {
    return SustainableCache.builder(store)
        .namespace("books")
        .ttl(Duration.ofSeconds(10))
        .refreshPolicy(RefreshPolicy.sustainable(1.0, 1.0))
        .codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker())
        .random(FixedRandom.alwaysEarly())
        .refreshExecutor(refreshes);
  }
}
