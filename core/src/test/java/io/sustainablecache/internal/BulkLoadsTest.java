package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.BulkLoader;
import io.sustainablecache.CacheLoadException;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import io.sustainablecache.testing.ScriptedStore;
import io.sustainablecache.testing.ScriptedStore.Op;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code getAll} (issue 8, part 2): one bulk read, one loader call for the misses, joins of keys
 * already loading, absent keys, and background refreshes coalesced into bulk calls.
 */
final class BulkLoadsTest {

  private static final Duration TTL = Duration.ofSeconds(10);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore server = InMemoryStore.create(clock);
  private final ScriptedStore store = ScriptedStore.over(server);
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final ManualExecutor executor = new ManualExecutor();
  private final List<Set<String>> calls = new CopyOnWriteArrayList<>();
  private SustainableCache<String> cache;

  /** A database where every key but those starting with "missing" has the value key + "!". */
  private final BulkLoader<String> db = keys -> {
    calls.add(Set.copyOf(keys));
    Map<String, String> found = new HashMap<>();
    for (String key : keys) {
      if (!key.startsWith("missing")) {
        found.put(key, key + "!");
      }
    }
    return found;
  };

  private SustainableCache<String> build(SustainableCacheBuilder<String> builder) {
    cache = builder.build();
    return cache;
  }

  private SustainableCacheBuilder<String> builder() {
    return SustainableCache.builder(store).namespace("b").ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler).refreshExecutor(executor)
        .random(FixedRandom.neverEarly()).fleetLease(false)
        // every store call counts: no generation of the namespace, whose polls
        // are store calls too
        .invalidateAllBound(Duration.ZERO);
  }

  @AfterEach
  void close() {
    if (cache != null) {
      cache.close();
    }
  }

  private static List<String> keys(int n) {
    return IntStream.range(0, n).mapToObj(i -> "k" + i).collect(Collectors.toList());
  }

  @Test
  void hundredKeys_oneBulkRead_oneLoaderCall_pipelinedWrites() {
    build(builder());
    Map<String, String> values = cache.getAll(keys(100), db);

    assertThat(values).hasSize(100).containsEntry("k0", "k0!").containsEntry("k99", "k99!");
    assertThat(List.copyOf(values.keySet())).as("in the caller's order").isEqualTo(keys(100));
    assertThat(store.count(Op.GETS_ALL)).isEqualTo(1);
    assertThat(store.count(Op.GETS)).isZero();
    assertThat(calls).hasSize(1);
    assertThat(calls.get(0)).hasSize(100);
    assertThat(store.count(Op.ADD)).isEqualTo(100);
    assertThat(cache.stats().count("bulk_load")).isEqualTo(1);
    assertThat(cache.stats().loadSuccessCount()).isEqualTo(100);
    assertThat(cache.stats().missCount()).isEqualTo(100);

    Map<String, String> again = cache.getAll(keys(100), db);
    assertThat(again).isEqualTo(values);
    assertThat(calls).as("all hits the second time").hasSize(1);
    assertThat(cache.stats().hitCount()).isEqualTo(100);
  }

  @Test
  void onlyTheMissesAreLoaded_hitsAreAnsweredFromTheCache() {
    build(builder());
    cache.put("k1", "cached");
    Map<String, String> values = cache.getAll(List.of("k0", "k1", "k2"), db);

    assertThat(values).containsExactly(Map.entry("k0", "k0!"), Map.entry("k1", "cached"),
        Map.entry("k2", "k2!"));
    assertThat(calls).containsExactly(Set.of("k0", "k2"));
  }

  @Test
  void keysTheLoaderLeavesOut_areAbsent_cachedAsSuch_andLeftOutOfTheResult() {
    build(builder());
    assertThat(cache.getAll(List.of("a", "missing1"), db)).containsExactly(Map.entry("a", "a!"));
    assertThat(cache.getAll(List.of("a", "missing1"), db)).containsExactly(Map.entry("a", "a!"));
    assertThat(calls).hasSize(1);
    assertThat(cache.find("missing1", key -> "x")).isEmpty();
    assertThat(cache.stats().count("no_value_hit")).isEqualTo(2);
  }

  @Test
  void duplicateKeysAreReadOnce() {
    build(builder());
    assertThat(cache.getAll(List.of("a", "a", "b"), db)).containsOnlyKeys("a", "b");
    assertThat(calls.get(0)).containsExactlyInAnyOrder("a", "b");
  }

  @Test
  void noKeys_noRoundTrip() {
    build(builder());
    assertThat(cache.getAll(List.of(), db)).isEmpty();
    assertThat(store.count(Op.GETS_ALL)).isZero();
  }

  @Test
  void keysAlreadyLoadingInThisJvm_areJoinedNotLoadedTwice() {
    build(builder());
    CompletableFuture<String> running = new CompletableFuture<>();
    CompletableFuture<String> single = cache.getAsync("k1", key -> running);

    CompletableFuture<Map<String, String>> bulk = cache.getAllAsync(List.of("k0", "k1"),
        keys -> {
          calls.add(Set.copyOf(keys));
          return CompletableFuture.completedFuture(Map.of("k0", "k0!"));
        });
    assertThat(calls).containsExactly(Set.of("k0"));
    assertThat(bulk).isNotDone();

    running.complete("k1 from the single load");
    executor.runAll();
    assertThat(single).isCompletedWithValue("k1 from the single load");
    assertThat(bulk).isCompletedWithValue(
        Map.of("k0", "k0!", "k1", "k1 from the single load"));
  }

  @Test
  void aFailingBulkLoader_failsTheCall_andEveryKeyItOwned() {
    build(builder().failureBackoff(Duration.ZERO));
    assertThatThrownBy(() -> cache.getAll(List.of("a", "b"), keys -> {
      throw new IllegalStateException("db down");
    })).isInstanceOf(CacheLoadException.class).hasRootCauseMessage("db down");
    assertThat(((DefaultSustainableCache<?>) cache).registeredKeyCount()).isZero();
    assertThat(cache.getAll(List.of("a", "b"), db)).hasSize(2);
  }

  @Test
  void aBulkStoreReadFailure_loadsEverythingWithoutWriting() {
    build(builder());
    store.fail(Op.GETS_ALL, 1);
    assertThat(cache.getAll(List.of("a", "b"), db)).hasSize(2);
    assertThat(store.count(Op.ADD)).isZero();
    assertThat(cache.stats().storeErrorCount()).isEqualTo(1);
  }

  @Test
  void keysInTheirRefreshWindow_areRefreshedInOneBulkCall_inTheBackground() {
    build(builder());
    cache.getAll(keys(10), db);
    clock.advance(TTL.plusMillis(1)); // all stale

    Map<String, String> stale = cache.getAll(keys(10), db);
    assertThat(stale).hasSize(10);
    assertThat(calls).as("the caller did not wait for a load").hasSize(1);
    assertThat(cache.stats().count("stale_hit")).isEqualTo(10);

    executor.runAll();
    assertThat(calls).hasSize(2);
    assertThat(calls.get(1)).hasSize(10);
    assertThat(cache.stats().count("refresh_scheduled")).isEqualTo(10);
    assertThat(cache.stats().refreshSuccessCount()).isEqualTo(10);
  }

  /**
   * The refreshes of a bulk loader are coalesced as a loading cache's misses are (one batcher,
   * the {@code coalesce} setting): those decided while a refresh call of the same loader instance
   * runs, by any {@code getAll}, wait for it together and then make one call.
   */
  @Test
  void refreshesFromSeveralCallsWithTheSameLoader_whileItsRefreshCallRuns_shareTheNextCall() {
    build(builder());
    cache.getAll(keys(6), db);
    clock.advance(TTL.plusMillis(1));

    cache.getAll(List.of("k0", "k1"), db);
    cache.getAll(List.of("k2", "k3"), db);
    cache.getAll(List.of("k4", "k5"), db);
    assertThat(calls).as("offered from refresh threads").hasSize(1);

    executor.runAll();
    assertThat(calls).hasSize(3);
    assertThat(calls.get(1)).containsExactlyInAnyOrder("k0", "k1");
    assertThat(calls.get(2)).containsExactlyInAnyOrder("k2", "k3", "k4", "k5");
    assertThat(cache.stats().refreshSuccessCount()).isEqualTo(6);
  }

  @Test
  void refreshesOfAnotherLoaderInstance_doNotWaitForThatCall() {
    build(builder());
    cache.getAll(keys(2), db);
    clock.advance(TTL.plusMillis(1));
    BulkLoader<String> another = keys -> db.loadAll(keys);

    cache.getAll(List.of("k0"), db);
    cache.getAll(List.of("k1"), another);
    executor.runAll();
    assertThat(calls.subList(1, calls.size())).containsExactlyInAnyOrder(Set.of("k0"),
        Set.of("k1"));
  }

  /** Each call's own loader (a capturing lambda) is held only while its refreshes run. */
  @Test
  void theCoalescerForgetsALoaderOnceItsRefreshesAreOver() {
    build(builder());
    LoadPipeline<String> pipeline = ((DefaultSustainableCache<String>) cache).pipeline();
    cache.getAll(keys(3), db);
    clock.advance(TTL.plusMillis(1));

    for (String key : keys(3)) {
      cache.getAll(List.of(key), wanted -> db.loadAll(Set.of(key)));
    }
    executor.runNext(); // the first loader's refresh is offered, its call queued
    assertThat(pipeline.coalescedLoaders()).isEqualTo(1);
    executor.runAll();
    assertThat(calls).hasSize(4);
    assertThat(pipeline.coalescedLoaders()).isZero();
    assertThat(((DefaultSustainableCache<?>) cache).registeredKeyCount()).isZero();
  }

  @Test
  void refreshesOverMaxBatchSize_areSplitIntoFullCalls() {
    build(builder().coalesce(4));
    cache.getAll(keys(10), db);
    assertThat(calls).as("a per-call loader's misses are not split").hasSize(1);
    clock.advance(TTL.plusMillis(1));

    cache.getAll(keys(10), db);
    executor.runAll();
    assertThat(calls.subList(1, calls.size())).extracting(Set::size)
        .containsExactlyInAnyOrder(4, 4, 2);
  }

  @Test
  void aRejectedBatch_releasesEveryKey() {
    build(builder());
    cache.getAll(keys(3), db);
    clock.advance(TTL.plusMillis(1));
    executor.behave(ManualExecutor.Behaviour.REJECT);

    cache.getAll(keys(3), db);
    assertThat(cache.stats().count("refresh_rejected")).isEqualTo(3);
    assertThat(((DefaultSustainableCache<?>) cache).registeredKeyCount()).isZero();
  }

  @Test
  void asyncBulkLoaderCompletingOnAnotherThread_completesTheCall() {
    build(builder());
    CompletableFuture<Map<String, String>> values = cache.getAllAsync(List.of("a", "b"),
        keys -> CompletableFuture.supplyAsync(() -> Map.of("a", "1", "b", "2")));
    assertThat(values.join()).containsExactly(Map.entry("a", "1"), Map.entry("b", "2"));
    // The writes are handed off the loader's thread after the callers got their values: run the
    // executor until they have been submitted and run.
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> {
      executor.runAll();
      return cache.getIfPresent("a").isPresent();
    });
    assertThat(cache.getIfPresent("a")).contains("1");
  }

  @Test
  void invalidKeysAndNullsAreRejectedUpFront() {
    build(builder());
    List<String> withNull = new ArrayList<>();
    withNull.add(null);
    assertThatThrownBy(() -> cache.getAll(withNull, db)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> cache.getAll(List.of("has space"), db))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> cache.getAll(List.of("a"), null))
        .isInstanceOf(NullPointerException.class);
  }

  /**
   * The caller whose own synchronous loader outlives the load timeout was never waiting: it gets
   * the value when the loader returns, for {@code getAll} as for {@code get} (one pipeline; a
   * {@code getAll} failed with the timeout before issue 23). Joined callers fail at the timeout.
   */
  @Test
  void aSynchronousLoaderOutlivingTheLoadTimeout_stillAnswersItsOwnCaller_getAndGetAlike() {
    build(builder().loadTimeout(Duration.ofSeconds(1)));
    Runnable outliveTheTimeout = () -> {
      clock.advance(Duration.ofSeconds(2));
      scheduler.runDue(); // the flight times out while its loader runs
    };

    assertThat(cache.getAll(List.of("a", "b"), keys -> {
      outliveTheTimeout.run();
      return db.loadAll(keys);
    })).containsExactly(Map.entry("a", "a!"), Map.entry("b", "b!"));
    assertThat(cache.get("c", key -> {
      outliveTheTimeout.run();
      return key + "!";
    })).isEqualTo("c!");
    assertThat(cache.stats().count("load_timeout")).isEqualTo(3);
  }
}
