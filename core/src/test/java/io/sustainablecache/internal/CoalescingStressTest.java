package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.CacheLoadException;
import io.sustainablecache.CacheSettings;
import io.sustainablecache.LoadingSustainableCache;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A loading cache's coalesced loads under real threads: eight threads run a random mix of {@code
 * get}, {@code getAsync}, {@code find}, {@code getAll} and {@code invalidate} (after changing the
 * database) over 40 keys, with a bulk loader that sometimes throws and hits refreshed in the
 * background (a 2 s TTL whose refresh window opens at once after a load: with a window that
 * opened 0.1 s after, a run on a quiet machine, under 0.1 s, once scheduled no refresh at all),
 * then the cache is left to settle and checked:
 * <ul>
 *   <li>no loader call held more than {@code maxBatchSize} keys;</li>
 *   <li>every flight registered ended exactly once, in {@code ENDED} (so deregistered: no key
 *       stuck), through legal transitions only (the gate refuses a second end);</li>
 *   <li>a read that began after {@code invalidate(k)} returned never saw a value of {@code k}
 *       older than the database's version at that return;</li>
 *   <li>no synchronous caller gave up waiting (each waits at most the load timeout).</li>
 * </ul>
 * Real time (the system clock and scheduler): the loader returns at once, so nothing waits for a
 * timer. The seed of the operations is printed; {@code -Dsustainablecache.stress.seed=SEED}
 * replays the sequences (the interleaving is the scheduler's).
 */
final class CoalescingStressTest {

  private static final int THREADS = 8;
  private static final int KEYS = 40;
  private static final int OPERATIONS_PER_THREAD = 1_500;
  private static final int MAX_BATCH = 4;

  @ParameterizedTest(name = "fleetLease={0}")
  @ValueSource(booleans = {false, true})
  void eightThreadsMissingDifferentKeys_keepBatchBoundsFencesAndFlightEnds(boolean lease)
      throws InterruptedException {
    long seed = Long.getLong("sustainablecache.stress.seed", System.nanoTime());
    String replay = "seed " + seed + " (replay: -Dsustainablecache.stress.seed=" + seed + ")";
    System.out.println("CoalescingStressTest, fleetLease=" + lease + ": " + replay);

    AtomicLongArray versions = new AtomicLongArray(KEYS);
    AtomicInteger largestCall = new AtomicInteger();
    AtomicInteger calls = new AtomicInteger();
    AtomicInteger throwNext = new AtomicInteger();
    InMemoryStore store = InMemoryStore.create(Clock.systemUTC());
    LoadingSustainableCache<String> cache = SustainableCache.builder(store).namespace("s")
        .settings(CacheSettings.parse("refresh-policy=sustainable:1:1"))
        .ttl(Duration.ofSeconds(2)).codec(ValueCodec.utf8()).fleetLease(lease)
        .loadTimeout(Duration.ofSeconds(3)).failureBackoff(Duration.ofMillis(1))
        .random(FixedRandom.alwaysEarly()).refreshThreads(2).coalesce(MAX_BATCH)
        .build(keys -> {
          calls.incrementAndGet();
          largestCall.accumulateAndGet(keys.size(), Math::max);
          if (throwNext.get() > 0 && throwNext.decrementAndGet() >= 0) {
            throw new IllegalStateException("the database failed");
          }
          Map<String, String> values = new HashMap<>();
          for (String key : keys) {
            int index = Integer.parseInt(key.substring(1));
            values.put(key, key + "#" + versions.get(index));
          }
          Thread.yield();
          return values;
        });
    DefaultLoadingSustainableCache<String> engine =
        (DefaultLoadingSustainableCache<String>) cache;
    ConcurrentLinkedQueue<Flight<?>> flights = new ConcurrentLinkedQueue<>();
    engine.registry().onBegun(flights::add);
    /** Per key, the database version when its last invalidate returned. */
    AtomicLongArray floors = new AtomicLongArray(KEYS);
    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();

    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      Random random = new Random(seed + t);
      workers.add(new Thread(() -> {
        for (int i = 0; i < OPERATIONS_PER_THREAD; i++) {
          int index = random.nextInt(KEYS);
          String key = "k" + index;
          long floor = floors.get(index);
          int draw = random.nextInt(100);
          try {
            if (draw < 10) {
              versions.incrementAndGet(index);
              long version = versions.get(index);
              cache.invalidate(key);
              floors.accumulateAndGet(index, version, Math::max);
            } else if (draw < 12) {
              throwNext.incrementAndGet();
            } else if (draw < 40) {
              check(key, floor, cache.get(key), violations);
            } else if (draw < 60) {
              check(key, floor, cache.getAsync(key).get(10, TimeUnit.SECONDS), violations);
            } else if (draw < 70) {
              cache.find(key).ifPresent(value -> check(key, floor, value, violations));
            } else {
              List<String> keys = new ArrayList<>();
              long[] keyFloors = new long[KEYS];
              for (int j = 0; j < 1 + random.nextInt(6); j++) {
                int other = random.nextInt(KEYS);
                keyFloors[other] = floors.get(other);
                keys.add("k" + other);
              }
              cache.getAll(keys).forEach((k, value) ->
                  check(k, keyFloors[Integer.parseInt(k.substring(1))], value, violations));
            }
          } catch (CacheLoadException | java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause() instanceof CacheLoadException load ? load : e;
            String message = String.valueOf(cause.getMessage()) + " / "
                + (cause.getCause() == null ? "" : cause.getCause().getMessage());
            if (message.contains("gave up waiting") || message.contains("loadTimeout")) {
              unexpected.add(e); // a caller waited its whole bound: a stuck key
            } else if (!message.contains("the database failed")
                && !message.contains("ended without a value")) {
              unexpected.add(e);
            }
          } catch (Throwable e) {
            unexpected.add(e);
          }
        }
      }, "coalescing-stress-" + t));
    }
    workers.forEach(Thread::start);
    for (Thread worker : workers) {
      worker.join(TimeUnit.SECONDS.toMillis(60));
      assertThat(worker.isAlive()).as("a worker hung (" + replay + ")").isFalse();
    }

    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (flights.stream().anyMatch(f -> f.state() != Flight.State.ENDED)
        && System.nanoTime() < deadline) {
      Thread.sleep(10); // the last background refreshes end on the refresh threads
    }
    System.out.println("  " + cache.stats() + "; loader calls " + calls.get() + ", flights "
        + flights.size() + ", largest call " + largestCall.get());
    cache.close();

    assertThat(unexpected).as("unexpected failures (" + replay + ")").isEmpty();
    assertThat(violations).as("reads after invalidate that saw an older value (" + replay + ")")
        .isEmpty();
    assertThat(largestCall.get()).as("no call over maxBatchSize").isBetween(1, MAX_BATCH);
    assertThat(calls.get()).as("misses were coalesced: fewer calls than flights")
        .isLessThan(flights.size());
    assertThat(flights).as("every flight ended exactly once, through legal transitions ("
        + replay + ")").allSatisfy(flight -> {
          assertThat(flight.state()).isEqualTo(Flight.State.ENDED);
          assertThat(flight.refusedTransitions()).isZero();
        });
    assertThat(cache.stats().count("refresh_scheduled")).as("refreshes joined batches").isPositive();
  }

  private static void check(String key, long floor, String value,
      ConcurrentLinkedQueue<String> violations) {
    long version = Long.parseLong(value.substring(value.indexOf('#') + 1));
    if (version < floor) {
      violations.add(key + ": read " + value + " after an invalidate at version " + floor);
    }
  }
}
