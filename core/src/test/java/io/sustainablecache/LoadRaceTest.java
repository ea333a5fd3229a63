package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ScriptedStore;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Interleavings found by the fault-tolerance suite against real memcached, reproduced here
 * deterministically with latches.
 */
final class LoadRaceTest {

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore memory = InMemoryStore.create(clock);

  /** A miss while a background refresh of the same key is loading shares that load. */
  @Test
  void missDuringARunningRefreshJoinsItInsteadOfLoadingAgain() throws Exception {
    AtomicInteger concurrent = new AtomicInteger();
    AtomicInteger maxConcurrent = new AtomicInteger();
    AtomicInteger loads = new AtomicInteger();
    CountDownLatch refreshStarted = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Loader<String> slow = key -> {
      maxConcurrent.accumulateAndGet(concurrent.incrementAndGet(), Math::max);
      loads.incrementAndGet();
      refreshStarted.countDown();
      release.await(10, TimeUnit.SECONDS);
      concurrent.decrementAndGet();
      return "v" + loads.get();
    };
    try (SustainableCache<String> cache = SustainableCache.builder(memory)
        .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .refreshPolicy(SustainableCacheTest.EAGER_SUS)
        .random(RefreshPolicyTest.fixed(Math.nextDown(1.0))).build()) {
      cache.put("k", "v0");
      assertThat(cache.get("k", slow)).isEqualTo("v0"); // schedules the refresh
      assertThat(refreshStarted.await(5, TimeUnit.SECONDS)).isTrue();

      memory.delete("k").join(); // e.g. evicted, or a read that failed: the next get is a miss
      CompletableFuture<String> miss = CompletableFuture.supplyAsync(() -> cache.get("k", slow));
      await().pollDelay(Duration.ofMillis(50)).atMost(Duration.ofSeconds(1))
          .until(() -> !miss.isDone());
      release.countDown();

      assertThat(miss.get(5, TimeUnit.SECONDS)).isEqualTo("v1");
      assertThat(loads).hasValue(1);
      assertThat(maxConcurrent).hasValue(1);
    }
  }

  /**
   * A cold-miss load whose {@code add} reaches the server after an invalidation must not leave
   * its (possibly outdated) value behind: the invalidation's tombstone makes the add fail.
   */
  @Test
  void invalidateDuringAColdMissAddLeavesNothingBehind() throws Exception {
    ScriptedStore slowAdds = ScriptedStore.over(memory);
    ScriptedStore.Hold adds = slowAdds.holdRequests(ScriptedStore.Op.ADD);
    try (SustainableCache<String> cache = SustainableCache.builder(slowAdds)
        .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .fleetLease(false)
        .build()) {
      // the caller gets its value without waiting for the write, which is still on the wire
      assertThat(cache.get("k", key -> "v0 (read before the update)"))
          .isEqualTo("v0 (read before the update)");
      assertThat(adds.waiting()).isEqualTo(1);

      cache.invalidate("k"); // the source changed to v1
      adds.release(); // the add lands after the tombstone

      assertThat(cache.getIfPresent("k")).as("the outdated value was not stored").isEmpty();
      assertThat(cache.get("k", key -> "v1")).isEqualTo("v1");
      assertThat(cache.stats().count("stale_set_discard")).isEqualTo(1);
    }
  }
}
