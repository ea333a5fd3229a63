package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.WriteFence;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.ForwardingStore;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import io.sustainablecache.testing.ScriptedStore;
import io.sustainablecache.testing.ScriptedStore.Op;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 21, part 2: {@code invalidateAll} on every store without a near cache ({@code
 * invalidateAllBound}: the namespace's generation without a near tier). Two instances, A and B,
 * over one in-memory store that refuses a prefix flush, as plain memcached does, in virtual time
 * (their generation polls run on a manual scheduler).
 */
final class InvalidateAllTest {

  private static final long BOUND_MILLIS = 1_000;
  private static final Duration BOUND = Duration.ofMillis(BOUND_MILLIS);
  private static final Duration TTL = Duration.ofMinutes(10);
  private static final String NS = "all";

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final ManualExecutor refreshes = new ManualExecutor();
  private final InMemoryStore memory = InMemoryStore.create(clock);
  /** Each instance's own seed: two instances never draw the same random bases. */
  private final AtomicInteger seeds = new AtomicInteger(21);
  private final ScriptedStore storeOfA =
      ScriptedStore.over(ForwardingStore.withoutFlushPrefix(memory));
  private final ScriptedStore storeOfB =
      ScriptedStore.over(ForwardingStore.withoutFlushPrefix(memory));
  private final SustainableCache<String> a = cache(storeOfA);
  private final SustainableCache<String> b = cache(storeOfB);
  private final AtomicInteger loads = new AtomicInteger();

  private SustainableCache<String> cache(CacheStore store) {
    return builder(store).invalidateAllBound(BOUND).build();
  }

  private SustainableCacheBuilder<String> builder(CacheStore store) {
    return SustainableCache.builder(store).namespace(NS).ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler).refreshExecutor(refreshes)
        // the scripts fail the generation's polls alone; with the node breaker two failures in a
        // row would take the whole store out, reads too (HungNodeTest checks that)
        .storeProbeInterval(Duration.ZERO)
        // a generation created again is another random value, as in production
        .random(FixedRandom.neverEarly(new SplittableRandom(seeds.incrementAndGet())));
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
    return key + "@" + clock.millis() + "#" + loads.incrementAndGet();
  }

  @Test
  void withoutANearCache_invalidateAllOnAStoreWithoutAPrefixFlush_isSeenHereAtOnce() {
    scheduler.runDue();
    String x = a.get("x", this::load);
    String y = b.get("y", this::load);
    assertThat(b.getIfPresent("x")).contains(x);

    b.invalidateAll();

    assertThat(b.getIfPresent("x")).as("here, at once").isEmpty();
    assertThat(b.getIfPresent("y")).isEmpty();
    assertThat(b.get("y", this::load)).as("loaded again").isNotEqualTo(y);
    assertThat(b.stats().count("corrupt_entry")).as("old entries are misses, not corrupt").isZero();
    assertThat(b.stats().invalidationCount()).isEqualTo(1);
  }

  /** The default: a cache with a namespace over a store with counters has the generation. */
  @Test
  void byDefault_invalidateAllOnAStoreWithoutAPrefixFlush_works_andSendsNoFlush() {
    try (SustainableCache<String> c = builder(storeOfA).build();
        SustainableCache<String> d = builder(storeOfB).build()) {
      scheduler.runDue();
      String x = c.get("x", this::load);
      assertThat(d.getIfPresent("x")).contains(x);

      c.invalidateAll();

      assertThat(c.getIfPresent("x")).as("here, at once").isEmpty();
      pass(BOUND_MILLIS);
      assertThat(d.getIfPresent("x")).as("there, within the default bound (1 s)").isEmpty();
      assertThat(storeOfA.count(Op.FLUSH_PREFIX)).isZero();
      assertThat(c.stats().invalidationCount()).isEqualTo(1);
    }
  }

  /** The opt-out, for a namespace shared with instances that write entries without one. */
  @Test
  void withTheBoundSetToZero_plainMemcachedRefuses_namingTheSetting() {
    try (SustainableCache<String> plain = builder(storeOfA).invalidateAllBound(Duration.ZERO)
        .build()) {
      String x = plain.get("x", this::load);
      assertThatThrownBy(plain::invalidateAll).isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("invalidateAllBound");
      assertThat(plain.getIfPresent("x")).as("nothing was removed").contains(x);
    }
  }

  /** With the generation off, entries carry none: the format of a cache without one. */
  @Test
  void withTheBoundSetToZero_entriesCarryNoGeneration_andAreMissesForACacheWithOne() {
    try (SustainableCache<String> off = builder(storeOfA).invalidateAllBound(Duration.ZERO)
        .build()) {
      scheduler.runDue();
      off.put("k", "without");
      assertThat(off.getIfPresent("k")).contains("without");
      assertThat(b.getIfPresent("k")).as("an entry of another format is a miss").isEmpty();
    }
  }

  /** Every read of A checked: the old value only until the bound after B's call returned. */
  @Test
  void anotherInstance_seesItWithinTheBound() {
    scheduler.runDue();
    String old = a.get("k", this::load);
    pass(300);

    b.invalidateAll();
    long returnedAt = clock.millis();
    String seen = old;
    while (seen.equals(old)) {
      seen = a.get("k", this::load);
      if (seen.equals(old)) {
        assertThat(clock.millis() - returnedAt).as("A served the old entry")
            .isLessThanOrEqualTo(BOUND_MILLIS);
      }
      pass(100);
    }
    assertThat(clock.millis() - returnedAt).isLessThanOrEqualTo(BOUND_MILLIS + 100);
    assertThat(b.getIfPresent("k")).as("A's load, written in the new generation").contains(seen);
  }

  /** What A writes before it learns of B's {@code invalidateAll} is a miss for B. */
  @Test
  void whatAnInstanceWritesBeforeItLearnsOfIt_isAMissForThoseThatKnow() {
    scheduler.runDue();
    b.invalidateAll();
    String written = a.get("z", this::load); // A does not know yet: the old generation

    assertThat(b.getIfPresent("z")).as("B knows the new generation").isEmpty();
    pass(BOUND_MILLIS / 2 + 100);
    assertThat(a.getIfPresent("z")).as("A, once it polled").isEmpty();
    assertThat(a.get("z", this::load)).isNotEqualTo(written);
    assertThat(b.getIfPresent("z")).isPresent();
  }

  /**
   * A load that began before {@code invalidateAll} (on this instance, or on another that learns
   * of it before the load ends) cannot write after it: it may have read the database before the
   * change. Without the generation check (or with a prefix flush) its {@code add} lands.
   */
  @Test
  void aLoadInFlightBeforeInvalidateAll_cannotWriteAfterIt_hereOrThere() {
    scheduler.runDue();
    CompletableFuture<String> slowHere = new CompletableFuture<>();
    CompletableFuture<String> slowThere = new CompletableFuture<>();
    CompletableFuture<String> here = b.getAsync("h", key -> slowHere);
    CompletableFuture<String> there = a.getAsync("t", key -> slowThere);

    b.invalidateAll();
    pass(BOUND_MILLIS); // A learns the new generation
    slowHere.complete("read before the change");
    slowThere.complete("read before the change");

    assertThat(here.join()).as("its caller still gets it").isEqualTo("read before the change");
    assertThat(there.join()).isEqualTo("read before the change");
    assertThat(b.getIfPresent("h")).as("not written").isEmpty();
    assertThat(a.getIfPresent("t")).as("not written").isEmpty();
    assertThat(memory.gets(NS + ":h").join()).isEmpty();
    assertThat(memory.gets(NS + ":t").join()).isEmpty();
    assertThat(a.stats().count("stale_set_discard") + b.stats().count("stale_set_discard")).isEqualTo(2);
    assertThat(a.get("t", this::load)).as("a load that began after").startsWith("t@");
    assertThat(b.getIfPresent("t")).isPresent();
  }

  /**
   * A write fence stands through {@code invalidateAll} (a fence reads as a fence in every
   * generation): reads load and cache nothing until the commit, which leaves a tombstone in the
   * new generation; then the new row is loaded and cached.
   */
  @Test
  void aFenceStandsThroughInvalidateAll_andItsCommitIsSeenAfterIt() {
    scheduler.runDue();
    a.get("k", key -> "old row");
    WriteFence<String> fence = a.fence("k");

    b.invalidateAll();
    pass(BOUND_MILLIS);
    assertThat(b.get("k", key -> "new row, not committed")).isEqualTo("new row, not committed");
    assertThat(a.get("k", key -> "new row, not committed")).isEqualTo("new row, not committed");
    assertThat(b.getIfPresent("k")).as("nothing cached under the fence").isEmpty();

    fence.committed();
    assertThat(b.getIfPresent("k")).as("a tombstone after the commit").isEmpty();
    assertThat(b.get("k", key -> "new row")).isEqualTo("new row");
    assertThat(a.getIfPresent("k")).contains("new row");
  }

  /** A hit reads the key once: the generation is compared in memory, never read per request. */
  @Test
  void aHit_makesOneStoreRead_andNoReadOfTheGeneration() {
    scheduler.runDue();
    a.get("k", this::load);
    long reads = storeOfA.count(Op.GETS) + storeOfA.count(Op.GETS_ALL);

    for (int i = 0; i < 10; i++) {
      a.get("k", this::load);
    }

    assertThat(storeOfA.count(Op.GETS) + storeOfA.count(Op.GETS_ALL) - reads)
        .as("store reads of 10 hits").isEqualTo(10);
    assertThat(storeOfA.count(Op.INCR)).as("no per-key record").isZero();
    assertThat(a.stats().hitCount()).isEqualTo(10);
  }

  /** Caller writes record nothing: only {@code invalidateAll} writes the log. */
  @Test
  void putAndInvalidate_costTheirOwnWriteOnly() {
    scheduler.runDue();
    long sets = storeOfA.count(Op.SET);

    a.put("k", "v");
    a.invalidate("k");

    assertThat(storeOfA.count(Op.SET) - sets).as("the value and the tombstone").isEqualTo(2);
    assertThat(storeOfA.count(Op.INCR)).isZero();
  }

  /**
   * On a store with a prefix flush (ARCUS), the setting makes {@code invalidateAll} the
   * generation too: one way on every store, which fences loads in flight.
   */
  @Test
  void onAStoreWithAPrefixFlush_theGenerationIsUsed_notTheFlush() {
    ScriptedStore arcusLike = ScriptedStore.over(memory);
    try (SustainableCache<String> c = cache(arcusLike)) {
      scheduler.runDue();
      c.get("k", this::load);
      c.invalidateAll();
      assertThat(arcusLike.count(Op.FLUSH_PREFIX)).isZero();
      assertThat(c.getIfPresent("k")).isEmpty();
    }
  }

  /**
   * The generation's server down at start: {@code build()} waits at most the bound; until a
   * read of the generation succeeds, reads miss, loads are answered but not written and caller
   * writes throw; the first poll that succeeds ends it.
   */
  @Test
  void theGenerationsServerDownAtStart_readsMissAndNothingIsWritten_untilItAnswers() {
    scheduler.runDue();
    b.get("k", this::load);
    ScriptedStore failing = ScriptedStore.over(ForwardingStore.withoutFlushPrefix(memory));
    failing.fail(Op.GETS, 1); // the first poll's read
    try (SustainableCache<String> c = cache(failing)) {
      assertThat(c.getIfPresent("k")).as("an entry it cannot judge").isEmpty();
      assertThat(c.get("j", this::load)).startsWith("j@");
      assertThat(memory.gets(NS + ":j").join()).as("the load was not written").isEmpty();
      assertThatThrownBy(() -> c.put("k", "v")).isInstanceOf(StoreException.class)
          .hasMessageContaining("generation");
      assertThat(c.stats().count("near_poll_failure")).isEqualTo(1);

      pass(BOUND_MILLIS);
      assertThat(c.getIfPresent("k")).as("known now").isPresent();
      c.put("k", "v");
      assertThat(b.getIfPresent("k")).contains("v");
    }
  }

  /**
   * Polls failing while running: the instance keeps the generation it knew, so another
   * instance's {@code invalidateAll} reaches it only once a poll succeeds again (counted,
   * logged; the limit documented in design.md); then at its next poll.
   */
  @Test
  void pollsFailingWhileRunning_delayAnotherInstancesInvalidateAll_untilOneSucceeds() {
    scheduler.runDue();
    String old = a.get("k", this::load);
    storeOfA.fail(Op.GETS, 3); // A's next three polls (no read of A in between)

    b.invalidateAll();
    pass(3 * BOUND_MILLIS / 2 + 100);
    assertThat(a.stats().count("near_poll_failure")).isEqualTo(3);
    assertThat(a.getIfPresent("k")).as("the old generation, while polls fail").contains(old);

    pass(BOUND_MILLIS / 2);
    assertThat(a.getIfPresent("k")).as("at the first poll that succeeds").isEmpty();
  }

  /**
   * Bytes planted in the generation's item (no number): a poll replaces them with a new random
   * generation; every entry is a miss once (not corrupt), and the caches go on.
   */
  @Test
  void bytesPlantedInTheGenerationsItem_makeANewGeneration_andTheCachesGoOn() {
    scheduler.runDue();
    String old = a.get("k", this::load);
    String generationKey = NS + ":" + Keys.INTERNAL_MARK + NearLog.SINGLE + ":gen";
    assertThat(memory.gets(generationKey).join()).as("the generation's item").isPresent();

    memory.set(generationKey, "\u0000garbage".getBytes(StandardCharsets.ISO_8859_1), 0).join();
    pass(BOUND_MILLIS);

    assertThat(a.getIfPresent("k")).as("an entry of the replaced generation").isEmpty();
    assertThat(b.getIfPresent("k")).isEmpty();
    String again = a.get("k", this::load);
    assertThat(again).isNotEqualTo(old);
    assertThat(b.getIfPresent("k")).as("both read the same new generation").contains(again);
    assertThat(a.stats().count("corrupt_entry") + b.stats().count("corrupt_entry")).isZero();
  }

  /** An entry written without a generation (before the setting, or by an earlier release). */
  @Test
  void anEntryWithoutAGeneration_isAMiss_thatALoadReplaces() {
    scheduler.runDue();
    long now = clock.millis();
    memory.set(NS + ":v1", Envelope.encode(now, now + 60_000, 1,
        "version one".getBytes(StandardCharsets.UTF_8)), 0).join();

    assertThat(a.getIfPresent("v1")).isEmpty();
    assertThat(a.get("v1", this::load)).startsWith("v1@");
    assertThat(b.getIfPresent("v1")).isPresent();
  }

  /**
   * Over a store that offers its nodes, the generation is one per node, on that node: a node
   * dead when an instance starts costs that node's keys only (read from the store as misses,
   * not written), and the other nodes' keys are read and written as usual.
   */
  @Test
  void withALogPerNode_aNodeDeadAtStart_costsOnlyItsKeys() {
    ClusterStore cluster = new ClusterStore(clock, 3);
    String[] onNode = new String[3];
    try (SustainableCache<String> first = cache(cluster)) {
      scheduler.runDue();
      for (int i = 0; i < 3; i++) {
        onNode[i] = cluster.keyOn(i, NS, "k");
        first.get(onNode[i], this::load);
      }
      cluster.kill(1);
      try (SustainableCache<String> started = cache(cluster)) {
        scheduler.runDue();
        int before = loads.get();
        assertThat(started.get(onNode[0], this::load)).isEqualTo(first.get(onNode[0], this::load));
        assertThat(loads.get() - before).as("node 0's entry, a hit").isZero();
        started.put(onNode[2], "from-started");
        assertThat(first.getIfPresent(onNode[2])).contains("from-started");
        assertThatThrownBy(() -> started.put(onNode[1], "x")).as("the dead node's key")
            .isInstanceOf(RuntimeException.class);

        cluster.heal(1);
        pass(BOUND_MILLIS);
        started.put(onNode[1], "healed");
        assertThat(first.getIfPresent(onNode[1])).contains("healed");
      }
    }
  }

  /**
   * {@code invalidateAll} records a generation on every node: while one is dead it throws, and
   * the live nodes adopt it (their keys are misses everywhere within the bound).
   */
  @Test
  void withALogPerNode_invalidateAllWhileANodeIsDead_throws_andTheLiveNodesAdoptIt() {
    ClusterStore cluster = new ClusterStore(clock, 3);
    try (SustainableCache<String> c = cache(cluster); SustainableCache<String> d = cache(cluster)) {
      scheduler.runDue();
      String onZero = cluster.keyOn(0, NS, "k");
      c.get(onZero, this::load);
      assertThat(d.getIfPresent(onZero)).isPresent();

      cluster.kill(2);
      assertThatThrownBy(c::invalidateAll).isInstanceOf(StoreException.class);
      pass(BOUND_MILLIS);
      assertThat(c.getIfPresent(onZero)).isEmpty();
      assertThat(d.getIfPresent(onZero)).isEmpty();
    }
  }

  @Test
  void theSetting_isChecked() {
    assertThatThrownBy(() -> SustainableCache.builder(memory)
        .invalidateAllBound(Duration.ofMillis(5))).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("invalidateAllBound must be zero (off) or between 10 ms and 1 h: PT0.005S");
    assertThatThrownBy(() -> SustainableCache.builder(memory).invalidateAllBound(
        Duration.ofHours(2))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SustainableCache.builder(memory).ttl(TTL)
        .invalidateAllBound(BOUND).build()).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("namespace");
  }

  /**
   * The default applies where it can: without a namespace (or over a store without counters)
   * the cache builds without a generation, as before; a bound set explicitly is refused there.
   */
  @Test
  void theDefault_needsNeitherANamespaceNorCounters_toBuild() {
    try (SustainableCache<byte[]> anonymous = SustainableCache.builder(memory).ttl(TTL).build()) {
      assertThatThrownBy(anonymous::invalidateAll).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("needs a namespace");
    }
    CacheStore noCounters = new ForwardingStore(memory) {
      @Override
      public boolean hasCounters() {
        return false;
      }
    };
    try (SustainableCache<byte[]> flushing = SustainableCache.builder(noCounters)
        .namespace(NS).ttl(TTL).build()) {
      flushing.put("k", new byte[] {1});
      flushing.invalidateAll(); // the in-memory store's prefix flush, as ARCUS's
      assertThat(flushing.getIfPresent("k")).isEmpty();
    }
    assertThatThrownBy(() -> SustainableCache.builder(noCounters).namespace(NS).ttl(TTL)
        .invalidateAllBound(BOUND).build()).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("counters");
    try (SustainableCache<byte[]> off = SustainableCache.builder(noCounters).namespace(NS)
        .ttl(TTL).invalidateAllBound(Duration.ZERO).build()) {
      assertThat(off).isNotNull();
    }
  }
}
