package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ScriptedStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Behaviour of the cache against the in-memory memcached model, with a fake clock, a controlled
 * random source and a manual refresh executor: every timing decision is deterministic.
 */
public final class SustainableCacheTest {

  private static final Duration TTL = Duration.ofSeconds(10);

  /** SUS whose window spans the whole TTL: with {@link #alwaysEarly()} every read refreshes. */
  public static final RefreshPolicy EAGER_SUS = RefreshPolicy.sustainable(1.0, 1.0);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);
  private final ManualExecutor executor = new ManualExecutor();
  private final AtomicInteger loads = new AtomicInteger();
  private SustainableCache<String> cache;

  /** A loader that takes {@code loadMillis} of fake time and returns "v1", "v2", ... */
  private Loader<String> loader(long loadMillis) {
    return key -> {
      clock.advanceMillis(loadMillis);
      return "v" + loads.incrementAndGet();
    };
  }

  private SustainableCache<String> build(RefreshPolicy policy, RandomGenerator random) {
    cache = SustainableCache.builder(store)
        .namespace("test")
        .ttl(TTL)
        .refreshPolicy(policy)
        .codec(ValueCodec.utf8())
        .refreshExecutor(executor)
        .clock(clock).ticker(clock.ticker())
        .random(random)
        .build();
    return cache;
  }

  /** U = 1 - 0.0 = 1: ln U = 0, so no early refresh ever fires. */
  private static RandomGenerator neverEarly() {
    return RefreshPolicyTest.fixed(0.0);
  }

  /** U close to 0: -ln U is huge, so every draw refreshes. */
  private static RandomGenerator alwaysEarly() {
    return RefreshPolicyTest.fixed(Math.nextDown(1.0));
  }

  @AfterEach
  void close() {
    if (cache != null) {
      cache.close();
    }
  }

  @Test
  void coldMiss_loadsStoresAndReturns_thenHitsWithoutLoading() {
    build(RefreshPolicy.sustainable(), neverEarly());

    assertThat(cache.get("k", loader(20))).isEqualTo("v1");
    assertThat(cache.get("k", loader(20))).isEqualTo("v1");

    assertThat(loads).hasValue(1);
    CacheStats stats = cache.stats();
    assertThat(stats.missCount()).isEqualTo(1);
    assertThat(stats.hitCount()).isEqualTo(1);
    assertThat(stats.loadSuccessCount()).isEqualTo(1);
    assertThat(stats.totalLoadTimeMillis()).isEqualTo(20);
  }

  @Test
  void storedEnvelopeCarriesFetchTimeExpiryAndMeasuredLoadTime() {
    build(RefreshPolicy.sustainable(), neverEarly());
    long start = clock.millis();

    cache.get("k", loader(37));

    byte[] stored = store.gets("test:k").join().orElseThrow().value();
    assertThat(Envelope.isValid(stored)).isTrue();
    assertThat(Envelope.fetchedAt(stored)).isEqualTo(start + 37);
    assertThat(Envelope.expiresAt(stored)).isEqualTo(start + 37 + TTL.toMillis());
    assertThat(Envelope.loadMillis(stored)).isEqualTo(37);
    assertThat(new String(stored, Envelope.payloadOffset(stored), Envelope.payloadLength(stored),
        StandardCharsets.UTF_8)).isEqualTo("v1");
    // the namespace's generation, on by default, is in the header
    assertThat(Envelope.generation(stored)).isPositive();
    assertThat(stored).hasSize(Envelope.GENERATION_HEADER_SIZE + 2 + Envelope.CHECKSUM_SIZE);
  }

  @Test
  void sustainable_refreshesInTheBackground_callerGetsTheCachedValueAtOnce() {
    build(EAGER_SUS, alwaysEarly());
    cache.get("k", loader(5));

    assertThat(cache.get("k", loader(5))).isEqualTo("v1");
    assertThat(executor.queued()).isEqualTo(1);
    assertThat(loads).hasValue(1);

    executor.runAll();
    assertThat(loads).hasValue(2);
    assertThat(cache.get("k", loader(5))).isEqualTo("v2");
    assertThat(cache.stats().refreshSuccessCount()).isEqualTo(1);
    assertThat(cache.stats().missCount()).isEqualTo(1);
  }

  @Test
  void sustainable_refreshWindowOpensAtTheLastTenthOfTheTtl() {
    // U fixed at 1/e: refresh exactly when remaining <= delta = max(load, ttl/10) = 1 s.
    build(RefreshPolicy.sustainable(), RefreshPolicyTest.fixed(1 - Math.exp(-1)));
    cache.get("k", loader(5));

    clock.advance(Duration.ofMillis(8_990)); // 1.005 s left
    cache.get("k", loader(5));
    assertThat(executor.queued()).isZero();

    clock.advance(Duration.ofMillis(20)); // 0.985 s left
    cache.get("k", loader(5));
    assertThat(executor.queued()).isEqualTo(1);
  }

  @Test
  void sustainable_servesStaleWithinGraceAndRefreshes() {
    build(RefreshPolicy.sustainable(), neverEarly());
    cache.get("k", loader(5));
    clock.advance(TTL.plusMillis(500)); // past logical expiry, within the 2 s grace

    assertThat(cache.get("k", loader(5))).isEqualTo("v1");
    assertThat(cache.stats().count("stale_hit")).isEqualTo(1);
    assertThat(executor.runAll()).isEqualTo(1);
    assertThat(cache.get("k", loader(5))).isEqualTo("v2");
  }

  @Test
  void itemOutlivesItsLogicalExpiryOnTheServerDespiteTheOneSecondTick() {
    build(RefreshPolicy.sustainable(), neverEarly());
    clock.advance(Duration.ofMillis(999)); // write at the very end of a server second
    cache.get("k", loader(0));

    clock.advance(TTL.plusMillis(1_999)); // logical expiry + most of the default 2 s grace
    assertThat(store.gets("test:k").join()).isPresent();
    clock.advance(Duration.ofSeconds(3));
    assertThat(store.gets("test:k").join()).isEmpty();
  }

  @Test
  void none_expiredEntryIsAMissLoadedOnTheCallersThread() {
    build(RefreshPolicy.none(), alwaysEarly());
    cache.get("k", loader(5));
    clock.advance(TTL.minusMillis(100));
    assertThat(cache.get("k", loader(5))).isEqualTo("v1"); // no early refresh under none

    clock.advance(Duration.ofMillis(200));
    assertThat(cache.get("k", loader(5))).isEqualTo("v2");
    assertThat(executor.queued()).isZero();
    assertThat(cache.stats().missCount()).isEqualTo(2);
    // The reload replaced the stale item through CAS.
    assertThat(cache.get("k", loader(5))).isEqualTo("v2");
  }

  @Test
  void xfetch_refreshesInlineAndReturnsTheNewValue() {
    build(RefreshPolicy.xfetch(1.0), alwaysEarly());
    cache.get("k", loader(5));
    // delta = 5 ms and -ln U = 36.7: PER's window is the last ~184 ms.
    clock.advance(TTL.minusMillis(300));
    assertThat(cache.get("k", loader(5))).isEqualTo("v1");

    clock.advance(Duration.ofMillis(150));
    assertThat(cache.get("k", loader(5))).isEqualTo("v2");
    assertThat(executor.queued()).isZero();
    assertThat(cache.stats().refreshSuccessCount()).isEqualTo(1);
    // the read that waited for the inline reload counts as a miss, not a hit
    assertThat(cache.stats().hitCount()).isEqualTo(1);
    assertThat(cache.stats().missCount()).isEqualTo(2);
  }

  @Test
  void xfetch_inlineRefreshFailureServesTheCachedValue() {
    build(RefreshPolicy.xfetch(1.0), alwaysEarly());
    cache.get("k", loader(5));
    clock.advance(TTL.minusMillis(100));

    String value = cache.get("k", key -> {
      throw new IOException("db down");
    });

    assertThat(value).isEqualTo("v1");
    assertThat(cache.stats().refreshFailureCount()).isEqualTo(1);
    assertThat(cache.stats().loadFailureCount()).isEqualTo(1);
  }

  @Test
  void refreshIsDeduplicatedPerKey() {
    build(EAGER_SUS, alwaysEarly());
    cache.get("k", loader(5));

    for (int i = 0; i < 50; i++) {
      cache.get("k", loader(5));
    }

    assertThat(executor.queued()).isEqualTo(1);
    assertThat(cache.stats().count("refresh_scheduled")).isEqualTo(1);
    assertThat(cache.stats().count("refresh_deduped")).isEqualTo(49);
    executor.runAll();
    cache.get("k", loader(5));
    assertThat(executor.queued()).as("a finished refresh releases the key").isEqualTo(1);
  }

  @Test
  void rejectedRefreshIsCountedAndDoesNotLeaveTheKeyInFlight() {
    build(EAGER_SUS, alwaysEarly());
    cache.get("k", loader(5));
    executor.behave(ManualExecutor.Behaviour.REJECT);

    assertThat(cache.get("k", loader(5))).isEqualTo("v1");
    assertThat(cache.stats().count("refresh_rejected")).isEqualTo(1);
    assertThat(loads).as("never run on the caller's thread").hasValue(1);

    executor.behave(ManualExecutor.Behaviour.QUEUE);
    cache.get("k", loader(5));
    assertThat(executor.queued()).isEqualTo(1);
    assertThat(cache.stats().count("refresh_deduped")).isZero();
  }

  @Test
  void refreshSilentlyDroppedByTheExecutorIsReleasedAfterTheItemsLifetime() {
    build(EAGER_SUS, alwaysEarly());
    cache.get("k", loader(5));
    executor.behave(ManualExecutor.Behaviour.DISCARD);
    cache.get("k", loader(5)); // marked in flight, never runs
    executor.behave(ManualExecutor.Behaviour.QUEUE);

    clock.advance(Duration.ofSeconds(5));
    cache.get("k", loader(5));
    assertThat(executor.queued()).as("still deduplicated within the lifetime").isZero();

    clock.advance(Duration.ofSeconds(7)); // 12 s = ttl + default grace of 2 s
    cache.put("k", "fresh"); // keep an item around to read
    cache.get("k", loader(5));
    assertThat(executor.queued()).isEqualTo(1);
  }

  @Test
  void refreshAfterInvalidateIsDiscarded_noStaleResurrection() {
    build(EAGER_SUS, alwaysEarly());
    cache.get("k", loader(5));
    cache.get("k", loader(5)); // refresh queued with the CAS token of v1

    cache.invalidate("k");
    executor.runAll();

    assertThat(cache.getIfPresent("k")).isEmpty();
    assertThat(Envelope.kind(store.gets("test:k").join().orElseThrow().value()))
        .as("a tombstone").isEqualTo(Envelope.KIND_TOMBSTONE);
    assertThat(cache.stats().count("stale_set_discard")).isEqualTo(1);
    assertThat(cache.stats().refreshSuccessCount()).isZero();
  }

  @Test
  void refreshAfterPutIsDiscarded_thePutWins() {
    build(EAGER_SUS, alwaysEarly());
    cache.get("k", loader(5));
    cache.get("k", loader(5));

    cache.put("k", "written by the application");
    executor.runAll();

    assertThat(cache.getIfPresent("k")).contains("written by the application");
    assertThat(cache.stats().refreshSuccessCount()).isZero();
  }

  @Test
  void coldLoadInvalidatedWhileLoadingIsNotWritten() {
    build(RefreshPolicy.sustainable(), neverEarly());

    String value = cache.get("k", key -> {
      cache.invalidate("k"); // the source changed while we were reading it
      return "outdated";
    });

    assertThat(value).isEqualTo("outdated");
    assertThat(cache.getIfPresent("k")).isEmpty();
    assertThat(cache.stats().count("stale_set_discard")).isEqualTo(1);
  }

  @Test
  void backgroundRefreshFailureIsCountedAndTheOldValueKeepsBeingServed() {
    build(EAGER_SUS, alwaysEarly());
    cache.get("k", loader(5));

    cache.get("k", key -> {
      throw new IllegalStateException("db down");
    });
    executor.runAll();

    assertThat(cache.stats().refreshFailureCount()).isEqualTo(1);
    assertThat(cache.getIfPresent("k")).contains("v1");
  }

  @Test
  void coldMissLoaderFailureReachesTheCallerWrapped() {
    build(RefreshPolicy.sustainable(), neverEarly());
    IOException failure = new IOException("db down");

    assertThatThrownBy(() -> cache.get("k", key -> {
      throw failure;
    })).isInstanceOf(CacheLoadException.class).hasCause(failure);

    assertThat(store.gets("test:k").join()).isEmpty();
    assertThat(cache.stats().loadFailureCount()).isEqualTo(1);
  }

  @Test
  void loaderReturningNull_meansNoValue_getThrowsFindIsEmpty_andTheAbsenceIsCached() {
    build(RefreshPolicy.sustainable(), neverEarly());

    assertThatThrownBy(() -> cache.get("k", key -> {
      loads.incrementAndGet();
      return null;
    })).isInstanceOf(CacheLoadException.class).hasMessageContaining("no value");
    assertThat(cache.find("k", loader(5))).isEmpty();
    assertThat(loads).as("the absence was cached: the second loader never ran").hasValue(1);
    assertThat(Envelope.kind(store.gets("test:k").join().orElseThrow().value()))
        .isEqualTo(Envelope.KIND_ABSENT);
    assertThat(cache.stats().count("no_value_hit")).isEqualTo(1);
    assertThat(cache.stats().count("no_value_load")).isEqualTo(1);
  }

  @Test
  void foreignValueIsAMissCountedAndOverwrittenByTheLoad() {
    build(RefreshPolicy.sustainable(), neverEarly());
    store.set("test:k", "written by another client".getBytes(StandardCharsets.UTF_8), 60).join();

    assertThat(cache.get("k", loader(5))).isEqualTo("v1");

    assertThat(cache.stats().count("corrupt_entry")).isEqualTo(1);
    assertThat(cache.stats().missCount()).isEqualTo(1);
    assertThat(Envelope.isValid(store.gets("test:k").join().orElseThrow().value())).isTrue();
  }

  @Test
  void payloadTheCodecRejectsIsAMiss() {
    ValueCodec<Integer> strictInt = new ValueCodec<>() {
      @Override
      public byte[] encode(Integer value) {
        return value.toString().getBytes(StandardCharsets.US_ASCII);
      }

      @Override
      public Integer decode(byte[] bytes, int offset, int length) {
        return Integer.valueOf(new String(bytes, offset, length, StandardCharsets.US_ASCII));
      }
    };
    SustainableCache<Integer> ints = SustainableCache.builder(store).ttl(TTL).codec(strictInt)
        .refreshExecutor(executor).clock(clock).ticker(clock.ticker()).build();
    long now = clock.millis();
    store.set("n", Envelope.encode(now, now + 10_000, 0, "not a number".getBytes(
        StandardCharsets.US_ASCII)), 60).join();

    assertThat(ints.get("n", key -> 7)).isEqualTo(7);
    assertThat(ints.stats().count("corrupt_entry")).isEqualTo(1);
    assertThat(ints.get("n", key -> 8)).isEqualTo(7);
  }

  @Test
  void storeFailureIsAMiss_callerStillGetsTheLoadedValue() {
    CacheStore down = failingStore();
    cache = SustainableCache.builder(down).ttl(TTL).codec(ValueCodec.utf8())
        .refreshExecutor(executor).clock(clock).ticker(clock.ticker()).build();

    assertThat(cache.get("k", loader(5))).isEqualTo("v1");
    assertThat(cache.getIfPresent("k")).isEmpty();

    CacheStats stats = cache.stats();
    // get: the read fails, and no write is attempted after it; getIfPresent: the read fails.
    assertThat(stats.storeErrorCount()).isEqualTo(2);
    assertThat(stats.missCount()).isEqualTo(2);
    // a change that cannot reach the store returns (its invalidation owed), unless failing closed
    cache.invalidate("k");
    cache.put("k", "v");
    assertThat(cache.stats().count("unprotected_write")).isEqualTo(2);
    try (SustainableCache<String> closed = SustainableCache.builder(down).ttl(TTL)
        .codec(ValueCodec.utf8()).failWritesWhenStoreDown(true).build()) {
      assertThatThrownBy(() -> closed.invalidate("k")).isInstanceOf(StoreException.class);
      assertThatThrownBy(() -> closed.put("k", "v")).isInstanceOf(StoreException.class);
    }
  }

  @Test
  void keysAreNamespacedAndValidated() {
    build(RefreshPolicy.sustainable(), neverEarly());
    cache.get("user:42", loader(1));
    assertThat(store.gets("test:user:42").join()).isPresent();

    assertThatThrownBy(() -> cache.get("", loader(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("empty");
    assertThatThrownBy(() -> cache.get("has space", loader(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("U+0020");
    assertThatThrownBy(() -> cache.get("line\nbreak", loader(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("U+000A");
    assertThatThrownBy(() -> cache.get("k\u00e9", loader(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("U+00E9");
    assertThatThrownBy(() -> cache.get("x".repeat(246), loader(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("251")
        .hasMessageContaining("250");
    assertThat(cache.get("x".repeat(245), loader(1))).isNotNull();
    assertThatThrownBy(() -> cache.get(null, loader(1))).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> cache.get("k", null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void getIfPresentNeverLoads() {
    build(RefreshPolicy.none(), neverEarly());
    assertThat(cache.getIfPresent("k")).isEmpty();
    cache.put("k", "v");
    assertThat(cache.getIfPresent("k")).contains("v");
    clock.advance(TTL);
    assertThat(cache.getIfPresent("k")).as("expired under a policy that never serves stale")
        .isEmpty();
  }

  @Test
  void closeStopsBackgroundRefreshesButReadsKeepWorking() {
    cache = SustainableCache.builder(store).ttl(TTL).codec(ValueCodec.utf8()).clock(clock)
        .ticker(clock.ticker())
        .refreshPolicy(EAGER_SUS).random(alwaysEarly()).build();
    cache.get("k", loader(5));
    cache.close();

    assertThat(cache.get("k", loader(5))).isEqualTo("v1");
    assertThat(cache.stats().count("refresh_rejected")).isEqualTo(1);
    cache.close(); // idempotent
  }

  @Test
  void seededRandomMakesDecisionsReproducible() {
    long[] firstRefreshAt = new long[2];
    for (int run = 0; run < 2; run++) {
      FakeClock runClock = FakeClock.atRoundSecond();
      ManualExecutor runExecutor = new ManualExecutor();
      SustainableCache<String> seeded = SustainableCache.builder(InMemoryStore.create(runClock))
          .ttl(TTL).codec(ValueCodec.utf8()).refreshExecutor(runExecutor).clock(runClock)
          .ticker(runClock.ticker())
          .random(new Random(1234)).build();
      long start = runClock.millis();
      seeded.get("k", key -> "v");
      while (runExecutor.queued() == 0) {
        runClock.advanceMillis(10);
        seeded.get("k", key -> "v");
      }
      firstRefreshAt[run] = runClock.millis() - start;
    }
    assertThat(firstRefreshAt[0]).isEqualTo(firstRefreshAt[1]).isBetween(1L, TTL.toMillis());
  }

  /** A store whose every operation fails, like a server that is down. */
  private static CacheStore failingStore() {
    ScriptedStore store = ScriptedStore.over(InMemoryStore.create());
    for (ScriptedStore.Op op : ScriptedStore.Op.values()) {
      store.fail(op, Integer.MAX_VALUE);
    }
    return store;
  }

}
