package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * An asynchronous bulk load whose stage completes on a foreign thread (an asynchronous driver's
 * event loop) completes its callers on that thread at once, like a single-key load: only the
 * writes are handed to the refresh executor. It used to hand the completion of the flights to the
 * executor too, so {@code getAllAsync} (and every caller that joined one of its keys) waited for
 * the executor; with a queued executor that never runs, forever.
 * {@code BulkLoadsTest.asyncBulkLoaderCompletingOnAnotherThread_completesTheCall} hung whenever
 * its {@code supplyAsync} completed after the cache had attached its continuation; this test
 * makes that order certain.
 */
final class AsyncBulkLoadCompletionTest {

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);
  private final ManualExecutor executor = new ManualExecutor();

  @Test
  void anAsyncBulkLoadCompletedOnAnotherThread_completesItsCallersBeforeTheExecutorRuns()
      throws InterruptedException {
    try (SustainableCache<String> cache = SustainableCache.builder(store).namespace("b")
        .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .scheduler(ManualScheduler.on(clock.ticker())).refreshExecutor(executor)
        .random(FixedRandom.neverEarly()).fleetLease(false)
        // every store call counts: no generation of the namespace, whose polls
        // are store calls too
        .invalidateAllBound(Duration.ZERO)
        .build()) {
      CompletableFuture<Map<String, String>> query = new CompletableFuture<>();
      CompletableFuture<Map<String, String>> values =
          cache.getAllAsync(List.of("a", "b"), keys -> query);
      CompletableFuture<String> joined = cache.getAsync("a",
          key -> CompletableFuture.completedFuture("unused"));

      Thread eventLoop = new Thread(() -> query.complete(Map.of("a", "1", "b", "2")),
          "driver-event-loop");
      eventLoop.start();
      eventLoop.join();

      assertThat(values).as("completed on the event loop, without the executor")
          .isCompletedWithValue(Map.of("a", "1", "b", "2"));
      assertThat(joined).isCompletedWithValue("1");
      assertThat(store.size()).as("the writes wait for the executor").isZero();
      executor.runAll();
      assertThat(cache.getIfPresent("a")).contains("1");
      assertThat(cache.getIfPresent("b")).contains("2");
      assertThat(((DefaultSustainableCache<?>) cache).registeredKeyCount()).isZero();
    }
  }
}
