package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 24, defect 3, beyond the near cache: every duration the cache measures on this host is
 * on the ticker, so a wall clock that is set (stepped back, or jumping ahead) moves none of them.
 * The fake clock's {@code setMillis} moves the wall clock alone; {@code advance} lets time pass.
 */
final class WallClockStepTest {

  private static final Duration TTL = Duration.ofMinutes(10);
  private static final long TEN_MINUTES = Duration.ofMinutes(10).toMillis();

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final SustainableCache<String> cache = SustainableCache
      .builder(InMemoryStore.create(clock)).namespace("step").ttl(TTL).codec(ValueCodec.utf8())
      .clock(clock).ticker(clock.ticker()).scheduler(scheduler)
      .refreshExecutor(new ManualExecutor()).random(FixedRandom.neverEarly())
      .failureBackoff(Duration.ofSeconds(1), Duration.ofSeconds(1))
      .loadTimeout(Duration.ofSeconds(30)).build();
  private final AtomicInteger loaderCalls = new AtomicInteger();

  @AfterEach
  void close() {
    cache.close();
  }

  private String failing(String key) throws IOException {
    loaderCalls.incrementAndGet();
    throw new IOException("db down");
  }

  @Test
  void aLoadsTime_isMeasuredOnTheTicker_notOnAWallClockSteppedBackMeanwhile() {
    cache.get("k", key -> {
      clock.advanceMillis(50);
      clock.setMillis(clock.millis() - TEN_MINUTES);
      return "v";
    });

    assertThat(cache.stats().totalLoadTimeMillis()).isEqualTo(50);
  }

  @Test
  void aWallClockJumpingAhead_doesNotEndAFailureBackoff() {
    assertThatThrownBy(() -> cache.get("k", this::failing))
        .isInstanceOf(CacheLoadException.class);
    clock.setMillis(clock.millis() + Duration.ofHours(1).toMillis());

    assertThatThrownBy(() -> cache.get("k", this::failing)).as("within the back-off")
        .isInstanceOf(CacheLoadException.class).hasMessageContaining("not loaded again");
    assertThat(loaderCalls).hasValue(1);
    assertThat(cache.stats().count("failure_remembered")).isEqualTo(1);
  }

  @Test
  void aWallClockSteppingBack_doesNotStretchAFailureBackoff() {
    assertThatThrownBy(() -> cache.get("k", this::failing))
        .isInstanceOf(CacheLoadException.class);
    clock.setMillis(clock.millis() - TEN_MINUTES);
    clock.advance(Duration.ofMillis(1_500)); // past the back-off's cap of 1 s

    assertThat(cache.get("k", key -> "loaded again")).isEqualTo("loaded again");
    assertThat(cache.stats().count("failure_remembered")).isZero();
  }

  @Test
  void aWallClockJumpingAhead_doesNotTimeOutALoadInFlight() {
    CompletableFuture<String> slow = new CompletableFuture<>();
    CompletableFuture<String> first = cache.getAsync("k", key -> {
      loaderCalls.incrementAndGet();
      return slow;
    });
    clock.setMillis(clock.millis() + Duration.ofHours(1).toMillis());
    scheduler.runDue();

    CompletableFuture<String> second = cache.getAsync("k", key -> {
      loaderCalls.incrementAndGet();
      return CompletableFuture.completedFuture("a second load");
    });
    slow.complete("the first load");

    assertThat(second.join()).as("joined the load in flight").isEqualTo("the first load");
    assertThat(first.join()).isEqualTo("the first load");
    assertThat(loaderCalls).hasValue(1);
    assertThat(cache.stats().count("load_timeout")).isZero();
  }
}
