package io.sustainablecache;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.function.BiConsumer;

/**
 * One load of one key in this JVM: a caller's miss or a refresh. Registered in the {@link
 * KeyRegistry} from the moment it is decided until its write has been issued (or it ended without
 * one), so that every caller of the key in between joins it instead of loading again.
 *
 * <p>Its outcome completes once: with the load's value ({@link #deliver}), without one ({@link
 * #endUnloaded}), or with a failure ({@link #fail}: the loader's, a timeout, or another
 * instance's remembered failure). Callers see it only through {@link #answer()} and {@link
 * #whenCompleted}.
 *
 * <h2>States and transitions</h2>
 * A flight's state is changed only by the methods of this class, each one transition:
 *
 * <table>
 *   <caption>Transitions of a flight</caption>
 *   <tr><th>method</th><th>called by</th><th>from</th><th>to</th></tr>
 *   <tr><td>(constructor)</td><td>{@code KeyRegistry.begin}</td><td>-</td>
 *       <td>registered: callers of the key join it</td></tr>
 *   <tr><td>{@link #expectLoadMillis}</td><td>{@code LoadPipeline}</td><td>registered</td>
 *       <td>registered, with the entry's load time for the lease's length</td></tr>
 *   <tr><td>{@link #holdLease}</td><td>{@code FleetLease}</td><td>registered</td>
 *       <td>lease held until a time</td></tr>
 *   <tr><td>{@link #enterLoader}</td><td>{@code LoadPipeline.run}</td>
 *       <td>registered</td><td>in the loader call, on one thread (a call of the cache for the
 *       same key from that thread is a recursive load); load started</td></tr>
 *   <tr><td>{@link #leaveLoader}</td><td>the same</td><td>in the loader call</td>
 *       <td>loading: the loader's stage is pending</td></tr>
 *   <tr><td>{@link #deliver}</td><td>{@code LoadPipeline.complete}, {@code
 *       LoadPipeline.afterLease} (the value another instance wrote)</td>
 *       <td>any but completed</td><td>completed with a value: callers have their answer</td></tr>
 *   <tr><td>{@link #fail}</td><td>{@code LoadPipeline.failed} and {@code .afterLease}
 *       (another instance's failure marker), {@code KeyRegistry.timedOut}</td>
 *       <td>any but completed</td><td>completed with a failure</td></tr>
 *   <tr><td>{@link #endUnloaded}</td><td>{@code KeyRegistry.end(NotLoaded)}</td><td>any but
 *       completed</td><td>completed without a value: callers read again</td></tr>
 *   <tr><td>{@link #voidIt}</td><td>{@code KeyRegistry.detach} ({@code invalidate},
 *       {@code put}), {@code begin} (superseded by a newer tombstone or by a failed read begun after it
 *       registered), {@code timedOut}</td>
 *       <td>any</td><td>voided: deregistered, never writes (its callers still get its
 *       result)</td></tr>
 *   <tr><td>{@link #releaseLease}</td><td>{@code FleetLease.afterLoad}</td><td>lease held</td>
 *       <td>lease not held (deleted, or rewritten as a failure marker)</td></tr>
 *   <tr><td>{@link #timeoutTask} / {@link #cancelTimeout}</td><td>{@code KeyRegistry}</td>
 *       <td>registered</td><td>with / without its load-timeout task</td></tr>
 *   <tr><td>{@link #awaitedByFailedRead}</td><td>{@code KeyRegistry.begin}</td>
 *       <td>registered</td><td>started or joined by a read that failed on the store: its value
 *       is remembered for a while once it loaded ({@code KeyRegistry.finish})</td></tr>
 * </table>
 *
 * <p>Deregistration (finished, abandoned, detached, timed out) is the registry's: a flight is
 * ended once the registry no longer maps its key to it. Every field is volatile: the transitions
 * happen on callers' threads, refresh threads and client threads.
 */
final class Flight<V> {

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
  private volatile boolean voided;
  private volatile Future<?> timeout;
  private volatile boolean leaseHeld;
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

  /** This instance holds the key's fleet lease for this flight, until {@code until}. */
  void holdLease(long until) {
    leaseUntil = until;
    leaseHeld = true;
  }

  /** Whether this instance holds the key's fleet lease for this flight. */
  boolean leaseHeld() {
    return leaseHeld;
  }

  /** Until when the lease this flight holds lasts, epoch milliseconds on the wall clock. */
  long leaseUntil() {
    return leaseUntil;
  }

  /** Gives the lease up; whether it was held (then the caller deletes or rewrites it). */
  boolean releaseLease() {
    boolean held = leaseHeld;
    leaseHeld = false;
    return held;
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

  /** The flight writes nothing from now on. */
  void voidIt() {
    voided = true;
  }

  /** Whether the flight was voided. */
  boolean voided() {
    return voided;
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
    return "Flight[" + origin + ", started " + startedAt + (voided ? ", voided" : "") + "]";
  }
}
