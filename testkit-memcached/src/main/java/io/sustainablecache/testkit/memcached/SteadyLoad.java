package io.sustainablecache.testkit.memcached;

import io.sustainablecache.Loader;
import io.sustainablecache.SustainableCache;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * Steady traffic against one cache or several (application instances sharing a store): a few
 * threads, each calling {@code get} at a fixed rate, round robin over the keys and, a round of
 * the keys each, over the caches, recording what the callers see phase by phase (a phase is the interval between two
 * calls of {@link #nextPhase()}).
 *
 * <p>Each thread paces itself: it starts a request every {@code 1 / rate} seconds, and when a
 * request takes longer than that it starts the next one at once instead of bursting to catch up,
 * so a slow cache sees fewer requests rather than a pile-up. Every loop ends when the load is
 * stopped or, at the latest, after {@link #MAX_RUN}.
 */
final class SteadyLoad implements AutoCloseable {

  /** A hard bound on how long the threads run, should a test forget to stop them. */
  static final Duration MAX_RUN = Duration.ofMinutes(2);

  private static final Duration STOP_PATIENCE = Duration.ofSeconds(10);

  /** How long the lateness probe parks each time; see {@link FaultExperiment.Phase#maxLatenessNanos}. */
  static final Duration PROBE_PARK = Duration.ofMillis(5);

  private final List<SustainableCache<String>> caches;
  private final List<String> keys;
  private final Loader<String> loader;
  private final long periodNanos;
  private final List<Thread> threads = new ArrayList<>();
  private final AtomicInteger nextKey = new AtomicInteger();
  private final AtomicReference<Recorder> recorder = new AtomicReference<>(new Recorder());
  private volatile boolean running = true;

  private SteadyLoad(List<SustainableCache<String>> caches, List<String> keys,
      Loader<String> loader, int requestsPerSecondPerThread) {
    this.caches = List.copyOf(caches);
    this.keys = List.copyOf(keys);
    this.loader = loader;
    this.periodNanos = TimeUnit.SECONDS.toNanos(1) / requestsPerSecondPerThread;
  }

  /**
   * Starts the threads.
   *
   * @param loader the database: it must return {@link CountingLoader#valueOf} of the key
   * @param threadName the threads' name prefix
   */
  static SteadyLoad start(List<SustainableCache<String>> caches, List<String> keys,
      Loader<String> loader, int threads, int requestsPerSecondPerThread, String threadName) {
    SteadyLoad load = new SteadyLoad(caches, keys, loader, requestsPerSecondPerThread);
    for (int i = 0; i < threads; i++) {
      Thread thread = new Thread(load::run, threadName + "-" + i);
      thread.setDaemon(true);
      load.threads.add(thread);
    }
    Thread probe = new Thread(load::probeLateness, threadName + "-lateness");
    probe.setDaemon(true);
    load.threads.add(probe);
    load.threads.forEach(Thread::start);
    return load;
  }

  /**
   * Ends the current phase and starts the next one. Waits until the requests started in the
   * ending phase have returned, so that its numbers are complete.
   *
   * @return what the callers saw in the phase that ended
   */
  FaultExperiment.Phase nextPhase() {
    Recorder ended = recorder.getAndSet(new Recorder());
    return ended.awaitAndSummarize();
  }

  /**
   * Stops the threads and waits for them.
   *
   * @return the last phase
   */
  FaultExperiment.Phase stop() {
    running = false;
    for (Thread thread : threads) {
      try {
        thread.join(STOP_PATIENCE.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while stopping the load", e);
      }
      if (thread.isAlive()) {
        throw new IllegalStateException(thread.getName() + " did not stop within "
            + STOP_PATIENCE.toSeconds() + " s");
      }
    }
    return nextPhase();
  }

  @Override
  public void close() {
    if (running) {
      stop();
    }
  }

  private void run() {
    long deadline = System.nanoTime() + MAX_RUN.toNanos();
    long next = System.nanoTime();
    while (running && next - deadline < 0) {
      long wait = next - System.nanoTime();
      if (wait > 0) {
        // Pacing: the time between two requests of a fixed-rate client has to pass.
        LockSupport.parkNanos(wait);
        continue;
      }
      request();
      next = Math.max(next + periodNanos, System.nanoTime());
    }
  }

  /** Parks for {@link #PROBE_PARK} again and again, recording how late it woke up. */
  private void probeLateness() {
    long deadline = System.nanoTime() + MAX_RUN.toNanos();
    long park = PROBE_PARK.toNanos();
    while (running && System.nanoTime() - deadline < 0) {
      long before = System.nanoTime();
      LockSupport.parkNanos(park);
      long late = System.nanoTime() - before - park;
      recorder.get().maxLateness.accumulateAndGet(late, Math::max);
    }
  }

  private void request() {
    Recorder phase = enterPhase();
    try {
      // Round robin over the keys, shared by the threads: a repeatable load; each round of the
      // keys goes to the next cache (the next application instance).
      int n = nextKey.getAndIncrement();
      String key = keys.get(Math.floorMod(n, keys.size()));
      SustainableCache<String> cache = caches.get(Math.floorMod(n / keys.size(), caches.size()));
      Thread caller = Thread.currentThread();
      long started = System.nanoTime();
      try {
        String value = cache.get(key, k -> {
          if (Thread.currentThread() == caller) { // a miss this request leads; not a refresh
            phase.waitedBeforeLoad(System.nanoTime() - started);
          }
          return loader.load(k);
        });
        if (!CountingLoader.valueOf(key).equals(value)) {
          phase.wrongValues.increment();
        }
      } catch (RuntimeException | Error e) {
        phase.error(e);
      } finally {
        phase.latency(System.nanoTime() - started);
      }
    } finally {
      phase.requests.increment();
      phase.inFlight.decrementAndGet();
    }
  }

  /**
   * Registers a request with the current phase. Re-checking after the increment guarantees that
   * a phase that {@link #nextPhase()} is summarizing either sees the request in flight or never
   * gets it.
   */
  private Recorder enterPhase() {
    while (true) {
      Recorder phase = recorder.get();
      phase.inFlight.incrementAndGet();
      if (recorder.get() == phase) {
        return phase;
      }
      phase.inFlight.decrementAndGet(); // the phase ended meanwhile: count it in the next one
    }
  }

  /** The counters of one phase. */
  private static final class Recorder {

    final LongAdder requests = new LongAdder();
    final LongAdder wrongValues = new LongAdder();
    final LongAdder errors = new LongAdder();
    final AtomicLong maxLatency = new AtomicLong();
    final AtomicLong maxWaitBeforeLoad = new AtomicLong();
    final AtomicLong maxLateness = new AtomicLong();
    final AtomicReference<Throwable> firstError = new AtomicReference<>();
    final AtomicInteger inFlight = new AtomicInteger();

    void latency(long nanos) {
      maxLatency.accumulateAndGet(nanos, Math::max);
    }

    void waitedBeforeLoad(long nanos) {
      maxWaitBeforeLoad.accumulateAndGet(nanos, Math::max);
    }

    void error(Throwable e) {
      errors.increment();
      firstError.compareAndSet(null, e);
    }

    FaultExperiment.Phase awaitAndSummarize() {
      long deadline = System.nanoTime() + STOP_PATIENCE.toNanos();
      while (inFlight.get() > 0) {
        if (System.nanoTime() - deadline > 0) {
          throw new IllegalStateException("requests of the ending phase did not return within "
              + STOP_PATIENCE.toSeconds() + " s");
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
      }
      return new FaultExperiment.Phase(requests.sum(), errors.sum(), wrongValues.sum(), maxLatency.get(),
          maxWaitBeforeLoad.get(), firstError.get(), maxLateness.get());
    }
  }
}
