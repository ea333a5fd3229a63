package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.AsyncLoader;
import io.sustainablecache.CacheLoadException;
import io.sustainablecache.Loader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The per-key state machine under the inputs that used to break it (issue 7, scenarios 1, 2, 4,
 * 5, 6 and 8): loaders throwing {@link Error}s, hanging, or calling back into their own key;
 * invalidations during every phase of a load; refresh executors that drop work; thousands of
 * failing keys. Deterministic: a fake clock, a manual scheduler and a manual executor decide
 * every timing; threads are only used where a synchronous loader must block, with latches.
 */
final class PerKeyStateTest {

  private static final Duration TTL = Duration.ofSeconds(10);
  private static final Duration LOAD_TIMEOUT = Duration.ofSeconds(5);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final ManualExecutor executor = new ManualExecutor();
  private final AtomicInteger loads = new AtomicInteger();
  private final List<AutoCloseable> closeables = new ArrayList<>();

  private SustainableCacheBuilder<String> builder() {
    return SustainableCache.builder(store).namespace("p").ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler).refreshExecutor(executor)
        .random(FixedRandom.neverEarly()).loadTimeout(LOAD_TIMEOUT);
  }

  private SustainableCache<String> cache(SustainableCacheBuilder<String> builder) {
    SustainableCache<String> cache = builder.build();
    closeables.add(cache);
    return cache;
  }

  private static DefaultSustainableCache<?> impl(SustainableCache<?> cache) {
    return (DefaultSustainableCache<?>) cache;
  }

  private Loader<String> counting(String value) {
    return key -> {
      loads.incrementAndGet();
      return value;
    };
  }

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable closeable : closeables) {
      closeable.close();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Scenario 1: Errors fail their own callers only

  @ParameterizedTest
  @ValueSource(strings = {"AssertionError", "StackOverflowError", "NoClassDefFoundError"})
  void loaderThrowingAnError_failsItsCaller_andTheNextCallerLoadsNormally(String type) {
    SustainableCache<String> cache = cache(builder().failureBackoff(Duration.ZERO));
    Error error = switch (type) {
      case "AssertionError" -> new AssertionError("bug in the loader");
      case "StackOverflowError" -> new StackOverflowError();
      default -> new NoClassDefFoundError("com/example/Missing");
    };

    assertThatThrownBy(() -> cache.get("k", key -> {
      throw error;
    })).isSameAs(error);

    assertThat(impl(cache).registeredKeyCount()).as("no record left behind").isZero();
    assertThat(cache.get("k", counting("v"))).isEqualTo("v");
    assertThat(cache.stats().loadFailureCount()).isEqualTo(1);
  }

  @Test
  void loaderThrowingAnError_withTheDefaultBackoff_failsFastUntilTheWindowEnds_thenLoads() {
    SustainableCache<String> cache = cache(builder());
    AssertionError error = new AssertionError("bug");
    assertThatThrownBy(() -> cache.get("k", key -> {
      throw error;
    })).isSameAs(error);

    assertThatThrownBy(() -> cache.get("k", counting("v")))
        .isInstanceOf(CacheLoadException.class).hasMessageContaining("failureBackoff")
        .hasCause(error);
    assertThat(loads).as("remembered, not retried").hasValue(0);

    clock.advance(Duration.ofMillis(1_500)); // the first window is 0.5-1.5 s
    assertThat(cache.get("k", counting("v"))).isEqualTo("v");
    assertThat(cache.stats().count("failure_remembered")).isEqualTo(1);
  }

  @Test
  void asyncLoaderThrowingAnError_failsItsCallersOnly() {
    SustainableCache<String> cache = cache(builder().failureBackoff(Duration.ZERO));
    CompletableFuture<String> stage = new CompletableFuture<>();
    CompletableFuture<String> first = cache.getAsync("k", key -> stage);
    CompletableFuture<String> second = cache.getAsync("k", key -> stage);
    stage.completeExceptionally(new StackOverflowError());

    assertThat(first).isCompletedExceptionally();
    assertThat(second).isCompletedExceptionally();
    assertThat(cache.getAsync("k", key -> CompletableFuture.completedFuture("v")))
        .isCompletedWithValue("v");
  }

  @Test
  void codecThrowingAnErrorOnDecode_failsThatRead_andLeavesNoState() {
    ValueCodec<String> fragile = new ValueCodec<>() {
      @Override
      public byte[] encode(String value) {
        return ValueCodec.utf8().encode(value);
      }

      @Override
      public String decode(byte[] bytes, int offset, int length) {
        if (length > 0 && bytes[offset] == 'X') {
          throw new StackOverflowError();
        }
        return ValueCodec.utf8().decode(bytes, offset, length);
      }
    };
    SustainableCache<String> cache = cache(SustainableCache.builder(store).namespace("p")
        .ttl(TTL).codec(fragile).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(executor)
        .random(FixedRandom.neverEarly()));
    cache.put("k", "X marks a payload the codec chokes on");

    assertThatThrownBy(() -> cache.get("k", counting("v"))).isInstanceOf(StackOverflowError.class);
    assertThat(impl(cache).registeredKeyCount()).isZero();
    cache.put("k", "fine");
    assertThat(cache.get("k", counting("v"))).isEqualTo("fine");
  }

  @Test
  void codecThrowingAnErrorOnEncode_returnsTheValue_skipsTheWrite_andReleasesTheKey() {
    ValueCodec<String> cyclic = new ValueCodec<>() {
      @Override
      public byte[] encode(String value) {
        throw new StackOverflowError();
      }

      @Override
      public String decode(byte[] bytes, int offset, int length) {
        return ValueCodec.utf8().decode(bytes, offset, length);
      }
    };
    SustainableCache<String> cache = cache(SustainableCache.builder(store).ttl(TTL).codec(cyclic)
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler).refreshExecutor(executor));

    assertThat(cache.get("k", counting("v"))).isEqualTo("v");
    assertThat(cache.stats().count("skipped_write")).isEqualTo(1);
    assertThat(impl(cache).registeredKeyCount()).isZero();
  }

  // ---------------------------------------------------------------------------------------------
  // Scenario 2: a read after invalidate never sees a load that began before it

  @Test
  void getAfterInvalidate_doesNotJoinTheLoadThatBeganBefore_async() {
    SustainableCache<String> cache = cache(builder());
    List<CompletableFuture<String>> queries = new ArrayList<>();
    AsyncLoader<String> db = key -> {
      CompletableFuture<String> query = new CompletableFuture<>();
      queries.add(query);
      return query;
    };
    CompletableFuture<String> before = cache.getAsync("k", db);
    cache.invalidate("k");
    CompletableFuture<String> after = cache.getAsync("k", db);

    assertThat(queries).as("the read after invalidate started its own load").hasSize(2);
    queries.get(0).complete("old");
    queries.get(1).complete("new");

    assertThat(before).isCompletedWithValue("old");
    assertThat(after).isCompletedWithValue("new");
    assertThat(cache.getIfPresent("k")).contains("new");
  }

  @Test
  void getAfterInvalidate_doesNotJoinTheLoadThatBeganBefore_sync() throws Exception {
    SustainableCache<String> cache = cache(builder());
    CountDownLatch oldLoadRunning = new CountDownLatch(1);
    CountDownLatch releaseOldLoad = new CountDownLatch(1);
    CompletableFuture<String> before = CompletableFuture.supplyAsync(() -> cache.get("k", key -> {
      oldLoadRunning.countDown();
      releaseOldLoad.await(10, TimeUnit.SECONDS);
      return "old";
    }));
    assertThat(oldLoadRunning.await(5, TimeUnit.SECONDS)).isTrue();

    cache.invalidate("k");
    String after = cache.get("k", counting("new"));

    assertThat(after).isEqualTo("new");
    releaseOldLoad.countDown();
    assertThat(before.get(5, TimeUnit.SECONDS)).isEqualTo("old");
    assertThat(cache.getIfPresent("k")).as("the old load was not written").contains("new");
  }

  @Test
  void invalidateDuringTheWrite_theLateWriteFailsItsCompareAndSet() {
    SustainableCache<String> cache = cache(builder());
    cache.put("k", "v0");
    clock.advance(TTL.plusMillis(1)); // stale: the next read schedules a refresh
    assertThat(cache.get("k", counting("refreshed, read before the update"))).isEqualTo("v0");

    cache.invalidate("k"); // before the refresh runs
    executor.runAll();

    assertThat(cache.getIfPresent("k")).isEmpty();
    assertThat(cache.get("k", counting("v1"))).isEqualTo("v1");
  }

  @Test
  void thousandTrials_readsStartedAfterInvalidateNeverReturnTheOldValue() throws Exception {
    int violations = 0;
    for (int trial = 0; trial < 1_000; trial++) {
      InMemoryStore trialStore = InMemoryStore.create(clock);
      try (SustainableCache<String> cache = SustainableCache.builder(trialStore).ttl(TTL)
          .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).build()) {
        AtomicReference<String> source = new AtomicReference<>("old");
        CountDownLatch loading = new CountDownLatch(1);
        CompletableFuture<String> before = CompletableFuture.supplyAsync(() -> cache.get("k",
            key -> {
              String read = source.get();
              loading.countDown();
              Thread.onSpinWait();
              return read;
            }));
        loading.await(5, TimeUnit.SECONDS);
        source.set("new");
        cache.invalidate("k");
        String after = cache.get("k", key -> source.get());
        if (!after.equals("new")) {
          violations++;
        }
        before.get(5, TimeUnit.SECONDS);
        if (!cache.get("k", key -> source.get()).equals("new")) {
          violations++;
        }
      }
    }
    assertThat(violations).isZero();
  }

  // ---------------------------------------------------------------------------------------------
  // Scenario 4: a hanging load cannot hold its key hostage

  @Test
  void hangingAsyncLoad_timesOut_waitersFail_andTheNextCallerLoadsAgain() {
    SustainableCache<String> cache = cache(builder());
    CompletableFuture<String> never = new CompletableFuture<>();
    CompletableFuture<String> first = cache.getAsync("k", key -> never);
    CompletableFuture<String> joined = cache.getAsync("k", key -> never);

    clock.advance(LOAD_TIMEOUT);
    scheduler.runDue();

    assertThat(first).failsWithin(Duration.ZERO).withThrowableOfType(ExecutionException.class)
        .havingCause().isInstanceOf(CacheLoadException.class).withMessageContaining("loadTimeout");
    assertThat(joined).isCompletedExceptionally();
    assertThat(cache.get("k", counting("v"))).isEqualTo("v");
    assertThat(cache.stats().count("load_timeout")).isEqualTo(1);

    never.complete("late"); // the abandoned load finishes after all: not written
    assertThat(cache.getIfPresent("k")).contains("v");
  }

  @Test
  void hangingSyncLoad_timesOut_forTheThreadWaitingOnIt() throws Exception {
    SustainableCache<String> cache = cache(builder());
    CountDownLatch hanging = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<String> leader = CompletableFuture.supplyAsync(() -> cache.get("k",
        key -> {
          hanging.countDown();
          release.await(30, TimeUnit.SECONDS);
          return "late";
        }));
    assertThat(hanging.await(5, TimeUnit.SECONDS)).isTrue();
    // the leader's own dependents are on the flight before its loader runs: the waiter is one
    // more (counting from 0 let the test go on before the waiter joined, once under load)
    Flight<?> hung = impl(cache).registry().flightOf("p:k");
    assertThat(hung).isNotNull();
    int leaders = hung.waiting();
    CompletableFuture<String> waiter = CompletableFuture.supplyAsync(
        () -> cache.get("k", counting("unused")));
    await().atMost(Duration.ofSeconds(5)).until(() -> hung.waiting() > leaders);

    clock.advance(LOAD_TIMEOUT);
    scheduler.runDue();

    assertThat(waiter).failsWithin(Duration.ofSeconds(5))
        .withThrowableOfType(ExecutionException.class)
        .havingCause().isInstanceOf(CacheLoadException.class);
    assertThat(cache.get("k", counting("v"))).isEqualTo("v");
    release.countDown();
    assertThat(leader.get(5, TimeUnit.SECONDS)).isEqualTo("late");
    assertThat(cache.getIfPresent("k")).as("the late load was not written").contains("v");
  }

  @Test
  void hangingLoad_isReleasedByInvalidate() {
    SustainableCache<String> cache = cache(builder());
    CompletableFuture<String> hung = cache.getAsync("k", key -> new CompletableFuture<>());
    assertThat(hung).isNotDone();

    cache.invalidate("k");

    assertThat(cache.get("k", counting("v"))).isEqualTo("v");
    assertThat(loads).hasValue(1);
  }

  @Test
  void hangingLoad_foundPastItsTimeoutBeforeTheTimerFires_isReleasedByTheNextCaller() {
    SustainableCache<String> cache = cache(builder());
    CompletableFuture<String> hung = cache.getAsync("k", key -> new CompletableFuture<>());

    clock.advance(LOAD_TIMEOUT); // the scheduler has not run yet
    assertThat(cache.get("k", counting("v"))).isEqualTo("v");
    assertThat(hung).isCompletedExceptionally();
  }

  // ---------------------------------------------------------------------------------------------
  // Scenario 5: a loader reading its own key fails fast

  @Test
  void loaderCallingGetOnItsOwnKey_failsFastWithIllegalStateException() {
    SustainableCache<String> cache = cache(builder());
    AtomicReference<Throwable> inner = new AtomicReference<>();

    assertThatThrownBy(() -> cache.get("k", key -> {
      try {
        return cache.get("k", counting("never"));
      } catch (IllegalStateException e) {
        inner.set(e);
        throw e;
      }
    })).isInstanceOf(CacheLoadException.class).hasCauseInstanceOf(IllegalStateException.class);

    assertThat(inner.get()).hasMessageContaining("recursive load");
    assertThat(loads).hasValue(0);
    assertThat(impl(cache).registeredKeyCount()).as("released, backing off").isEqualTo(1);
  }

  @Test
  void loaderReadingAnotherKey_isFine() {
    SustainableCache<String> cache = cache(builder());
    assertThat(cache.get("a", key -> "a+" + cache.get("b", counting("b")))).isEqualTo("a+b");
  }

  @Test
  void asyncLoaderCallingGetAsyncOnItsOwnKey_getsAFailedFuture() {
    SustainableCache<String> cache = cache(builder().failureBackoff(Duration.ZERO));
    AtomicReference<CompletableFuture<String>> inner = new AtomicReference<>();
    CompletableFuture<String> outer = cache.getAsync("k", key -> {
      inner.set(cache.getAsync("k", k -> CompletableFuture.completedFuture("never")));
      return CompletableFuture.completedFuture("outer");
    });

    assertThat(outer).isCompletedWithValue("outer");
    assertThat(inner.get()).failsWithin(Duration.ZERO)
        .withThrowableOfType(ExecutionException.class)
        .havingCause().isInstanceOf(IllegalStateException.class);
  }

  @Test
  void refreshLoaderCallingGetOnItsOwnKey_seesTheCachedValue() {
    SustainableCache<String> cache = cache(builder());
    cache.put("k", "v0");
    clock.advance(TTL.plusMillis(1)); // stale
    assertThat(cache.get("k", key -> "v1 derived from " + cache.get("k", counting("x"))))
        .isEqualTo("v0");
    executor.runAll(); // the refresh's loader reads its own (stale, cached) key: no deadlock

    assertThat(cache.getIfPresent("k")).contains("v1 derived from v0");
  }

  @Test
  void bulkLoaderCallingGetOnOneOfItsKeys_failsFast() {
    SustainableCache<String> cache = cache(builder().failureBackoff(Duration.ZERO));
    assertThatThrownBy(() -> cache.getAll(List.of("a", "b"),
        keys -> Map.of("a", cache.get("b", counting("x")))))
        .isInstanceOf(CacheLoadException.class).hasCauseInstanceOf(IllegalStateException.class);
    assertThat(cache.getAll(List.of("a", "b"), keys -> Map.of("a", "1", "b", "2")))
        .containsExactly(Map.entry("a", "1"), Map.entry("b", "2"));
  }

  // ---------------------------------------------------------------------------------------------
  // Scenario 6: a miss that joins a refresh gets the value cached even if the item vanished

  @Test
  void missJoiningARefreshWhoseItemWasEvicted_getsTheValueCached() {
    SustainableCache<String> cache = cache(builder());
    cache.put("k", "v0");
    clock.advance(TTL.plusMillis(1));
    cache.get("k", counting("v1")); // stale: refresh scheduled with v0's CAS token
    assertThat(executor.queued()).isEqualTo(1);

    store.delete("p:k").join(); // evicted (or expired) before the refresh ran
    CompletableFuture<String> miss = cache.getAsync("k",
        key -> CompletableFuture.completedFuture("unused"));
    assertThat(miss).as("joined the refresh").isNotDone();
    executor.runAll();

    assertThat(miss).isCompletedWithValue("v1");
    assertThat(cache.getIfPresent("k")).as("cas NOT_FOUND fell back to add").contains("v1");
    assertThat(loads).hasValue(1);
  }

  // ---------------------------------------------------------------------------------------------
  // Scenario 8: no per-key record outlives its usefulness

  @Test
  void refreshDroppedByADiscardingExecutor_isReclaimedByItsTimeout() {
    SustainableCache<String> cache = cache(builder().grace(Duration.ofSeconds(30)));
    executor.behave(ManualExecutor.Behaviour.DISCARD);
    cache.put("k", "v0");
    clock.advance(TTL.plusMillis(1));
    cache.get("k", counting("v1"));
    assertThat(impl(cache).registeredKeyCount()).isEqualTo(1);

    clock.advance(LOAD_TIMEOUT);
    scheduler.runDue();

    assertThat(impl(cache).registeredKeyCount()).isZero();
    executor.behave(ManualExecutor.Behaviour.QUEUE);
    cache.get("k", counting("v1"));
    assertThat(executor.queued()).as("a new refresh can be scheduled").isEqualTo(1);
  }

  @Test
  void fiveThousandFailingKeys_areForgottenByTime_whenTheCacheIsIdle() {
    SustainableCache<String> cache = cache(builder());
    for (int i = 0; i < 5_000; i++) {
      assertThatThrownBy(() -> cache.get(Integer.toString(loads.incrementAndGet()), key -> {
        throw new IllegalStateException("db down");
      })).isInstanceOf(CacheLoadException.class);
    }
    assertThat(impl(cache).registeredKeyCount()).isEqualTo(5_000);

    clock.advance(Duration.ofSeconds(32)); // past the back-off (<= 1.5 s) plus its window (the 30 s cap)
    scheduler.runDue();

    assertThat(impl(cache).registeredKeyCount()).isZero();
  }

  @Test
  void sweepingCostsAtMostTwoRecordsPerOperation() {
    SustainableCache<String> cache = cache(builder());
    for (int i = 0; i < 1_000; i++) {
      assertThatThrownBy(() -> cache.get("f" + loads.incrementAndGet(), key -> {
        throw new IllegalStateException("db down");
      })).isInstanceOf(CacheLoadException.class);
    }
    clock.advance(Duration.ofSeconds(32)); // every record is due; the drain has not run

    for (int i = 0; i < 10; i++) {
      cache.get("ok" + i, counting("v")); // one begin and one finish each: 4 sweeps
    }

    assertThat(impl(cache).registeredKeyCount()).isEqualTo(1_000 - 10 * 4);
    scheduler.runDue();
    assertThat(impl(cache).registeredKeyCount()).isZero();
  }

  @Test
  void manyDistinctKeys_leaveNoRecordsBehind() {
    try (SustainableCache<String> cache = SustainableCache.builder(store).ttl(TTL)
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).build()) {
      for (int i = 0; i < 50_000; i++) {
        cache.get(Integer.toString(i), key -> key);
        if (i % 10_000 == 0) {
          store.clear();
        }
      }
      assertThat(impl(cache).registeredKeyCount()).isZero();
    }
  }

  @Test
  void absentKeysAreCachedAndRefreshedLikeValues() {
    SustainableCache<String> cache = cache(builder().noValueTtl(Duration.ofSeconds(2)));
    assertThat(cache.find("missing", key -> {
      loads.incrementAndGet();
      return null;
    })).isEmpty();
    assertThat(cache.find("missing", counting("never"))).isEmpty();
    assertThat(loads).hasValue(1);

    byte[] stored = store.gets("p:missing").join().orElseThrow().value();
    assertThat(Envelope.expiresAt(stored) - Envelope.fetchedAt(stored)).isEqualTo(2_000);

    clock.advance(Duration.ofMillis(2_001)); // the absence is stale: SUS refreshes it
    assertThat(cache.find("missing", counting("now it exists"))).isEmpty();
    executor.runAll();
    assertThat(cache.find("missing", counting("unused"))).contains("now it exists");
  }

  @Test
  void findAndGetAllAgreeOnAbsentKeys() {
    SustainableCache<String> cache = cache(builder());
    Map<String, String> found = cache.getAll(List.of("a", "b", "c"), keys -> {
      assertThat(keys).containsExactly("a", "b", "c");
      return Map.of("a", "1");
    });
    assertThat(found).containsExactly(Map.entry("a", "1"));
    assertThat(cache.find("b", counting("x"))).isEmpty();
    assertThat(cache.getAll(Set.of("c"), keys -> Map.of("c", "x"))).isEmpty();
    assertThat(loads).hasValue(0);
  }
}
