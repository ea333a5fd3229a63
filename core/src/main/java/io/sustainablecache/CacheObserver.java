package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import java.util.Collection;
import java.util.Optional;

/**
 * Told when a cache's slow steps begin and end, as spans: loader calls, background refreshes,
 * fleet leases and write fences ({@link Kind}), so that a trace shows where a request's time went.
 * Set one with {@link SustainableCacheBuilder#observer}; {@code sustainable-cache-micrometer}'s
 * {@code SustainableCacheObservations} implements it with Micrometer's Observation API. A read
 * answered from the cache (a store hit or a near hit that needs no load) begins no step: only
 * the slow steps are observed, and a cache without an observer does no work for them.
 *
 * <p>Threads: {@link #begin} is called on the thread where the step begins: for a load, the
 * thread that calls the loader (a synchronous caller's own thread, so the step belongs to what
 * that thread is doing, e.g. its request); a background refresh's lease and load name the
 * refresh as their {@link Step#parent()}. {@link Span#end} may be called on any thread, a store
 * client's I/O thread or the cache's scheduler included. Neither may block, and both are called
 * concurrently for different steps: implementations must be thread-safe.
 *
 * <p>Exceptions: whatever an observer or its spans throw is caught and logged (rate-limited, at
 * most one WARN per 10 s per cache); the cache carries on as if the step were not observed. A
 * read never fails because of its observer.
 */
@FunctionalInterface
public interface CacheObserver {

  /**
   * A step begins.
   *
   * @param step what begins; never {@code null}
   * @return its span, ended exactly once; never {@code null} (return a span that does nothing to
   *     ignore a step)
   */
  Span begin(Step step);

  /**
   * The steps observed, and the outcomes their spans end with ({@link Span#end}): low-cardinality
   * words, lower-case and dot-separated.
   */
  enum Kind {
    /**
     * One loader call, for one key or a batch: from the call until its result (the stage of an
     * asynchronous loader completed). Outcomes: {@code success} (values, or "no value"), {@code
     * failure} (it threw, failed or returned {@code null}; {@link Span#error} gives the cause).
     * {@link Step#background()} tells whether it ran on a refresh thread rather than on the thread
     * of a synchronous caller waiting for it. While the loader is called its span is current on
     * the calling thread ({@link Span#open}), so the loader's own spans (a database query) are
     * its children.
     */
    LOAD,
    /**
     * A background refresh of one key, from the refresh policy's decision to the end of its load:
     * begun on the thread of the read that asked for it, which does not wait for it, so it
     * belongs to no request (a root). Outcomes: {@code success} (loaded), {@code failure} (the
     * loader failed, or timed out; the old value keeps being served), {@code not.loaded} (another
     * instance holds its lease, the refresh executor refused it, or the cache closed).
     */
    REFRESH,
    /**
     * Taking the fleet lease of one key before its load, and waiting for another instance's
     * value while that instance holds it. Outcomes: {@code acquired} (this instance loads),
     * {@code peer.value} (another instance's value answered it), {@code peer.failure} (another
     * instance's load failed, and its failure answered it), {@code lost} (a refresh left to the
     * instance that holds the lease), {@code skipped} (the load ended meanwhile: it timed out,
     * or the key was invalidated), {@code timed.out} (the wait for another instance's value
     * ended without one: this instance loads). A background refresh's lease is a child of the
     * refresh.
     */
    LEASE,
    /**
     * Placing a write fence ({@link SustainableCache#fence}), on the transaction's thread.
     * Outcomes: {@code placed}, {@code unprotected} (the store did not confirm it; the commit
     * owes the key's invalidation); a {@link io.sustainablecache.spi.StoreException} thrown with
     * {@link SustainableCacheBuilder#failWritesWhenStoreDown} is given to {@link Span#error}
     * with the outcome {@code failure}.
     */
    FENCE,
    /**
     * {@link WriteFence#beforeCommit()}. Outcomes: {@code success}, {@code unprotected} (the
     * store did not confirm it), {@code failure} (it threw).
     */
    FENCE_BEFORE_COMMIT,
    /**
     * {@link WriteFence#committed()}, {@link WriteFence#committed(Object)} or {@link
     * WriteFence#rolledBack()}: until the release's first attempt ended, what the caller waits
     * for (retries continue in the background). Outcomes: {@code committed}, {@code rolled.back},
     * {@code failure} (it threw).
     */
    FENCE_RELEASE
  }

  /**
   * The description of a step that begins. Immutable.
   */
  final class Step {
    private final Kind kind;
    private final String namespace;
    private final Collection<String> keys;
    private final boolean background;
    private final Span parent;

    /**
     * Describes a step; the cache makes them.
     *
     * @param kind what begins
     * @param namespace the cache's namespace, empty for none
     * @param keys the caller's keys the step is for, not copied (an unmodifiable view)
     * @param background whether it runs apart from any caller (see {@link #background()})
     * @param parent the span it belongs to, or {@code null}: the current one of this thread
     * @throws NullPointerException if {@code kind}, {@code namespace} or {@code keys} is {@code
     *     null}
     */
    public Step(Kind kind, String namespace, Collection<String> keys, boolean background,
        Span parent) {
      this.kind = requireNonNull(kind, "kind");
      this.namespace = requireNonNull(namespace, "namespace");
      this.keys = requireNonNull(keys, "keys");
      this.background = background;
      this.parent = parent;
    }

    /**
     * What begins.
     *
     * @return the kind; never {@code null}
     */
    public Kind kind() {
      return kind;
    }

    /**
     * The cache's namespace ({@link SustainableCacheBuilder#namespace}).
     *
     * @return the namespace; empty for a cache without one, never {@code null}
     */
    public String namespace() {
      return namespace;
    }

    /**
     * The caller's keys the step is for: one, or a loader call's batch. High cardinality: not a
     * metric's tag.
     *
     * @return an unmodifiable collection, never empty nor {@code null}
     */
    public Collection<String> keys() {
      return keys;
    }

    /**
     * Whether the step runs apart from the callers that wait for it: a background refresh and
     * its lease and load, and a load on a refresh thread (a batch that waited for another call,
     * an asynchronous caller's that left); {@code false} for a load on the thread of a
     * synchronous caller, and for a fence's steps.
     *
     * @return whether it runs in the background
     */
    public boolean background() {
      return background;
    }

    /**
     * The span this step belongs to when the thread it begins on does not say: a background
     * refresh, for its lease and load (for a batch of refreshes, the first key's).
     *
     * @return the parent, or empty: the step belongs to what the current thread is doing
     */
    public Optional<Span> parent() {
      return Optional.ofNullable(parent);
    }

    @Override
    public String toString() {
      return "Step[" + kind + ", namespace=" + namespace + ", keys=" + keys.size()
          + (background ? ", background" : "") + "]";
    }
  }

  /**
   * A step's span, returned by {@link #begin}. The cache calls {@link #error} at most once, then
   * {@link #end} exactly once; {@link #open} only on the thread that began it, before its end.
   */
  interface Span {

    /**
     * The step failed: the cause, before {@link #end}. Does nothing by default.
     *
     * @param error the failure; never {@code null}
     */
    default void error(Throwable error) {}

    /**
     * Makes this span the current one of the calling thread (for Micrometer: opens its scope),
     * until the scope returned is closed, on the same thread. Returns a scope that does nothing
     * by default.
     *
     * @return the scope to close; never {@code null}
     */
    default Scope open() {
      return Scope.NONE;
    }

    /**
     * The step ended.
     *
     * @param outcome how, one of its {@link Kind}'s outcomes; never {@code null}
     */
    void end(String outcome);
  }

  /** What {@link Span#open} returns: closing it restores the thread's previous current span. */
  @FunctionalInterface
  interface Scope extends AutoCloseable {

    /** A scope that does nothing. */
    Scope NONE = () -> { };

    /** Restores the thread's previous current span; never throws a checked exception. */
    @Override
    void close();
  }
}
