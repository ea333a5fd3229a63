package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.internal.Envelope;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ScriptedStore;
import io.sustainablecache.testing.ScriptedStore.Op;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The write protocol across hosts and against a store that stalls between two operations (issue
 * 7, scenarios 3, 7 and 12). Two caches over one {@link InMemoryStore} are two hosts over one
 * memcached; a {@link ScriptedStore} in front of one of them holds its requests "on the wire".
 */
final class WriteProtocolTest {

  private static final Duration TTL = Duration.ofSeconds(10);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore server = InMemoryStore.create(clock);

  private SustainableCache<String> host(io.sustainablecache.spi.CacheStore store) {
    return SustainableCache.builder(store).namespace("w").ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).refreshExecutor(new ManualExecutor())
        .random(FixedRandom.neverEarly())
        // every store call counts: no generation of the namespace, whose polls
        // are store calls too
        .invalidateAllBound(Duration.ZERO)
        .fleetLease(false).build();
  }

  private byte[] raw(String key) {
    return server.gets("w:" + key).join().map(item -> item.value()).orElse(null);
  }

  // ---------------------------------------------------------------------------------------------
  // Scenario 3: another host's cold-miss add landing after our invalidate

  @Test
  void coldMissOnHostB_invalidateOnHostA_bsLateAddFails() {
    try (SustainableCache<String> a = host(server); SustainableCache<String> b = host(server)) {
      CompletableFuture<String> query = new CompletableFuture<>();
      CompletableFuture<String> bRead = b.getAsync("k", key -> query); // B read "absent"

      a.invalidate("k"); // A changed the source
      query.complete("old"); // B's query had read the old row; its add comes now

      assertThat(bRead).isCompletedWithValue("old");
      assertThat(Envelope.kind(raw("k"))).as("still the tombstone")
          .isEqualTo(Envelope.KIND_TOMBSTONE);
      assertThat(b.stats().count("stale_set_discard")).isEqualTo(1);
      assertThat(a.get("k", key -> "new")).isEqualTo("new");
      assertThat(b.get("k", key -> "unused")).isEqualTo("new");
    }
  }

  @Test
  void refreshOnHostB_invalidateOnHostA_bsCasFails() {
    ManualExecutor bRefreshes = new ManualExecutor();
    try (SustainableCache<String> a = host(server);
        SustainableCache<String> b = SustainableCache.builder(server).namespace("w").ttl(TTL)
            .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
            .refreshExecutor(bRefreshes).invalidateAllBound(Duration.ZERO)
            .random(FixedRandom.neverEarly()).fleetLease(false).build()) {
      a.put("k", "v0");
      clock.advance(TTL.plusMillis(1));
      assertThat(b.get("k", key -> "old, read before the update")).isEqualTo("v0"); // stale

      a.invalidate("k");
      bRefreshes.runAll();

      assertThat(a.getIfPresent("k")).isEmpty();
      assertThat(b.stats().count("stale_set_discard")).isEqualTo(1);
    }
  }

  @Test
  void thousandTrials_twoHostsRacingColdMissAndInvalidate_neverLeaveTheOldValue()
      throws Exception {
    int stale = 0;
    for (int trial = 0; trial < 1_000; trial++) {
      InMemoryStore trialServer = InMemoryStore.create(clock);
      try (SustainableCache<String> a = host(trialServer);
          SustainableCache<String> b = host(trialServer)) {
        AtomicReference<String> source = new AtomicReference<>("old");
        CountDownLatch bRead = new CountDownLatch(1);
        CompletableFuture<String> bLoad = CompletableFuture.supplyAsync(() -> b.get("k", key -> {
          String row = source.get();
          bRead.countDown();
          return row;
        }));
        bRead.await(5, TimeUnit.SECONDS);
        source.set("new");
        a.invalidate("k");
        bLoad.get(5, TimeUnit.SECONDS);
        if (!"new".equals(a.get("k", key -> source.get()))) {
          stale++;
        }
      }
    }
    assertThat(stale).isZero();
  }

  @Test
  void readOnHostBAfterHostAInvalidated_doesNotJoinBsLoadThatBeganBefore() {
    try (SustainableCache<String> a = host(server); SustainableCache<String> b = host(server)) {
      java.util.List<CompletableFuture<String>> queries = new java.util.ArrayList<>();
      AsyncLoader<String> db = key -> {
        CompletableFuture<String> query = new CompletableFuture<>();
        queries.add(query);
        return query;
      };
      CompletableFuture<String> before = b.getAsync("k", db); // B is loading the old row
      a.invalidate("k"); // A changed the row: B cannot know, but B's next read sees the tombstone
      CompletableFuture<String> after = b.getAsync("k", db);

      assertThat(queries).as("B's read after the invalidate started a load of its own")
          .hasSize(2);
      queries.get(1).complete("new");
      queries.get(0).complete("old");
      assertThat(after).isCompletedWithValue("new");
      assertThat(before).isCompletedWithValue("old");
      assertThat(a.get("k", key -> "unused")).isEqualTo("new");
    }
  }

  @Test
  void aSecondMissWithoutAnInvalidation_stillJoinsTheLoad() {
    try (SustainableCache<String> b = host(server)) {
      CompletableFuture<String> query = new CompletableFuture<>();
      AtomicReference<Integer> calls = new AtomicReference<>(0);
      AsyncLoader<String> db = key -> {
        calls.set(calls.get() + 1);
        return query;
      };
      CompletableFuture<String> first = b.getAsync("k", db);
      CompletableFuture<String> second = b.getAsync("k", db);
      query.complete("v");
      assertThat(calls.get()).isEqualTo(1);
      assertThat(first).isCompletedWithValue("v");
      assertThat(second).isCompletedWithValue("v");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Scenario 7: a timed-out add that the server applies later

  @Test
  void addStillOnTheWire_whenTheInvalidateLands_isRejectedByTheTombstone() {
    ScriptedStore bWire = ScriptedStore.over(server);
    ScriptedStore.Hold adds = bWire.holdRequests(Op.ADD);
    try (SustainableCache<String> a = host(server); SustainableCache<String> b = host(bWire)) {
      assertThat(b.get("k", key -> "old")).isEqualTo("old"); // B did not wait for its add
      assertThat(adds.waiting()).isEqualTo(1);

      a.invalidate("k");
      adds.release(); // the server applies B's add only now

      assertThat(Envelope.kind(raw("k"))).isEqualTo(Envelope.KIND_TOMBSTONE);
      assertThat(a.get("k", key -> "new")).isEqualTo("new");
    }
  }

  @Test
  void addAppliedBeforeTheInvalidate_isReplacedByTheTombstone() {
    try (SustainableCache<String> a = host(server); SustainableCache<String> b = host(server)) {
      assertThat(b.get("k", key -> "old")).isEqualTo("old");
      a.invalidate("k");
      assertThat(b.getIfPresent("k")).isEmpty();
      assertThat(b.get("k", key -> "new")).isEqualTo("new");
    }
  }

  @Test
  void tombstoneOutlivesTheLongestLoad() {
    try (SustainableCache<String> a = SustainableCache.builder(server).namespace("w").ttl(TTL)
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .loadTimeout(Duration.ofMinutes(2)).build()) {
      a.invalidate("k");
      clock.advance(Duration.ofMinutes(2)); // a load that read before it could still be running
      assertThat(raw("k")).as("the tombstone is still there").isNotNull();
      clock.advance(Duration.ofSeconds(12));
      assertThat(raw("k")).isNull();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Scenario 12: a stall between the read and the write costs the caller nothing extra

  @Test
  void aStalledWrite_doesNotHoldUpTheCaller() {
    ScriptedStore stalled = ScriptedStore.over(server);
    ScriptedStore.Hold writes = stalled.holdResponses(Op.ADD);
    try (SustainableCache<String> cache = host(stalled)) {
      assertThat(cache.get("k", key -> "v")).isEqualTo("v");
      assertThat(writes.waiting()).as("the write is still waiting for its answer").isEqualTo(1);
      writes.release();
    }
  }

  @Test
  void aMissReadsTheStoreOnce_thenLoads_thenWrites() {
    ScriptedStore counted = ScriptedStore.over(server);
    try (SustainableCache<String> cache = host(counted)) {
      cache.get("k", key -> "v");
      assertThat(counted.count(Op.GETS)).as("no re-read after the miss").isEqualTo(1);
      assertThat(counted.count(Op.ADD)).isEqualTo(1);
    }
  }

  @Test
  void aFailedRead_isAMissWithoutAWrite_soAStalledServerCostsOneTimeoutNotTwo() {
    ScriptedStore failing = ScriptedStore.over(server).fail(Op.GETS, 1);
    try (SustainableCache<String> cache = host(failing)) {
      assertThat(cache.get("k", key -> "v")).isEqualTo("v");
      assertThat(failing.count(Op.ADD) + failing.count(Op.CAS)).isZero();
      assertThat(cache.stats().storeErrorCount()).isEqualTo(1);
    }
  }

  @Test
  void asyncLoadCompletingOnAForeignThread_writesOnTheExecutor_notOnThatThread() {
    ManualExecutor executor = new ManualExecutor();
    ScriptedStore counted = ScriptedStore.over(server);
    try (SustainableCache<String> cache = SustainableCache.builder(counted).ttl(TTL)
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).refreshExecutor(executor)
        .fleetLease(false)
        .build()) {
      CompletableFuture<String> query = new CompletableFuture<>();
      CompletableFuture<String> read = cache.getAsync("k", key -> query);
      CompletableFuture.runAsync(() -> query.complete("v")).join(); // an event loop completes it

      assertThat(read).isCompletedWithValue("v");
      assertThat(counted.count(Op.ADD)).as("not written on the event loop").isZero();
      assertThat(executor.runAll()).isEqualTo(1);
      assertThat(counted.count(Op.ADD)).isEqualTo(1);
    }
  }
}
