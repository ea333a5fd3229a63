package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link SustainableCache#getAsync}: loads that complete later, driven by the test. */
final class SustainableCacheAsyncTest {

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);
  private final ManualExecutor executor = new ManualExecutor();
  private final List<CompletableFuture<String>> pending = new ArrayList<>();
  private final AsyncLoader<String> db = key -> {
    CompletableFuture<String> result = new CompletableFuture<>();
    pending.add(result);
    return result;
  };
  private SustainableCache<String> cache;

  private SustainableCache<String> build(double draw) {
    return build(draw, Duration.ofSeconds(1));
  }

  private SustainableCache<String> build(double draw, Duration failureBackoff) {
    cache = SustainableCache.builder(store).ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8())
        .refreshPolicy(SustainableCacheTest.EAGER_SUS).refreshExecutor(executor).clock(clock)
        .ticker(clock.ticker())
        .failureBackoff(failureBackoff).random(RefreshPolicyTest.fixed(draw)).build();
    return cache;
  }

  @AfterEach
  void close() {
    cache.close();
  }

  @Test
  void concurrentMissesShareOneLoadThatCompletesLater() throws Exception {
    build(0.0);
    CompletableFuture<String> first = cache.getAsync("k", db);
    CompletableFuture<String> second = cache.getAsync("k", db);

    assertThat(pending).hasSize(1);
    assertThat(first).isNotDone();
    clock.advanceMillis(120);
    pending.get(0).complete("loaded");

    assertThat(first.get()).isEqualTo("loaded");
    assertThat(second.get()).isEqualTo("loaded");
    assertThat(cache.getAsync("k", db)).isCompletedWithValue("loaded");
    assertThat(cache.stats().totalLoadTimeMillis()).as("measured until completion").isEqualTo(120);
  }

  @Test
  void cancellingOneCallersFutureDoesNotCancelTheSharedLoad() throws Exception {
    build(0.0);
    CompletableFuture<String> first = cache.getAsync("k", db);
    CompletableFuture<String> second = cache.getAsync("k", db);

    first.cancel(true);
    pending.get(0).complete("loaded");

    assertThat(second.get()).isEqualTo("loaded");
    assertThat(cache.getIfPresent("k")).contains("loaded");
  }

  @Test
  void failedAsyncLoadFailsEveryWaiterWithCacheLoadException() {
    build(0.0, Duration.ZERO);
    CompletableFuture<String> first = cache.getAsync("k", db);
    CompletableFuture<String> second = cache.getAsync("k", db);
    IllegalStateException failure = new IllegalStateException("db down");

    pending.get(0).completeExceptionally(failure);

    for (CompletableFuture<String> f : List.of(first, second)) {
      assertThat(f).failsWithin(Duration.ZERO).withThrowableOfType(ExecutionException.class)
          .havingCause().isInstanceOf(CacheLoadException.class).withCause(failure);
    }
    assertThat(cache.getAsync("k", db)).as("a failure is not cached").isNotDone();
  }

  @Test
  void backgroundRefreshKeepsTheKeyInFlightUntilItsLoadCompletes() {
    build(Math.nextDown(1.0));
    cache.put("k", "v0");

    assertThat(cache.getAsync("k", db)).isCompletedWithValue("v0");
    executor.runAll(); // the task starts the load and returns
    assertThat(pending).hasSize(1);
    assertThat(cache.getAsync("k", db)).isCompletedWithValue("v0");
    executor.runAll();
    assertThat(pending).as("deduplicated while the load runs").hasSize(1);

    pending.get(0).complete("v1");
    assertThat(cache.getAsync("k", db)).isCompletedWithValue("v1");
    executor.runAll();
    assertThat(pending).as("released after completion").hasSize(2);
    assertThat(cache.stats().count("refresh_deduped")).isEqualTo(1);
  }

  /**
   * A miss of {@code getAsync} that joined a load which ended without a value (here a background
   * refresh that lost the fleet lease to another instance) reads the key once more, as {@code
   * get} does; it used to fail at once with "ended without a value twice" (review of the single
   * consumer of the read step, 2026-11-27: the first asynchronous read was passed as the re-read).
   */
  @Test
  void getAsync_aMissThatJoinedALoadEndingWithoutAValue_readsOnceMore() throws Exception {
    cache = SustainableCache.builder(store).namespace("a").ttl(Duration.ofSeconds(10))
        .codec(ValueCodec.utf8()).refreshPolicy(SustainableCacheTest.EAGER_SUS)
        .refreshExecutor(executor).clock(clock).ticker(clock.ticker())
        .random(RefreshPolicyTest.fixed(Math.nextDown(1.0))).build();
    cache.put("k", "v0");
    assertThat(cache.getAsync("k", db)).isCompletedWithValue("v0"); // queues a refresh
    assertThat(executor.queued()).isEqualTo(1);
    // another instance holds the key's lease; the item leaves the server
    store.set("a:k\u007Flease", ("L:" + (clock.millis() + 5_000) + ":someone-else")
        .getBytes(StandardCharsets.US_ASCII), 0).join();
    store.delete("a:k").join();

    CompletableFuture<String> miss = cache.getAsync("k", db); // joins the refresh
    assertThat(miss).isNotDone();
    try (SustainableCache<String> other = SustainableCache.builder(store).namespace("a")
        .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).clock(clock)
        .ticker(clock.ticker()).build()) {
      other.put("k", "theirs"); // what the once-more read finds
    }
    executor.runAll(); // the refresh loses the lease: it ends without loading

    assertThat(miss.get(5, TimeUnit.SECONDS)).isEqualTo("theirs");
    assertThat(pending).as("nothing loaded here").isEmpty();
  }

  /**
   * The bound of those reads again: a read whose key's joined loads end without a value four
   * times in a row (three reads again) fails, as a load that failed does (nothing stale to
   * serve: each read found the key missing), and its loader is never called.
   */
  @Test
  void getAsync_aMissWhoseJoinedLoadsEndWithoutAValueFourTimes_failsAfterThreeReadsAgain() {
    cache = SustainableCache.builder(store).namespace("a").ttl(Duration.ofSeconds(10))
        .codec(ValueCodec.utf8()).refreshPolicy(SustainableCacheTest.EAGER_SUS)
        .refreshExecutor(executor).clock(clock).ticker(clock.ticker())
        .random(RefreshPolicyTest.fixed(Math.nextDown(1.0))).build();
    // another instance holds the key's lease throughout: every refresh here loses it
    store.set("a:k\u007Flease", ("L:" + (clock.millis() + 5_000) + ":someone-else")
        .getBytes(StandardCharsets.US_ASCII), 0).join();
    cache.put("k", "v0");
    assertThat(cache.getAsync("k", db)).isCompletedWithValue("v0"); // queues a refresh
    store.delete("a:k").join();
    CompletableFuture<String> miss = cache.getAsync("k", db); // joins it

    for (int reread = 1; reread <= 3; reread++) {
      // the refresh loses the lease and ends: the miss reads again, queued (not on its thread)
      runNextOnAnotherThread();
      assertThat(executor.queued()).as("read again %d queued", reread).isEqualTo(1);
      cache.put("k", "v0");
      assertThat(cache.getAsync("k", db)).isCompletedWithValue("v0"); // the next refresh
      store.delete("a:k").join();
      runNextOnAnotherThread(); // the read again: a miss, which joins that refresh
      assertThat(miss).as("read again %d joined a refresh", reread).isNotDone();
    }
    runNextOnAnotherThread(); // the fourth joined load ends without a value too

    assertThat(miss).isCompletedExceptionally();
    assertThatThrownBy(miss::join).hasCauseInstanceOf(CacheLoadException.class)
        .hasMessageContaining("ended without a value 4 times");
    assertThat(pending).as("the loader never called").isEmpty();
    assertThat(cache.stats().count("miss")).as("the first read and its three reads again")
        .isEqualTo(4);
  }

  /** Runs the next queued task on a thread that is not the reader's, as a refresh thread is. */
  private void runNextOnAnotherThread() {
    CompletableFuture.runAsync(executor::runNext, task -> new Thread(task).start()).join();
  }
}
