package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.CacheStats;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheTest;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 15, "honest statistics": loader calls and keys loaded are counted apart, a refresh the
 * executor drops is a rejected refresh (not a failed load), and loaded values written count as
 * writes. The inline-refresh case (a PER read that waited is a miss) is in {@code
 * SustainableCacheTest.xfetch_refreshesInlineAndReturnsTheNewValue}.
 */
final class HonestStatsTest {

  private static final Duration TTL = Duration.ofSeconds(10);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore server = InMemoryStore.create(clock);
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final ManualExecutor refreshes = new ManualExecutor();
  private final SustainableCache<String> cache = SustainableCache.builder(server).namespace("s")
      .ttl(TTL).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
      .refreshExecutor(refreshes).random(FixedRandom.neverEarly())
      .loadTimeout(Duration.ofSeconds(5)).build();

  @AfterEach
  void close() {
    cache.close();
  }

  @Test
  void aBulkLoadOfAHundredKeys_isOneLoaderCall_andAHundredKeysLoaded() {
    List<String> keys = IntStream.range(0, 100).mapToObj(i -> "k" + i).toList();
    cache.getAll(keys, wanted -> {
      Map<String, String> values = new HashMap<>();
      wanted.forEach(key -> values.put(key, "v"));
      return values;
    });
    assertThat(cache.stats().count("loader_call")).isEqualTo(1);
    assertThat(cache.stats().count("bulk_load")).isEqualTo(1);
    assertThat(cache.stats().loadSuccessCount()).isEqualTo(100);
    assertThat(cache.stats().count("load_written")).isEqualTo(100);
  }

  @Test
  void aRefreshTheExecutorAcceptsAndNeverRuns_isARejectedRefresh_notAFailedLoad() {
    cache.put("k", "v0");
    refreshes.behave(ManualExecutor.Behaviour.DISCARD);
    clock.advance(TTL.plusMillis(1));
    assertThat(cache.get("k", key -> "v1")).isEqualTo("v0"); // stale; the refresh is dropped

    clock.advance(Duration.ofSeconds(5));
    scheduler.runDue(); // the refresh's load timeout: the key is released

    CacheStats stats = cache.stats();
    assertThat(stats.count("refresh_rejected")).isEqualTo(1);
    assertThat(stats.loadFailureCount()).isZero();
    assertThat(stats.count("load_timeout")).isZero();
    assertThat(((DefaultSustainableCache<?>) cache).registeredKeyCount()).isZero();
  }

  @Test
  void loadedValuesWritten_areCounted_missesAndRefreshesAlike() {
    cache.get("k", key -> "v0");
    assertThat(cache.stats().count("load_written")).isEqualTo(1);
    clock.advance(TTL.plusMillis(1));
    cache.get("k", key -> "v1");
    refreshes.runAll();
    assertThat(cache.stats().count("load_written")).isEqualTo(2);
    assertThat(cache.stats().refreshSuccessCount()).isEqualTo(1);
    assertThat(cache.stats().count("loader_call")).isEqualTo(2);
  }
}
