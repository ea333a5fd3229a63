package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.AsyncBulkLoader;
import io.sustainablecache.CacheLoadException;
import io.sustainablecache.CacheSettings;
import io.sustainablecache.LoadingSustainableCache;
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
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A loading cache coalesces concurrent misses of different keys into few bulk loader calls (issue
 * 23, part 3). Deterministic: the bulk loader is asynchronous and its calls are completed by the
 * test ({@link #complete}), so "a call is running" is a state the test holds; time is a fake clock
 * and a manual scheduler, the refresh executor a manual one; reads complete at once (an in-memory
 * store), so an asynchronous read starts its loader call on the test's thread. A batch that starts
 * later (a running call is over, {@code maxWait} passed) runs on a refresh thread: {@link
 * #completeThenStartNext} runs it.
 */
final class CoalescingTest {

  private static final Duration TTL = Duration.ofSeconds(10);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore server = InMemoryStore.create(clock);
  private final ScriptedStore store = ScriptedStore.over(server);
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final ManualExecutor executor = new ManualExecutor();
  /** The database: a key's value, or none for keys starting with "missing". */
  private final Map<String, String> db = new ConcurrentHashMap<>();
  /** Every loader call, in order: its keys and the stage the test completes. */
  private final List<Call> calls = new CopyOnWriteArrayList<>();
  private LoadingSustainableCache<String> cache;

  /** A loader call: the keys asked for, the database's values then, and its pending stage. */
  private record Call(Set<String> keys, Map<String, String> values,
      CompletableFuture<Map<String, String>> stage) {}

  private final AsyncBulkLoader<String> loader = keys -> {
    Map<String, String> values = new HashMap<>();
    for (String key : keys) {
      String value = key.startsWith("missing") ? null : db.getOrDefault(key, key + "!");
      if (value != null) {
        values.put(key, value);
      }
    }
    Call call = new Call(Set.copyOf(keys), values, new CompletableFuture<>());
    calls.add(call);
    return call.stage();
  };

  private SustainableCacheBuilder<String> builder() {
    return SustainableCache.builder(store).namespace("c").ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler).refreshExecutor(executor)
        .random(FixedRandom.neverEarly()).fleetLease(false);
  }

  private LoadingSustainableCache<String> build(SustainableCacheBuilder<String> builder) {
    cache = builder.buildAsync(loader);
    return cache;
  }

  @AfterEach
  void close() {
    if (cache != null) {
      cache.close();
    }
  }

  /** Completes loader call {@code i} with the values the database had when it was called. */
  private void complete(int i) {
    calls.get(i).stage().complete(calls.get(i).values());
  }

  /**
   * {@link #complete}, then runs the refresh executor's queue: the batch that waited for that call
   * is over starts there, on a refresh thread.
   */
  private void completeThenStartNext(int i) {
    complete(i);
    executor.runAll();
  }

  private static List<String> keys(String prefix, int from, int to) {
    return IntStream.range(from, to).mapToObj(i -> prefix + i).collect(Collectors.toList());
  }

  private List<CompletableFuture<String>> getAsync(List<String> keys) {
    List<CompletableFuture<String>> answers = new ArrayList<>();
    keys.forEach(key -> answers.add(cache.getAsync(key)));
    return answers;
  }

  @Test
  void aMissOfAnIdleCache_loadsAtOnce_withoutWaitingForATimer() {
    cache = SustainableCache.builder(store).namespace("c").ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler).refreshExecutor(executor)
        .random(FixedRandom.neverEarly()).fleetLease(false)
        .coalesce(100, Duration.ofSeconds(5))
        .build(keys -> keys.stream().collect(Collectors.toMap(k -> k, k -> k + "!")));
    long before = clock.ticker().read();

    // the clock never moves and nobody runs the scheduler: a timer wait would never end
    assertThat(cache.get("k")).isEqualTo("k!");
    assertThat(clock.ticker().read()).isEqualTo(before);
    assertThat(cache.stats().count("loader_call")).isEqualTo(1);
    assertThat(cache.get("k")).as("cached").isEqualTo("k!");
    assertThat(cache.stats().count("loader_call")).isEqualTo(1);
  }

  @Test
  void twoHundredConcurrentMissesOfDifferentKeys_makeThreeLoaderCalls() throws Exception {
    build(builder());
    List<CompletableFuture<String>> answers = getAsync(keys("k", 0, 200));

    // k0 started at once; k1..k100 filled a batch, which started; k101..k199 wait for a call
    assertThat(calls).extracting(call -> call.keys().size()).containsExactly(1, 100);
    completeThenStartNext(0);
    assertThat(calls).extracting(call -> call.keys().size()).containsExactly(1, 100, 99);
    complete(1);
    complete(2);

    for (int i = 0; i < 200; i++) {
      assertThat(answers.get(i).get(5, TimeUnit.SECONDS)).isEqualTo("k" + i + "!");
    }
    assertThat(calls.stream().flatMap(call -> call.keys().stream()).distinct().count())
        .as("every key loaded once").isEqualTo(200);
    assertThat(cache.stats().count("loader_call")).isEqualTo(3);
    assertThat(cache.stats().loadSuccessCount()).isEqualTo(200);
    assertThat(((DefaultSustainableCache<?>) cache).registeredKeyCount()).isZero();
  }

  @Test
  void noLoaderCallHoldsMoreThanMaxBatchSizeKeys() {
    build(builder().coalesce(10));
    getAsync(keys("k", 0, 36));
    complete(0);
    cache.getAllAsync(keys("g", 0, 25)); // while calls run: into the open batch, split at 10
    for (int i = 1; i < calls.size(); i++) {
      complete(i);
    }
    executor.runAll(); // the getAll's second and third batches
    while (calls.stream().anyMatch(call -> !call.stage().isDone())) {
      calls.stream().filter(call -> !call.stage().isDone()).findFirst().get().stage()
          .complete(Map.of());
      executor.runAll();
    }

    assertThat(calls).allSatisfy(call -> assertThat(call.keys()).hasSizeLessThanOrEqualTo(10));
    assertThat(calls.stream().mapToInt(call -> call.keys().size()).sum()).isEqualTo(36 + 25);
  }

  @Test
  void anIdleGetAllLargerThanMaxBatchSize_startsEveryBatchAtOnce_theOthersOnRefreshThreads() {
    build(builder().coalesce(10));
    cache.getAllAsync(keys("g", 0, 25));
    assertThat(calls).as("the first on the caller's thread").extracting(call -> call.keys().size())
        .containsExactly(10);
    assertThat(executor.queued()).as("the others, in parallel").isEqualTo(2);
    executor.runAll();
    assertThat(calls).extracting(call -> call.keys().size()).containsExactly(10, 10, 5);
  }

  @Test
  void maxWait_startsTheOpenBatchWhileACallStillRuns() throws Exception {
    build(builder().coalesce(100, Duration.ofMillis(20)));
    CompletableFuture<String> first = cache.getAsync("k0");
    CompletableFuture<String> second = cache.getAsync("k1");
    assertThat(calls).hasSize(1);

    scheduler.pass(clock, 19, 1);
    assertThat(calls).as("before maxWait").hasSize(1);
    scheduler.pass(clock, 1, 1);
    assertThat(calls).as("on a refresh thread").hasSize(1);
    executor.runAll();
    assertThat(calls).as("maxWait passed").hasSize(2);
    assertThat(calls.get(1).keys()).containsExactly("k1");
    complete(1);
    assertThat(second.get(5, TimeUnit.SECONDS)).isEqualTo("k1!");
    assertThat(first).isNotDone();
    complete(0);
    assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo("k0!");
  }

  @Test
  void withoutMaxWait_theOpenBatchWaitsForTheRunningCall() {
    build(builder());
    cache.getAsync("k0");
    cache.getAsync("k1");
    scheduler.pass(clock, 1_000, 10);
    assertThat(calls).hasSize(1);
    completeThenStartNext(0);
    assertThat(calls).hasSize(2);
  }

  @Test
  void aLoaderCallThatNeverReturns_holdsTheNextBatchAtMostTheLoadTimeout() throws Exception {
    build(builder().loadTimeout(Duration.ofSeconds(2)));
    CompletableFuture<String> stuck = cache.getAsync("k0");
    scheduler.pass(clock, 1_000, 100);
    CompletableFuture<String> next = cache.getAsync("k1"); // its own timeout 1 s later
    assertThat(calls).hasSize(1);

    scheduler.pass(clock, 1_000, 100); // k0's load times out: its batch is over
    assertThat(stuck).isCompletedExceptionally();
    executor.runAll();
    assertThat(calls).hasSize(2);
    complete(1);
    assertThat(next.get(5, TimeUnit.SECONDS)).isEqualTo("k1!");
  }

  @Test
  void aFailingCall_failsEveryCallerOfItsBatch_andEachKeyBacksOff() {
    build(builder().failureBackoff(Duration.ofSeconds(1)));
    cache.getAsync("k0");
    List<CompletableFuture<String>> batch = getAsync(List.of("k1", "k2", "k3"));
    completeThenStartNext(0);
    calls.get(1).stage().completeExceptionally(new java.sql.SQLException("db down"));

    for (CompletableFuture<String> answer : batch) {
      assertThatThrownBy(() -> answer.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
          .cause().isInstanceOf(CacheLoadException.class)
          .cause().hasMessage("db down");
    }
    long callsBefore = calls.size();
    assertThatThrownBy(() -> cache.getAsync("k2").get(5, TimeUnit.SECONDS)).cause()
        .isInstanceOf(CacheLoadException.class);
    assertThat(calls).as("k2 backs off: no loader call").hasSize((int) callsBefore);
    assertThat(cache.stats().count("failure_remembered")).isEqualTo(1);
  }

  @Test
  void aLoaderThrowingAnError_reachesEveryCallerOfItsBatch_asItIs() {
    build(builder().failureBackoff(Duration.ofSeconds(1)));
    cache.getAsync("k0");
    List<CompletableFuture<String>> batch = getAsync(List.of("k1", "k2"));
    CompletableFuture<Map<String, String>> all = cache.getAllAsync(List.of("k3"));
    completeThenStartNext(0);
    calls.get(1).stage().completeExceptionally(new AssertionError("bug in the loader"));

    assertThat(calls.get(1).keys()).containsExactlyInAnyOrder("k1", "k2", "k3");
    for (CompletableFuture<?> answer : List.of(batch.get(0), batch.get(1), all)) {
      assertThatThrownBy(() -> answer.get(5, TimeUnit.SECONDS)).cause()
          .isInstanceOf(AssertionError.class).hasMessage("bug in the loader");
    }
    assertThatThrownBy(() -> cache.get("k1")).as("backing off: the caller shared no call")
        .isInstanceOf(CacheLoadException.class).cause().isInstanceOf(AssertionError.class);
    assertThat(calls).hasSize(2);
  }

  @Test
  void aSynchronousLoaderThrowingAnError_reachesItsCaller() {
    cache = builder().build(keys -> {
      throw new AssertionError("bug in the loader: " + keys.size() + " keys");
    });
    assertThatThrownBy(() -> cache.getAll(List.of("k1", "k2")))
        .isInstanceOf(AssertionError.class).hasMessage("bug in the loader: 2 keys");
  }

  @Test
  void aKeyTheLoaderLeavesOut_isCachedAsAbsent() throws Exception {
    build(builder());
    cache.getAsync("k0");
    CompletableFuture<Optional<String>> missing = cache.findAsync("missing1");
    CompletableFuture<String> present = cache.getAsync("k1");
    completeThenStartNext(0);
    complete(1);

    assertThat(missing.get(5, TimeUnit.SECONDS)).isEmpty();
    assertThat(present.get(5, TimeUnit.SECONDS)).isEqualTo("k1!");
    assertThat(cache.find("missing1")).as("the absence is cached").isEmpty();
    assertThatThrownBy(() -> cache.get("missing1")).isInstanceOf(CacheLoadException.class);
    assertThat(calls).hasSize(2);
  }

  @Test
  void invalidateWhileTheKeyWaitsInTheOpenBatch_theLoadIsNotWritten_laterReadsLoadAgain()
      throws Exception {
    build(builder());
    cache.getAsync("k0");
    CompletableFuture<String> before = cache.getAsync("k1");
    cache.invalidate("k1");
    db.put("k1", "v2");
    CompletableFuture<String> after = cache.getAsync("k1"); // began after invalidate returned
    completeThenStartNext(0);
    complete(1);

    assertThat(calls.get(1).keys()).containsExactly("k1");
    assertThat(before.get(5, TimeUnit.SECONDS)).isEqualTo("v2");
    assertThat(after.get(5, TimeUnit.SECONDS)).isEqualTo("v2");
    assertThat(cache.stats().count("stale_set_discard")).as("the voided flight wrote nothing")
        .isEqualTo(1);
    assertThat(cache.get("k1")).isEqualTo("v2");
  }

  @Test
  void invalidateWhileTheBatchLoads_aReadAfterItNeverSeesTheOldValue() throws Exception {
    build(builder());
    db.put("k1", "v1");
    cache.getAsync("k0");
    CompletableFuture<String> before = cache.getAsync("k1");
    completeThenStartNext(0); // the batch of k1 is called: it read v1
    assertThat(calls.get(1).values()).containsEntry("k1", "v1");

    db.put("k1", "v2");
    cache.invalidate("k1");
    CompletableFuture<String> after = cache.getAsync("k1");
    completeThenStartNext(1);
    assertThat(before.get(5, TimeUnit.SECONDS)).as("its caller began before the change").isEqualTo("v1");
    complete(2);
    assertThat(after.get(5, TimeUnit.SECONDS)).isEqualTo("v2");
    assertThat(cache.get("k1")).as("v1 was not written").isEqualTo("v2");
    assertThat(cache.stats().count("stale_set_discard")).isEqualTo(1);
  }

  @Test
  void invalidateAfterTheCallReturned_beforeItsWrite_dropsTheWrite() throws Exception {
    build(builder());
    cache.getAsync("k0");
    CompletableFuture<String> before = cache.getAsync("k1");
    completeThenStartNext(0);
    Thread database = new Thread(() -> complete(1)); // not the call's thread: the writes are
    database.start();                                // handed to the refresh executor
    database.join();
    assertThat(before.get(5, TimeUnit.SECONDS)).isEqualTo("k1!");
    assertThat(executor.queued()).as("the write, not issued yet").isPositive();

    db.put("k1", "v2");
    cache.invalidate("k1");
    executor.runAll();
    assertThat(cache.stats().count("stale_set_discard")).isEqualTo(1);
    CompletableFuture<String> after = cache.getAsync("k1");
    assertThat(calls).as("nothing cached: loaded again").hasSize(3);
    complete(2);
    assertThat(after.get(5, TimeUnit.SECONDS)).isEqualTo("v2");
  }

  @Test
  void invalidateWhileTheBatchTakesItsLeases_voidsItsWrite() throws Exception {
    build(SustainableCache.builder(store).namespace("c").ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler).refreshExecutor(executor)
        .random(FixedRandom.neverEarly()).fleetLease(true));
    db.put("k1", "v1");
    cache.getAsync("k0");
    ScriptedStore.Hold leases = store.holdResponses(Op.ADD);
    CompletableFuture<String> before = cache.getAsync("k1");
    complete(0);
    assertThat(calls).as("k1 is taking its lease").hasSize(1);

    db.put("k1", "v2");
    cache.invalidate("k1");
    leases.release();
    executor.runAll();
    complete(1);
    executor.runAll();
    assertThat(before.get(5, TimeUnit.SECONDS)).isEqualTo("v2");
    assertThat(cache.stats().count("stale_set_discard")).as("the voided flight wrote nothing")
        .isEqualTo(1);
    CompletableFuture<String> later = cache.getAsync("k1");
    assertThat(calls).as("nothing cached: loaded again").hasSize(3);
    complete(2);
    assertThat(later.get(5, TimeUnit.SECONDS)).isEqualTo("v2");
  }

  @Test
  void getAsyncGetAllAndFind_joinTheSameBatch() throws Exception {
    build(builder());
    cache.getAsync("k0");
    CompletableFuture<String> one = cache.getAsync("k1");
    CompletableFuture<Map<String, String>> some = cache.getAllAsync(List.of("k2", "k3"));
    CompletableFuture<Optional<String>> found = cache.findAsync("k4");
    completeThenStartNext(0);

    assertThat(calls).hasSize(2);
    assertThat(calls.get(1).keys()).containsExactlyInAnyOrder("k1", "k2", "k3", "k4");
    complete(1);
    assertThat(one.get(5, TimeUnit.SECONDS)).isEqualTo("k1!");
    assertThat(some.get(5, TimeUnit.SECONDS)).containsExactly(Map.entry("k2", "k2!"), Map.entry("k3", "k3!"));
    assertThat(found.get(5, TimeUnit.SECONDS)).contains("k4!");
  }

  @Test
  void aMissOfAKeyInFlight_joinsItsLoad() throws Exception {
    build(builder());
    CompletableFuture<String> first = cache.getAsync("k0");
    CompletableFuture<String> joined = cache.getAsync("k0");
    complete(0);
    assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo("k0!");
    assertThat(joined.get(5, TimeUnit.SECONDS)).isEqualTo("k0!");
    assertThat(calls).hasSize(1);
  }

  @Test
  void aBackgroundRefresh_joinsTheMissesBatch_andRunsOnARefreshThread() throws Exception {
    build(builder());
    cache.getAsync("r");
    complete(0);
    clock.advance(TTL.plusMillis(1)); // stale: served, refreshed in the background
    db.put("r", "r2");

    cache.getAsync("k0");
    assertThat(calls).hasSize(2);
    assertThat(cache.getAsync("r").get(5, TimeUnit.SECONDS)).as("served stale meanwhile").isEqualTo("r!");
    CompletableFuture<String> miss = cache.getAsync("k1");
    complete(1);
    assertThat(calls).as("it starts later: its call runs on a refresh thread").hasSize(2);
    executor.runAll();

    assertThat(calls).hasSize(3);
    assertThat(calls.get(2).keys()).containsExactlyInAnyOrder("r", "k1");
    complete(2);
    executor.runAll();
    assertThat(miss.get(5, TimeUnit.SECONDS)).isEqualTo("k1!");
    assertThat(cache.getAsync("r").get(5, TimeUnit.SECONDS)).isEqualTo("r2");
    assertThat(cache.stats().refreshSuccessCount()).isEqualTo(1);
  }

  @Test
  void aLoaderReadingOtherKeysOfItsCache_doesNotWaitForItself() {
    LoadingSustainableCache<String>[] self = cast(new LoadingSustainableCache<?>[1]);
    cache = builder().loadTimeout(Duration.ofSeconds(1)).build(keys -> {
      Map<String, String> values = new HashMap<>();
      for (String key : keys) {
        values.put(key, key.startsWith("parent") ? self[0].get("child-of-" + key) : key + "!");
      }
      return values;
    });
    self[0] = cache;
    assertThat(cache.get("parent1")).isEqualTo("child-of-parent1!");
    assertThat(cache.stats().count("loader_call")).isEqualTo(2);
  }

  @Test
  void aLoaderReadingItsOwnKey_failsAsARecursiveLoad() {
    LoadingSustainableCache<String>[] self = cast(new LoadingSustainableCache<?>[1]);
    cache = builder().build(keys -> Map.of("k", self[0].get("k")));
    self[0] = cache;
    assertThatThrownBy(() -> cache.get("k")).isInstanceOf(CacheLoadException.class)
        .cause().isInstanceOf(IllegalStateException.class).hasMessageContaining("recursive");
  }

  @Test
  void aPerCallLoader_neverJoinsABatch() throws Exception {
    build(builder());
    cache.getAsync("k0");
    assertThat(cache.get("other", key -> "own")).isEqualTo("own");
    assertThat(calls).hasSize(1);
  }

  @Test
  void theSettingIsParsedAndWritten() {
    assertThat(CacheSettings.parse("coalesce=50:5ms").toString())
        .isEqualTo("coalesce=50:PT0.005S");
    assertThat(CacheSettings.parse("coalesce=50").toString()).isEqualTo("coalesce=50");
    assertThatThrownBy(() -> builder().coalesce(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxBatchSize");
    assertThatThrownBy(() -> builder().coalesce(10, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxWait");
  }

  @SuppressWarnings("unchecked")
  private static <T> T cast(Object o) {
    return (T) o;
  }
}
