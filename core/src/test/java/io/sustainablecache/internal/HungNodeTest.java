package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.AsyncLoader;
import io.sustainablecache.Loader;
import io.sustainablecache.ReadStart;
import io.sustainablecache.RefreshPolicyTest;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.Ticker;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.PartialReadException;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.ForwardingStore;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Issue 31, parts 1 and 3: a node that hangs, fails or answers again, in virtual time. After two
 * operations of a node failed in a row its operations fail at once (reads load without waiting),
 * the breaker sends a read of its own as the probe once per probe interval (no caller waits for
 * it), and the first answer makes the node used again; while reads fail, the loader runs at
 * most once per {@code outageReuse} per key. The caches over one store share its breakers.
 */
final class HungNodeTest {

  private static final Duration PROBE = Duration.ofMillis(500);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final HangingStore store = new HangingStore(InMemoryStore.create(clock));
  private final ManualExecutor executor = new ManualExecutor();
  private final AtomicInteger loads = new AtomicInteger();

  private SustainableCache<String> cache() {
    // the namespace's generation on (the default), its polls on a manual scheduler that the
    // test never runs: the store's only operations are the build's first poll and the test's (on
    // the system scheduler, a poll timed out with the test's reads opened the breaker one read
    // early, once in CI)
    return SustainableCache.builder(store).namespace("h").ttl(Duration.ofMinutes(10))
        .codec(ValueCodec.utf8()).refreshExecutor(executor).clock(clock).ticker(clock.ticker())
        .scheduler(ManualScheduler.on(clock.ticker())).random(RefreshPolicyTest.fixed(0.5))
        .build();
  }

  private final Loader<String> sync = key -> key + "#" + loads.incrementAndGet();

  private AsyncLoader<String> loader() {
    return key -> CompletableFuture.completedFuture(key + "#" + loads.incrementAndGet());
  }

  @Test
  void aHungStore_costsTwoTimeouts_thenReadsLoadAtOnce_untilAProbeAnswers() {
    try (SustainableCache<String> cache = cache()) {
      assertThat(cache.storeNodeStates()).containsExactly(Map.entry("store", false));
      store.hang();
      for (String key : List.of("a", "b")) { // two reads wait for their timeouts
        CompletableFuture<String> read = cache.getAsync(key, loader());
        assertThat(read).isNotDone();
        store.timeOutAll();
        assertThat(read.join()).isEqualTo(key + "#" + loads.get());
      }
      assertThat(cache.storeNodeStates()).containsExactly(Map.entry("store", true));

      int sent = store.sent.get();
      CompletableFuture<String> fast = cache.getAsync("c", loader());
      assertThat(fast).isCompletedWithValue("c#3"); // not sent: loaded at once
      assertThat(store.sent.get()).isEqualTo(sent);
      assertThat(cache.stats().count("store_rejected")).isPositive();

      clock.advance(PROBE);
      // the probe is the breaker's own read: the caller that found it due does not wait for it
      assertThat(cache.getAsync("d", loader())).isCompletedWithValue("d#4");
      assertThat(store.sent.get()).isEqualTo(sent + 1); // the probe, and nothing of the caller's
      assertThat(cache.getAsync("e", loader())).isCompletedWithValue("e#5");
      assertThat(store.sent.get()).isEqualTo(sent + 1); // one probe per interval

      store.answer(); // the node answers the probe (a miss), and is used again
      assertThat(cache.storeNodeStates()).containsExactly(Map.entry("store", false));
      assertThat(cache.getAsync("f", loader())).isCompletedWithValue("f#6"); // sent, a miss
      assertThat(store.sent.get()).isGreaterThan(sent + 1);
      executor.runAll(); // its write-back, if any went to the executor
      assertThat(cache.getAsync("f", loader())).isCompletedWithValue("f#6"); // a hit
    }
  }

  @Test
  void aWriteThatFindsTheProbeDue_isNotSent_andTheProbeIsARead() {
    try (SustainableCache<String> cache = cache()) {
      hangAndTimeOutTwoReads(cache);
      clock.advance(PROBE);
      int gets = store.gets.get();
      int sent = store.sent.get();
      cache.put("w", "value"); // returns: refused at once (the store held what it was sent)
      assertThat(store.sent.get()).isEqualTo(sent + 1);
      assertThat(store.gets.get()).isEqualTo(gets + 1); // the probe: a read, not the write
      store.answer(); // the probe's read of w: a miss, and the node is used again
      assertThat(cache.storeNodeStates()).containsExactly(Map.entry("store", false));
      assertThat(cache.getIfPresent("w")).isEmpty(); // the refused write was never sent
    }
  }

  @Test
  void aProbeThatTimesOut_keepsTheNodeOut_forAnotherInterval() {
    try (SustainableCache<String> cache = cache()) {
      hangAndTimeOutTwoReads(cache);
      clock.advance(PROBE);
      assertThat(cache.getAsync("p", loader())).isCompletedWithValue("p#3"); // sends the probe
      clock.advance(Duration.ofMillis(700));
      store.timeOutAll(); // the probe's timeout
      assertThat(cache.storeNodeStates()).containsEntry("store", true);
      long sent = store.sent.get();
      clock.advance(Duration.ofMillis(400)); // less than an interval since the probe failed ...
      cache.getAsync("q", loader());
      assertThat(store.sent.get()).isEqualTo(sent); // ... so no second probe yet
      clock.advance(Duration.ofMillis(100));
      cache.getAsync("r", loader());
      assertThat(store.sent.get()).isEqualTo(sent + 1);
    }
  }

  @Test
  void failuresOfOperationsSentBeforeTheNodeAnsweredAgain_doNotTakeItOutAgain() {
    try (SustainableCache<String> cache = cache()) {
      store.hang();
      for (String key : List.of("a", "b", "c", "d")) {
        cache.getAsync(key, loader());
      }
      CompletableFuture<?> late1 = store.pending.poll(); // a and b: sent before the node is out
      CompletableFuture<?> late2 = store.pending.poll();
      store.timeOutAll(); // c and d: two failures in a row
      assertThat(cache.storeNodeStates()).containsEntry("store", true);
      clock.advance(PROBE);
      cache.getAsync("p", loader()); // sends the probe
      store.answer();
      late1.completeExceptionally(new StoreException("timed out long ago"));
      late2.completeExceptionally(new StoreException("timed out long ago"));
      assertThat(cache.storeNodeStates()).containsEntry("store", false);
    }
  }

  @Test
  void whileReadsFailAtOnce_aHotKeyLoadsAtMostOncePerOutageReuse() {
    try (SustainableCache<String> cache = cache()) {
      store.fail();
      for (int ms = 0; ms < 1_000; ms++) { // 1,000 reads in one second, each failing at once
        assertThat(cache.getAsync("hot", loader()).join()).startsWith("hot#");
        clock.advance(Duration.ofMillis(1));
      }
      assertThat(loads.get()).isBetween(19, 20); // one per 50 ms
      assertThat(cache.stats().count("outage_load")).isEqualTo(loads.get());
    }
  }

  @Test
  void anInvalidateOnThisInstance_endsTheReuseAtOnce() {
    try (SustainableCache<String> cache = cache()) {
      store.fail();
      assertThat(cache.getAsync("hot", loader()).join()).isEqualTo("hot#1");
      assertThat(cache.getAsync("hot", loader()).join()).isEqualTo("hot#1"); // reused
      try {
        cache.invalidate("hot");
      } catch (StoreException expected) {
        // the store is down: the invalidation did not reach it, but this instance saw it
      }
      assertThat(cache.getAsync("hot", loader()).join()).isEqualTo("hot#2");
    }
  }

  @Test
  void withTheBreakersOff_everyOperationWaitsForTheStore() {
    try (SustainableCache<String> cache = SustainableCache.builder(store).namespace("h")
        .ttl(Duration.ofMinutes(10)).codec(ValueCodec.utf8()).refreshExecutor(executor)
        .clock(clock).ticker(clock.ticker()).storeProbeInterval(Duration.ZERO).build()) {
      store.hang();
      for (int i = 0; i < 5; i++) {
        assertThat(cache.getAsync("k" + i, loader())).isNotDone();
        store.timeOutAll();
      }
      assertThat(cache.storeNodeStates()).isEmpty();
      assertThat(cache.stats().count("store_rejected")).isZero();
    }
  }

  // -------------------------------------------------------------------------------------------
  // A cluster: one node out, the others served

  private final ClusterStore cluster = new ClusterStore(clock, 3);
  private final String on0 = cluster.keyOn(0, "c", "k");
  private final String on1 = cluster.keyOn(1, "c", "k");

  @Test
  void aDeadNodeOfACluster_isOutAlone_andItsKeysOfAGetAllAreNotSent() {
    try (SustainableCache<String> cache = clusterCache()) {
      cache.get(on0, sync);
      cache.get(on1, sync);
      cluster.kill(0);
      io.sustainablecache.BulkLoader<String> bulk = keys -> keys.stream().collect(
          java.util.stream.Collectors.toMap(k -> k, k -> k + "#" + loads.incrementAndGet()));
      cache.get(on0, sync); // a hit on node 0 fails: the first failure
      cache.getAll(List.of(on0, on1), bulk); // the second, in a bulk read
      assertThat(cache.storeNodeStates().values()).containsExactly(true, false, false);

      long before = cluster.operationsOn(0);
      clock.advance(Duration.ofMillis(100)); // past the outage reuse of the last load of on0
      int loadsBefore = loads.get();
      Map<String, String> page = cache.getAll(List.of(on0, on1), bulk);
      assertThat(page.get(on1)).isEqualTo(on1 + "#2"); // node 1 still serves its key
      assertThat(page.get(on0)).isEqualTo(on0 + "#" + (loadsBefore + 1)); // node 0's loads
      assertThat(cluster.operationsOn(0)).isEqualTo(before); // and is not even asked

      cluster.heal(0);
      clock.advance(PROBE);
      cache.get(on0, sync); // the probe answers
      assertThat(cache.storeNodeStates().values()).containsExactly(false, false, false);
    }
  }

  /**
   * A store that names no nodes (spymemcached with {@code Redistribute}) has one breaker for all
   * of its servers: bulk reads that fail for some keys only (a dead server's, while its client
   * moves them) show the store answering, and do not take every key out; a bulk read that fails
   * whole still counts, and so does one that names every key it was sent as failed.
   * (ClusterContract's near-cache test over {@code Redistribute} once failed so: two near-log
   * polls that failed for one key each opened the whole store's breaker.)
   */
  @Test
  void aStoreThatNamesNoNodes_isNotTakenOut_byBulkReadsThatFailForSomeKeysOnly() {
    PartlyFailingStore partly = new PartlyFailingStore(InMemoryStore.create(clock));
    try (SustainableCache<String> cache = SustainableCache.builder(partly).namespace("p")
        .ttl(Duration.ofMinutes(10)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .scheduler(ManualScheduler.on(clock.ticker())).refreshExecutor(executor)
        .random(FixedRandom.neverEarly()).build()) {
      io.sustainablecache.BulkLoader<String> bulk = keys -> keys.stream().collect(
          java.util.stream.Collectors.toMap(k -> k, k -> k + "#" + loads.incrementAndGet()));
      partly.failing = "p:a";
      for (int i = 0; i < 3; i++) { // three bulk reads, each failing for "a" only
        clock.advance(Duration.ofSeconds(1)); // past the outage reuse of a's last load
        assertThat(cache.getAll(List.of("a", "b"), bulk)).containsOnlyKeys("a", "b");
      }
      assertThat(partly.partialReads.get()).isEqualTo(3);
      assertThat(cache.storeNodeStates()).containsExactly(Map.entry("store", false));
      assertThat(cache.stats().count("store_rejected")).isZero();

      for (String every : List.of("*", "**")) { // failed whole, then "partly" for every key
        partly.failing = every;
        clock.advance(Duration.ofSeconds(1));
        cache.getAll(List.of("a", "b"), bulk);
      }
      assertThat(cache.storeNodeStates()).containsExactly(Map.entry("store", true));
    }
  }

  @Test
  void whileEveryNodeAnswers_noKeyIsRouted_andAFailureIsChargedToItsNode_aSuccessEndingItsRun() {
    try (SustainableCache<String> cache = clusterCache()) {
      long asked = cluster.nodesAsked();
      for (int i = 0; i < 5; i++) {
        cache.get(on0, sync);
        cache.get(on1, sync);
      }
      assertThat(cluster.nodesAsked()).as("nodes found while every node answers").isEqualTo(asked);

      cluster.kill(0);
      assertThat(cache.getIfPresent(on0)).isEmpty(); // a failure, charged to node 0 once routed
      assertThat(cluster.nodesAsked()).isGreaterThan(asked);
      cluster.heal(0);
      assertThat(cache.getIfPresent(on0)).contains(on0 + "#1"); // a success: the run ends
      cluster.kill(0);
      assertThat(cache.getIfPresent(on0)).isEmpty(); // one failure in a row again: still in
      assertThat(cache.storeNodeStates().values()).containsExactly(false, false, false);
      assertThat(cache.getIfPresent(on0)).isEmpty(); // two in a row: out
      assertThat(cache.storeNodeStates().values()).containsExactly(true, false, false);
      assertThat(cache.getIfPresent(on1)).contains(on1 + "#2"); // node 1 is not charged
    }
  }

  /** Hangs the store and times out two reads: the node is out. */
  /**
   * Two caches over one store (two Hibernate regions, two Spring caches): the timeouts of one
   * take the node out for both, so the other's first read does not wait; each cache counts its
   * own refusals, and the first answer brings the node back for both.
   */
  @Test
  void theCachesOverOneStore_shareItsBreakers_soAHungNodeCostsTwoTimeoutsInAll() {
    try (SustainableCache<String> first = cache();
        SustainableCache<String> second = SustainableCache.builder(store).namespace("h2")
            .ttl(Duration.ofMinutes(10)).codec(ValueCodec.utf8()).refreshExecutor(executor)
            .clock(clock).ticker(clock.ticker()).scheduler(ManualScheduler.on(clock.ticker()))
            .random(RefreshPolicyTest.fixed(0.5)).build()) {
      hangAndTimeOutTwoReads(first);
      assertThat(second.storeNodeStates()).containsExactly(Map.entry("store", true));
      int sent = store.sent.get();
      CompletableFuture<String> read = second.getAsync("z", loader());
      assertThat(read).isCompletedWithValue("z#3"); // not sent: loaded at once
      assertThat(store.sent.get()).isEqualTo(sent);
      assertThat(second.stats().count("store_rejected")).isEqualTo(1);
      assertThat(first.stats().count("store_rejected")).isZero();

      clock.advance(PROBE);
      second.getIfPresent("z"); // its probe, for both
      assertThat(store.sent.get()).isEqualTo(sent + 1);
      store.answer();
      assertThat(first.storeNodeStates()).containsExactly(Map.entry("store", false));
      assertThat(second.storeNodeStates()).containsExactly(Map.entry("store", false));
    }
  }

  @Test
  void whileTheNodeIsOut_aRefusalWalksNoStack_andAnUnencodableValueIsStillAnIllegalArgument() {
    ValueCodec<String> picky = new ValueCodec<>() {
      @Override
      public byte[] encode(String value) {
        if (value.equals("unencodable")) {
          throw new IllegalArgumentException("not cacheable: " + value);
        }
        return ValueCodec.utf8().encode(value);
      }

      @Override
      public String decode(byte[] bytes, int offset, int length) {
        return ValueCodec.utf8().decode(bytes, offset, length);
      }
    };
    try (SustainableCache<String> cache = SustainableCache.builder(store).namespace("h")
        .ttl(Duration.ofMinutes(10)).codec(picky).refreshExecutor(executor).clock(clock)
        .ticker(clock.ticker()).scheduler(ManualScheduler.on(clock.ticker()))
        .random(RefreshPolicyTest.fixed(0.5)).build()) {
      hangAndTimeOutTwoReads(cache);
      int sent = store.sent.get();
      // Hibernate's putFromLoad while the node is out: refused at once with the breaker's own
      // exception, which carries no stack trace (each refused operation would otherwise walk
      // the caller's frames)
      assertThatThrownBy(() -> cache.putLoaded("x", "loaded", ReadStart.now(clock,
          clock.ticker())))
          .isInstanceOf(StoreException.class)
          .hasMessageContaining("failed at once, not sent")
          .satisfies(refusal -> assertThat(refusal.getStackTrace()).isEmpty());
      // a value that cannot be cached is refused as such, node out or not, and reads nothing
      assertThatThrownBy(() -> cache.putLoaded("y", "unencodable", ReadStart.now(clock,
          clock.ticker())))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not cacheable");
      assertThat(cache.getIfPresent("x")).isEmpty(); // refused too: a miss
      assertThat(store.sent.get()).isEqualTo(sent);

      clock.advance(PROBE);
      cache.getIfPresent("x"); // sends the probe
      store.answer(); // the node answers: a putLoaded is written again
      assertThat(cache.putLoaded("x", "loaded", ReadStart.now(clock, clock.ticker()))).isTrue();
      assertThat(cache.getIfPresent("x")).contains("loaded");
      int gets = store.gets.get();
      assertThatThrownBy(() -> cache.putLoaded("y", "unencodable", ReadStart.now(clock,
          clock.ticker()))).isInstanceOf(IllegalArgumentException.class);
      assertThat(store.gets.get()).isEqualTo(gets); // refused before its read
    }
  }

  /**
   * The caches over one store share its breakers while they are in use, and no longer: a cache
   * with a ticker of its own, closed and collected, leaves nothing in the registry.
   */
  @Test
  void theSharedBreakers_areDroppedOnceNoCacheUsesThem() {
    int before = NodeBreakers.sharedCount(store);
    for (int i = 0; i < 20; i++) {
      Ticker own = () -> clock.ticker().read(); // a ticker of its own: breakers of their own
      try (SustainableCache<String> cache = SustainableCache.builder(store).namespace("t" + i)
          .ttl(Duration.ofMinutes(10)).codec(ValueCodec.utf8()).refreshExecutor(executor)
          .clock(clock).ticker(own).scheduler(ManualScheduler.on(own)).build()) {
        // its own, beside those of the caches closed before it not collected yet
        assertThat(NodeBreakers.sharedCount(store)).isBetween(before + 1, before + i + 1);
      }
    }
    // closed and unreachable: collected, and dropped at the next lookup
    Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
        .until(() -> {
          System.gc();
          return NodeBreakers.sharedCount(store) == before;
        });
  }

  private void hangAndTimeOutTwoReads(SustainableCache<String> cache) {
    store.hang();
    for (String key : List.of("a", "b")) {
      cache.getAsync(key, loader());
      store.timeOutAll();
    }
    assertThat(cache.storeNodeStates()).containsEntry("store", true);
  }

  private SustainableCache<String> clusterCache() {
    return SustainableCache.builder(cluster).namespace("c").ttl(Duration.ofMinutes(10))
        .codec(ValueCodec.utf8()).refreshExecutor(executor).clock(clock).ticker(clock.ticker())
        .scheduler(ManualScheduler.on(clock.ticker()))
        .random(FixedRandom.neverEarly(new SplittableRandom(31))).build();
  }

  /**
   * Fails bulk reads for one store key ({@code failing}: a {@link PartialReadException} with the
   * others' items), as a store that names no nodes does while its client moves a dead server's
   * keys; for every key ({@code "*"}); or for every key as a partial read naming them all ({@code
   * "**"}, which the SPI does not do).
   */
  private static final class PartlyFailingStore extends ForwardingStore {
    volatile String failing = "";
    final AtomicInteger partialReads = new AtomicInteger();

    PartlyFailingStore(InMemoryStore delegate) {
      super(delegate);
    }

    @Override
    public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
      if (failing.equals("*")) {
        return CompletableFuture.failedFuture(new StoreException("every server failed"));
      }
      if (failing.equals("**")) {
        return CompletableFuture.failedFuture(new PartialReadException(
            "every key failed", null, Map.of(), List.copyOf(keys)));
      }
      if (!keys.contains(failing)) {
        return super.getsAll(keys);
      }
      List<String> others = keys.stream().filter(key -> !key.equals(failing)).toList();
      return super.getsAll(others).thenCompose(found -> {
        partialReads.incrementAndGet();
        return CompletableFuture.failedFuture(new PartialReadException(
            "the server of " + failing + " is not connected", null, found, List.of(failing)));
      });
    }
  }

  /**
   * A store that answers through its delegate, or, while hung, holds every operation until the
   * test times it out or lets the delegate answer it; while failing, fails every operation at
   * once. Counts what it was sent.
   */
  private static final class HangingStore extends ForwardingStore {
    final ConcurrentLinkedQueue<CompletableFuture<?>> pending = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<Runnable> answers = new ConcurrentLinkedQueue<>();
    final AtomicInteger sent = new AtomicInteger();
    final AtomicInteger gets = new AtomicInteger();
    private volatile int mode; // 0 answer, 1 hang, 2 fail at once

    HangingStore(InMemoryStore delegate) {
      super(delegate);
    }

    void hang() {
      mode = 1;
    }

    void fail() {
      mode = 2;
    }

    void timeOutAll() {
      CompletableFuture<?> held;
      while ((held = pending.poll()) != null) {
        held.completeExceptionally(new StoreException("timed out after 700 ms"));
      }
      answers.clear();
    }

    /** Answers every held operation through the delegate, and answers from now on. */
    void answer() {
      mode = 0;
      pending.clear();
      Runnable answer;
      while ((answer = answers.poll()) != null) {
        answer.run();
      }
    }

    private <T> CompletableFuture<T> op(Supplier<CompletableFuture<T>> real) {
      sent.incrementAndGet();
      if (mode == 2) {
        return CompletableFuture.failedFuture(new StoreException("connection refused"));
      }
      if (mode == 0) {
        return real.get();
      }
      CompletableFuture<T> held = new CompletableFuture<>();
      pending.add(held);
      answers.add(() -> real.get().whenComplete((v, t) -> {
        if (t != null) {
          held.completeExceptionally(t);
        } else {
          held.complete(v);
        }
      }));
      return held;
    }

    @Override
    public CompletableFuture<Optional<StoreItem>> gets(String key) {
      gets.incrementAndGet();
      return op(() -> super.gets(key));
    }

    @Override
    public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
      return op(() -> super.getsAll(keys));
    }

    @Override
    public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
      return op(() -> super.add(key, value, exptime));
    }

    @Override
    public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
      return op(() -> super.set(key, value, exptime));
    }

    @Override
    public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
        int exptime) {
      return op(() -> super.cas(key, casToken, value, exptime));
    }

    @Override
    public CompletableFuture<Boolean> delete(String key) {
      return op(() -> super.delete(key));
    }
  }
}
