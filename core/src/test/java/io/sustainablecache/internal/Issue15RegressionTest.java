package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.CacheLoadException;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.AbstractMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * Issue 15, smaller findings: a bulk result map that throws fails {@code getAll} at once (it
 * waited the whole load timeout), and refreshes still queued when {@code close()} gives up on the
 * executor end their flights at once (a later miss of their key waited the load timeout).
 */
final class Issue15RegressionTest {

  private static final Duration TTL = Duration.ofSeconds(10);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore server = InMemoryStore.create(clock);
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());

  @Test
  void aBulkResultMapWhoseGetThrows_failsGetAllAtOnce_withThatFailure() {
    try (SustainableCache<String> cache = SustainableCache.builder(server).namespace("i")
        .ttl(TTL).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .build()) {
      Map<String, String> hostile = new AbstractMap<>() {
        @Override
        public String get(Object key) {
          throw new UnsupportedOperationException("this map cannot be read");
        }

        @Override
        public Set<Entry<String, String>> entrySet() {
          return Set.of();
        }
      };
      assertThatThrownBy(() -> cache.getAll(List.of("a", "b"), keys -> hostile))
          .isInstanceOf(CacheLoadException.class)
          .hasRootCauseInstanceOf(UnsupportedOperationException.class);
      KeyRegistry registry = ((DefaultSustainableCache<?>) cache).registry();
      assertThat(registry.flightOf("i:a")).as("no key left loading").isNull();
      assertThat(registry.flightOf("i:b")).as("no key left loading").isNull();
    }
  }

  @Test
  void refreshesStillQueuedWhenCloseGivesUp_endTheirFlights_soALaterMissDoesNotWait()
      throws Exception {
    SustainableCache<String> cache = SustainableCache.builder(server).namespace("i").ttl(TTL)
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .random(FixedRandom.neverEarly()).refreshThreads(1).refreshQueueCapacity(8)
        .closeTimeout(Duration.ofMillis(100)).fleetLease(false).build();
    cache.put("slow", "s0");
    cache.put("queued", "q0");
    clock.advance(TTL.plusMillis(1));
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    cache.get("slow", key -> { // its refresh occupies the one refresh thread
      running.countDown();
      never.await();
      return "s1";
    });
    await().atMost(Duration.ofSeconds(10)).until(() -> running.getCount() == 0);
    cache.get("queued", key -> "q1"); // its refresh waits in the queue

    cache.close(); // interrupts the slow one; the queued one never runs

    KeyRegistry registry = ((DefaultSustainableCache<?>) cache).registry();
    assertThat(registry.flightOf("i:queued")).as("no flight left for a later miss to join")
        .isNull();
    assertThat(registry.flightOf("i:slow")).as("the interrupted one failed and ended").isNull();
    assertThat(cache.stats().count("refresh_rejected")).as("the queued one, dropped").isEqualTo(1);
  }
}
