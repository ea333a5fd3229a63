package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/** Real threads racing on one key: at most one load per key at a time. */
final class SustainableCacheConcurrencyTest {

  private static final int THREADS = 16;

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);
  private final ExecutorService callers = Executors.newFixedThreadPool(THREADS);

  @AfterEach
  void shutdown() {
    callers.shutdownNow();
  }

  @RepeatedTest(5)
  void concurrentColdMissesShareOneLoad() throws Exception {
    try (SustainableCache<String> cache = SustainableCache.builder(store)
        .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .build()) {
      AtomicInteger loads = new AtomicInteger();
      AtomicInteger inLoader = new AtomicInteger();
      AtomicInteger maxInLoader = new AtomicInteger();
      CountDownLatch start = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      Loader<String> slow = key -> {
        maxInLoader.accumulateAndGet(inLoader.incrementAndGet(), Math::max);
        loads.incrementAndGet();
        release.await(10, TimeUnit.SECONDS);
        inLoader.decrementAndGet();
        return "value";
      };

      List<Future<String>> results = new ArrayList<>();
      for (int i = 0; i < THREADS; i++) {
        results.add(callers.submit(() -> {
          start.await();
          return cache.get("hot", slow);
        }));
      }
      start.countDown();
      await().atMost(Duration.ofSeconds(5)).until(() -> loads.get() == 1);
      release.countDown();

      for (Future<String> result : results) {
        assertThat(result.get(5, TimeUnit.SECONDS)).isEqualTo("value");
      }
      assertThat(loads).hasValue(1);
      assertThat(maxInLoader).hasValue(1);
      // Callers that arrived after the store was filled hit; none loaded again.
      assertThat(cache.stats().requestCount()).isEqualTo(THREADS);
    }
  }

  @RepeatedTest(5)
  void manyReadersDueForRefreshTriggerOneRefresh() throws Exception {
    AtomicInteger refreshLoads = new AtomicInteger();
    CountDownLatch release = new CountDownLatch(1);
    try (SustainableCache<String> cache = SustainableCache.builder(store)
        .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .refreshPolicy(SustainableCacheTest.EAGER_SUS)
        .random(RefreshPolicyTest.fixed(Math.nextDown(1.0))) // every read wants a refresh
        .refreshThreads(4).build()) {
      cache.put("hot", "v0");
      Loader<String> loader = key -> {
        refreshLoads.incrementAndGet();
        release.await(10, TimeUnit.SECONDS);
        return "v1";
      };
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> readers = new ArrayList<>();
      for (int i = 0; i < THREADS; i++) {
        readers.add(callers.submit(() -> {
          start.await();
          for (int r = 0; r < 200; r++) {
            assertThat(cache.get("hot", loader)).isEqualTo("v0");
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> reader : readers) {
        reader.get(10, TimeUnit.SECONDS);
      }
      release.countDown();

      await().atMost(Duration.ofSeconds(5)).until(() -> cache.getIfPresent("hot")
          .filter("v1"::equals).isPresent());
      assertThat(refreshLoads).hasValue(1);
      // The refresh is counted once its write's future completed, which is after a reader can
      // see the value: wait for the count, not only for the value.
      await().atMost(Duration.ofSeconds(5)).until(() -> cache.stats().refreshSuccessCount() > 0);
      CacheStats stats = cache.stats();
      assertThat(stats.count("refresh_scheduled")).isEqualTo(1);
      assertThat(stats.count("refresh_deduped")).isEqualTo(THREADS * 200L - 1);
      assertThat(stats.refreshSuccessCount()).isEqualTo(1);
    }
  }

  @Test
  void saturatedExecutorRejectsWithoutBlockingCallersAndReleasesEveryKey() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    try (SustainableCache<String> cache = SustainableCache.builder(store)
        .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .refreshPolicy(SustainableCacheTest.EAGER_SUS)
        .random(RefreshPolicyTest.fixed(Math.nextDown(1.0)))
        .refreshThreads(1).refreshQueueCapacity(2).build()) {
      int keys = 200;
      for (int i = 0; i < keys; i++) {
        cache.put("k" + i, "v");
      }
      Loader<String> blocked = key -> {
        release.await(10, TimeUnit.SECONDS);
        return "new";
      };
      for (int i = 0; i < keys; i++) {
        assertThat(cache.get("k" + i, blocked)).isEqualTo("v");
      }
      CacheStats stats = cache.stats();
      assertThat(stats.count("refresh_scheduled")).isEqualTo(3); // one running, two queued
      assertThat(stats.count("refresh_rejected")).isEqualTo(keys - 3);

      release.countDown();
      await().atMost(Duration.ofSeconds(5))
          .until(() -> cache.stats().refreshSuccessCount() == 3);
      // Every rejected key is free to be scheduled again.
      cache.get("k199", key -> "again");
      await().atMost(Duration.ofSeconds(5))
          .until(() -> cache.getIfPresent("k199").filter("again"::equals).isPresent());
    }
  }
}
