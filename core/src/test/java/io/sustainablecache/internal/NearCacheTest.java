package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.KeyPolicy;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The near cache through the public API, in virtual time: two instances (two caches over one
 * store, one namespace), each with a near cache of bound {@value #DELTA_MILLIS} ms whose polls run
 * on a manual scheduler. A near hit makes no store read; a change on one instance stops the
 * other's near hits within the bound, whether its polls succeed or fail; a change here is seen
 * here at once.
 */
final class NearCacheTest {

  private static final long DELTA_MILLIS = 1_000;
  private static final Duration DELTA = Duration.ofMillis(DELTA_MILLIS);
  private static final Duration TTL = Duration.ofMinutes(10);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  /** Both instances' refreshes, run when the test says. */
  private final ManualExecutor refreshes = new ManualExecutor();
  private final InMemoryStore memory = InMemoryStore.create(clock);
  /** Both instances' stores refuse a prefix flush, as plain memcached does. */
  private final ScriptedStore storeOfA =
      ScriptedStore.over(ForwardingStore.withoutFlushPrefix(memory));
  private final SustainableCache<String> a = cache(storeOfA);
  private final SustainableCache<String> b = cache(ForwardingStore.withoutFlushPrefix(memory));
  private final AtomicInteger loads = new AtomicInteger();

  private SustainableCache<String> cache(CacheStore store) {
    return SustainableCache.builder(store).namespace("near").ttl(TTL)
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(refreshes)
        .random(FixedRandom.neverEarly()).nearCache(1_000, DELTA, 0).build();
  }

  @AfterEach
  void close() {
    a.close();
    b.close();
  }

  /** Lets virtual time pass in steps of 100 ms, running the polls that fall due. */
  private void pass(long millis) {
    scheduler.pass(clock, millis, 100);
  }

  private String load(String key) {
    loads.incrementAndGet();
    return key + "@" + clock.millis();
  }

  @Test
  void aKeyLoadedHere_orReadOnceFromTheStore_isThenANearHit_withoutAStoreRead() {
    scheduler.runDue(); // the first polls
    String loaded = a.get("k", this::load); // a miss: loaded and written, and held near at once
    long reads = storeOfA.count(Op.GETS);

    for (int i = 0; i < 100; i++) {
      assertThat(a.get("k", this::load)).isEqualTo(loaded);
    }

    assertThat(storeOfA.count(Op.GETS)).as("store reads of 100 near hits").isEqualTo(reads);
    assertThat(a.stats().count("near_hit")).isEqualTo(100);
    assertThat(a.stats().hitCount()).as("near hits are hits").isGreaterThanOrEqualTo(100);

    assertThat(b.get("k", this::load)).as("B reads it from the store").isEqualTo(loaded);
    long readsOfB = b.stats().hitCount();
    assertThat(b.get("k", this::load)).isEqualTo(loaded);
    assertThat(b.stats().count("near_hit")).as("then holds it near").isEqualTo(1);
    assertThat(b.stats().hitCount()).isEqualTo(readsOfB + 1);
    assertThat(loads).hasValue(1);
  }

  @Test
  void anInvalidateOnAnotherInstance_endsTheNearHitsOfTheOldValueWithinTheBound() {
    scheduler.runDue();
    String old = a.get("k", this::load);
    a.get("k", this::load); // now in A's near cache
    pass(300);

    b.invalidate("k");
    long invalidatedAt = clock.millis();
    String seen = old;
    while (seen.equals(old)) {
      seen = a.get("k", this::load);
      if (seen.equals(old)) {
        assertThat(clock.millis() - invalidatedAt).as("A served the old value").isLessThanOrEqualTo(
            DELTA_MILLIS);
      }
      pass(100);
    }
    assertThat(seen).isNotEqualTo(old);
    assertThat(clock.millis() - invalidatedAt).isLessThanOrEqualTo(DELTA_MILLIS + 100);
  }

  @Test
  void whenThisInstancesPollsFail_itStopsServingNearEntriesOnceTheBoundPassed() {
    scheduler.runDue();
    String old = a.get("k", this::load);
    a.get("k", this::load);
    storeOfA.fail(Op.GETS_ALL, Integer.MAX_VALUE); // A cannot read the log any more

    b.invalidate("k");
    long invalidatedAt = clock.millis();
    pass(DELTA_MILLIS + 100);

    assertThat(a.get("k", this::load)).as("%d ms after the invalidation, polls failing",
        clock.millis() - invalidatedAt).isNotEqualTo(old);
    assertThat(a.stats().count("near_miss")).isPositive();
  }

  /**
   * Issue 24, defect 3: the bound rests on the ticker, not on the injected wall clock. A's wall
   * clock steps back ten minutes (NTP, an operator) while its polls fail: its near entry stops
   * being served once the ticker says the bound passed. (When the clock was the near cache's
   * ticker, the step made the last confirmation ten minutes "in the future", and A served the
   * replaced value for ten more minutes.)
   */
  @Test
  void aWallClockSteppingBack_whilePollsFail_doesNotStretchTheBound() {
    scheduler.runDue();
    String old = a.get("k", this::load);
    a.get("k", this::load); // near
    storeOfA.fail(Op.GETS_ALL, Integer.MAX_VALUE);

    b.invalidate("k");
    clock.setMillis(clock.millis() - Duration.ofMinutes(10).toMillis()); // the wall clock alone
    long hits = a.stats().count("near_hit");
    assertThat(a.get("k", this::load)).as("within the bound, the step changes nothing")
        .isEqualTo(old);
    assertThat(a.stats().count("near_hit")).isEqualTo(hits + 1);
    pass(DELTA_MILLIS + 100); // by the ticker

    assertThat(a.get("k", this::load)).as("past the bound by the ticker, the wall clock stepped"
        + " back ten minutes").isNotEqualTo(old);
    assertThat(a.stats().count("near_hit")).as("no near hit past the bound").isEqualTo(hits + 1);
  }

  @Test
  void aHashedKeyInvalidatedOnAnotherInstance_isDroppedHereToo() {
    SustainableCache<String> hashingA = SustainableCache.builder(storeOfA).namespace("hashing")
        .ttl(TTL).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(refreshes).random(FixedRandom.neverEarly()).keyPolicy(KeyPolicy.HASH)
        .nearCache(1_000, DELTA, 0).build();
    SustainableCache<String> hashingB = SustainableCache.builder(memory).namespace("hashing")
        .ttl(TTL).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(refreshes).random(FixedRandom.neverEarly()).keyPolicy(KeyPolicy.HASH)
        .nearCache(1_000, DELTA, 0).build();
    try (hashingA; hashingB) {
      scheduler.runDue();
      String key = "a key with spaces #1";
      String old = hashingA.get(key, this::load);
      hashingA.get(key, this::load);
      long hits = hashingA.stats().count("near_hit");
      assertThat(hashingA.get(key, this::load)).isEqualTo(old);
      assertThat(hashingA.stats().count("near_hit")).as("a near hit").isEqualTo(hits + 1);

      hashingB.invalidate(key);
      pass(DELTA_MILLIS / 2 + 100);

      assertThat(hashingA.get(key, this::load)).isNotEqualTo(old);
    }
  }

  @Test
  void getAll_answersTheNearKeysHere_andReadsOnlyTheOthers_inTheCallersOrder() {
    scheduler.runDue();
    for (String key : List.of("a", "b")) {
      a.get(key, this::load);
      a.get(key, this::load); // now near
    }
    long bulkReads = storeOfA.count(Op.GETS_ALL);
    long nearHits = a.stats().count("near_hit");

    Map<String, String> all = a.getAll(List.of("b", "a", "b"), this::loadAll);
    assertThat(all).containsOnlyKeys("b", "a");
    assertThat(List.copyOf(all.keySet())).containsExactly("b", "a");
    assertThat(storeOfA.count(Op.GETS_ALL)).as("no bulk read: all near").isEqualTo(bulkReads);
    assertThat(a.stats().count("near_hit") - nearHits).isEqualTo(2);

    Map<String, String> mixed = a.getAll(List.of("c", "a"), this::loadAll);
    assertThat(List.copyOf(mixed.keySet())).containsExactly("c", "a");
    assertThat(storeOfA.count(Op.GETS_ALL)).as("one bulk read, for c").isEqualTo(bulkReads + 1);
    a.getAll(List.of("c"), this::loadAll); // c read from the store: now near
    long before = storeOfA.count(Op.GETS_ALL);
    assertThat(a.getAll(List.of("a", "b", "c"), this::loadAll)).hasSize(3);
    assertThat(storeOfA.count(Op.GETS_ALL)).isEqualTo(before);
  }

  @Test
  void getAll_afterAnInvalidateOnAnotherInstance_returnsTheNewValueWithinTheBound() {
    scheduler.runDue();
    String old = a.get("k", this::load);
    a.get("k", this::load);
    assertThat(a.getAll(List.of("k"), this::loadAll)).containsEntry("k", old);

    b.invalidate("k");
    pass(DELTA_MILLIS / 2 + 100);

    assertThat(a.getAll(List.of("k"), this::loadAll).get("k")).isNotEqualTo(old);
  }

  private Map<String, String> loadAll(Set<String> keys) {
    Map<String, String> values = new HashMap<>();
    keys.forEach(key -> values.put(key, load(key)));
    return values;
  }

  /**
   * A lost invalidation, planted: B's {@code put} reaches the store but its record does not (B's
   * {@code incr} fails, so B's caller gets an exception). A, which checks every near hit here,
   * keeps serving the old value from its near cache, and counts the hits past the bound as stale;
   * the hits within the bound are checked and not counted.
   */
  @Test
  void aLostInvalidation_isFoundBySampling_onceTheBoundHasPassed() {
    ScriptedStore storeOfB = ScriptedStore.over(memory);
    try (SustainableCache<String> sampling = SustainableCache.builder(storeOfA)
            .namespace("sampled").ttl(TTL).codec(ValueCodec.utf8()).clock(clock)
            .ticker(clock.ticker())
            .scheduler(scheduler).refreshExecutor(refreshes).random(FixedRandom.neverEarly())
            .nearCache(1_000, DELTA, 1.0).build();
        SustainableCache<String> writer = SustainableCache.builder(storeOfB)
            .namespace("sampled").ttl(TTL).codec(ValueCodec.utf8()).clock(clock)
            .ticker(clock.ticker())
            .scheduler(scheduler).refreshExecutor(refreshes).random(FixedRandom.neverEarly())
            .nearCache(1_000, DELTA, 0).failWritesWhenStoreDown(true).build()) {
      scheduler.runDue();
      String old = sampling.get("k", this::load);
      sampling.get("k", this::load); // near now
      // An entry this instance wrote is compared by its load time (memcached returns no token
      // for a write): the put must not fall in the same virtual millisecond.
      clock.advanceMillis(1);
      storeOfB.fail(Op.INCR, 1);
      assertThatThrownBy(() -> writer.put("k", "new")).isInstanceOf(StoreException.class);

      pass(DELTA_MILLIS / 2);
      assertThat(sampling.get("k", this::load)).as("the record was lost").isEqualTo(old);
      assertThat(sampling.stats().count("near_stale_sample")).as("within the bound").isZero();

      pass(DELTA_MILLIS);
      assertThat(sampling.get("k", this::load)).isEqualTo(old);
      assertThat(sampling.stats().count("near_sample")).isGreaterThanOrEqualTo(2);
      assertThat(sampling.stats().count("near_stale_sample")).as("past the bound").isEqualTo(1);
    }
  }

  /**
   * {@code invalidateAll} on a store without a prefix flush: a new generation of the namespace,
   * here at once (its store entries included), there within the bound.
   */
  @Test
  void invalidateAll_reachesThisInstanceAtOnce_andTheOthersWithinTheBound() {
    scheduler.runDue();
    String oldX = a.get("x", this::load);
    a.get("x", this::load);
    String oldY = b.get("y", this::load);
    b.get("y", this::load);
    pass(DELTA_MILLIS); // both near, both polled
    a.get("x", this::load);
    b.get("y", this::load);

    b.invalidateAll();
    assertThat(b.getIfPresent("y")).as("here, at once").isEmpty();
    assertThat(b.getIfPresent("x")).as("here, at once, in the store too").isEmpty();
    pass(DELTA_MILLIS / 2 + 100);

    assertThat(a.getIfPresent("x")).as("there, within the bound").isEmpty();
    assertThat(a.getIfPresent("y")).isEmpty();
    assertThat(a.get("x", this::load)).isNotEqualTo(oldX);
    assertThat(b.get("y", this::load)).isNotEqualTo(oldY);
    assertThat(a.stats().count("corrupt_entry")).as("old entries are misses, not corrupt").isZero();
  }

  /**
   * An instance that has not polled since another's {@code invalidateAll} writes in the old
   * generation: what it writes is a miss for every instance that knows the new one, itself once
   * it has polled.
   */
  @Test
  void whatAnInstanceWritesBeforeItLearnsOfAnInvalidateAll_isAMissForThoseThatKnow() {
    scheduler.runDue();
    b.invalidateAll();
    String written = a.get("z", this::load); // A does not know yet: written in the old generation

    assertThat(b.getIfPresent("z")).as("B knows the new generation").isEmpty();
    pass(DELTA_MILLIS / 2 + 100);
    assertThat(a.getIfPresent("z")).as("A, once it polled").isEmpty();
    assertThat(a.get("z", this::load)).isNotEqualTo(written);
    assertThat(b.getIfPresent("z")).as("now written in the new generation").isPresent();
  }

  /**
   * A load that started on another instance before {@code invalidateAll} returned, and ends
   * after that instance learned the new generation, is not written: its value may predate the
   * change. (A prefix flush does not fence it: its {@code add} would land.)
   */
  @Test
  void aLoadThatStartedBeforeAnInvalidateAll_isNotWrittenInTheNewGeneration() {
    scheduler.runDue();
    CompletableFuture<String> slowLoad = new CompletableFuture<>();
    CompletableFuture<String> read = a.getAsync("k", key -> slowLoad);
    b.invalidateAll();
    pass(DELTA_MILLIS); // A learns the new generation
    slowLoad.complete("read from the database before the change");

    assertThat(read.join()).as("its caller still gets it").startsWith("read from");
    assertThat(b.getIfPresent("k")).as("not written").isEmpty();
    assertThat(a.getIfPresent("k")).isEmpty();
    assertThat(a.get("k", this::load)).startsWith("k@");
    assertThat(b.getIfPresent("k")).as("a load that started after").isPresent();
  }

  /**
   * Another instance's {@code invalidateAll} voids this JVM's loads in flight once a poll brings
   * the new generation, as this instance's own would: a read that begins after does not join a
   * load that may have read the database before the change.
   */
  @Test
  void aNewGeneration_voidsThisJvmsLoadsInFlight_laterReadsDoNotJoinThem() {
    try (SustainableCache<String> c = SustainableCache.builder(memory).namespace("near")
            .ttl(TTL).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
            .scheduler(scheduler)
            .refreshExecutor(refreshes).random(FixedRandom.neverEarly()).fleetLease(false)
            .nearCache(1_000, DELTA, 0).build()) {
      scheduler.runDue();
      CompletableFuture<String> slowLoad = new CompletableFuture<>();
      CompletableFuture<String> before = c.getAsync("k", key -> slowLoad);
      b.invalidateAll();
      pass(DELTA_MILLIS); // C learns the new generation

      CompletableFuture<String> after = c.getAsync("k",
          key -> CompletableFuture.completedFuture("loaded after the change"));
      slowLoad.complete("read before the change");

      assertThat(before.join()).as("its own caller still gets it")
          .isEqualTo("read before the change");
      assertThat(after.join()).isEqualTo("loaded after the change");
    }
  }

  /**
   * Before a first poll succeeds the generation is unknown: every read misses, loads are answered
   * but not written, a caller's write fails; the first poll that succeeds ends it.
   */
  @Test
  void anInstanceThatCouldNotPollYet_missesEveryRead_writesNothing_andRefusesCallerWrites() {
    scheduler.runDue();
    b.get("k", this::load);
    ScriptedStore failing = ScriptedStore.over(ForwardingStore.withoutFlushPrefix(memory));
    failing.fail(Op.GETS_ALL, Integer.MAX_VALUE);
    try (SustainableCache<String> c = cache(failing)) {
      assertThat(c.getIfPresent("k")).as("an entry it cannot judge").isEmpty();
      assertThat(c.get("j", this::load)).startsWith("j@");
      assertThat(memory.gets("near:j").join()).as("the load was not written").isEmpty();
      assertThatThrownBy(() -> c.put("k", "v")).isInstanceOf(StoreException.class)
          .hasMessageContaining("generation");
      assertThatThrownBy(() -> c.invalidate("k")).isInstanceOf(StoreException.class);

      failing.heal();
      pass(DELTA_MILLIS);
      assertThat(c.getIfPresent("k")).as("known now").isPresent();
    }
  }

  /** An entry of another generation planted under a key is a miss whose token fences loads. */
  @Test
  void anEntryOfAnotherGeneration_isAMiss_thatALoadReplaces() {
    scheduler.runDue();
    long now = clock.millis();
    memory.set("near:k", io.sustainablecache.internal.Envelope.encode(now, now + 60_000, 1,
        12_345, "planted".getBytes(java.nio.charset.StandardCharsets.UTF_8)), 0).join();
    memory.set("near:v1", io.sustainablecache.internal.Envelope.encode(now, now + 60_000, 1,
        "version one".getBytes(java.nio.charset.StandardCharsets.UTF_8)), 0).join();

    assertThat(a.getIfPresent("k")).isEmpty();
    assertThat(a.getIfPresent("v1")).as("written without a generation").isEmpty();
    assertThat(a.get("k", this::load)).startsWith("k@");
    assertThat(b.getIfPresent("k")).as("the load replaced it").isPresent();
    assertThat(a.stats().count("corrupt_entry")).isZero();
  }

  /**
   * Near hits of an entry due for a refresh while another instance holds the key's lease: the
   * refresh each starts loses the lease; near hits start at most one per half bound, not one per
   * hit (each costs the store a lease {@code add} and a {@code gets}).
   */
  @Test
  void nearHitsWhileAnotherInstanceHoldsTheLease_startOneRefreshPerHalfBound() {
    scheduler.runDue();
    a.get("k", this::load);
    a.get("k", this::load); // near
    clock.advance(TTL.plusMillis(1)); // past the TTL, within the grace period: stale
    scheduler.runDue();
    a.get("k", this::load); // read again from the store (the poll was late), near again
    memory.set("near:k\u007Flease", ("L:" + (clock.millis() + 5_000) + ":someone-else")
        .getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0).join();
    long leaseAdds = storeOfA.count(Op.ADD);

    for (int i = 0; i < 100; i++) {
      a.get("k", this::load); // a stale near hit
      refreshes.runAll(); // the refresh it started (if any) loses the lease
    }
    assertThat(storeOfA.count(Op.ADD) - leaseAdds).as("lease attempts of 100 near hits")
        .isEqualTo(1);
    assertThat(loads).as("nothing loaded: the other instance holds the lease").hasValue(1);

    pass(DELTA_MILLIS / 2 + 100);
    a.get("k", this::load);
    refreshes.runAll();
    assertThat(storeOfA.count(Op.ADD) - leaseAdds).as("after the pause").isEqualTo(2);
  }

  /**
   * An entry this instance's load wrote is near at once but has no CAS token; once it is due for
   * a refresh, one read goes to the store for the token, and the refresh's conditional write
   * lands (with the near entry's missing token it would be an {@code add}, refused).
   */
  @Test
  void anEntryWrittenHere_dueForARefresh_readsTheStoreOnce_andTheRefreshLands() {
    scheduler.runDue();
    a.get("k", this::load); // loaded, written, near at once
    clock.advance(TTL.plusMillis(1)); // stale: due for a refresh
    scheduler.runDue();
    long reads = storeOfA.count(Op.GETS);

    a.get("k", this::load);
    refreshes.runAll();
    a.get("k", this::load);
    refreshes.runAll();

    assertThat(loads).as("the refresh loaded once").hasValue(2);
    assertThat(a.stats().refreshSuccessCount()).isEqualTo(1);
    assertThat(a.stats().count("stale_set_discard")).as("its write was not refused").isZero();
    assertThat(storeOfA.count(Op.GETS) - reads).as("store reads: one for the token")
        .isBetween(1L, 2L);
  }

  /**
   * A load's write that landed before another instance's invalidation, but whose answer reaches
   * this instance only after its poll applied that invalidation: the entry written does not enter
   * the near tier then (its ticket predates the poll's drop), however late it comes.
   */
  @Test
  void aLoadsWriteAnsweredAfterThePollThatDroppedTheKey_doesNotEnterTheNearTier() {
    scheduler.runDue();
    b.invalidate("k"); // a tombstone: A's load will write with cas
    ScriptedStore.Hold cas = storeOfA.holdResponses(Op.CAS);
    CompletableFuture<String> read = a.getAsync("k", key -> CompletableFuture.completedFuture(
        "old"));
    assertThat(read.join()).isEqualTo("old");
    assertThat(cas.waiting()).as("the write landed; its answer is held").isEqualTo(1);

    b.invalidate("k");
    pass(DELTA_MILLIS); // A polls: the key is dropped
    cas.release();

    assertThat(a.getIfPresent("k")).as("not the old value from A's near tier").isEmpty();
  }

  @Test
  void aChangeOnThisInstance_isSeenHereAtOnce() {
    scheduler.runDue();
    a.get("k", this::load);
    a.get("k", this::load);

    a.put("k", "mine");
    assertThat(a.get("k", this::load)).isEqualTo("mine");

    a.invalidate("k");
    assertThat(a.getIfPresent("k")).isEmpty();
  }

  @Test
  void aPutOnAnotherInstance_reachesThisOneWithinTheBound() {
    scheduler.runDue();
    a.get("k", this::load);
    a.get("k", this::load);

    b.put("k", "from b");
    pass(DELTA_MILLIS / 2 + 100);

    assertThat(a.get("k", this::load)).isEqualTo("from b");
  }

  @Test
  void aRefreshWrittenByAnotherInstance_reachesThisOneWithinTheBound() {
    scheduler.runDue();
    a.get("k", this::load);
    a.get("k", this::load);

    clock.advance(TTL.plusSeconds(1)); // past the logical expiry, within the grace period
    scheduler.runDue();
    String stale = b.get("k", this::load); // B serves the stale value and refreshes it
    assertThat(refreshes.runAll()).as("B's refresh").isEqualTo(1);
    String refreshed = b.getIfPresent("k").orElseThrow();
    assertThat(refreshed).isNotEqualTo(stale);
    pass(DELTA_MILLIS / 2 + 100);

    assertThat(a.getIfPresent("k")).contains(refreshed);
  }

  @Test
  void aCallerWriteWhoseRecordFails_failingClosed_throws_andTheKeyIsStillDroppedHere() {
    scheduler.runDue();
    try (SustainableCache<String> closed = SustainableCache.builder(storeOfA).namespace("near")
        .ttl(TTL).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .scheduler(scheduler).refreshExecutor(refreshes).random(FixedRandom.neverEarly())
        .nearCache(1_000, DELTA, 0).failWritesWhenStoreDown(true).build()) {
      scheduler.runDue();
      closed.get("k", this::load);
      closed.get("k", this::load);
      storeOfA.fail(Op.INCR, 1);

      assertThatThrownBy(() -> closed.put("k", "new")).isInstanceOf(StoreException.class)
          .hasMessageContaining("near");
      assertThat(closed.get("k", this::load)).as("the write landed; the near copy is gone")
          .isEqualTo("new");
    }
  }

  @Test
  void aCallerWriteWhoseRecordFails_byDefault_returns_andTheKeyIsOwedUntilItsRecordLands() {
    scheduler.runDue();
    a.get("k", this::load);
    a.get("k", this::load);
    storeOfA.fail(Op.INCR, 1);

    a.put("k", "new");
    assertThat(a.stats().count("unprotected_write")).isEqualTo(1);
    assertThat(a.get("k", this::load)).as("paid first (a tombstone, recorded), then loaded")
        .startsWith("k@");
    assertThat(a.stats().keysAwaitingInvalidation()).isZero();
  }

  /**
   * A caller's write whose answer never came (here: the caller interrupted while waiting) may
   * have landed: whichever write it was, this instance's near copy of what it replaced is gone
   * before it throws, and the next read goes to the store.
   */
  @Test
  void aCallerWriteThatFailsInFlight_butLanded_leavesNoNearCopyOfWhatItReplaced()
      throws Exception {
    scheduler.runDue();
    record Case(String key, Op op, Runnable write, String after) {}
    List<Case> cases = List.of(
        new Case("put", Op.SET, () -> a.put("put", "new"), "new"),
        new Case("invalidate", Op.SET, () -> a.invalidate("invalidate"), null),
        new Case("putIfAbsent", Op.CAS, () -> a.putIfAbsent("putIfAbsent", "new"), "new"));
    for (Case c : cases) {
      // Held near: a value, or for putIfAbsent a cached absence (which it writes over).
      a.find(c.key(), key -> c.op() == Op.CAS ? null : "old");
      assertThat(a.find(c.key(), this::load)).isEqualTo(
          Optional.ofNullable(c.op() == Op.CAS ? null : "old"));
      long nearHits = a.stats().count("near_hit");

      ScriptedStore.Hold hold = storeOfA.holdResponses(c.op());
      CompletableFuture<Throwable> failure = new CompletableFuture<>();
      Thread caller = new Thread(() -> {
        try {
          c.write().run();
          failure.complete(null);
        } catch (Throwable t) {
          failure.complete(t);
        }
      });
      caller.start();
      while (hold.waiting() == 0) {
        Thread.sleep(1);
      }
      caller.interrupt();
      assertThat(failure.get(5, java.util.concurrent.TimeUnit.SECONDS)).as(c.key())
          .isInstanceOf(StoreException.class);
      hold.release();

      Optional<String> read = a.find(c.key(), key -> null);
      assertThat(read).as("%s landed: the read after it", c.key())
          .isEqualTo(Optional.ofNullable(c.after()));
      assertThat(a.stats().count("near_hit")).as("%s: that read went to the store", c.key())
          .isEqualTo(nearHits);
    }
  }

  @Test
  void theBuilderChecksItsArguments() {
    assertThatThrownBy(() -> SustainableCache.builder(memory).nearCache(0, DELTA))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SustainableCache.builder(memory).nearCache(10,
        Duration.ofMillis(5))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SustainableCache.builder(memory).nearCache(10, DELTA)
        .nearCache(10, DELTA)).isInstanceOf(IllegalStateException.class);
    assertThat(Optional.of(a.toString())).get().asString().contains("nearCache=1000:PT1S");
  }

  @Test
  void aStoreWithoutCounters_cannotHaveANearCache() {
    CacheStore withoutIncr = withoutCounters();

    assertThat(withoutIncr.hasCounters()).isFalse();
    assertThatThrownBy(() -> SustainableCache.builder(withoutIncr).ttl(TTL)
        .nearCache(10, DELTA).build()).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("counters");
  }

  /**
   * Issue 23 (review 2026-11-27, section 3): the counters were found by reflection on whether
   * {@code incr} is overridden, so a wrapper (which forwards {@code incr}) of a store without
   * counters passed the check, and its near cache failed on its first record. A wrapper now
   * forwards {@link CacheStore#hasCounters()}.
   */
  @Test
  void aWrapperOfAStoreWithoutCounters_hasNone_andCannotHaveANearCache() {
    CacheStore forwarding = new ForwardingStore(withoutCounters()) {};
    CacheStore scripted = ScriptedStore.over(withoutCounters());

    assertThat(forwarding.hasCounters()).isFalse();
    assertThat(scripted.hasCounters()).isFalse();
    assertThat(new ForwardingStore(memory) {}.hasCounters()).isTrue();
    assertThat(ScriptedStore.over(memory).hasCounters()).isTrue();
    for (CacheStore wrapper : List.of(forwarding, scripted)) {
      assertThatThrownBy(() -> SustainableCache.builder(wrapper).namespace("n").ttl(TTL)
          .nearCache(10, DELTA).build()).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("needs a store with counters");
    }
  }

  /** A store over {@link #memory} that keeps the SPI's {@code incr} and {@code hasCounters}. */
  private CacheStore withoutCounters() {
    return new CacheStore() {
      @Override
      public CompletableFuture<Optional<StoreItem>> gets(String key) {
        return memory.gets(key);
      }

      @Override
      public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
        return memory.add(key, value, exptime);
      }

      @Override
      public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
        return memory.set(key, value, exptime);
      }

      @Override
      public CompletableFuture<CasOutcome> cas(String key, long token, byte[] value, int exp) {
        return memory.cas(key, token, value, exp);
      }

      @Override
      public CompletableFuture<Boolean> delete(String key) {
        return memory.delete(key);
      }
    };
  }

  /**
   * Issue 24, defect 6: a near cache's invalidation log lives under its namespace's prefix;
   * without one its keys ({@code 0x7F near:...}) are no valid ARCUS prefix and the cache silently
   * never served near over ARCUS. Refused when built, on every store, saying why.
   */
  @Test
  void aNearCacheWithoutANamespace_isRefusedAtBuild_sayingWhy() {
    assertThatThrownBy(() -> SustainableCache.builder(memory).ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).scheduler(scheduler).nearCache(10, DELTA).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("nearCache needs a namespace")
        .hasMessageContaining("ARCUS")
        .hasMessageContaining("another namespace's items");
  }

  @Test
  void evictions_invalidationsAppliedAndResets_areCounted() {
    scheduler.runDue();
    assertThat(a.stats().count("near_reset")).as("the first poll").isEqualTo(1);
    a.get("k", this::load);
    b.invalidate("k");
    b.invalidate("j");
    pass(DELTA_MILLIS);
    assertThat(a.stats().count("near_invalidation")).as("keys the log named").isEqualTo(2);

    b.invalidateAll();
    pass(DELTA_MILLIS);
    assertThat(a.stats().count("near_reset")).as("a new generation").isEqualTo(2);

    try (SustainableCache<String> small = SustainableCache.builder(memory).namespace("small")
        .ttl(TTL).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(refreshes).random(FixedRandom.neverEarly()).nearCache(2, DELTA, 0)
        .build()) {
      for (int i = 0; i < 50; i++) {
        small.get("k" + i, this::load);
      }
      assertThat(small.stats().count("near_eviction")).as("50 entries through a tier of 2")
          .isGreaterThan(0);
    }
  }

  /**
   * A process paused (SIGSTOP, a long GC) longer than the bound: on resume, before any poll has
   * run, it serves nothing from its near cache (its last confirmation is too old), so another
   * instance's invalidation made during the pause is seen at once.
   */
  @Test
  void aProcessPausedLongerThanTheBound_servesNothingNearOnResume_beforeItsNextPoll() {
    scheduler.runDue();
    String old = a.get("k", this::load);
    assertThat(a.get("k", this::load)).isEqualTo(old);
    long nearHits = a.stats().count("near_hit");
    b.invalidate("k");

    clock.advance(Duration.ofSeconds(10)); // paused: no poll ran
    assertThat(a.get("k", this::load)).isNotEqualTo(old);
    assertThat(a.stats().count("near_hit")).isEqualTo(nearHits);
  }

  /** Bounded by bytes: the stored sizes of the entries held add up to at most the bound. */
  @Test
  void aNearCacheBoundedByBytes_holdsWhatFitsAndEvictsTheRest() {
    String large = "x".repeat(1_000); // 1,024 bytes stored with the envelope
    try (SustainableCache<String> bytes = SustainableCache.builder(memory).namespace("bytes")
        .ttl(TTL).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(refreshes).random(FixedRandom.neverEarly())
        .nearCacheBytes(4 * 1024, DELTA, 0).build()) {
      scheduler.runDue();
      for (int i = 0; i < 20; i++) {
        bytes.get("k" + i, key -> large);
      }
      assertThat(bytes.stats().count("near_eviction")).as("20 KiB through a 4 KiB tier")
          .isGreaterThanOrEqualTo(16);
      long hits = bytes.stats().count("near_hit");
      for (int i = 0; i < 20; i++) {
        bytes.get("hot", key -> large); // W-TinyLFU admits a key once it is used more
      }
      assertThat(bytes.stats().count("near_hit") - hits).as("a key read often is held")
          .isGreaterThanOrEqualTo(10);
    }
    assertThatThrownBy(() -> SustainableCache.builder(memory).ttl(TTL).nearCacheBytes(100, DELTA))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 KiB");
  }

  /**
   * Issue 24: the near tier holds only what this instance could write. A value above its {@code
   * maxValueSize} is never written, so never held; one another instance with a larger limit
   * wrote is served from the store on every read, never held near.
   */
  @Test
  void aValueAboveMaxValueSize_isNeverHeldNear_evenWhenAnotherInstanceWroteIt() {
    String large = "x".repeat(1_000);
    try (SustainableCache<String> small = SustainableCache.builder(memory).namespace("near")
        .ttl(TTL).codec(ValueCodec.utf8()).clock(clock).scheduler(scheduler)
        .refreshExecutor(refreshes).random(FixedRandom.neverEarly()).maxValueSize(512)
        .nearCache(1_000, DELTA, 0).build()) {
      scheduler.runDue();
      assertThat(small.get("loaded", key -> large)).isEqualTo(large);
      assertThat(small.get("loaded", key -> large)).isEqualTo(large);
      assertThat(small.stats().count("skipped_write")).as("not written").isEqualTo(2);

      assertThat(a.get("written", key -> large)).as("A's limit is 1 MiB").isEqualTo(large);
      for (int i = 0; i < 3; i++) {
        assertThat(small.get("written", this::load)).isEqualTo(large);
      }
      assertThat(small.stats().count("near_hit")).isZero();
    }
  }

  /** An invalid key is refused at the call, as without a near cache; a near hit answers async. */
  @Test
  void getAsync_refusesAnInvalidKeyAtTheCall_andAnswersANearHitAtOnce() {
    scheduler.runDue();
    assertThatThrownBy(() -> a.getAsync("a key with spaces",
        key -> CompletableFuture.completedFuture("v")))
        .isInstanceOf(IllegalArgumentException.class);
    String loaded = a.get("k", this::load);
    long reads = storeOfA.count(Op.GETS);
    CompletableFuture<String> near = a.getAsync("k", key -> CompletableFuture.completedFuture(
        "loaded again"));
    assertThat(near).isCompletedWithValue(loaded);
    assertThat(storeOfA.count(Op.GETS)).isEqualTo(reads);
  }

  @Test
  void failingPolls_areCounted() {
    scheduler.runDue();
    storeOfA.fail(Op.GETS_ALL, 2);
    pass(DELTA_MILLIS);

    assertThat(a.stats().count("near_poll_failure")).isEqualTo(2);
  }

  /**
   * An instance without a near cache or a generation ({@code invalidateAllBound(0)}) writes
   * entries without a generation and changes keys without the log: such a fleet has no bound. Both sides say so (once per 10 s each), and
   * instances configured alike never do.
   */
  @Test
  void aFleetMixingInstancesWithAndWithoutANearCache_isWarnedOfOnBothSides() {
    java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
    java.io.PrintStream original = System.err;
    System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
    try (SustainableCache<String> plain = SustainableCache.builder(memory).namespace("near")
        .ttl(TTL).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(refreshes).random(FixedRandom.neverEarly())
        .invalidateAllBound(Duration.ZERO) // entries without a generation
        .build()) {
      assertThat(a.get("alike", this::load)).isEqualTo(b.get("alike", this::load));
      assertThat(captured.toString(java.nio.charset.StandardCharsets.UTF_8))
          .as("instances configured alike").doesNotContain("near cache");

      plain.get("k", this::load);
      assertThat(a.get("k", this::load)).as("its entry is a miss for a near cache")
          .isEqualTo("k@" + clock.millis());
      assertThat(loads).hasValue(3);
      assertThat(plain.getIfPresent("k")).as("the near cache's entry, read without one")
          .contains("k@" + clock.millis());
    } finally {
      System.setErr(original);
    }
    String logged = captured.toString(java.nio.charset.StandardCharsets.UTF_8);
    assertThat(logged).contains(EntryReader.WITHOUT_NEAR_CACHE).contains(EntryReader.WITH_NEAR_CACHE);
  }

  /**
   * Issue 24: a cache without a namespace (which cannot have a near cache) addresses a namespaced
   * cache's item when its key starts with {@code "<namespace>:"}; its writes bypass that
   * namespace's log. Both sides are warned, by the mixed-fleet warnings, which name the case.
   */
  @Test
  void aCacheWithoutANamespace_addressingANearCachedNamespacesItems_isWarnedOfOnBothSides() {
    java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
    java.io.PrintStream original = System.err;
    System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
    try (SustainableCache<String> global = SustainableCache.builder(memory).ttl(TTL)
        .codec(ValueCodec.utf8()).clock(clock).scheduler(scheduler).refreshExecutor(refreshes)
        .random(FixedRandom.neverEarly()).build()) {
      scheduler.runDue();
      String near = a.get("k", this::load);
      assertThat(global.getIfPresent("near:k")).as("the same item").contains(near);

      global.put("near:j", "written past the log");
      assertThat(a.get("j", this::load)).as("a miss for the near cache")
          .isEqualTo("j@" + clock.millis());
    } finally {
      System.setErr(original);
    }
    String logged = captured.toString(java.nio.charset.StandardCharsets.UTF_8);
    assertThat(logged).contains(EntryReader.WITH_NEAR_CACHE)
        .contains(EntryReader.WITHOUT_NEAR_CACHE).contains("a cache without a namespace");
  }
}
