package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.internal.CacheConfig;
import io.sustainablecache.testing.InMemoryStore;
import java.time.Duration;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

final class SustainableCacheBuilderTest {

  private final InMemoryStore store = InMemoryStore.create();

  @Test
  void buildsWithOnlyATtl() {
    try (SustainableCache<byte[]> cache = SustainableCache.builder(store)
        .ttl(Duration.ofSeconds(1)).build()) {
      assertThat(cache.toString()).contains("SUS(beta=1.0, ttlFraction=0.1)")
          .contains("grace=PT2S").contains("ValueCodec.bytes()");
    }
  }

  @Test
  void defaultGraceIsATenthOfTheTtlWhenThatExceedsTwoSeconds() {
    try (SustainableCache<byte[]> cache = SustainableCache.builder(store)
        .ttl(Duration.ofMinutes(5)).build()) {
      assertThat(cache.toString()).contains("grace=PT30S");
    }
  }

  @Test
  void ttlIsRequired() {
    assertThatThrownBy(() -> SustainableCache.builder(store).build())
        .isInstanceOf(IllegalStateException.class).hasMessage("ttl must be set");
  }

  @Test
  void rejectsTtlOutOfRangeNamingTheValue() {
    assertThatThrownBy(() -> SustainableCache.builder(store).ttl(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT0S");
    assertThatThrownBy(() -> SustainableCache.builder(store).ttl(Duration.ofSeconds(-3)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT-3S");
    assertThatThrownBy(() -> SustainableCache.builder(store).ttl(Duration.ofNanos(10)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("between 1 ms and");
    assertThatThrownBy(() -> SustainableCache.builder(store).ttl(Duration.ofDays(366)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT8784H");
  }

  @Test
  void rejectsNegativeGrace() {
    assertThatThrownBy(() -> SustainableCache.builder(store).grace(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT-0.001S");
  }

  @Test
  void rejectsBadNamespaces() {
    assertThatThrownBy(() -> SustainableCache.builder(store).namespace(""))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 to 64");
    assertThatThrownBy(() -> SustainableCache.builder(store).namespace("a:b"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("':' at index 1");
    assertThatThrownBy(() -> SustainableCache.builder(store).namespace("x".repeat(65)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has 65");
    assertThatThrownBy(() -> SustainableCache.builder(store).namespace("-x"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not start");
    assertThat(SustainableCache.builder(store).namespace("user-svc_v2.1+a")).isNotNull();
  }

  @Test
  void rejectsExecutorSizesOutOfRange() {
    assertThatThrownBy(() -> SustainableCache.builder(store).refreshThreads(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(": 0");
    assertThatThrownBy(() -> SustainableCache.builder(store).refreshQueueCapacity(-1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(": -1");
  }

  @Test
  void everyOptionCanBeSetOnlyOnce() {
    SustainableCacheBuilder<byte[]> builder = SustainableCache.builder(store)
        .ttl(Duration.ofSeconds(1)).namespace("a").grace(Duration.ZERO)
        .refreshPolicy(RefreshPolicy.none()).refreshThreads(2).refreshQueueCapacity(10);
    assertThatThrownBy(() -> builder.ttl(Duration.ofSeconds(2)))
        .isInstanceOf(IllegalStateException.class).hasMessage("ttl was already set to PT1S");
    assertThatThrownBy(() -> builder.namespace("b")).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> builder.grace(Duration.ZERO))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> builder.refreshPolicy(RefreshPolicy.none()))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("none");
    assertThatThrownBy(() -> builder.refreshThreads(3))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> builder.refreshQueueCapacity(3))
        .isInstanceOf(IllegalStateException.class);
    builder.codec(ValueCodec.utf8());
    assertThatThrownBy(() -> builder.codec(ValueCodec.bytes()))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void executorExcludesThreadAndQueueSettings() {
    var pool = Executors.newSingleThreadExecutor();
    try {
      assertThatThrownBy(() -> SustainableCache.builder(store).ttl(Duration.ofSeconds(1))
          .refreshExecutor(pool).refreshThreads(2).build())
          .isInstanceOf(IllegalStateException.class).hasMessageContaining("refreshExecutor");
    } finally {
      pool.shutdown();
    }
  }

  @Test
  void nullsAreRejectedAtTheBoundary() {
    assertThatThrownBy(() -> SustainableCache.builder(null))
        .isInstanceOf(NullPointerException.class).hasMessage("store");
    assertThatThrownBy(() -> SustainableCache.builder(store).ttl(null))
        .isInstanceOf(NullPointerException.class).hasMessage("ttl");
    assertThatThrownBy(() -> SustainableCache.builder(store).clock(null))
        .isInstanceOf(NullPointerException.class).hasMessage("clock");
    assertThatThrownBy(() -> SustainableCache.builder(store).random(null))
        .isInstanceOf(NullPointerException.class).hasMessage("random");
    assertThatThrownBy(() -> SustainableCache.builder(store).ticker(null))
        .isInstanceOf(NullPointerException.class).hasMessage("ticker");
  }

  @Test
  void theTickerIsSetOnce_andDefaultsToTheSystemTicker_whateverClockIsSet() {
    SustainableCacheBuilder<byte[]> builder = SustainableCache.builder(store)
        .ttl(Duration.ofSeconds(1)).clock(java.time.Clock.systemUTC());
    assertThat(builder.config(ValueCodec.bytes()).ticker()).isSameAs(Ticker.systemTicker());
    Ticker mine = () -> 42;
    builder.ticker(mine);
    assertThatThrownBy(() -> builder.ticker(Ticker.systemTicker()))
        .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("ticker was already set");
    assertThat(builder.config(ValueCodec.bytes()).ticker()).isSameAs(mine);
  }

  /** Every default a cache resolves, set nothing but the TTL (and the policy, for the lease). */
  @Test
  void everyDefault_asTheConfigurationResolvesIt() {
    CacheConfig<byte[]> minute = SustainableCache.builder(store).ttl(Duration.ofMinutes(1))
        .config(ValueCodec.bytes());
    assertThat(minute.namespace()).isEmpty();
    assertThat(minute.grace()).isEqualTo(Duration.ofSeconds(6));
    assertThat(minute.policy()).isEqualTo(RefreshPolicy.sustainable());
    assertThat(minute.fleetLease()).isTrue();
    assertThat(minute.noValueTtl()).isEqualTo(Duration.ofMinutes(1));
    assertThat(minute.loadTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(minute.executor()).isNull();
    assertThat(minute.refreshThreads()).isEqualTo(4);
    assertThat(minute.refreshQueueCapacity()).isEqualTo(1024);
    assertThat(minute.failureBackoff()).isEqualTo(Duration.ofSeconds(1));
    assertThat(minute.maxFailureBackoff()).isEqualTo(Duration.ofSeconds(30));
    assertThat(minute.serveStaleOnError()).isTrue();
    assertThat(minute.maxClockSkew()).isEqualTo(Duration.ofSeconds(30));
    assertThat(minute.ttlJitter()).isZero();
    assertThat(minute.maxValueSize()).isEqualTo(1024 * 1024 - 1024);
    assertThat(minute.coalesceMaxBatchSize()).isEqualTo(100);
    assertThat(minute.coalesceMaxWait()).isNull();
    assertThat(minute.closeTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(minute.fenceTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(minute.nearMaximumSize()).isZero();
    assertThat(minute.nearStaleness()).isNull();
    assertThat(minute.nearCopy()).isFalse();
    assertThat(minute.keyPolicy()).isEqualTo(KeyPolicy.REJECT);
    assertThat(minute.clock()).isEqualTo(java.time.InstantSource.system());
    assertThat(minute.scheduler()).isSameAs(Scheduler.systemScheduler());

    CacheConfig<byte[]> short_ = SustainableCache.builder(store).ttl(Duration.ofSeconds(5))
        .refreshPolicy(RefreshPolicy.none()).failureBackoff(Duration.ofSeconds(8))
        .config(ValueCodec.bytes());
    assertThat(short_.grace()).as("at least 2 s").isEqualTo(Duration.ofSeconds(2));
    assertThat(short_.fleetLease()).as("off without background refreshes").isFalse();
    assertThat(short_.maxFailureBackoff()).as("the TTL, but at least the base")
        .isEqualTo(Duration.ofSeconds(8));
    assertThat(SustainableCache.builder(store).ttl(Duration.ofSeconds(20))
        .config(ValueCodec.bytes()).maxFailureBackoff()).as("the TTL below 30 s")
        .isEqualTo(Duration.ofSeconds(20));

    CacheConfig<byte[]> near = SustainableCache.builder(store).ttl(Duration.ofMinutes(1))
        .nearCacheBytes(1 << 20, Duration.ofSeconds(1)).config(ValueCodec.bytes());
    assertThat(near.nearMaximumSize()).isEqualTo(1 << 20);
    assertThat(near.nearBoundedByBytes()).isTrue();
    assertThat(near.nearStaleness()).isEqualTo(Duration.ofSeconds(1));
    assertThat(near.nearSampling()).isEqualTo(0.001);
  }

  @Test
  void userExecutorIsNotShutDownByClose() {
    var pool = Executors.newSingleThreadExecutor();
    try {
      SustainableCache.builder(store).ttl(Duration.ofSeconds(1)).refreshExecutor(pool).build()
          .close();
      assertThat(pool.isShutdown()).isFalse();
    } finally {
      pool.shutdown();
    }
  }
}
