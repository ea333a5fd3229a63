package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.internal.PerKeyStateHarness.LoadKind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The per-key state under real threads: eight threads hammer three keys of one cache with a random
 * mix of every operation (synchronous {@code get}/{@code find} whose loaders return a value, find
 * none, throw an exception or an {@link Error}; {@code getAsync}/{@code findAsync} whose stages
 * complete at once, fail, or are completed or failed later by another thread; {@code
 * invalidate}, {@code put}, running the queued refreshes and writes, steps of the fake clock
 * past the load timeout, and reads whose store read fails, which may share a load under the
 * outage reuse, on as by default), a fixed number of operations each, then the cache is driven to
 * quiescence and the invariants of {@link PerKeyStateHarness} are checked: one loader call per key
 * at a time unless a release came in between, no key left registered, no read after an
 * invalidate seeing an older load, every caller completing with a legitimate outcome.
 *
 * <p>Why on top of the model checks: {@link PerKeyStateModelCheckingTest} explores every
 * interleaving of a few operations but cannot mix blocking {@code get}s with loads that other
 * operations complete; here all of it runs together, thousands of times, on the real memory model
 * and the JIT's code. Not timing-based: each thread runs a fixed count of operations, and time in
 * the cache is the fake clock. A helper thread only keeps the run live: when no thread has
 * finished an operation since its last look, it completes one pending load, runs the queued tasks
 * and steps the clock, as a database, a pool and time would, so that a {@code get} waiting for a
 * load only other threads can finish never waits for the real-time bound of {@code loadTimeout}.
 *
 * <p>Each thread draws its operations from a {@link Random} seeded with the run's seed plus its
 * index; the seed is printed and named in every failure. {@code
 * -Dsustainablecache.stress.seed=SEED} replays the same operation sequences (the interleaving of
 * the threads is the scheduler's, so a failure may need a few runs to recur).
 */
final class PerKeyStateStressTest {

  private static final int THREADS = 8;
  private static final int KEYS = 3;
  private static final int OPERATIONS_PER_THREAD = 20_000;
  /** Helper looks in a row with no operation finished after which a thread counts as hung. */
  private static final int MAX_STALLED_LOOKS = 10_000;

  @ParameterizedTest(name = "fleetLease={0}")
  @ValueSource(booleans = {false, true})
  void eightThreadsHammeringThreeKeysWithEveryOperation_keepEveryPerKeyInvariant(boolean lease)
      throws InterruptedException {
    long seed = Long.getLong("sustainablecache.stress.seed", System.nanoTime());
    String replay = "seed " + seed + " (replay: -Dsustainablecache.stress.seed=" + seed + ")";
    System.out.println("PerKeyStateStressTest, fleetLease=" + lease + ": " + replay);

    PerKeyStateHarness harness = new PerKeyStateHarness(KEYS, lease);
    AtomicLong done = new AtomicLong();
    ConcurrentLinkedQueue<Throwable> crashes = new ConcurrentLinkedQueue<>();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      Random random = new Random(seed + t);
      Thread worker = new Thread(() -> {
        try {
          for (int i = 0; i < OPERATIONS_PER_THREAD; i++) {
            randomOperation(harness, random);
            done.incrementAndGet();
          }
        } catch (Throwable e) {
          crashes.add(e);
        }
      }, "stress-" + t);
      workers.add(worker);
    }
    workers.forEach(Thread::start);

    keepLiveUntilDone(harness, workers, done);
    List<Thread> hung = new ArrayList<>();
    for (Thread worker : workers) {
      worker.join(TimeUnit.SECONDS.toMillis(10)); // only reached alive if the helper gave up
      if (worker.isAlive()) {
        hung.add(worker);
      }
    }
    assertThat(hung).as(() -> "threads that never finished (" + replay + "):\n"
        + hung.stream().map(t -> t.getName() + Arrays.stream(t.getStackTrace())
            .map(frame -> "\n    at " + frame).collect(Collectors.joining()))
            .collect(Collectors.joining("\n"))).isEmpty();
    assertThat(crashes).as("the harness itself failed (" + replay + ")").isEmpty();

    harness.quiesce();
    System.out.println("  " + harness.cache.stats() + "; reads of a value written beyond the"
        + " invalidation fence (not violations): " + harness.lateWritesBeyondTheFence());
    assertThat(harness.violations()).as("invariant violations (" + replay + ")").isEmpty();
  }

  /** One operation on a random key, drawn with fixed weights. */
  private static void randomOperation(PerKeyStateHarness harness, Random random) {
    int key = random.nextInt(KEYS);
    int draw = random.nextInt(100);
    if (draw < 14) {
      harness.read(key, LoadKind.VALUE, random.nextBoolean());
    } else if (draw < 18) {
      harness.read(key, LoadKind.FAILURE, random.nextBoolean());
    } else if (draw < 20) {
      harness.read(key, LoadKind.ERROR, random.nextBoolean());
    } else if (draw < 23) {
      harness.read(key, LoadKind.ABSENT, true);
    } else if (draw < 31) {
      harness.readAsync(key, LoadKind.VALUE, random.nextBoolean());
    } else if (draw < 34) {
      harness.readAsync(key, LoadKind.FAILURE, random.nextBoolean());
    } else if (draw < 36) {
      harness.readAsync(key, LoadKind.ERROR, random.nextBoolean());
    } else if (draw < 46) {
      harness.readAsync(key, LoadKind.LATER, random.nextBoolean());
    } else if (draw < 56) {
      harness.completeLater(false);
    } else if (draw < 60) {
      harness.completeLater(true);
    } else if (draw < 68) {
      harness.invalidate(key);
    } else if (draw < 73) {
      harness.put(key);
    } else if (draw < 79) {
      harness.runRefreshes();
    } else if (draw < 81) {
      harness.tick();
    } else if (draw < 87) {
      // the key's node is down for this read: it may share a load (outage reuse, on)
      harness.readWithTheStoreDown(key, random.nextInt(4) == 0 ? LoadKind.FAILURE
          : random.nextBoolean() ? LoadKind.VALUE : LoadKind.LATER, random.nextBoolean(),
          true);
    } else if (draw < 91) {
      harness.readWithTheStoreDown(key, random.nextInt(4) == 0 ? LoadKind.FAILURE
          : LoadKind.VALUE, random.nextBoolean(), false);
    } else {
      harness.read(key, LoadKind.VALUE, false); // hits, mostly: the common case
    }
  }

  /**
   * Until every worker has finished: whenever no operation finished since the last look,
   * completes one pending load, runs the queued tasks and steps the clock. Gives up after
   * {@link #MAX_STALLED_LOOKS} looks in a row without progress: a thread is hung.
   */
  private static void keepLiveUntilDone(PerKeyStateHarness harness, List<Thread> workers,
      AtomicLong done) {
    long seen = -1;
    int stalled = 0;
    while (workers.stream().anyMatch(Thread::isAlive) && stalled < MAX_STALLED_LOOKS) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
      long now = done.get();
      if (now == seen) {
        stalled++;
        harness.completeLater(false);
        harness.runRefreshes();
        harness.tick();
      } else {
        stalled = 0;
      }
      seen = now;
    }
  }
}
