package io.sustainablecache.internal;

import io.sustainablecache.CacheLoadException;
import io.sustainablecache.Scheduler;
import io.sustainablecache.Ticker;
import java.time.InstantSource;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.ObjLongConsumer;

/**
 * All per-key state of a cache in this JVM, in one map changed only through atomic {@code
 * compute} operations: the load in flight (a caller's miss or a refresh), the key's recent
 * failures (its back-off), a lost fleet lease, and another instance's failure marker as this one
 * first saw it. A key without any has no record.
 *
 * <p>The transitions, each one {@code compute} on the key:
 * <pre>
 *   (none)          --begin-->   (flight)              a load starts
 *   (flight)        --begin-->   (flight)              a miss joins it; a refresh is deduplicated;
 *                                                      the flight's own loader thread is refused
 *   (flight)        --begin-->   (flight')             a miss that read a newer tombstone
 *                                                      supersedes it
 *   (flight)        --begin-->   (flight)              a miss whose store read failed after it
 *                                                      registered waits for it to end, then
 *                                                      begins again (see below)
 *   (flight, f?)    --end(Succeeded|PeerDelivered|Failed)--> (none) | (failure)
 *                                                      success forgets failures, failure records one
 *   (flight, f?)    --end(NotLoaded)--> (f?)           it ended without loading: callers read again
 *   (flight, f?)    --end(PeerFailed)--> (failure)     a miss lost the fleet lease to another
 *                                                      instance's failed load: its failure is adopted
 *   (failure)       --begin-->   (failure)             within its back-off: misses fail fast,
 *                                                      refreshes are skipped
 *   (failure)       --begin-->   (flight, failure)     after it: a new load, counting on
 *   (flight, f?)    --timeout--> (f?)                  the flight is abandoned, its callers fail
 *   (any)           --detach-->  (none)                invalidate/put: the flight is voided
 *   (failure)       --sweep-->   (none)                a failure older than its window is forgotten
 *   (any)           --sighted--> (any, sighting)      another instance's failure marker, first
 *                                                      seen by the fleet lease, recorded by the
 *                                                      pipeline (kept while the same one is seen)
 *   (flight)        --end(Succeeded)--> (recent)       a load a failed read awaited is remembered
 *   (recent)        --begin-->   (recent)              a miss whose store read failed, begun before
 *                                                      that load registered, joins it (its value)
 *   (recent)        --sweep-->   (none)                once no read begun before it can be running
 *                                                      (its own queue: see below)
 * </pre>
 *
 * <p>Time: every local duration (a flight's load timeout, a back-off, when a record is
 * forgotten) is on the cache's ticker, in milliseconds ({@link #tickMillis}); the wall clock only
 * for what meets other hosts' time (a tombstone's time, the fleet lease's end, a failure
 * marker's end).
 *
 * <p>A read that fails on the store is a miss without a tombstone to fence it: it cannot see an
 * invalidation by another host. Under a store that times out (a starved client I/O thread),
 * every such read would otherwise load: one loader call per caller instead of per key. So it
 * shares a load of the key, the one in flight or else the key's last load that a failed read
 * awaited (completed: its value), if either
 * <ul>
 *   <li>that load was registered after the read began ({@link #readMark}): its loader read the
 *       data after the read began, so after any invalidation that returned before it; the read
 *       sees no older value than a load of its own would; or</li>
 *   <li>that load was registered less than {@code Δ} ago (on the ticker), {@code Δ} being the
 *       larger of the outage reuse ({@code outageReuse}, default 50 ms) and the near cache's
 *       bound: a change whose invalidation returned after the load started is then served at
 *       most {@code Δ} after that return (with a near cache, its own promise). It covers reads
 *       that fail at once (a node whose breaker is open, a client whose queue is full): without
 *       it they would load once per load time per key, with it at most once per {@code Δ}
 *       (issue 31: at most 20 loads per second per hot key with the default).</li>
 * </ul>
 * Otherwise it loads itself, but never beside a flight in flight: it waits for that flight to end
 * ({@link After}) and begins again, so one load per key at a time holds under store failures too
 * (a read on that flight's own loader thread is refused as a recursive load). A burst of reads
 * that time out began before the load their first failure starts, so it still costs one load per
 * key; reads that fail after a load registered cost one more load, after it.
 *
 * <p>A completed load is remembered only for as long as a read begun before it registered can
 * still be running (the synchronous API's wait, {@code loadTimeout + 1 s} from its start), for at
 * most {@link #MAX_REMEMBERED_LOADS} keys at once; {@code invalidate}, {@code put} and {@code
 * invalidateAll} on this instance forget it.
 *
 * <p>Records are reclaimed by time, at O(1) cost per operation: a flight carries its own timeout
 * task; failure records, lease losses and sightings go into a FIFO forget queue, remembered loads
 * into one of their own; every {@code begin} and {@code finish} sweeps at most two due entries
 * from each, and a scheduled drain sweeps the rest when the cache is idle. The remembered loads
 * have a queue of their own because they all live {@code loadTimeout + 1 s} from their load's
 * start and are queued as their loads finish, within {@code loadTimeout} of that start: a sweep,
 * which stops at the first entry not yet due, reaches each one by {@code loadTimeout + 1 s} after
 * its load finished, never held behind a failure record or a sighting that lives a minute.
 * Thread-safe.
 */
final class KeyRegistry {

  /** A record the registry forgets at {@code forgetAt} (ticker ms) unless it was replaced. */
  private interface Forgettable {
    long forgetAt();
  }

  /**
   * A key whose loads failed {@code count} times in a row; no new load before {@code notBefore}
   * (ticker ms), which is {@code notBeforeEpoch} on the wall clock (what a failure marker tells
   * other hosts). If the failed load held the fleet lease, this instance keeps it until {@code
   * leaseUntil} (epoch ms; so the other instances do not retry the failing database meanwhile)
   * and may load under it again.
   */
  record Failure(int count, long notBefore, long notBeforeEpoch, Throwable cause, long forgetAt,
      long leaseUntil) implements Forgettable {}

  /**
   * This instance lost the key's fleet lease while the item had {@code casToken}; winning it
   * later with the item unchanged means the holder never wrote (a lease taken over).
   */
  private record LeaseLoss(long casToken, long forgetAt) implements Forgettable {}

  /**
   * Another instance's failure marker for the key, first seen by this instance at {@code
   * seenAt} (ticker milliseconds), remembered until {@code forgetAt} (ticker ms). The fleet lease
   * makes one when it meets a marker it did not know ({@link FleetLease}), and the pipeline
   * records it here ({@link #sighted}) from the lease's step.
   */
  record Sighting(LeaseValues.FailureMarker marker, long seenAt, long forgetAt)
      implements Forgettable {}

  /**
   * What this instance knows of a key's fleet lease, read by the pipeline before it takes the
   * lease and handed to {@link FleetLease} (which never reads the registry itself): until when
   * (epoch ms) this instance still holds the lease from a load that failed ({@code 0}: it does
   * not; compare with the wall clock), and the last other instance's failure marker it saw
   * ({@code null}: none).
   */
  record LeaseMemo(long heldUntil, Sighting seen) {
    /** Nothing known. */
    static final LeaseMemo NONE = new LeaseMemo(0, null);
  }

  /**
   * The last load of the key that a read failed on the store awaited ({@link
   * Flight#isAwaitedByFailedRead}), completed with a value; a failed read begun before it was
   * registered may take that value until {@code forgetAt} (ticker ms).
   */
  private record Recent(Flight<?> flight, long forgetAt) implements Forgettable {}

  private record KeyState(Flight<?> flight, Failure failure, LeaseLoss leaseLoss,
      Sighting sighting, Recent recent) {
    KeyState(Flight<?> flight, Failure failure, LeaseLoss leaseLoss) {
      this(flight, failure, leaseLoss, null, null);
    }

    KeyState withFlight(Flight<?> newFlight) {
      return of(newFlight, failure, leaseLoss, sighting, recent);
    }

    KeyState withFailure(Failure newFailure) {
      return of(flight, newFailure, leaseLoss, sighting, recent);
    }

    KeyState withLeaseLoss(LeaseLoss newLoss) {
      return of(flight, failure, newLoss, sighting, recent);
    }

    KeyState without(Forgettable record) {
      return of(flight, failure == record ? null : failure,
          leaseLoss == record ? null : leaseLoss, sighting == record ? null : sighting,
          recent == record ? null : recent);
    }

    /**
     * {@code null} (no record) when nothing is left; the key's sighting and remembered load, if
     * any, are kept.
     */
    KeyState with(Flight<?> newFlight, Failure newFailure, LeaseLoss newLoss) {
      return of(newFlight, newFailure, newLoss, sighting, recent);
    }

    /** As {@link #with}, with the key's remembered load replaced. */
    KeyState with(Flight<?> newFlight, Failure newFailure, LeaseLoss newLoss, Recent newRecent) {
      return of(newFlight, newFailure, newLoss, sighting, newRecent);
    }

    /** {@code null} (no record) when nothing is left. */
    static KeyState of(Flight<?> flight, Failure failure, LeaseLoss leaseLoss,
        Sighting sighting, Recent recent) {
      return flight == null && failure == null && leaseLoss == null && sighting == null
          && recent == null ? null : new KeyState(flight, failure, leaseLoss, sighting, recent);
    }
  }

  /**
   * An entry of a forget queue: look at the key's {@code record} at {@code forgetAt} (ticker ms).
   * In the queue of remembered loads {@code record} is {@code null}: the entry holds no value
   * (a load that replaced the key's last one adds its own entry), it says when to look at the
   * key's remembered load.
   */
  private record Due(String storeKey, long forgetAt, Forgettable record) {
    Due(String storeKey, Forgettable record) {
      this(storeKey, record.forgetAt(), record);
    }
  }

  /** What {@link #begin} decided. */
  sealed interface Begin permits Started, Joined, After, Remembered, Busy, Recursive {}

  /** A new flight, registered; the caller must run it (or {@link #end} it). */
  record Started<V>(Flight<V> flight) implements Begin {}

  /** A miss joins the flight already loading the key. */
  record Joined<V>(Flight<V> flight) implements Begin {}

  /**
   * A miss whose store read failed after {@code flight} registered (and, with a near cache, more
   * than the bound after): it may not share that flight's value, since its loader may have read
   * the data before a change on another host that this read could not see, nor load beside it
   * (one load per key at a time): it begins again once the flight has ended.
   */
  record After<V>(Flight<V> flight) implements Begin {}

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
  /**
   * At most this many keys' loads are remembered for reads that failed on the store, so that a
   * store outage under a stream of distinct keys holds a bounded heap: at most this many values
   * (of up to {@code maxValueSize} bytes encoded: about 1 GiB at the default), each for {@code
   * loadTimeout + 1 s} from its load's start.
   */
  static final int MAX_REMEMBERED_LOADS = 1_024;

  private final ConcurrentHashMap<String, KeyState> states = new ConcurrentHashMap<>();
  /** Failure records, lease losses and sightings, in the order they were made. */
  private final ConcurrentLinkedQueue<Due> forgetQueue = new ConcurrentLinkedQueue<>();
  /** When to look at a key's remembered load, in the order the loads finished. */
  private final ConcurrentLinkedQueue<Due> rememberedQueue = new ConcurrentLinkedQueue<>();
  /** When the next drain is due (ticker ms); {@code Long.MAX_VALUE} for none scheduled. */
  private final AtomicLong drainAt = new AtomicLong(Long.MAX_VALUE);
  /**
   * Flights superseded by a miss that saw a possibly newer tombstone or whose store read failed
   * after they registered (see {@link #begin}).
   */
  private final AtomicLong superseded = new AtomicLong();
  /** Numbers flights in the order they are registered; see {@link #readMark}. */
  private final AtomicLong sequence = new AtomicLong();
  /** How many keys have a {@link Recent} load. */
  private final AtomicInteger remembered = new AtomicInteger();
  /** How long a {@link Recent} load is kept: the synchronous API's longest wait for a read. */
  private final long rememberMillis;
  /** The near cache's bound in milliseconds (on the ticker); 0 without a near cache. */
  private final long shareMillis;
  private final InstantSource clock;
  private final Ticker ticker;
  private final Scheduler scheduler;
  private final StatsCounter stats;
  private final long loadTimeoutMillis;
  private final Backoff backoff;
  private final long maxSkewMillis;
  /** Told of every flight registered, for the model checks; {@code null}: nobody. */
  private volatile Consumer<Flight<?>> begun;

  KeyRegistry(CacheConfig<?> config, StatsCounter stats) {
    this.clock = config.clock();
    this.ticker = config.ticker();
    this.scheduler = config.scheduler();
    this.stats = stats;
    this.loadTimeoutMillis = config.loadTimeout().toMillis();
    this.backoff = new Backoff(config);
    this.maxSkewMillis = config.maxClockSkew().toMillis();
    this.rememberMillis = config.syncWait().toMillis();
    // A failed read may share a load registered this long before it began: the near cache's
    // bound where there is one, and at least the outage reuse (issue 31: the database protected
    // while the store is out).
    this.shareMillis = Math.max(config.outageReuse().toMillis(),
        config.nearStaleness() == null ? 0 : config.nearStaleness().toMillis());
  }

  /**
   * Taken before a store read: if the read fails, a load registered after this mark may answer
   * it ({@link LoadRequest#failedReadMark}). One volatile read.
   */
  long readMark() {
    return sequence.get();
  }

  /**
   * Decides whether a read's load request starts a load of the key, joins one, or neither (see
   * {@link #begin(String, String, Flight.Origin, long, long, long)}).
   */
  <V> Begin begin(LoadRequest<V> request, Flight.Origin origin, long now) {
    return begin(request.key(), request.storeKey(), origin, request.casToken(), now,
        request.tombstoneAt(), request.failedReadMark(), request.fenced());
  }

  /** {@link #begin(LoadRequest, Flight.Origin, long)} of a read that did not fail. */
  <V> Begin begin(String key, String storeKey, Flight.Origin origin, long casToken, long now,
      long tombstoneAt) {
    return begin(key, storeKey, origin, casToken, now, tombstoneAt, LoadRequest.READ_OK, false);
  }

  /**
   * Decides whether the caller starts a load of the key, joins one, or neither. For a miss whose
   * read found a tombstone written at {@code tombstoneAt} (epoch milliseconds of the invalidating
   * host; -1 for none) with token {@code casToken}: if the key's flight was decided from an older
   * version of the item (memcached's CAS tokens grow with every change of the server's items),
   * the key was invalidated, on some host, after that flight read it, and its loader may have
   * read the data before it changed: the miss does not join it. The old flight is voided (its
   * callers still get its result; it writes nothing) and a new one starts. A tombstone written more
   * than {@code maxClockSkew} before the flight started is not taken for a newer one (a reader that
   * stalled since its read). The rule is conservative: a flight that read nothing has token 0, so a
   * reader that read a tombstone, stalled, and comes back after the tombstone expired and a new
   * flight started (within {@code maxClockSkew} of the tombstone) supersedes that flight, and the
   * key is loaded twice at once; {@link #supersededCount} counts these.
   *
   * <p>A miss whose store read failed ({@code failedReadMark} is the {@link #readMark} taken
   * before it) joins the key's flight, or else takes the key's remembered load, if that load was
   * registered after that mark or, with a near cache, less than its bound ago (see the class
   * comment); a flight it may not share it waits for ({@link After}: not a second load of the key
   * at once), unless it is the flight's own loader thread (a recursive load); with no flight it
   * starts one, which it marks so that its value is remembered. A miss whose read found a write
   * fence ({@code fenced}) carries its read's mark as well and shares by the same rule, except
   * that the near cache's bound does not widen it and its load is not remembered.
   */
  private <V> Begin begin(String key, String storeKey, Flight.Origin origin, long casToken,
      long now, long tombstoneAt, long failedReadMark, boolean fenced) {
    boolean failedRead = origin == Flight.Origin.MISS && failedReadMark != LoadRequest.READ_OK;
    sweep(tickMillis(), SWEEP_PER_OPERATION);
    Begin[] decided = new Begin[1];
    Flight<?>[] expired = new Flight<?>[1];
    states.compute(storeKey, (k, state) -> {
      // The time of the registration itself: the caller's `now` may be stale (a thread descheduled
      // since it read the clock), and a flight registered with a start in the past would look
      // timed out to the next caller, which would load the key a second time. The ticker dates
      // the flight for its timeout; the wall clock, for comparing with another host's tombstone.
      long at = Math.max(now, clock.millis());
      long tick = tickMillis();
      Flight<?> flight = state == null ? null : state.flight();
      Failure failure = state == null ? null : state.failure();
      if (flight != null && tick - flight.startedTick >= loadTimeoutMillis) {
        expired[0] = flight; // found past its timeout before the timer fired
        flight = null;
      }
      if (flight != null && !flight.inLoader(Thread.currentThread())
          && tombstoneAt >= 0 && casToken > flight.casToken
          && tombstoneAt + maxSkewMillis >= flight.startedAt) { // invalidated after it read
        flight.voidIt(); // superseded: its loader may have read the data before a change
        superseded.incrementAndGet();
        flight = null;
      }
      if (flight != null && failedRead && !flight.inLoader(Thread.currentThread())
          && !mayShare(flight, failedReadMark, tick, fenced)) {
        if (!flight.hasOutcome()) {
          // its loader may have read the data before a change this read cannot see, and loading
          // beside it would load the key twice at once: begin again once it has ended
          decided[0] = new After<>(flight);
          return state;
        }
        flight = null; // ended, not yet deregistered: replaced by this read's own flight
      }
      if (flight != null) {
        if (flight.inLoader(Thread.currentThread())) {
          decided[0] = RECURSIVE;
        } else {
          decided[0] = origin == Flight.Origin.MISS ? new Joined<>(flight) : IN_FLIGHT;
          if (failedRead && !fenced) {
            flight.awaitedByFailedRead();
          }
        }
        return state;
      }
      Recent recent = state == null ? null : state.recent();
      if (failedRead && recent != null && tick < recent.forgetAt()
          && mayShare(recent.flight(), failedReadMark, tick, fenced)) {
        decided[0] = new Joined<>(recent.flight()); // completed: its value
        return expired[0] == null ? state : state.withFlight(null);
      }
      if (failure != null && tick < failure.notBefore()) {
        decided[0] = origin == Flight.Origin.MISS ? new Remembered(failure) : BACKING_OFF;
        return expired[0] == null ? state : state.withFlight(null);
      }
      Flight<V> started = new Flight<>(key, storeKey, origin, at, tick, casToken,
          sequence.incrementAndGet(), fenced, !failedRead);
      if (failedRead && !fenced) { // a fenced load's value may predate a commit: not remembered
        started.awaitedByFailedRead();
      }
      decided[0] = new Started<>(started);
      return state == null ? new KeyState(started, null, null) : state.withFlight(started);
    });
    if (expired[0] != null) {
      timedOut(expired[0]);
    }
    if (decided[0] instanceof Started<?> started) {
      if (failedRead) {
        stats.increment(Counter.OUTAGE_LOAD);
      }
      scheduleTimeout(started.flight());
      Consumer<Flight<?>> listener = begun;
      if (listener != null) {
        listener.accept(started.flight());
      }
    }
    return decided[0];
  }

  /**
   * Ends a flight the pipeline ran, for the reason given: the one way it deregisters a flight
   * (the registry ends flights that time out itself, {@link #detach} voids them). A flight that is
   * no longer registered (voided, timed out) changes nothing, except that {@link Ending.NotLoaded}
   * still completes it without a value.
   *
   * @return the failure record this made ({@link Ending.Failed} with back-off on, or {@link
   *     Ending.PeerFailed}), or {@code null}
   */
  Failure end(Flight<?> flight, Ending ending) {
    if (ending instanceof Ending.Failed failed) {
      return finish(flight, failed.cause(), clock.millis());
    }
    if (ending instanceof Ending.PeerFailed peer) {
      return finishRemembered(flight, peer.count(), peer.notBefore(), peer.cause(), peer.now());
    }
    if (ending instanceof Ending.NotLoaded) {
      abandon(flight);
      return null;
    }
    return finish(flight, null, clock.millis()); // Succeeded, PeerDelivered
  }

  /**
   * Deregisters a flight that ended (its write, if any, issued): a success forgets the key's
   * failures, and is remembered if a read that failed on the store awaited it (see the class
   * comment); a failure records one and starts or extends the key's back-off. A flight that is
   * no longer registered (voided, timed out) changes nothing.
   *
   * @param failure the load's failure, or {@code null} if it succeeded
   * @param now the wall clock, epoch milliseconds (for the fleet lease a failure keeps)
   * @return the failure record this finish made, or {@code null} (a success, no back-off, or a
   *     flight no longer registered)
   */
  private Failure finish(Flight<?> flight, Throwable failure, long now) {
    cancelTimeout(flight);
    long tick = tickMillis();
    Failure[] recorded = new Failure[1];
    Recent[] remembers = new Recent[1];
    states.computeIfPresent(flight.storeKey, (k, state) -> {
      if (state.flight() != flight) {
        return state;
      }
      if (failure == null || !backoff.enabled()) {
        Recent recent = state.recent();
        if (failure == null && flight.isAwaitedByFailedRead() && flight.loadedValue()
            && (recent != null || mayRemember())) {
          recent = remembers[0] = new Recent(flight, flight.startedTick + rememberMillis);
        }
        return state.with(null, null, state.leaseLoss(), recent);
      }
      recorded[0] = backoff.next(live(state.failure(), tick), failure, now, tick, flight);
      return state.with(null, recorded[0], state.leaseLoss());
    });
    if (recorded[0] != null) {
      forgetQueue.add(new Due(flight.storeKey, recorded[0]));
    }
    if (remembers[0] != null) {
      rememberedQueue.add(new Due(flight.storeKey, remembers[0].forgetAt(), null));
    }
    if (recorded[0] != null || remembers[0] != null) {
      scheduleDrain(tick);
    }
    sweep(tick, SWEEP_PER_OPERATION);
    return recorded[0];
  }

  /**
   * Deregisters a flight that never ran (its refresh was rejected, or it lost the fleet lease)
   * and completes it with {@link Loaded#notLoaded()}, so that joined callers read again.
   */
  private <V> void abandon(Flight<V> flight) {
    cancelTimeout(flight);
    states.computeIfPresent(flight.storeKey, (k, state) -> state.flight() != flight
        ? state : state.withFlight(null));
    flight.endUnloaded();
  }

  /**
   * Removes everything the registry holds for a key ({@code invalidate}, {@code put}): a flight
   * in flight is voided (its callers still get its result, but it writes nothing) and the key's
   * failures and its remembered load are forgotten. The next caller starts afresh.
   */
  void detach(String storeKey) {
    KeyState removed = states.remove(storeKey);
    if (removed != null && removed.flight() != null) {
      removed.flight().voidIt();
    }
    if (removed != null && removed.recent() != null) {
      remembered.decrementAndGet();
    }
  }

  /** What this instance knows of the key's fleet lease (see {@link LeaseMemo}). One read. */
  LeaseMemo leaseMemo(String storeKey) {
    KeyState state = states.get(storeKey);
    if (state == null || state.failure() == null && state.sighting() == null) {
      return LeaseMemo.NONE;
    }
    return new LeaseMemo(state.failure() == null ? 0 : state.failure().leaseUntil(),
        state.sighting());
  }

  /**
   * Deregisters a miss's flight that will not load because another instance's load of the key
   * failed (its fleet lease says so) and records that failure here, so that this instance backs
   * off too: {@code count} failures in a row, no load before {@code notBefore} (epoch ms on
   * another host's clock; at most the back-off cap from {@code now}, this host's wall clock: the
   * time comes from another host, or from a planted item). A later failure of this instance
   * counts on from {@code count}.
   *
   * @return the failure recorded, or {@code null} if the flight was no longer registered
   */
  private Failure finishRemembered(Flight<?> flight, int count, long notBefore, Throwable cause,
      long now) {
    cancelTimeout(flight);
    long tick = tickMillis();
    Failure[] recorded = new Failure[1];
    states.computeIfPresent(flight.storeKey, (k, state) -> {
      if (state.flight() != flight) {
        return state;
      }
      recorded[0] = backoff.remembered(live(state.failure(), tick), count, notBefore, cause,
          now, tick);
      return state.with(null, recorded[0], state.leaseLoss());
    });
    if (recorded[0] != null) {
      forgetQueue.add(new Due(flight.storeKey, recorded[0]));
      scheduleDrain(tick);
    }
    return recorded[0];
  }

  /**
   * Records {@code sighting}, another instance's failure marker under the key's fleet lease as
   * the lease judged it (see {@link Sighting}): the first sighting of a marker is kept (the
   * earlier of two, if two flights of the key met the same marker at once), and a different
   * marker replaces it. Recording the sighting the key already has changes nothing.
   */
  void sighted(String storeKey, Sighting sighting) {
    boolean[] added = new boolean[1];
    states.compute(storeKey, (k, state) -> {
      Sighting seen = state == null ? null : state.sighting();
      if (seen != null && seen.marker().sameAs(sighting.marker())
          && seen.seenAt() <= sighting.seenAt()) {
        return state;
      }
      added[0] = true;
      return state == null ? KeyState.of(null, null, null, sighting, null)
          : KeyState.of(state.flight(), state.failure(), state.leaseLoss(), sighting,
              state.recent());
    });
    if (added[0]) {
      long tick = tickMillis();
      forgetQueue.add(new Due(storeKey, sighting));
      scheduleDrain(tick);
    }
  }

  /**
   * Remembers, for {@code rememberMillis}, that this instance lost the key's lease while the item
   * had {@code casToken}.
   */
  void leaseLost(String storeKey, long casToken, long rememberMillis) {
    long tick = tickMillis();
    LeaseLoss loss = new LeaseLoss(casToken, tick + rememberMillis);
    states.compute(storeKey, (k, state) -> state == null
        ? new KeyState(null, null, loss) : state.withLeaseLoss(loss));
    forgetQueue.add(new Due(storeKey, loss));
    scheduleDrain(tick);
  }

  /** The ticker now, in milliseconds: the time of every local duration of this cache's keys. */
  long tickMillis() {
    return CacheConfig.millis(ticker);
  }

  /**
   * This instance won the key's lease for a load that read {@code casToken}: forgets an earlier
   * loss, and tells whether that loss was of the same item version (a takeover: the holder then
   * never wrote).
   */
  boolean leaseWon(String storeKey, long casToken) {
    boolean[] takeover = new boolean[1];
    states.computeIfPresent(storeKey, (k, state) -> {
      if (state.leaseLoss() == null) {
        return state;
      }
      takeover[0] = state.leaseLoss().casToken() == casToken;
      return state.withLeaseLoss(null);
    });
    return takeover[0];
  }

  /**
   * How many flights a miss superseded so far (it read a newer tombstone): each started a second
   * load of its key while the superseded one's loader may still run. Conservative by design (see {@link #begin}); the stress
   * test's one-loader-per-key invariant allows these.
   */
  long supersededCount() {
    return superseded.get();
  }

  /** {@link #detach} for every key ({@code invalidateAll}). */
  void detachAll() {
    for (String storeKey : states.keySet()) {
      detach(storeKey);
    }
  }

  /**
   * {@code failure} unless its window has passed ({@code null}): the forget queue is swept in
   * insertion order, and records of different lengths (a failure's, a lease loss's, a sighting's)
   * share it, so a record may outlive its window until the sweep reaches it; a failure found so
   * counts no more.
   */
  private static Failure live(Failure failure, long tick) {
    return failure != null && failure.forgetAt() <= tick ? null : failure;
  }

  /**
   * Whether a read that failed on the store (or found a write fence) after taking {@code
   * failedReadMark} may have {@code flight}'s value (see the class comment): the flight registered
   * after the read began, or, with a near cache, less than its bound ago ({@code tick} is now,
   * ticker ms) unless the read found a fence (a fence's token is unchanged after a commit whose
   * release failed, so a flight registered before the read began may have read the row before a
   * commit that returned before it; on the writer's instance the near bound does not excuse that).
   */
  private boolean mayShare(Flight<?> flight, long failedReadMark, long tick, boolean fenced) {
    return flight.sequence > failedReadMark
        || !fenced && shareMillis != 0 && tick - flight.startedTick < shareMillis;
  }

  /** Counts one more key with a remembered load, unless there are enough already. */
  private boolean mayRemember() {
    if (remembered.incrementAndGet() <= MAX_REMEMBERED_LOADS) {
      return true;
    }
    remembered.decrementAndGet();
    return false;
  }

  /** The number of keys with a record; for tests and heap checks. */
  int size() {
    return states.size();
  }

  /** How many keys have a remembered load; for tests. */
  int rememberedCount() {
    return remembered.get();
  }

  /**
   * Tells {@code listener} of every flight registered from now on, on the registering thread; for
   * the model checks, which check that each one ends exactly once in a legal sequence of states.
   */
  void onBegun(Consumer<Flight<?>> listener) {
    begun = listener;
  }

  /** The flight registered for a key, or {@code null}; for tests. */
  Flight<?> flightOf(String storeKey) {
    KeyState state = states.get(storeKey);
    return state == null ? null : state.flight();
  }

  private void scheduleTimeout(Flight<?> flight) {
    try {
      flight.timeoutTask(scheduler.schedule(() -> timedOut(flight), loadTimeoutMillis,
          TimeUnit.MILLISECONDS));
    } catch (RejectedExecutionException e) {
      // No timer: a stuck load is then released lazily, by the next begin() that finds it.
    }
  }

  private static void cancelTimeout(Flight<?> flight) {
    flight.cancelTimeout();
  }

  /** A flight still running after the load timeout: release the key and fail its callers. */
  private void timedOut(Flight<?> flight) {
    states.computeIfPresent(flight.storeKey, (k, state) -> state.flight() != flight
        ? state : state.withFlight(null));
    flight.voidIt();
    CacheLoadException timeout = new CacheLoadException("the load did not complete within the"
        + " loadTimeout of " + loadTimeoutMillis + " ms; the key was released", null);
    if (flight.fail(timeout)) {
      if (flight.origin == Flight.Origin.REFRESH && !flight.loadStarted()) {
        // the executor accepted the refresh and never ran it (or it is still queued): no load
        // failed, a refresh was dropped
        stats.increment(Counter.REFRESH_REJECTED);
      } else {
        stats.increment(Counter.LOAD_TIMEOUT);
        stats.increment(Counter.LOAD_FAILURE);
      }
    }
  }

  /** Forgets up to {@code max} due entries of each forget queue by {@code now} (ticker ms). */
  private void sweep(long now, int max) {
    sweep(forgetQueue, now, max, this::forgetRecord);
    sweep(rememberedQueue, now, max, this::forgetRemembered);
  }

  private static void sweep(Queue<Due> queue, long now, int max, ObjLongConsumer<Due> forget) {
    for (int i = 0; i < max; i++) {
      Due head = queue.peek();
      if (head == null || head.forgetAt() > now) {
        return;
      }
      Due due = queue.poll();
      if (due == null) {
        return;
      }
      if (due.forgetAt() > now) { // another thread took the due head meanwhile
        queue.add(due);
        return;
      }
      forget.accept(due, now);
    }
  }

  /** Removes a due failure record, lease loss or sighting, unless it was replaced. */
  private void forgetRecord(Due due, long now) {
    states.computeIfPresent(due.storeKey(), (k, state) -> state.without(due.record()));
  }

  /**
   * Removes the key's remembered load if it is due by {@code now}; one that replaced the load
   * this entry was queued for is not (it has an entry of its own, further back).
   */
  private void forgetRemembered(Due due, long now) {
    states.computeIfPresent(due.storeKey(), (k, state) -> {
      Recent recent = state.recent();
      if (recent == null || recent.forgetAt() > now) {
        return state;
      }
      remembered.decrementAndGet();
      return state.without(recent);
    });
  }

  /**
   * Schedules a drain for the earliest entry of the forget queues unless one is scheduled by
   * then, for idle caches; {@code now} is the ticker, ms. A drain scheduled for later stays
   * scheduled and finds less to do.
   */
  private void scheduleDrain(long now) {
    long due = Math.max(now, Math.min(headDue(forgetQueue), headDue(rememberedQueue)));
    for (long scheduled = drainAt.get(); due < scheduled; scheduled = drainAt.get()) {
      if (drainAt.compareAndSet(scheduled, due)) {
        try {
          scheduler.schedule(() -> drain(due), due - now, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
          drainAt.compareAndSet(due, Long.MAX_VALUE);
        }
        return;
      }
    }
  }

  private static long headDue(Queue<Due> queue) {
    Due head = queue.peek();
    return head == null ? Long.MAX_VALUE : head.forgetAt();
  }

  /** A drain scheduled for {@code scheduledFor} (ticker ms) runs. */
  private void drain(long scheduledFor) {
    drainAt.compareAndSet(scheduledFor, Long.MAX_VALUE);
    long now = tickMillis();
    sweep(now, Integer.MAX_VALUE);
    scheduleDrain(now);
  }
}

