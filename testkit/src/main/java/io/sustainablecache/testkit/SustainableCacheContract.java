package io.sustainablecache.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.CacheStats;
import io.sustainablecache.Loader;
import io.sustainablecache.RefreshPolicy;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * End-to-end behaviour of a {@link SustainableCache} over a real memcached through an adapter,
 * in real time: the one-second expiry tick, and steady low-rate traffic where SUS never misses
 * after warm-up while plain TTL caching misses every period.
 *
 * <p>Subclasses provide a store connected to {@link MemcachedServer#shared()} and own its
 * lifecycle. The real-time tests take about 20 seconds in all.
 */
public abstract class SustainableCacheContract {

  /**
   * The adapter under test, connected to a real memcached.
   *
   * @return a store; never {@code null}
   */
  protected abstract CacheStore store();

  private final String namespace = "it-" + UUID.randomUUID().toString().substring(0, 8);

  private SustainableCache<String> cache(Duration ttl, RefreshPolicy policy) {
    return SustainableCache.builder(store()).namespace(namespace).ttl(ttl)
        .refreshPolicy(policy).codec(ValueCodec.utf8()).build();
  }

  @Test
  void valuesRoundTripThroughTheServerInAnEnvelope() {
    try (SustainableCache<String> cache = cache(Duration.ofSeconds(30),
        RefreshPolicy.sustainable())) {
      assertThat(cache.get("k", key -> "välue")).isEqualTo("välue");
      assertThat(cache.get("k", key -> "other")).isEqualTo("välue");

      byte[] raw = store().gets(namespace + ":k").join().orElseThrow().value();
      assertThat(Envelope.isValid(raw)).isTrue();
      assertThat(Envelope.expiresAt(raw) - Envelope.fetchedAt(raw)).isEqualTo(30_000);
      assertThat(cache.stats().hitCount()).isEqualTo(1);
    }
  }

  @Test
  void foreignValueOnTheServerIsAMissAndIsReplaced() {
    try (SustainableCache<String> cache = cache(Duration.ofSeconds(30),
        RefreshPolicy.sustainable())) {
      store().set(namespace + ":foreign", "plain text from another client".getBytes(
          StandardCharsets.UTF_8), 60).join();

      assertThat(cache.get("foreign", key -> "loaded")).isEqualTo("loaded");
      assertThat(cache.stats().corruptEntryCount()).isEqualTo(1);
      assertThat(cache.get("foreign", key -> "again")).isEqualTo("loaded");
    }
  }

  @Test
  void invalidateRemovesTheItemOnTheServer() {
    try (SustainableCache<String> cache = cache(Duration.ofSeconds(30),
        RefreshPolicy.sustainable())) {
      cache.put("k", "v");
      assertThat(cache.getIfPresent("k")).contains("v");
      cache.invalidate("k");
      assertThat(store().gets(namespace + ":k").join()).isEmpty();
      assertThat(cache.get("k", key -> "reloaded")).isEqualTo("reloaded");
    }
  }

  /**
   * The server expires items on a one-second tick, so an item set with exptime N may vanish
   * after N - 1 seconds. The library sends a longer physical exptime, so an item outlives its
   * logical TTL: the read after the logical expiry is a stale hit that refreshes, not a miss.
   */
  @Test
  void itemSurvivesTheServersTickPastItsLogicalExpiryAndIsRefreshedNotLost() {
    try (SustainableCache<String> cache = cache(Duration.ofSeconds(1),
        RefreshPolicy.sustainable())) {
      AtomicInteger loads = new AtomicInteger();
      Loader<String> loader = key -> "v" + loads.incrementAndGet();
      assertThat(cache.get("tick", loader)).isEqualTo("v1");

      letTimePass(Duration.ofMillis(1_300)); // past the 1 s logical TTL, inside the 2 s grace
      assertThat(cache.get("tick", loader)).isEqualTo("v1");

      CacheStats stats = cache.stats();
      assertThat(stats.missCount()).isEqualTo(1);
      assertThat(stats.staleHitCount()).isEqualTo(1);
      await().atMost(Duration.ofSeconds(2))
          .until(() -> cache.getIfPresent("tick").filter("v2"::equals).isPresent());
      assertThat(loads).hasValue(2);
    }
  }

  /**
   * Seed 000's experiment at a small scale: 5 requests/s for 15 s on one key, TTL 3 s, a 50 ms
   * loader. SUS serves every request after warm-up from the cache and loads about once per TTL
   * period, never concurrently; plain TTL demand-fill misses once per period.
   */
  @Test
  void steadyLowRateTraffic_susNeverMissesAfterWarmUp_plainTtlMissesEveryPeriod()
      throws Exception {
    Duration ttl = Duration.ofSeconds(3);
    Duration duration = Duration.ofSeconds(15);
    try (SustainableCache<String> sus = cache(ttl, RefreshPolicy.sustainable());
        SustainableCache<String> none = cache(ttl, RefreshPolicy.none())) {
      CompletableFuture<Run> susRun = CompletableFuture.supplyAsync(
          () -> drive(sus, "sus", 5, duration));
      CompletableFuture<Run> noneRun = CompletableFuture.supplyAsync(
          () -> drive(none, "none", 5, duration));
      Run s = susRun.get(60, TimeUnit.SECONDS);
      Run n = noneRun.get(60, TimeUnit.SECONDS);
      long periods = duration.toMillis() / ttl.toMillis();

      assertThat(s.errors).as("SUS caller errors").isZero();
      assertThat(s.stats.missCount()).as("SUS misses, including the first fill").isEqualTo(1);
      assertThat(s.maxConcurrentLoads).as("SUS concurrent loads").isEqualTo(1);
      // Refreshes land in the last tenth of the TTL, so a refresh cycle lasts 0.9 to 1.0 TTL
      // (plus the load); the first load is the warm-up fill.
      assertThat(s.loads.get()).as("SUS loads in %d periods", periods)
          .isBetween((int) periods - 1, 1 + (int) Math.ceil(periods / 0.9));

      assertThat(n.errors).isZero();
      // A period lasts a TTL plus up to one request interval and one load (about 3.25 s), so
      // 15 s hold the first fill and at least 4 expiries.
      assertThat(n.stats.missCount() - 1).as("plain TTL misses after the first fill")
          .isGreaterThanOrEqualTo(periods - 1);
    }
  }

  /**
   * Real time must pass for these experiments: this is their duration, not a wait for a
   * condition (those use Awaitility).
   */
  private static void letTimePass(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private record Run(CacheStats stats, AtomicInteger loads, int maxConcurrentLoads, int errors) {}

  private static Run drive(SustainableCache<String> cache, String key, int perSecond,
      Duration duration) {
    AtomicInteger loads = new AtomicInteger();
    AtomicInteger inLoader = new AtomicInteger();
    AtomicInteger maxInLoader = new AtomicInteger();
    AtomicInteger errors = new AtomicInteger();
    Loader<String> loader = k -> {
      maxInLoader.accumulateAndGet(inLoader.incrementAndGet(), Math::max);
      try {
        Thread.sleep(50);
        return "v" + loads.incrementAndGet();
      } finally {
        inLoader.decrementAndGet();
      }
    };
    ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor();
    ExecutorService requests = Executors.newCachedThreadPool();
    try {
      ticker.scheduleAtFixedRate(() -> requests.execute(() -> {
        try {
          cache.get(key, loader);
        } catch (RuntimeException e) {
          errors.incrementAndGet();
        }
      }), 0, 1_000 / perSecond, TimeUnit.MILLISECONDS);
      letTimePass(duration);
    } finally {
      ticker.shutdownNow();
      requests.shutdown();
    }
    try {
      requests.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return new Run(cache.stats(), loads, maxInLoader.get(), errors.get());
  }
}
