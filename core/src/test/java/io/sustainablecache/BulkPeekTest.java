package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.internal.Envelope;
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
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link SustainableCache#getAllIfPresent} and {@link SustainableCache#peekAll}: a peek at many
 * keys with one bulk read (near entries first), answering and counting each key as {@code
 * getIfPresent} does; and {@link BulkPeek#putLoaded}, which caches values loaded for the keys
 * that missed with one write each, conditional on what the peek read, issued without waiting for
 * each other, and as safe as {@code putLoaded} when the key changed after the peek. Caches over
 * one {@link InMemoryStore} are hosts; time is virtual; the store counts (and, where a test says
 * so, holds) its operations.
 */
final class BulkPeekTest {

  private static final Duration TTL = Duration.ofMinutes(10);
  private static final Duration SKEW = Duration.ofSeconds(2);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final InMemoryStore server = InMemoryStore.create(clock);
  private final CountingStore store = new CountingStore(server);
  private final List<SustainableCache<String>> caches = new ArrayList<>();
  private final SustainableCache<String> cache = cache(store, false);
  /** Another host: its writes are not counted. */
  private final SustainableCache<String> other = cache(server, false);

  private SustainableCache<String> cache(CacheStore over, boolean near) {
    SustainableCacheBuilder<String> builder = SustainableCache.builder(over).namespace("b")
        .ttl(TTL).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .scheduler(scheduler).refreshExecutor(new ManualExecutor())
        .random(FixedRandom.neverEarly()).maxClockSkew(SKEW)
        // every store call counts: no generation of the namespace, whose polls
        // are store calls too
        .invalidateAllBound(Duration.ZERO);
    if (near) {
      builder.nearCache(1_000, Duration.ofSeconds(1), 0);
    }
    SustainableCache<String> built = builder.build();
    caches.add(built);
    return built;
  }

  @AfterEach
  void close() {
    caches.forEach(SustainableCache::close);
  }

  /** Values under v0..v8, an absence, a tombstone, nothing, and foreign bytes. */
  private List<String> mixedKeys() {
    for (int i = 0; i < 9; i++) {
      other.put("v" + i, "value" + i);
    }
    other.putNoValue("absent");
    other.invalidate("gone");
    server.set("b:foreign", "not an envelope".getBytes(StandardCharsets.US_ASCII), 0).join();
    List<String> keys = new ArrayList<>(List.of("nothing", "absent", "gone", "foreign"));
    for (int i = 8; i >= 0; i--) {
      keys.add(i % 3 == 0 ? 0 : keys.size(), "v" + i); // values among the misses
    }
    return keys;
  }

  // ---------------------------------------------------------------------------------------------
  // getAllIfPresent

  @Test
  void getAllIfPresent_readsEveryKeyWithOneGetsAll_andAnswersAndCountsEachAsGetIfPresent() {
    List<String> keys = mixedKeys();
    SustainableCache<String> single = cache(server, false);
    Map<String, Optional<String>> oneByOne = new java.util.LinkedHashMap<>();
    keys.forEach(key -> oneByOne.put(key, single.getIfPresent(key)));

    Map<String, String> found = cache.getAllIfPresent(keys);

    assertThat(store.bulkReads).as("one bulk read").hasValue(1);
    assertThat(store.singleReads).as("no read per key").hasValue(0);
    assertThat(store.writes).as("a peek writes nothing").hasValue(0);
    assertThat(found.keySet()).as("the values, in the caller's order")
        .containsExactlyElementsOf(keys.stream().filter(k -> oneByOne.get(k).isPresent())
            .toList());
    found.forEach((key, value) -> assertThat(oneByOne.get(key)).contains(value));
    assertThat(found).hasSize(9);
    assertThat(cache.stats()).as("counted as getIfPresent counts the same keys")
        .isEqualTo(single.stats());
    assertThat(cache.stats().hitCount()).isEqualTo(10); // 9 values and the cached absence
    assertThat(cache.stats().missCount()).isEqualTo(3);
    assertThat(cache.stats().count("corrupt_entry")).isEqualTo(1);
  }

  @Test
  void getAllIfPresent_readsDuplicatesOnce_andAnEmptyListReadsNothing() {
    other.put("a", "1");
    other.put("b", "2");

    assertThat(cache.getAllIfPresent(List.of("b", "a", "b", "x", "a")))
        .containsExactly(Map.entry("b", "2"), Map.entry("a", "1"));
    assertThat(store.keysRead).containsExactly(List.of("b:b", "b:a", "b:x"));
    assertThat(cache.getAllIfPresent(List.of())).isEmpty();
    assertThat(store.bulkReads).hasValue(1);
  }

  @Test
  void getAllIfPresent_answersNearEntriesFirst_andReadsOnlyTheOthers() {
    SustainableCache<String> near = cache(store, true);
    SustainableCache<String> writer = cache(server, true); // a near-cached namespace's writer
    writer.put("a", "1");
    writer.put("b", "2");
    scheduler.runDue();
    assertThat(near.getIfPresent("a")).contains("1"); // now held near
    store.reset();

    assertThat(near.getAllIfPresent(List.of("a", "b", "c")))
        .containsExactly(Map.entry("a", "1"), Map.entry("b", "2"));
    assertThat(store.keysRead).as("the near entry is not read").containsExactly(
        List.of("b:b", "b:c"));
    assertThat(near.stats().count("near_hit")).isEqualTo(1);

    store.reset();
    assertThat(near.getAllIfPresent(List.of("a", "b"))).hasSize(2);
    assertThat(store.bulkReads).as("every key near: no store read").hasValue(0);
  }

  @Test
  void getAllIfPresent_neverLoadsOrRefreshes_anEntryInItsRefreshWindowIsAHit() {
    other.put("k", "v");
    clock.advance(TTL.plusSeconds(1)); // logically expired: a get would reload it now
    SustainableCache<String> single = cache(server, false);
    Optional<String> one = single.getIfPresent("k");

    assertThat(cache.getAllIfPresent(List.of("k")).containsKey("k")).isEqualTo(one.isPresent());
    assertThat(cache.stats()).isEqualTo(single.stats());
    assertThat(cache.stats().count("loader_call")).isZero();
    assertThat(store.writes).hasValue(0);
  }

  @Test
  void aFailedBulkRead_isCountedAndReadsAsNothing_neverThrown() {
    other.put("a", "1");
    store.failReads.set(true);

    assertThat(cache.getAllIfPresent(List.of("a", "b"))).isEmpty();
    assertThat(cache.stats().storeErrorCount()).isEqualTo(1);
    assertThat(cache.stats().missCount()).isEqualTo(2);
  }

  @Test
  void onAThreadThatMayNotWait_thePeekDoesNotReadTheStore_andItsKeysAreReadBeforeTheirWrites()
      throws Exception {
    other.put("a", "1");
    CompletableFuture<BulkPeek<String>> onScheduler = new CompletableFuture<>();
    Scheduler.systemScheduler().schedule(() -> onScheduler.complete(
        cache.peekAll(List.of("a", "b"))), 0, java.util.concurrent.TimeUnit.MILLISECONDS);
    BulkPeek<String> peek = onScheduler.get(5, java.util.concurrent.TimeUnit.SECONDS);

    assertThat(peek.values()).as("as a failed read: nothing").isEmpty();
    assertThat(store.bulkReads).as("not read").hasValue(0);
    assertThat(cache.stats().storeErrorCount()).isEqualTo(1);
    assertThat(peek.putLoaded("b", "v", clock.instant()).join()).isTrue();
    assertThat(store.singleReads).as("b read before its write: the peek read nothing")
        .hasValue(1);
  }

  @Test
  void invalidArguments_failAtOnce() {
    assertThatThrownBy(() -> cache.getAllIfPresent(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> cache.getAllIfPresent(Arrays.asList("a", null)))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> cache.getAllIfPresent(List.of("a b")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(store.bulkReads).as("nothing read for a bad call").hasValue(0);
    assertThatThrownBy(() -> cache.peekAll(List.of("a")).putLoaded("a", null, clock.instant()))
        .isInstanceOf(NullPointerException.class);
    assertThat(store.writes).hasValue(0);
  }

  // ---------------------------------------------------------------------------------------------
  // BulkPeek.putLoaded

  @Test
  void putLoadedAfterAPeek_writesEachMissOnce_withoutReadingIt_andWithoutWaitingForEachOther() {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      keys.add("m" + i);
    }
    Instant readStart = clock.instant();
    BulkPeek<String> peek = cache.peekAll(keys);
    assertThat(peek.values()).isEmpty();
    store.reset();
    store.hold.set(true);

    List<CompletableFuture<Boolean>> writes = new ArrayList<>();
    keys.forEach(key -> writes.add(peek.putLoaded(key, "loaded-" + key, readStart)));

    assertThat(store.held()).as("all ten writes issued before any answer").isEqualTo(10);
    assertThat(writes).noneMatch(CompletableFuture::isDone);
    store.releaseRound();
    assertThat(writes).as("one round trip: every write answered")
        .allMatch(write -> write.getNow(false));
    assertThat(store.held()).isZero();
    assertThat(store.singleReads).as("no read before the writes").hasValue(0);
    assertThat(store.adds).hasValue(10);
    assertThat(other.getAllIfPresent(keys)).hasSize(10).containsEntry("m3", "loaded-m3");
    assertThat(cache.stats().count("put")).isEqualTo(10);
  }

  @Test
  void putLoadedAfterAPeekThatFoundAnOldTombstone_swapsOverIt_withoutReadingIt() {
    other.invalidate("k");
    clock.advance(SKEW.plusSeconds(1));
    Instant readStart = clock.instant();
    BulkPeek<String> peek = cache.peekAll(List.of("k"));
    store.reset();

    assertThat(peek.putLoaded("k", "v", readStart).join()).isTrue();
    assertThat(store.singleReads).hasValue(0);
    assertThat(other.getIfPresent("k")).contains("v");
  }

  @Test
  void anInvalidationAfterThePeek_keepsTheLoadedValueOut() {
    Instant readStart = clock.instant(); // the reader's transaction begins
    BulkPeek<String> peek = cache.peekAll(List.of("k"));
    clock.advance(Duration.ofSeconds(1));
    other.invalidate("k"); // a change committed after the peek, which the load may not have seen
    clock.advance(Duration.ofSeconds(1));

    assertThat(peek.putLoaded("k", "old", readStart).join()).isFalse();
    assertThat(kind("k")).isEqualTo(Envelope.KIND_TOMBSTONE);
    assertThat(other.getIfPresent("k")).isEmpty();
  }

  @Test
  void aFenceAfterThePeek_keepsTheLoadedValueOut_whileItStands_andAfterItsRelease() {
    Instant readStart = clock.instant();
    BulkPeek<String> peek = cache.peekAll(List.of("k", "j"));
    other.put("j", "older"); // j: nothing when peeked, then another host's value
    WriteFence<String> fence = other.fence("k");
    clock.advance(Duration.ofSeconds(1));

    assertThat(peek.putLoaded("k", "old", readStart).join()).as("under the fence").isFalse();
    assertThat(kind("k")).isEqualTo(Envelope.KIND_FENCE);
    fence.committed();
    assertThat(peek.putLoaded("k", "old", readStart).join()).as("after the release").isFalse();
    assertThat(kind("k")).isEqualTo(Envelope.KIND_TOMBSTONE);
    assertThat(peek.putLoaded("j", "mine", readStart).join()).as("a live value stays").isFalse();
    assertThat(other.getIfPresent("j")).contains("older");
  }

  @Test
  void aPeekThatFoundAFence_keepsTheLoadedValueOut_withoutAWrite() {
    WriteFence<String> fence = other.fence("k");
    Instant readStart = clock.instant();
    BulkPeek<String> peek = cache.peekAll(List.of("k"));
    store.reset();

    assertThat(peek.putLoaded("k", "old", readStart).join()).isFalse();
    assertThat(store.writes).hasValue(0);
    assertThat(kind("k")).isEqualTo(Envelope.KIND_FENCE);
    fence.rolledBack();
  }

  @Test
  void aKeyThePeekDidNotRead_isReadBeforeItsWrite_asPutLoadedDoes() {
    BulkPeek<String> failed;
    store.failReads.set(true);
    failed = cache.peekAll(List.of("k"));
    store.failReads.set(false);
    store.reset();

    assertThat(failed.putLoaded("k", "v", clock.instant()).join()).isTrue();
    assertThat(cache.peekAll(List.of("a")).putLoaded("j", "w", clock.instant()).join()).isTrue();
    assertThat(store.singleReads).as("one read each: not peeked from the store").hasValue(2);
    assertThat(other.getAllIfPresent(List.of("k", "j"))).hasSize(2);
  }

  @Test
  void aStoreFailureOfTheWrite_failsTheFuture_counted_neverThrownAtTheCall() {
    BulkPeek<String> peek = cache.peekAll(List.of("k"));
    store.failWrites.set(true);

    CompletableFuture<Boolean> write = peek.putLoaded("k", "v", clock.instant());

    assertThat(write).isCompletedExceptionally();
    assertThatThrownBy(write::join).hasCauseInstanceOf(StoreException.class);
    assertThat(cache.stats().storeErrorCount()).isEqualTo(1);
  }

  private byte kind(String key) {
    return Envelope.kind(server.gets("b:" + key).join().orElseThrow().value());
  }

  /** Counts reads and writes; fails or holds them when told to. */
  private static final class CountingStore extends ForwardingStore {
    final AtomicInteger singleReads = new AtomicInteger();
    final AtomicInteger bulkReads = new AtomicInteger();
    final AtomicInteger writes = new AtomicInteger();
    final AtomicInteger adds = new AtomicInteger();
    final List<List<String>> keysRead = new ArrayList<>();
    final AtomicBoolean failReads = new AtomicBoolean();
    final AtomicBoolean failWrites = new AtomicBoolean();
    final AtomicBoolean hold = new AtomicBoolean();
    private final List<Runnable> held = new ArrayList<>();

    CountingStore(CacheStore server) {
      super(server);
    }

    synchronized void reset() {
      singleReads.set(0);
      bulkReads.set(0);
      writes.set(0);
      adds.set(0);
      keysRead.clear();
    }

    synchronized int held() {
      return held.size();
    }

    /** Answers every operation held so far, in order; what they issue waits for the next. */
    void releaseRound() {
      List<Runnable> round;
      synchronized (this) {
        round = new ArrayList<>(held);
        held.clear();
      }
      round.forEach(Runnable::run);
    }

    private <T> CompletableFuture<T> op(Supplier<CompletableFuture<T>> op, boolean read) {
      if (read ? failReads.get() : failWrites.get()) {
        return CompletableFuture.failedFuture(new StoreException("down"));
      }
      if (!hold.get()) {
        return op.get();
      }
      CompletableFuture<T> answer = new CompletableFuture<>();
      synchronized (this) {
        held.add(() -> op.get().whenComplete((value, error) -> {
          if (error != null) {
            answer.completeExceptionally(error);
          } else {
            answer.complete(value);
          }
        }));
      }
      return answer;
    }

    @Override
    public CompletableFuture<Optional<StoreItem>> gets(String key) {
      singleReads.incrementAndGet();
      return op(() -> delegate().gets(key), true);
    }

    @Override
    public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
      bulkReads.incrementAndGet();
      synchronized (this) {
        keysRead.add(List.copyOf(keys));
      }
      return op(() -> delegate().getsAll(keys), true);
    }

    @Override
    public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
      writes.incrementAndGet();
      adds.incrementAndGet();
      return op(() -> delegate().add(key, value, exptime), false);
    }

    @Override
    public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
      writes.incrementAndGet();
      return op(() -> delegate().set(key, value, exptime), false);
    }

    @Override
    public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
        int exptime) {
      writes.incrementAndGet();
      return op(() -> delegate().cas(key, casToken, value, exptime), false);
    }
  }
}
