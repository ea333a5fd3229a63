package io.sustainablecache.internal;

import io.sustainablecache.CacheLoadException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

/**
 * One load of one key in this JVM: a caller's miss or a refresh. Registered in the {@link
 * KeyRegistry} from the moment it is decided until its write has been issued (or it ended without
 * one), so that every caller of the key in between joins it instead of loading again.
 *
 * <h2>States</h2>
 * A flight's life is one {@link State}, held with its {@linkplain #voided voided} mark in one
 * atomic field and changed only through one gate, {@link #transition}, which refuses a pair that
 * is not in this table (it counts the refusal and throws {@link IllegalStateException}, as
 * resilience4j's {@code CircuitBreakerStateMachine.stateTransition} does). Every flight the
 * {@link LoadPipeline} starts ends exactly once, in {@code ENDED}.
 *
 * <table>
 *   <caption>The states of a flight and who moves it</caption>
 *   <tr><th>from</th><th>to</th><th>when (by whom)</th></tr>
 *   <tr><td>-</td><td>{@code REGISTERED}</td><td>{@code KeyRegistry.begin} registered it:
 *       callers of the key join it</td></tr>
 *   <tr><td>{@code REGISTERED}</td><td>{@code LEASING}</td><td>it writes back and the fleet lease
 *       is on: the pipeline asks {@code FleetLease} for the key's lease, handing it what the
 *       registry knows of the lease ({@code KeyRegistry.LeaseKnowledge})</td></tr>
 *   <tr><td>{@code LEASING}</td><td>{@code WAITING_FOR_PEER}</td><td>a miss lost the lease to a
 *       holder that is loading: it waits (a bounded time) for that instance's write (the
 *       pipeline records a failure marker the lease saw in the registry)</td></tr>
 *   <tr><td>{@code REGISTERED}, {@code LEASING}, {@code WAITING_FOR_PEER}</td>
 *       <td>{@code LOADING}</td><td>the pipeline's runner calls the loader (no lease, the lease
 *       won, or the wait for the peer ran out); a lease the step says this instance holds was
 *       recorded on the flight by the pipeline ({@link #holdLease}) before</td></tr>
 *   <tr><td>{@code LOADING}</td><td>{@code WRITING}</td><td>the load delivered a value that is
 *       written back: the write is issued, and the flight stays registered until the store
 *       answers it (a caller whose read missed the store meanwhile joins it for its
 *       value)</td></tr>
 *   <tr><td>any but {@code ENDED}</td><td>{@code ENDED}</td><td>{@code LoadPipeline.end}: loaded
 *       and written (or not written: no write back, fenced, voided), failed, another instance's
 *       write or failure taken, or not loaded (a refresh that lost the lease or was refused);
 *       the flight is then deregistered ({@code KeyRegistry.end}) and the pipeline releases the
 *       lease it held ({@code FleetLease.release}, which keeps it as a failure marker if the
 *       registry's record of a failure says so)</td></tr>
 * </table>
 *
 * <p>{@linkplain #voidIt Voiding} ({@code invalidate}, {@code put}, a newer tombstone, a timeout)
 * is a mark, not a state: it can come in any state, and the flight goes on (its callers still get
 * its result) but never writes. A load timeout fails the flight's callers and deregisters it
 * ({@code KeyRegistry}), without changing its state: the pipeline still ends it when its load (or
 * its wait) is over.
 *
 * <p>Its outcome completes once: with the load's value ({@link #deliver}), without one ({@link
 * #endUnloaded}), or with a failure ({@link #fail}: the loader's, a timeout, or another
 * instance's remembered failure). Callers see it only through {@link #answer()} and {@link
 * #whenCompleted}. The other fields (the thread inside the loader, the lease held, the expected
 * load time, the timeout task) are volatile: the transitions happen on callers' threads, refresh
 * threads and client threads. Each has one writer: the lease held is written by the pipeline
 * from the value the {@link FleetLease} returned ({@link LeaseStep#heldUntil}; the lease never
 * writes a flight) and read when the flight ends (its failure keeps the lease, {@code
 * KeyRegistry.end}; then the pipeline releases it, {@code FleetLease.release}).
 */
final class Flight<V> {

  /** Where a flight is in its life; see the class comment for the table of transitions. */
  enum State {
    /** Registered: callers of the key join it. */
    REGISTERED,
    /** Taking the key's fleet lease. */
    LEASING,
    /** A miss that lost the lease, waiting for the holder's write. */
    WAITING_FOR_PEER,
    /** The loader was called and its result is pending. */
    LOADING,
    /** Loaded; the write is issued and not answered yet. */
    WRITING,
    /** Ended and deregistered: terminal. */
    ENDED;

    private static final State[] VALUES = values();

    /** Whether the table allows {@code this -> to}. */
    boolean mayBecome(State to) {
      return switch (this) {
        case REGISTERED -> to == LEASING || to == LOADING || to == ENDED;
        case LEASING -> to == WAITING_FOR_PEER || to == LOADING || to == ENDED;
        case WAITING_FOR_PEER -> to == LOADING || to == ENDED;
        case LOADING -> to == WRITING || to == ENDED;
        case WRITING -> to == ENDED;
        case ENDED -> false;
      };
    }
  }

  /** The mark of a voided flight, beside its state's ordinal in {@link #state}. */
  private static final int VOIDED = 1 << 3;
  private static final int STATE_BITS = VOIDED - 1;

  /** Why the flight loads. */
  enum Origin {
    /** A caller found no usable entry and waits for this load. */
    MISS,
    /** The refresh policy decided to reload an entry that is still served meanwhile. */
    REFRESH
  }

  final String key;
  final String storeKey;
  final Origin origin;
  /**
   * When the flight was registered, epoch milliseconds on the wall clock: compared with the time
   * of an invalidation on another host (its tombstone).
   */
  final long startedAt;
  /**
   * When the flight was registered, milliseconds on the ticker: what its durations are measured
   * from (the load timeout, the write fence, the near bound of a remembered load).
   */
  final long startedTick;
  /**
   * The registry's sequence number of this flight: greater than every {@linkplain
   * KeyRegistry#readMark mark} taken before it was registered, so its loader started after every
   * read that took such a mark began.
   */
  final long sequence;
  /** The token of the read that decided this load; every write of it is conditional on it. */
  final long casToken;
  /**
   * Whether the read that decided this load found a write fence (a database transaction changing
   * the key's data): the load's result is returned to its callers and never written.
   */
  final boolean fenced;
  /**
   * Whether the load's result is written to the store: not after a read that failed on the store
   * (the server just failed) nor after one that found a write fence ({@link
   * LoadRequest#writeBack}). A flight that does not write does not take the fleet lease either.
   */
  final boolean writeBack;
  /** Completed once, by {@link #deliver}, {@link #fail} or {@link #endUnloaded}; never exposed. */
  private final CompletableFuture<Loaded<V>> result = new CompletableFuture<>();

  /** The thread inside the loader call right now, for detecting recursive loads. */
  private volatile Thread loaderThread;
  private volatile boolean loadStarted;
  /** The {@link State}'s ordinal, with the {@link #VOIDED} mark: the one field of the state. */
  private final AtomicInteger state = new AtomicInteger(State.REGISTERED.ordinal());
  /** How many transitions the gate refused (for the model checks; always 0 in a sound run). */
  private final AtomicInteger refused = new AtomicInteger();
  private volatile Future<?> timeout;
  /** Until when this flight holds the key's fleet lease (epoch ms); 0: it holds none. */
  private volatile long leaseUntil;
  private volatile long expectedLoadMillis = -1;
  private volatile boolean awaitedByFailedRead;

  Flight(String key, String storeKey, Origin origin, long startedAt, long startedTick,
      long casToken, long sequence, boolean fenced, boolean writeBack) {
    this.fenced = fenced;
    this.writeBack = writeBack && !fenced;
    this.key = key;
    this.storeKey = storeKey;
    this.origin = origin;
    this.startedAt = startedAt;
    this.startedTick = startedTick;
    this.casToken = casToken;
    this.sequence = sequence;
  }

  /** A read that failed on the store started or joined this flight. */
  void awaitedByFailedRead() {
    awaitedByFailedRead = true;
  }

  /** Whether a read that failed on the store started or joined this flight. */
  boolean isAwaitedByFailedRead() {
    return awaitedByFailedRead;
  }

  /** Whether the flight completed with a loaded value (or a loaded absence). */
  boolean loadedValue() {
    return result.isDone() && !result.isCompletedExceptionally() && result.join().wasLoaded();
  }

  /**
   * Completes the flight with a load's value: its callers have their answer.
   *
   * @return whether this completed it (it was not completed before)
   */
  boolean deliver(Loaded<V> loaded) {
    return result.complete(loaded);
  }

  /**
   * Completes the flight with a failure ({@link CacheLoadException}: the loader's, a timeout, or
   * another instance's remembered failure).
   *
   * @return whether this completed it
   */
  boolean fail(Throwable failure) {
    return result.completeExceptionally(failure);
  }

  /**
   * Completes the flight without a value ({@link Loaded#notLoaded()}): it ended before loading,
   * and its callers read the key again.
   */
  void endUnloaded() {
    result.complete(Loaded.notLoaded());
  }

  /** Whether the flight has its outcome. */
  boolean completed() {
    return result.isDone();
  }

  /** Whether the flight's outcome is a failure. */
  boolean completedExceptionally() {
    return result.isCompletedExceptionally();
  }

  /**
   * A caller's view of the outcome: completes with it, and completing or cancelling the view
   * never changes the flight.
   */
  CompletableFuture<Loaded<V>> answer() {
    return result.copy();
  }

  /** Whether the flight has its outcome (its callers have their answer). */
  boolean hasOutcome() {
    return result.isDone();
  }

  /** Completes (normally) once the flight has an outcome, whichever it is. */
  CompletableFuture<Void> ended() {
    return result.handle((loaded, error) -> null);
  }

  /** Runs {@code action} with the outcome once there is one (at once if there is). */
  void whenCompleted(BiConsumer<? super Loaded<V>, ? super Throwable> action) {
    result.whenComplete(action);
  }

  /** How many callers wait for the outcome now (for tests). */
  int waiting() {
    return result.getNumberOfDependents();
  }

  /** Records the load time measured last time (the entry's), for the fleet lease's length. */
  void expectLoadMillis(long millis) {
    expectedLoadMillis = millis;
  }

  /** The load time measured last time, or -1 if unknown. */
  long expectedLoadMillis() {
    return expectedLoadMillis;
  }

  /**
   * This instance holds the key's fleet lease for this flight, until {@code until} (epoch ms on
   * the wall clock, positive): recorded by the pipeline from the lease's step ({@link
   * LeaseStep#heldUntil}); the flight's end releases it (or keeps it as a failure marker).
   */
  void holdLease(long until) {
    leaseUntil = until;
  }

  /** Whether this instance holds the key's fleet lease for this flight. */
  boolean leaseHeld() {
    return leaseUntil != 0;
  }

  /**
   * Until when the lease this flight holds lasts, epoch milliseconds on the wall clock; 0 if it
   * holds none.
   */
  long leaseUntil() {
    return leaseUntil;
  }

  /** The loader is being called on {@code thread}. */
  void enterLoader(Thread thread) {
    loadStarted = true;
    loaderThread = thread;
  }

  /** The loader call returned (its stage may still be pending). */
  void leaveLoader() {
    loaderThread = null;
  }

  /** Whether {@code thread} is inside this flight's loader call. */
  boolean inLoader(Thread thread) {
    return loaderThread == thread;
  }

  /** Whether some thread is inside this flight's loader call. */
  boolean loaderRunning() {
    return loaderThread != null;
  }

  /** Whether a loader was called for this flight (a refresh may be dropped before). */
  boolean loadStarted() {
    return loadStarted;
  }

  /** The flight writes nothing from now on: marked, in whatever state it is. */
  void voidIt() {
    state.getAndUpdate(current -> current | VOIDED);
  }

  /** Whether the flight was voided. */
  boolean voided() {
    return (state.get() & VOIDED) != 0;
  }

  /** The flight's state now. */
  State state() {
    return State.VALUES[state.get() & STATE_BITS];
  }

  /**
   * The one gate of the flight's state: moves it to {@code to} if the table (class comment)
   * allows that from its state now, keeping the voided mark.
   *
   * @return the state it left
   * @throws IllegalStateException if the table does not allow it (counted: {@link
   *     #refusedTransitions})
   */
  State transition(State to) {
    while (true) {
      int current = state.get();
      State from = State.VALUES[current & STATE_BITS];
      if (!from.mayBecome(to)) {
        refused.incrementAndGet();
        throw new IllegalStateException("a flight may not go from " + from + " to " + to);
      }
      if (state.compareAndSet(current, (current & VOIDED) | to.ordinal())) {
        return from;
      }
    }
  }

  /** How many transitions the gate refused; for the model checks. */
  int refusedTransitions() {
    return refused.get();
  }

  /** The task that times the load out. */
  void timeoutTask(Future<?> task) {
    timeout = task;
  }

  /** Cancels the load-timeout task, if any. */
  void cancelTimeout() {
    Future<?> task = timeout;
    if (task != null) {
      task.cancel(false);
    }
  }

  @Override
  public String toString() {
    return "Flight[" + origin + ", " + state() + ", started " + startedAt
        + (voided() ? ", voided" : "") + "]";
  }
}
