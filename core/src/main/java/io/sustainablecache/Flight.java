package io.sustainablecache;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

/**
 * One load of one key in this JVM: a caller's miss or a refresh. Registered in the {@link
 * KeyRegistry} from the moment it is decided until its write has been issued (or it ended without
 * one), so that every caller of the key in between joins it instead of loading again.
 *
 * <p>{@link #result} completes once, with the load's outcome, with {@link Loaded#notLoaded()}, or
 * exceptionally ({@link CacheLoadException}: failure or timeout).
 *
 * <h2>States and transitions</h2>
 * A flight's state is changed only by the methods of this class, each one transition:
 *
 * <table>
 *   <caption>Transitions of a flight</caption>
 *   <tr><th>method</th><th>called by</th><th>from</th><th>to</th></tr>
 *   <tr><td>(constructor)</td><td>{@code KeyRegistry.begin}</td><td>-</td>
 *       <td>registered: callers of the key join it</td></tr>
 *   <tr><td>{@link #expectLoadMillis}</td><td>{@code LoadCoordinator}</td><td>registered</td>
 *       <td>registered, with the entry's load time for the lease's length</td></tr>
 *   <tr><td>{@link #holdLease}</td><td>{@code FleetLease}</td><td>registered</td>
 *       <td>lease held until a time</td></tr>
 *   <tr><td>{@link #enterLoader}</td><td>{@code LoadCoordinator.run}, {@code BulkLoads.load}</td>
 *       <td>registered</td><td>in the loader call, on one thread (a call of the cache for the
 *       same key from that thread is a recursive load); load started</td></tr>
 *   <tr><td>{@link #leaveLoader}</td><td>the same</td><td>in the loader call</td>
 *       <td>loading: the loader's stage is pending</td></tr>
 *   <tr><td>{@code result.complete...}</td><td>{@code LoadCoordinator.complete/failed},
 *       {@code KeyRegistry.abandon/timedOut}, {@code FleetLease} (another instance's
 *       failure)</td><td>any</td><td>completed: callers have their answer</td></tr>
 *   <tr><td>{@link #voidIt}</td><td>{@code KeyRegistry.detach} ({@code invalidate},
 *       {@code put}), {@code begin} (superseded by a newer tombstone), {@code timedOut}</td>
 *       <td>any</td><td>voided: deregistered, never writes (its callers still get its
 *       result)</td></tr>
 *   <tr><td>{@link #releaseLease}</td><td>{@code FleetLease.afterLoad}</td><td>lease held</td>
 *       <td>lease not held (deleted, or rewritten as a failure marker)</td></tr>
 *   <tr><td>{@link #timeoutTask} / {@link #cancelTimeout}</td><td>{@code KeyRegistry}</td>
 *       <td>registered</td><td>with / without its load-timeout task</td></tr>
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
  final long startedAt;
  /** The token of the read that decided this load; every write of it is conditional on it. */
  final long casToken;
  final CompletableFuture<Loaded<V>> result = new CompletableFuture<>();

  /** The thread inside the loader call right now, for detecting recursive loads. */
  private volatile Thread loaderThread;
  private volatile boolean loadStarted;
  private volatile boolean voided;
  private volatile Future<?> timeout;
  private volatile boolean leaseHeld;
  private volatile long leaseUntil;
  private volatile long expectedLoadMillis = -1;

  Flight(String key, String storeKey, Origin origin, long startedAt, long casToken) {
    this.key = key;
    this.storeKey = storeKey;
    this.origin = origin;
    this.startedAt = startedAt;
    this.casToken = casToken;
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

  /** Until when the lease this flight holds lasts, on the cache's clock. */
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
