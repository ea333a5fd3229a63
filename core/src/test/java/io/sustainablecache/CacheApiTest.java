package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.ForwardingStore;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ScriptedStore;
import io.sustainablecache.testing.ScriptedStore.Op;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The smaller parts of the API: {@code putIfAbsent}, {@code invalidateAll}, {@code find},
 * {@code getIfPresent} on absences, {@link CacheStats}, the builder's new settings, and the
 * failure memory of misses (issue 8, part 3).
 */
final class CacheApiTest {

  private static final Duration TTL = Duration.ofSeconds(10);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);

  private SustainableCacheBuilder<String> builder() {
    return SustainableCache.builder(store).namespace("a").ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).refreshExecutor(new ManualExecutor())
        .random(FixedRandom.neverEarly());
  }

  @Test
  void putIfAbsent_storesOnlyWithoutALiveValue_andReturnsTheValueThatWon() {
    try (SustainableCache<String> cache = builder().build()) {
      assertThat(cache.putIfAbsent("k", "first")).isEmpty();
      assertThat(cache.putIfAbsent("k", "second")).contains("first");
      assertThat(cache.getIfPresent("k")).contains("first");

      cache.invalidate("k"); // a tombstone is no value
      assertThat(cache.putIfAbsent("k", "after invalidate")).isEmpty();

      clock.advance(TTL); // expired is no value either
      assertThat(cache.putIfAbsent("k", "after expiry")).isEmpty();
      assertThat(cache.getIfPresent("k")).contains("after expiry");
      assertThat(cache.stats().count("put")).isEqualTo(3);
    }
  }

  @Test
  void putIfAbsent_overACachedAbsence_stores() {
    try (SustainableCache<String> cache = builder().build()) {
      assertThat(cache.find("k", key -> null)).isEmpty();
      assertThat(cache.putIfAbsent("k", "now it exists")).isEmpty();
      assertThat(cache.find("k", key -> null)).contains("now it exists");
    }
  }

  @Test
  void invalidateAll_flushesTheNamespace_whereTheStoreCan() {
    try (SustainableCache<String> cache = builder().build();
        SustainableCache<String> other = SustainableCache.builder(store).namespace("other")
            .ttl(TTL).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).build()) {
      cache.put("x", "1");
      other.put("x", "2");
      cache.invalidateAll();
      assertThat(cache.getIfPresent("x")).isEmpty();
      assertThat(other.getIfPresent("x")).contains("2");
      assertThat(cache.stats().invalidationCount()).isEqualTo(1);
    }
  }

  @Test
  void invalidateAll_withoutANamespace_orWithoutAGenerationOnAStoreThatCannot_failsClearly() {
    try (SustainableCache<String> cache = SustainableCache.builder(store).ttl(TTL)
        .codec(ValueCodec.utf8()).build()) {
      assertThatThrownBy(cache::invalidateAll).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("namespace");
    }
    io.sustainablecache.spi.CacheStore plain = ForwardingStore.withoutFlushPrefix(store);
    try (SustainableCache<String> cache = SustainableCache.builder(plain).namespace("n")
        .ttl(TTL).codec(ValueCodec.utf8()).invalidateAllBound(Duration.ZERO).build()) {
      assertThatThrownBy(cache::invalidateAll)
          .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("memcached")
          .hasMessageContaining("invalidateAllBound");
    }
  }

  /** Issue 32: the default, a generation of the namespace, needs no prefix flush. */
  @Test
  void invalidateAll_byDefault_worksOnAStoreWithoutAPrefixFlush() {
    io.sustainablecache.spi.CacheStore plain = ForwardingStore.withoutFlushPrefix(store);
    try (SustainableCache<String> cache = SustainableCache.builder(plain).namespace("n")
        .ttl(TTL).codec(ValueCodec.utf8()).build()) {
      cache.put("x", "1");
      cache.invalidateAll();
      assertThat(cache.getIfPresent("x")).isEmpty();
      assertThat(cache.stats().invalidationCount()).isEqualTo(1);
    }
  }

  @Test
  void putAndInvalidate_failingClosed_reportStoreFailures() {
    ScriptedStore failing = ScriptedStore.over(store).fail(Op.SET, 2);
    try (SustainableCache<String> cache = SustainableCache.builder(failing).ttl(TTL)
        .codec(ValueCodec.utf8()).failWritesWhenStoreDown(true).build()) {
      assertThatThrownBy(() -> cache.put("k", "v")).isInstanceOf(StoreException.class);
      assertThatThrownBy(() -> cache.invalidate("k")).isInstanceOf(StoreException.class);
      assertThat(cache.stats().storeErrorCount()).isEqualTo(2);
    }
  }

  @Test
  void putAndInvalidate_byDefault_returnAndOweTheKey() {
    ScriptedStore failing = ScriptedStore.over(store).fail(Op.SET, 2);
    // the drain that pays owed keys runs on the scheduler: a manual one, so that it does not
    // run (and pay, or be refused by the store's breaker) between the calls and the checks
    try (SustainableCache<String> cache = SustainableCache.builder(failing).ttl(TTL)
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .scheduler(io.sustainablecache.testing.ManualScheduler.on(clock.ticker()))
        // without the store's breaker, which would refuse the lease's delete after two failures
        // in a row and count a third store error
        .storeProbeInterval(Duration.ZERO).build()) {
      cache.put("k", "v");
      cache.invalidate("j");
      assertThat(cache.stats().storeErrorCount()).isEqualTo(2);
      assertThat(cache.stats().count("unprotected_write")).isEqualTo(2);
      assertThat(cache.stats().keysAwaitingInvalidation()).isEqualTo(2);
    }
  }

  @Test
  void getIfPresent_onACachedAbsence_isEmptyButAHit() {
    try (SustainableCache<String> cache = builder().build()) {
      cache.find("k", key -> null);
      assertThat(cache.getIfPresent("k")).isEmpty();
      assertThat(cache.stats().count("no_value_hit")).isEqualTo(1);
    }
  }

  @Test
  void noValueTtlZero_cachesNoAbsence() {
    AtomicInteger loads = new AtomicInteger();
    try (SustainableCache<String> cache = builder().noValueTtl(Duration.ZERO).build()) {
      for (int i = 0; i < 3; i++) {
        assertThat(cache.find("k", key -> {
          loads.incrementAndGet();
          return null;
        })).isEmpty();
      }
      assertThat(loads).hasValue(3);
      assertThat(store.gets("a:k").join()).isEmpty();
    }
  }

  @Test
  void ttlJitter_shortensEachEntrysTtlByUpToTheFraction() {
    try (SustainableCache<String> cache = SustainableCache.builder(store).ttl(TTL)
        .ttlJitter(0.2).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .random(new java.util.Random(42)).build()) {
      long min = Long.MAX_VALUE;
      long max = Long.MIN_VALUE;
      for (int i = 0; i < 200; i++) {
        cache.get("k" + i, key -> "v");
        byte[] bytes = store.gets("k" + i).join().orElseThrow().value();
        long ttl = Envelope.expiresAt(bytes) - Envelope.fetchedAt(bytes);
        min = Math.min(min, ttl);
        max = Math.max(max, ttl);
      }
      assertThat(min).isGreaterThanOrEqualTo(8_000).isLessThan(8_300);
      assertThat(max).isLessThanOrEqualTo(10_000).isGreaterThan(9_700);
    }
  }

  @Test
  void aFailingKey_isLoadedAtMostOncePerBackoffWindow_callersGetTheRememberedFailureFast() {
    AtomicInteger attempts = new AtomicInteger();
    Loader<String> failing = key -> {
      attempts.incrementAndGet();
      throw new IllegalStateException("db down");
    };
    try (SustainableCache<String> cache = builder().failureBackoff(Duration.ofSeconds(1))
        .build()) {
      for (int i = 0; i < 100; i++) { // 100 requests within 1 s
        assertThatThrownBy(() -> cache.get("k", failing)).isInstanceOf(CacheLoadException.class)
            .hasRootCauseMessage("db down");
        clock.advanceMillis(4);
      }
      assertThat(attempts).as("once per window (0.5 s with this random source)").hasValue(1);
      clock.advanceMillis(200);
      assertThatThrownBy(() -> cache.get("k", failing)).isInstanceOf(CacheLoadException.class);
      assertThat(attempts).hasValue(2);
      assertThat(cache.stats().count("failure_remembered")).isEqualTo(99);
    }
  }

  @Test
  void aFailingKeyWithAStaleValue_servesTheStaleValue_underNone() {
    try (SustainableCache<String> cache = builder().refreshPolicy(RefreshPolicy.none())
        .build()) {
      cache.get("k", key -> "v0");
      clock.advance(TTL);
      Loader<String> failing = key -> {
        throw new IllegalStateException("db down");
      };
      assertThat(cache.get("k", failing)).isEqualTo("v0");
      assertThat(cache.get("k", failing)).isEqualTo("v0"); // remembered, still stale-served
      assertThat(cache.stats().count("stale_on_error")).isEqualTo(2);
      assertThat(cache.stats().count("failure_remembered")).isEqualTo(1);
    }
  }

  @Test
  void cacheStats_subtractCompareAndPrintOnlyWhatHappened() {
    try (SustainableCache<String> cache = builder().build()) {
      CacheStats before = cache.stats();
      cache.get("k", key -> "v");
      cache.get("k", key -> "v");
      CacheStats delta = cache.stats().minus(before);
      assertThat(delta.hitCount()).isEqualTo(1);
      assertThat(delta.missCount()).isEqualTo(1);
      assertThat(delta.requestCount()).isEqualTo(2);
      assertThat(delta.hitRate()).isEqualTo(0.5);
      assertThat(delta.loadCount()).isEqualTo(1);
      assertThat(delta).isEqualTo(delta.minus(CacheStats.empty())).hasSameHashCodeAs(delta);
      assertThat(delta.toString()).contains("hit=1").contains("miss=1")
          .doesNotContain("refresh");
      assertThat(CacheStats.empty().hitRate()).isEqualTo(1.0);
    }
  }

  @Test
  void builderValidatesTheNewSettings() {
    assertThatThrownBy(() -> builder().loadTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT0S");
    assertThatThrownBy(() -> builder().loadTimeout(Duration.ofDays(2)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT48H");
    assertThatThrownBy(() -> builder().noValueTtl(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("noValueTtl");
    assertThatThrownBy(() -> builder().ttlJitter(0.6))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0.6");
    assertThatThrownBy(() -> builder().ttlJitter(Double.NaN))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> builder().coalesce(0, Duration.ofMillis(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxBatchSize");
    assertThatThrownBy(() -> builder().closeTimeout(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> builder().fleetLease(true).fleetLease(false))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("fleetLease");
    assertThatThrownBy(() -> builder().failureBackoff(Duration.ofSeconds(1))
        .failureBackoff(Duration.ofSeconds(2))).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> builder().scheduler(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void fleetLeaseIsOnByDefaultForSusOnly() {
    try (SustainableCache<String> sus = builder().build();
        SustainableCache<String> none = SustainableCache.builder(store).ttl(TTL)
            .refreshPolicy(RefreshPolicy.none()).codec(ValueCodec.utf8()).build()) {
      assertThat(sus.toString()).contains("fleetLease=true");
      assertThat(none.toString()).contains("fleetLease=false");
    }
  }
}
