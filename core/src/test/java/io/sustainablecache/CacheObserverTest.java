package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The {@link CacheObserver} SPI as the core calls it, without Micrometer: the steps begun and
 * ended, none on a store hit or a near hit, and an observer that throws never fails a read or a
 * write. In virtual time (a fake clock, a manual scheduler and refresh executor).
 */
final class CacheObserverTest {

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final ManualExecutor refreshes = new ManualExecutor();
  /** What the recording observer saw: "begin LOAD [k]", "end LOAD success", ... */
  private final List<String> seen = new CopyOnWriteArrayList<>();

  private final CacheObserver recording = step -> {
    seen.add("begin " + step.kind() + " " + step.keys() + (step.background() ? " background"
        : "") + (step.parent().isPresent() ? " child" : ""));
    return new CacheObserver.Span() {
      @Override
      public void error(Throwable error) {
        seen.add("error " + step.kind() + " " + error.getMessage());
      }

      @Override
      public void end(String outcome) {
        seen.add("end " + step.kind() + " " + outcome);
      }
    };
  };

  private SustainableCacheBuilder<String> builder(CacheObserver observer) {
    return SustainableCache.builder(store).namespace("books").ttl(Duration.ofSeconds(10))
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(refreshes).random(FixedRandom.neverEarly()).observer(observer);
  }

  @Test
  void aMiss_isALeaseThenALoad_onTheCallersThread() {
    try (SustainableCache<String> cache = builder(recording).fleetLease(true).build()) {
      cache.get("b1", key -> "Dune");
    }

    assertThat(seen).containsExactly("begin LEASE [b1]", "end LEASE acquired",
        "begin LOAD [b1]", "end LOAD success");
  }

  @Test
  void aStoreHitAndANearHit_beginNoStep() {
    try (SustainableCache<String> cache = builder(recording).nearCache(100, Duration.ofSeconds(1))
        .build()) {
      scheduler.runDue(); // the near cache's first poll
      cache.get("b1", key -> "Dune");
      seen.clear();

      for (int i = 0; i < 3; i++) {
        assertThat(cache.get("b1", key -> "not called")).isEqualTo("Dune");
      }

      assertThat(cache.stats().count("near_hit")).as("near hits").isPositive();
    }
    assertThat(seen).isEmpty();
  }

  @Test
  void aBackgroundRefresh_isBegunByTheRead_andItsLeaseAndLoadAreItsChildren() {
    try (SustainableCache<String> cache = builder(recording).fleetLease(true)
        .refreshPolicy(RefreshPolicy.sustainable(1.0, 1.0)).build()) {
      cache.get("b1", key -> "Dune");
      clock.advance(Duration.ofSeconds(10)); // at the logical expiry: a hit refreshes
      seen.clear();

      assertThat(cache.get("b1", key -> "Dune Messiah")).isEqualTo("Dune");
      assertThat(seen).containsExactly("begin REFRESH [b1] background");
      refreshes.runAll();
    }

    assertThat(seen).containsExactly("begin REFRESH [b1] background",
        "begin LEASE [b1] background child", "end LEASE acquired",
        "begin LOAD [b1] background child", "end LOAD success", "end REFRESH success");
  }

  @Test
  void aFence_isThreeSteps() {
    try (SustainableCache<String> cache = builder(recording).build()) {
      WriteFence<String> fence = cache.fence("b1");
      fence.beforeCommit();
      fence.rolledBack();
    }

    assertThat(seen).containsExactly("begin FENCE [b1]", "end FENCE placed",
        "begin FENCE_BEFORE_COMMIT [b1]", "end FENCE_BEFORE_COMMIT success",
        "begin FENCE_RELEASE [b1]", "end FENCE_RELEASE rolled.back");
  }

  @Test
  void anObserverThatThrows_failsNoReadAndNoWrite() {
    CacheObserver throwing = step -> {
      throw new IllegalStateException("observer broken");
    };
    try (SustainableCache<String> cache = builder(throwing).fleetLease(true).build()) {
      assertThat(cache.get("b1", key -> "Dune")).isEqualTo("Dune");
      WriteFence<String> fence = cache.fence("b2");
      fence.beforeCommit();
      fence.committed("Emma");
      assertThat(cache.get("b2", key -> "not called")).isEqualTo("Emma");
    }
  }

  @Test
  void spansThatThrow_failNoRead_andALoadersFailureStillReachesItsCaller() {
    CacheObserver throwingSpans = step -> new CacheObserver.Span() {
      @Override
      public void error(Throwable error) {
        throw new IllegalStateException("span broken");
      }

      @Override
      public CacheObserver.Scope open() {
        throw new IllegalStateException("span broken");
      }

      @Override
      public void end(String outcome) {
        throw new IllegalStateException("span broken");
      }
    };
    try (SustainableCache<String> cache = builder(throwingSpans).fleetLease(true).build()) {
      assertThat(cache.get("b1", key -> "Dune")).isEqualTo("Dune");
      assertThatThrownBy(() -> cache.get("b2", key -> {
        throw new IllegalArgumentException("database down");
      })).isInstanceOf(CacheLoadException.class).hasMessageContaining("loader failed");
    }
  }

  @Test
  void theObserver_isSetOnce_andNeverNull() {
    SustainableCacheBuilder<String> builder = builder(recording);

    assertThatThrownBy(() -> builder.observer(recording))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("observer");
    assertThatThrownBy(() -> SustainableCache.builder(store).observer(null))
        .isInstanceOf(NullPointerException.class).hasMessage("observer");
  }
}
