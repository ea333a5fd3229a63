package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.AsyncBulkLoader;
import io.sustainablecache.AsyncLoader;
import io.sustainablecache.BulkLoader;
import io.sustainablecache.CacheLoadException;
import io.sustainablecache.Loader;
import io.sustainablecache.RefreshPolicyTest;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.ForwardingStore;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import io.sustainablecache.testing.ScriptedStore;
import io.sustainablecache.testing.ScriptedStore.Op;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 24, load amplification: a store whose reads time out (a starved client I/O thread) must
 * not turn every caller's read into a loader call. Reads are held by the store until the test
 * fails them one at a time, as timeouts arrive: every read of a burst began before any load, so
 * the burst costs one loader call per key; a read that began after a load registered loads again
 * (it must not see a value older than an invalidation that returned before it began). With a near
 * cache, reads that fail at once share a load registered less than the bound ago (the near
 * cache's own promise). These tests check that rule alone: the node breaker and the outage reuse
 * (issue 31), which widen it, are off here and tested in {@link HungNodeTest}.
 */
final class FailedReadLoadsTest {

  private static final Duration BOUND = Duration.ofSeconds(1);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final TimingOutStore store = new TimingOutStore(InMemoryStore.create(clock));
  private final ManualExecutor executor = new ManualExecutor();
  private final AtomicInteger loaderCalls = new AtomicInteger();

  private SustainableCache<String> cache() {
    return SustainableCache.builder(store).namespace("f").ttl(Duration.ofSeconds(10))
        .codec(ValueCodec.utf8()).refreshExecutor(executor).clock(clock).ticker(clock.ticker())
        .random(RefreshPolicyTest.fixed(0.5)).storeProbeInterval(Duration.ZERO)
        .outageReuse(Duration.ZERO).build();
  }

  private Loader<String> loader() {
    return key -> key + "#" + loaderCalls.incrementAndGet();
  }

  private AsyncLoader<String> asyncLoader() {
    return key -> CompletableFuture.completedFuture(key + "#" + loaderCalls.incrementAndGet());
  }

  @Test
  void readsThatTimeOutOneByOne_costOneLoaderCallPerKey_synchronousGet() throws Exception {
    int readers = 16;
    ExecutorService threads = Executors.newFixedThreadPool(readers);
    try (SustainableCache<String> cache = cache()) {
      List<Future<String>> answers = new ArrayList<>();
      for (int i = 0; i < readers; i++) {
        answers.add(threads.submit(() -> cache.get("k", loader())));
      }
      await().until(() -> store.pending() == readers);

      store.timeOutAll(); // one by one, each caller's read fails and the caller goes on

      for (Future<String> answer : answers) {
        assertThat(answer.get()).isEqualTo("k#1");
      }
      assertThat(loaderCalls).hasValue(1);
      assertThat(cache.stats().storeErrorCount()).isEqualTo(readers);
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void readsThatTimeOutOneByOne_costOneLoaderCallPerKey_getAsync() {
    try (SustainableCache<String> cache = cache()) {
      List<CompletableFuture<String>> answers = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        answers.add(cache.getAsync("k", asyncLoader()));
      }

      store.timeOutAll();

      assertThat(answers).allSatisfy(answer -> assertThat(answer.join()).isEqualTo("k#1"));
      assertThat(loaderCalls).hasValue(1);
    }
  }

  @Test
  void aReadThatBeganAfterTheLoadRegistered_loadsAgain() {
    try (SustainableCache<String> cache = cache()) {
      CompletableFuture<String> early = cache.getAsync("k", asyncLoader());
      store.timeOutNext(); // loads k#1
      assertThat(early.join()).isEqualTo("k#1");

      CompletableFuture<String> late = cache.getAsync("k", asyncLoader());
      store.timeOutNext();

      assertThat(late.join()).isEqualTo("k#2"); // a newer load: the rule of invalidate holds
      assertThat(loaderCalls).hasValue(2);
    }
  }

  @Test
  void invalidate_forgetsTheRememberedLoad() {
    try (SustainableCache<String> cache = cache()) {
      CompletableFuture<String> first = cache.getAsync("k", asyncLoader());
      CompletableFuture<String> second = cache.getAsync("k", asyncLoader());
      store.timeOutNext();
      assertThat(first.join()).isEqualTo("k#1");

      cache.invalidate("k");
      store.timeOutNext();

      assertThat(second.join()).isEqualTo("k#2");
    }
  }

  @Test
  void bulkReadsThatTimeOutOneByOne_costOneBulkLoaderCall() {
    AtomicInteger bulkCalls = new AtomicInteger();
    AsyncBulkLoader<String> bulk = keys -> {
      bulkCalls.incrementAndGet();
      Map<String, String> values = new LinkedHashMap<>();
      keys.forEach(key -> values.put(key, key + "!"));
      return CompletableFuture.completedFuture(values);
    };
    try (SustainableCache<String> cache = cache()) {
      List<CompletableFuture<Map<String, String>>> answers = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        answers.add(cache.getAllAsync(Set.of("a", "b"), bulk));
      }

      store.timeOutAll();

      assertThat(answers).allSatisfy(answer ->
          assertThat(answer.join()).isEqualTo(Map.of("a", "a!", "b", "b!")));
      assertThat(bulkCalls).hasValue(1);
      assertThat(cache.stats().storeErrorCount()).isEqualTo(50);
    }
  }

  /**
   * Review finding 1: host B's load of k is in flight, its loader reading the row before it
   * changes; host A changes it and its invalidate returns; only then a read on B begins, and its
   * store read fails, so it cannot see A's tombstone. Joining B's load would give it the value
   * read before the change, and loading beside it would load the key twice at once: it waits for
   * that load to end, then loads itself.
   */
  @Test
  void aReadThatFailsAfterAnotherHostsInvalidateReturned_waitsForTheLoadInFlightBeforeIt_thenLoads() {
    InMemoryStore shared = InMemoryStore.create(clock);
    ScriptedStore storeOfB = ScriptedStore.over(shared);
    try (SustainableCache<String> hostA = twoHostsCache(shared);
        SustainableCache<String> hostB = twoHostsCache(storeOfB)) {
      CompletableFuture<String> dbReadBeforeTheChange = new CompletableFuture<>();
      CompletableFuture<String> first = hostB.getAsync("k", key -> dbReadBeforeTheChange);

      hostA.invalidate("k"); // the row changed; A's invalidate returns

      storeOfB.fail(Op.GETS, 1); // a read on B begins only now; its store read fails
      CompletableFuture<String> late = hostB.getAsync("k", key -> CompletableFuture
          .completedFuture(dbReadBeforeTheChange.isDone() ? "new" : "loaded beside it"));
      assertThat(late).as("waits for the load in flight to end").isNotDone();

      dbReadBeforeTheChange.complete("old");
      assertThat(first.join()).isEqualTo("old");
      assertThat(late.join()).as("a read that began after invalidate returned").isEqualTo("new");
      assertThat(((DefaultSustainableCache<?>) hostB).registry().supersededCount())
          .as("the load in flight was not superseded: nothing loaded beside it").isZero();
    }
  }

  /** The same through {@code getAll}: the bulk read's key waits, then loads on its own. */
  @Test
  void aBulkReadThatFailsAfterAnotherHostsInvalidateReturned_waitsForTheLoadInFlight_thenLoads() {
    InMemoryStore shared = InMemoryStore.create(clock);
    ScriptedStore storeOfB = ScriptedStore.over(shared);
    try (SustainableCache<String> hostA = twoHostsCache(shared);
        SustainableCache<String> hostB = twoHostsCache(storeOfB)) {
      CompletableFuture<String> dbReadBeforeTheChange = new CompletableFuture<>();
      CompletableFuture<String> first = hostB.getAsync("k", key -> dbReadBeforeTheChange);

      hostA.invalidate("k");

      storeOfB.fail(Op.GETS_ALL, 1);
      AtomicInteger bulkCalls = new AtomicInteger();
      CompletableFuture<Map<String, String>> late = hostB.getAllAsync(List.of("k", "j"), keys -> {
        bulkCalls.incrementAndGet();
        Map<String, String> values = new LinkedHashMap<>();
        keys.forEach(key -> values.put(key,
            key + (dbReadBeforeTheChange.isDone() ? " after the load in flight" : " at once")));
        return CompletableFuture.completedFuture(values);
      });
      assertThat(late).as("k waits for the load in flight to end").isNotDone();

      dbReadBeforeTheChange.complete("old");
      assertThat(first.join()).isEqualTo("old");
      assertThat(late.join()).as("k after the load in flight ended, never beside it")
          .isEqualTo(Map.of("k", "k after the load in flight", "j", "j at once"));
      assertThat(bulkCalls).as("j at once, k after the load in flight").hasValue(2);
      assertThat(((DefaultSustainableCache<?>) hostB).registry().supersededCount()).isZero();
    }
  }

  private SustainableCache<String> twoHostsCache(io.sustainablecache.spi.CacheStore on) {
    return SustainableCache.builder(on).namespace("x").ttl(Duration.ofMinutes(1))
        .codec(ValueCodec.utf8()).refreshExecutor(new ManualExecutor()).clock(clock)
        .ticker(clock.ticker()).scheduler(ManualScheduler.on(clock.ticker()))
        .random(RefreshPolicyTest.fixed(0.5)).storeProbeInterval(Duration.ZERO)
        .outageReuse(Duration.ZERO).build();
  }

  @Test
  void aLoaderWhoseReadOfItsOwnKeyFails_isRefusedAsARecursiveLoad_notSuperseded() {
    ScriptedStore down = ScriptedStore.over(InMemoryStore.create(clock));
    try (SustainableCache<String> cache = SustainableCache.builder(down).namespace("f")
        .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).refreshExecutor(executor)
        .clock(clock).ticker(clock.ticker()).random(RefreshPolicyTest.fixed(0.5)).storeProbeInterval(Duration.ZERO)
        .outageReuse(Duration.ZERO).build()) {
      down.fail(Op.GETS, Integer.MAX_VALUE);

      assertThatThrownBy(() -> cache.get("k", key -> cache.get("k", loader())))
          .isInstanceOf(CacheLoadException.class)
          .hasCauseInstanceOf(IllegalStateException.class)
          .satisfies(e -> assertThat(e.getCause()).hasMessageContaining("recursive load"));
      assertThat(loaderCalls).hasValue(0);
      assertThat(((DefaultSustainableCache<?>) cache).registry().supersededCount()).isZero();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Reads that fail at once (a client whose queue is full): no read began before the last load

  private final ScriptedStore failing = ScriptedStore.over(InMemoryStore.create(clock));
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());

  private SustainableCache<String> nearCache() {
    SustainableCache<String> cache = SustainableCache.builder(failing).namespace("n")
        .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).refreshExecutor(executor)
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler).random(FixedRandom.neverEarly())
        .nearCache(100, BOUND, 0).storeProbeInterval(Duration.ZERO).outageReuse(Duration.ZERO)
        .build();
    scheduler.runDue(); // the first poll, on a healthy store
    return cache;
  }

  @Test
  void withANearCache_readsThatFailAtOnce_costOneLoaderCallPerKeyPerBound() {
    try (SustainableCache<String> cache = nearCache()) {
      failing.fail(Op.GETS, Integer.MAX_VALUE);

      for (int i = 0; i < 50; i++) { // 50 reads over 980 ms
        assertThat(cache.get("k", loader())).isEqualTo("k#1");
        clock.advanceMillis(20);
      }
      assertThat(loaderCalls).hasValue(1);
      assertThat(cache.stats().storeErrorCount()).isEqualTo(50);

      clock.advanceMillis(20); // the bound has passed since the load registered
      assertThat(cache.get("k", loader())).isEqualTo("k#2");
      assertThat(cache.get("k", loader())).isEqualTo("k#2");

      failing.heal();
      scheduler.runDue(); // the polls confirm the generation again
      cache.invalidate("k"); // a change here is seen here at once, though the store fails reads
      failing.fail(Op.GETS, Integer.MAX_VALUE);
      assertThat(cache.get("k", loader())).isEqualTo("k#3");
      assertThat(loaderCalls).hasValue(3);
    }
  }

  @Test
  void withANearCache_aFailedReadJoinsALoadInFlightForTheBound_thenLoadsAfterIt() {
    try (SustainableCache<String> cache = nearCache()) {
      CompletableFuture<String> slowDb = new CompletableFuture<>();
      CompletableFuture<String> first = cache.getAsync("k", key -> {
        loaderCalls.incrementAndGet();
        return slowDb;
      });
      failing.fail(Op.GETS, Integer.MAX_VALUE);

      clock.advanceMillis(BOUND.toMillis() - 1);
      CompletableFuture<String> within = cache.getAsync("k", asyncLoader());
      clock.advanceMillis(1); // the bound has passed since the load registered
      CompletableFuture<String> after = cache.getAsync("k", asyncLoader());
      assertThat(after).as("waits for the load in flight, not loading beside it").isNotDone();
      assertThat(loaderCalls).hasValue(1);

      slowDb.complete("k#1");
      assertThat(first.join()).isEqualTo("k#1");
      assertThat(within.join()).isEqualTo("k#1");
      assertThat(after.join()).as("a load registered the bound ago or more").isEqualTo("k#2");
      assertThat(loaderCalls).hasValue(2);
      assertThat(((DefaultSustainableCache<?>) cache).registry().supersededCount()).isZero();
    }
  }

  @Test
  void withANearCache_bulkReadsThatFailAtOnce_costOneBulkLoaderCallPerBound() {
    AtomicInteger bulkCalls = new AtomicInteger();
    BulkLoader<String> bulk = keys -> {
      int call = bulkCalls.incrementAndGet();
      Map<String, String> values = new LinkedHashMap<>();
      keys.forEach(key -> values.put(key, key + "#" + call));
      return values;
    };
    try (SustainableCache<String> cache = nearCache()) {
      failing.fail(Op.GETS_ALL, Integer.MAX_VALUE);

      for (int i = 0; i < 40; i++) {
        assertThat(cache.getAll(List.of("a", "b"), bulk))
            .isEqualTo(Map.of("a", "a#1", "b", "b#1"));
        clock.advanceMillis(20);
      }
      assertThat(bulkCalls).hasValue(1);

      clock.advanceMillis(BOUND.toMillis());
      assertThat(cache.getAll(List.of("a", "b"), bulk)).isEqualTo(Map.of("a", "a#2", "b", "b#2"));
    }
  }

  @Test
  void withoutANearCache_aReadThatFailsAtOnce_loads_asNoLoadBeganAfterIt() {
    ScriptedStore down = ScriptedStore.over(InMemoryStore.create(clock));
    try (SustainableCache<String> cache = SustainableCache.builder(down).namespace("f")
        .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).refreshExecutor(executor)
        .clock(clock).ticker(clock.ticker()).random(RefreshPolicyTest.fixed(0.5)).storeProbeInterval(Duration.ZERO)
        .outageReuse(Duration.ZERO).build()) {
      down.fail(Op.GETS, Integer.MAX_VALUE);

      assertThat(cache.get("k", loader())).isEqualTo("k#1");
      assertThat(cache.get("k", loader())).isEqualTo("k#2");
    }
  }

  @Test
  void aRememberedLoad_doesNotKeepAnotherKeysFailureCountingPastItsWindow() {
    try (SustainableCache<String> cache = SustainableCache.builder(failing).namespace("w")
        .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).refreshExecutor(executor)
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler).random(RefreshPolicyTest.fixed(0.5))
        .loadTimeout(Duration.ofSeconds(60)).failureBackoff(Duration.ofMillis(100),
            Duration.ofSeconds(10)).storeProbeInterval(Duration.ZERO)
        .outageReuse(Duration.ZERO).build()) {
      failing.fail(Op.GETS, 1);
      cache.get("a", loader()); // remembered for 61 s: first in the forget queue
      Loader<String> down = key -> {
        throw new IllegalStateException("db down");
      };
      assertThatThrownBy(() -> cache.get("b", down)).isInstanceOf(CacheLoadException.class);

      clock.advance(Duration.ofSeconds(11)); // b's failure is past its window (back-off + cap)
      assertThatThrownBy(() -> cache.get("b", down)).isInstanceOf(CacheLoadException.class);

      assertThatThrownBy(() -> cache.get("b", down))
          .hasMessageContaining("the key's last load failed"); // not "last 2 loads"
    }
  }

  /**
   * Holds every read (single and bulk) until the test times it out, oldest first, as a client
   * whose I/O thread is starved answers them late with a timeout. Writes reach the store.
   */
  private static final class TimingOutStore extends ForwardingStore {
    private final ConcurrentLinkedQueue<CompletableFuture<?>> reads =
        new ConcurrentLinkedQueue<>();

    TimingOutStore(InMemoryStore delegate) {
      super(delegate);
    }

    // The reads of the cache's internal keys (the namespace's generation, polled by default)
    // are answered: only the reads of entries time out.
    private static boolean internal(String key) {
      return key.indexOf(Keys.INTERNAL_MARK) >= 0;
    }

    @Override
    public CompletableFuture<Optional<StoreItem>> gets(String key) {
      if (internal(key)) {
        return super.gets(key);
      }
      CompletableFuture<Optional<StoreItem>> read = new CompletableFuture<>();
      reads.add(read);
      return read;
    }

    @Override
    public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
      if (keys.stream().anyMatch(TimingOutStore::internal)) {
        return super.getsAll(keys);
      }
      CompletableFuture<Map<String, StoreItem>> read = new CompletableFuture<>();
      reads.add(read);
      return read;
    }

    int pending() {
      return reads.size();
    }

    void timeOutNext() {
      reads.remove().completeExceptionally(new StoreException("timed out"));
    }

    void timeOutAll() {
      while (!reads.isEmpty()) {
        timeOutNext();
      }
    }
  }
}
