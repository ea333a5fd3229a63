package io.sustainablecache.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sustainablecache.CacheLoadException;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** The binder's meters over a real cache on the in-memory store, driven by a fake clock. */
final class SustainableCacheMetricsTest {

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);
  private final ManualExecutor refreshes = new ManualExecutor();
  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final SustainableCache<String> cache = TestCaches.books(store, clock, refreshes)
      .failureBackoff(Duration.ZERO)
      .fleetLease(false)
      .build();

  @AfterEach
  void close() {
    cache.close();
  }

  private double count(String name, String... tags) {
    return registry.get(name).tags("cache", "books").tags(tags).functionCounter().count();
  }

  @Test
  void writeFences() {
    SustainableCacheMetrics.monitor(registry, cache, "books");
    cache.get("g", k -> "cached before the transaction");
    io.sustainablecache.WriteFence<String> fence = cache.fence("f");
    io.sustainablecache.WriteFence<String> other = cache.fence("g");
    cache.get("f", k -> "read under the fence");
    cache.get("g", k -> "not called: answered with the value the fence replaced");
    fence.committed();
    other.committed();

    assertThat(count(SustainableCacheMeters.FENCES, "result", "placed")).isEqualTo(2);
    assertThat(count(SustainableCacheMeters.FENCES, "result", "answered")).isEqualTo(1);
    assertThat(count(SustainableCacheMeters.FENCES, "result", "loaded")).isEqualTo(1);
    assertThat(count(SustainableCacheMeters.FENCES, "result", "release.failed")).isZero();
  }

  @Test
  void writesCommittedWithTheStoreDown_andTheKeysOwed() {
    io.sustainablecache.testing.ScriptedStore down =
        io.sustainablecache.testing.ScriptedStore.over(store);
    try (SustainableCache<String> writer = SustainableCache.builder(down).namespace("books")
        .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        // the drain that pays owed keys runs on it: not at all here, as fake time stands still
        .scheduler(io.sustainablecache.testing.ManualScheduler.on(clock.ticker()))
        .build()) {
      SustainableCacheMetrics.monitor(registry, writer, "books");
      down.fail(io.sustainablecache.testing.ScriptedStore.Op.SET, 2);
      writer.invalidate("a");
      writer.invalidate("b");

      assertThat(count(SustainableCacheMeters.WRITES_UNPROTECTED)).isEqualTo(2);
      assertThat(registry.get(SustainableCacheMeters.INVALIDATIONS_OWED).tags("cache", "books")
          .gauge().value()).isEqualTo(2);
      // two failed writes in a row took the store out (its breaker): the next operation after
      // the probe interval is sent, as a probe
      clock.advance(Duration.ofMillis(500));
      writer.getIfPresent("a"); // the store answers: the read pays the key's debt first
      assertThat(registry.get(SustainableCacheMeters.INVALIDATIONS_OWED).tags("cache", "books")
          .gauge().value()).isEqualTo(1);
    }
  }

  @Test
  void aStoreThatStopsAnswering_showsItsNodeOut_theRejectedOperations_andTheOutageLoads() {
    io.sustainablecache.testing.ScriptedStore failing =
        io.sustainablecache.testing.ScriptedStore.over(InMemoryStore.create(clock));
    // the namespace's generation on (the default), its polls on a manual scheduler that the
    // test never runs (on the system scheduler they would be rejected operations too, as many
    // as real time allows)
    try (SustainableCache<String> out = SustainableCache.builder(failing).namespace("out")
        .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .scheduler(io.sustainablecache.testing.ManualScheduler.on(clock.ticker()))
        .refreshExecutor(refreshes).build()) {
      SustainableCacheMetrics.monitor(registry, out, "out");
      double before = registry.get(SustainableCacheMeters.STORE_NODE_OUT).tags("cache", "out")
          .tags("node", "store").gauge().value();
      failing.fail(io.sustainablecache.testing.ScriptedStore.Op.GETS, Integer.MAX_VALUE);
      out.get("a", k -> "A"); // two reads fail: the store is out
      out.get("b", k -> "B");
      out.get("c", k -> "C"); // failed at once, not sent

      assertThat(before).isZero();
      assertThat(registry.get(SustainableCacheMeters.STORE_NODE_OUT).tags("cache", "out")
          .tags("node", "store").gauge().value()).isEqualTo(1);
      assertThat(registry.get(SustainableCacheMeters.STORE_REJECTED).tags("cache", "out")
          .functionCounter().count()).isEqualTo(1);
      assertThat(registry.get(SustainableCacheMeters.OUTAGE_LOADS).tags("cache", "out")
          .functionCounter().count()).isEqualTo(3);
    }
  }

  @Test
  void micrometersCacheConventions() {
    SustainableCacheMetrics.monitor(registry, cache, "books", "app", "test");
    cache.get("a", k -> {
      clock.advanceMillis(40);
      return "A";
    }); // miss, load 40 ms
    cache.get("a", k -> "unused"); // hit (schedules a refresh: always early)
    cache.put("b", "B");
    cache.invalidate("b");

    assertThat(count(SustainableCacheMeters.GETS, "result", "hit")).isEqualTo(1);
    assertThat(count(SustainableCacheMeters.GETS, "result", "miss")).isEqualTo(1);
    // Micrometer's convention (Caffeine's binder too): entries added, the loaded one included
    assertThat(count(SustainableCacheMeters.PUTS)).isEqualTo(2);
    assertThat(count(SustainableCacheMeters.EVICTIONS)).isEqualTo(1);
    assertThat(registry.get(SustainableCacheMeters.GETS).tags("app", "test").meters()).hasSize(2);
    assertThat(registry.find("cache.size").meter()).isNull();
  }

  @Test
  void loadsRefreshesAndTheirOutcomes() {
    SustainableCacheMetrics.monitor(registry, cache, "books");
    cache.get("a", k -> {
      clock.advanceMillis(40);
      return "A";
    });
    cache.get("a", k -> "A2"); // hit in the refresh window: scheduled
    cache.get("a", k -> "A3"); // a refresh of the key is already queued: deduplicated
    assertThat(count(SustainableCacheMeters.REFRESH_REQUESTS, "result", "scheduled")).isEqualTo(1);
    assertThat(count(SustainableCacheMeters.REFRESH_REQUESTS, "result", "deduplicated"))
        .isEqualTo(1);
    refreshes.runAll();
    assertThat(count(SustainableCacheMeters.REFRESHES, "result", "success")).isEqualTo(1);

    refreshes.behave(ManualExecutor.Behaviour.REJECT);
    cache.get("a", k -> "A4");
    assertThat(count(SustainableCacheMeters.REFRESH_REQUESTS, "result", "rejected")).isEqualTo(1);

    refreshes.behave(ManualExecutor.Behaviour.QUEUE);
    cache.get("a", k -> {
      throw new IllegalStateException("db down");
    });
    refreshes.runAll();
    assertThat(count(SustainableCacheMeters.REFRESHES, "result", "failure")).isEqualTo(1);

    ignoring(() -> cache.get("b", k -> {
      throw new IllegalStateException("db down");
    }));
    assertThat(count(SustainableCacheMeters.LOADS, "result", "success")).isEqualTo(2);
    assertThat(count(SustainableCacheMeters.LOADS, "result", "failure")).isEqualTo(2);
    assertThat(count(SustainableCacheMeters.LOADER_CALLS)).isEqualTo(4);

    FunctionTimer duration = registry.get(SustainableCacheMeters.LOAD_DURATION)
        .tags("cache", "books").functionTimer();
    assertThat(duration.count()).isEqualTo(4);
    assertThat(duration.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(40);
  }

  @Test
  void aBulkLoaderCall_isOneCallOfTheLoadTimer_whileTheLoadsCountItsKeys() {
    SustainableCacheMetrics.monitor(registry, cache, "books");
    Map<String, String> loaded = cache.getAll(List.of("a", "b", "c"), keys -> {
      clock.advance(Duration.ofMillis(30)); // one call of 30 ms for the three keys
      Map<String, String> values = new HashMap<>();
      keys.forEach(key -> values.put(key, key.toUpperCase(Locale.ROOT)));
      return values;
    });

    assertThat(loaded).containsOnlyKeys("a", "b", "c");
    assertThat(count(SustainableCacheMeters.LOADS, "result", "success")).isEqualTo(3);
    assertThat(count(SustainableCacheMeters.LOADER_CALLS)).isEqualTo(1);
    FunctionTimer duration = registry.get(SustainableCacheMeters.LOAD_DURATION)
        .tags("cache", "books").functionTimer();
    assertThat(duration.count()).as("the loader calls, not the keys").isEqualTo(1);
    assertThat(duration.mean(TimeUnit.MILLISECONDS)).as("one call's time").isEqualTo(30);
  }

  @Test
  void staleAndAbsentHits() {
    SustainableCacheMetrics.monitor(registry, cache, "books");
    assertThat(cache.find("none", k -> null)).isEmpty();
    assertThat(cache.find("none", k -> "x")).isEmpty();
    assertThat(count(SustainableCacheMeters.NO_VALUE_HITS)).isEqualTo(1);

    cache.get("a", k -> "A");
    clock.advance(Duration.ofSeconds(11)); // past the TTL, within the grace period
    assertThat(cache.get("a", k -> "A2")).isEqualTo("A");
    assertThat(count(SustainableCacheMeters.STALE_HITS)).isEqualTo(1);
  }

  @Test
  void storeErrorsAndCorruptEntries() {
    SustainableCacheMetrics.monitor(registry, cache, "books");
    store.set("books:bad", new byte[] {1, 2, 3}, 60).join();
    assertThat(cache.get("bad", k -> "fixed")).isEqualTo("fixed");
    assertThat(count(SustainableCacheMeters.CORRUPT_ENTRIES)).isEqualTo(1);
    assertThat(count(SustainableCacheMeters.STORE_ERRORS)).isZero();
    assertThat(count(SustainableCacheMeters.LOAD_TIMEOUTS)).isZero();
    assertThat(count(SustainableCacheMeters.FAILURES_REMEMBERED)).isZero();
    assertThat(count(SustainableCacheMeters.LEASES, "result", "won")).isZero();
    assertThat(count(SustainableCacheMeters.LEASES, "result", "lost")).isZero();
    assertThat(count(SustainableCacheMeters.LEASE_TAKEOVERS)).isZero();
    assertThat(count(SustainableCacheMeters.WRITES_SKIPPED)).isZero();
    assertThat(count(SustainableCacheMeters.WRITES_DISCARDED)).isZero();
    assertThat(count(SustainableCacheMeters.STALE_ON_ERROR)).isZero();
  }

  @Test
  void everyNamedMeterIsRegisteredLowerCaseAndDotted() throws Exception {
    SustainableCacheMetrics.monitor(registry, cache, "books");
    List<String> names = new ArrayList<>();
    for (Field f : SustainableCacheMeters.class.getDeclaredFields()) {
      if (Modifier.isStatic(f.getModifiers()) && !f.getName().startsWith("TAG_")) {
        names.add((String) f.get(null));
      }
    }
    assertThat(names).hasSizeGreaterThan(15);
    for (String name : names) {
      assertThat(name).matches("[a-z]+(\\.[a-z]+)+");
      assertThat(registry.find(name).meters()).as(name).isNotEmpty();
    }
    for (Meter meter : registry.getMeters()) {
      assertThat(meter.getId().getTag("cache")).isEqualTo("books");
      assertThat(names).contains(meter.getId().getName());
    }
  }

  @Test
  void bindingTwiceReusesTheMeters() {
    SustainableCacheMetrics.monitor(registry, cache, "books");
    int meters = registry.getMeters().size();
    SustainableCacheMetrics.monitor(registry, cache, "books");
    assertThat(registry.getMeters()).hasSize(meters);
  }

  private static void ignoring(Executable call) {
    try {
      call.execute();
    } catch (CacheLoadException expected) {
      // counted
    } catch (Throwable t) {
      throw new AssertionError(t);
    }
  }
}
