package io.sustainablecache;

import java.time.InstantSource;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.random.RandomGenerator;

/**
 * All per-key state of a cache in this JVM, in one map changed only through atomic {@code
 * compute} operations: the load in flight (a caller's miss or a refresh), and the key's recent
 * failures (its back-off). A key without either has no record.
 *
 * <p>The transitions, each one {@code compute} on the key:
 * <pre>
 *   (none)          --begin-->   (flight)              a load starts
 *   (flight)        --begin-->   (flight)              a miss joins it; a refresh is deduplicated;
 *                                                      the flight's own loader thread is refused
 *   (flight, f?)    --finish-->  (none) | (failure)    success forgets failures, failure records one
 *   (failure)       --begin-->   (failure)             within its back-off: misses fail fast,
 *                                                      refreshes are skipped
 *   (failure)       --begin-->   (flight, failure)     after it: a new load, counting on
 *   (flight, f?)    --timeout--> (f?)                  the flight is abandoned, its callers fail
 *   (any)           --detach-->  (none)                invalidate/put: the flight is voided
 *   (failure)       --sweep-->   (none)                a failure older than its window is forgotten
 * </pre>
 *
 * <p>Records are reclaimed by time, at O(1) cost per operation: a flight carries its own timeout
 * task; failure records go into a FIFO queue from which every {@code begin} and {@code finish}
 * sweeps at most two due entries, and a scheduled drain sweeps the rest when the cache is idle.
 * Thread-safe.
 */
final class KeyRegistry {

  /** A key whose loads failed {@code count} times in a row; no new load before notBefore. */
  record Failure(int count, long notBefore, Throwable cause, long forgetAt) {}

  private record KeyState(Flight<?> flight, Failure failure) {}

  private record Due(String storeKey, Failure failure) {}

  /** What {@link #begin} decided. */
  sealed interface Begin permits Started, Joined, Remembered, Busy, Recursive {}

  /** A new flight, registered; the caller must run it (or {@link #abandon} it). */
  record Started<V>(Flight<V> flight) implements Begin {}

  /** A miss joins the flight already loading the key. */
  record Joined<V>(Flight<V> flight) implements Begin {}

  /** A miss within the key's back-off: fail with the remembered failure. */
  record Remembered(Failure failure) implements Begin {}

  /** A refresh not started: a load is in flight, or the key is backing off. */
  record Busy(boolean backingOff) implements Begin {}

  /** The calling thread is inside the loader of this very key's flight. */
  record Recursive() implements Begin {}

  private static final Busy IN_FLIGHT = new Busy(false);
  private static final Busy BACKING_OFF = new Busy(true);
  private static final Recursive RECURSIVE = new Recursive();
  private static final int SWEEP_PER_OPERATION = 2;

  private final ConcurrentHashMap<String, KeyState> states = new ConcurrentHashMap<>();
  private final ConcurrentLinkedQueue<Due> forgetQueue = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean drainScheduled = new AtomicBoolean();
  private final InstantSource clock;
  private final Scheduler scheduler;
  private final RandomGenerator random;
  private final StatsCounter stats;
  private final long loadTimeoutMillis;
  private final long backoffBaseMillis;
  private final long backoffCapMillis;

  KeyRegistry(CacheConfig<?> config, StatsCounter stats) {
    this.clock = config.clock();
    this.scheduler = config.scheduler();
    this.random = config.random();
    this.stats = stats;
    this.loadTimeoutMillis = config.loadTimeout().toMillis();
    this.backoffBaseMillis = config.failureBackoff().toMillis();
    this.backoffCapMillis = Math.max(backoffBaseMillis, config.ttl().toMillis());
  }

  /**
   * Decides whether the caller starts a load of the key, joins one, or neither.
   *
   * @param casToken the token of the read that decided the load ({@code 0}: none, write with add)
   */
  <V> Begin begin(String key, String storeKey, Flight.Origin origin, long casToken, long now) {
    sweep(now, SWEEP_PER_OPERATION);
    Begin[] decided = new Begin[1];
    Flight<?>[] expired = new Flight<?>[1];
    states.compute(storeKey, (k, state) -> {
      Flight<?> flight = state == null ? null : state.flight();
      Failure failure = state == null ? null : state.failure();
      if (flight != null && now - flight.startedAt >= loadTimeoutMillis) {
        expired[0] = flight; // found past its timeout before the timer fired
        flight = null;
      }
      if (flight != null) {
        if (flight.loaderThread == Thread.currentThread()) {
          decided[0] = RECURSIVE;
        } else {
          decided[0] = origin == Flight.Origin.MISS ? new Joined<>(flight) : IN_FLIGHT;
        }
        return state;
      }
      if (failure != null && now < failure.notBefore()) {
        decided[0] = origin == Flight.Origin.MISS ? new Remembered(failure) : BACKING_OFF;
        return expired[0] == null ? state : new KeyState(null, failure);
      }
      Flight<V> started = new Flight<>(key, storeKey, origin, now, casToken);
      decided[0] = new Started<>(started);
      return new KeyState(started, failure);
    });
    if (expired[0] != null) {
      timedOut(expired[0]);
    }
    if (decided[0] instanceof Started<?> started) {
      scheduleTimeout(started.flight());
    }
    return decided[0];
  }

  /**
   * Deregisters a flight that ended (its write, if any, issued): a success forgets the key's
   * failures, a failure records one and starts or extends the key's back-off. A flight that is
   * no longer registered (voided, timed out) changes nothing.
   *
   * @param failure the load's failure, or {@code null} if it succeeded
   */
  void finish(Flight<?> flight, Throwable failure, long now) {
    cancelTimeout(flight);
    Failure[] recorded = new Failure[1];
    states.computeIfPresent(flight.storeKey, (k, state) -> {
      if (state.flight() != flight) {
        return state;
      }
      if (failure == null || backoffBaseMillis == 0) {
        return null;
      }
      recorded[0] = nextFailure(state.failure(), failure, now);
      return new KeyState(null, recorded[0]);
    });
    if (recorded[0] != null) {
      forgetQueue.add(new Due(flight.storeKey, recorded[0]));
      scheduleDrain(now);
    }
    sweep(now, SWEEP_PER_OPERATION);
  }

  /**
   * Deregisters a flight that never ran (its refresh was rejected, or it lost the fleet lease)
   * and completes it with {@link Loaded#notLoaded()}, so that joined callers read again.
   */
  <V> void abandon(Flight<V> flight) {
    cancelTimeout(flight);
    states.computeIfPresent(flight.storeKey, (k, state) -> state.flight() != flight
        ? state : state.failure() == null ? null : new KeyState(null, state.failure()));
    flight.result.complete(Loaded.notLoaded());
  }

  /**
   * Removes everything the registry holds for a key ({@code invalidate}, {@code put}): a flight
   * in flight is voided (its callers still get its result, but it writes nothing) and the key's
   * failures are forgotten. The next caller starts afresh.
   */
  void detach(String storeKey) {
    KeyState removed = states.remove(storeKey);
    if (removed != null && removed.flight() != null) {
      removed.flight().voided = true;
    }
  }

  /** {@link #detach} for every key ({@code invalidateAll}). */
  void detachAll() {
    for (String storeKey : states.keySet()) {
      detach(storeKey);
    }
  }

  /** The number of keys with a record; for tests and heap checks. */
  int size() {
    return states.size();
  }

  /** The flight registered for a key, or {@code null}; for tests. */
  Flight<?> flightOf(String storeKey) {
    KeyState state = states.get(storeKey);
    return state == null ? null : state.flight();
  }

  private void scheduleTimeout(Flight<?> flight) {
    try {
      flight.timeout = scheduler.schedule(() -> timedOut(flight), loadTimeoutMillis,
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // No timer: a stuck load is then released lazily, by the next begin() that finds it.
    }
  }

  private static void cancelTimeout(Flight<?> flight) {
    Future<?> timeout = flight.timeout;
    if (timeout != null) {
      timeout.cancel(false);
    }
  }

  /** A flight still running after the load timeout: release the key and fail its callers. */
  private void timedOut(Flight<?> flight) {
    states.computeIfPresent(flight.storeKey, (k, state) -> state.flight() != flight
        ? state : state.failure() == null ? null : new KeyState(null, state.failure()));
    flight.voided = true;
    CacheLoadException timeout = new CacheLoadException("the load did not complete within the"
        + " loadTimeout of " + loadTimeoutMillis + " ms; the key was released", null);
    if (flight.result.completeExceptionally(timeout)) {
      stats.increment(Counter.LOAD_TIMEOUT);
      stats.increment(Counter.LOAD_FAILURE);
    }
  }

  private Failure nextFailure(Failure previous, Throwable cause, long now) {
    int count = previous == null ? 1 : previous.count() + 1;
    long window = backoffBaseMillis;
    for (int i = 1; i < count && window < backoffCapMillis; i++) {
      window = Math.min(backoffCapMillis, window * 2);
    }
    long wait = Math.max(1, (long) (window * (0.5 + random.nextDouble())));
    long notBefore = now + wait;
    return new Failure(count, notBefore, cause, notBefore + backoffCapMillis);
  }

  /** Forgets up to {@code max} failure records that are due. */
  private void sweep(long now, int max) {
    for (int i = 0; i < max; i++) {
      Due head = forgetQueue.peek();
      if (head == null || head.failure().forgetAt() > now) {
        return;
      }
      Due due = forgetQueue.poll();
      if (due == null) {
        return;
      }
      if (due.failure().forgetAt() > now) { // another thread took the due head meanwhile
        forgetQueue.add(due);
        return;
      }
      states.computeIfPresent(due.storeKey(), (k, state) -> state.failure() != due.failure()
          ? state : state.flight() == null ? null : new KeyState(state.flight(), null));
    }
  }

  /** Keeps one drain task scheduled while records wait to be forgotten, for idle caches. */
  private void scheduleDrain(long now) {
    Due head = forgetQueue.peek();
    if (head == null || !drainScheduled.compareAndSet(false, true)) {
      return;
    }
    try {
      scheduler.schedule(this::drain, Math.max(0, head.failure().forgetAt() - now),
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      drainScheduled.set(false);
    }
  }

  private void drain() {
    long now = clock.millis();
    sweep(now, Integer.MAX_VALUE);
    drainScheduled.set(false);
    scheduleDrain(now);
  }
}
