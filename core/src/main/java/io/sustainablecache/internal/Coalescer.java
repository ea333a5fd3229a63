package io.sustainablecache.internal;

import io.sustainablecache.BulkLoader;
import io.sustainablecache.Scheduler;
import io.sustainablecache.SustainableCacheBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Merges the loads of concurrent misses of different keys into few calls of one bulk loader (a
 * loading cache's, see {@link SustainableCacheBuilder#build(BulkLoader)}), in the manner of a
 * query aggregator, without a timer when idle:
 * <ul>
 *   <li>items offered while no batch of this coalescer is running start at once (the first miss
 *       loads with no added wait), in batches of at most {@code maxBatchSize};</li>
 *   <li>items offered while a batch runs join the one <em>open</em> batch, which starts when a
 *       running batch is over, when it holds {@code maxBatchSize} items, or {@code maxWait} after
 *       it opened (if set), whichever comes first;</li>
 *   <li>items offered by a thread inside this coalescer's loader call (a loader reading other
 *       keys of its own cache) start at once: waiting for the running call would wait for
 *       itself.</li>
 * </ul>
 * Threads: a batch that an offer starts (the idle start, or the offer that fills the open batch)
 * runs its loader call through that offer's executor (the caller's thread, for the synchronous
 * API): that caller is the loader, as a plain cache's caller is; the second and later batches one
 * offer starts (a large {@code getAll}) run on the spare executor, in parallel. A batch that
 * starts later ({@code maxWait} passed, a running batch is over) runs on the spare executor: no
 * caller's thread that waits is ever taken for a loader call, so a loader that hangs holds no
 * waiting caller beyond its own load timeout.
 * What a batch is and when it is over is the {@link Dispatch}'s: for the {@link LoadPipeline}, a
 * batch is a list of registered flights, started through its one lease-load-write step, and is
 * over once each of its flights has an outcome (its load returned or failed, another instance
 * answered it, or its load timeout failed it), so a loader that never returns holds the next batch
 * at most the load timeout. Thread-safe: the state is guarded by one lock, held for list
 * operations only; batches are started outside it.
 *
 * @param <T> what a batch holds
 */
final class Coalescer<T> {

  /** Starts a batch. */
  @FunctionalInterface
  interface Dispatch<T> {
    /**
     * Starts {@code items} as one batch, the loader call to run through {@code on}.
     *
     * @return completes when the batch is over (the coalescer may then start the open batch)
     */
    CompletionStage<?> start(List<T> items, Executor on);
  }

  private final Dispatch<T> dispatch;
  private final int maxBatchSize;
  /** The open batch's longest wait, milliseconds on the scheduler; 0 for none. */
  private final long maxWaitMillis;
  private final Scheduler scheduler;
  /**
   * Where a batch runs that no offer present starts: the second and later batches one offer
   * starts, and every batch that starts later (see the class comment).
   */
  private final Executor spare;
  /** Threads inside a loader call this coalescer started (see {@link #inCall}). */
  private final Set<Thread> callers = ConcurrentHashMap.newKeySet();
  private final Object lock = new Object();
  /** Batches started and not over. Guarded by {@link #lock}. */
  private int running;
  /** The batch forming while others run, or {@code null}. Guarded by {@link #lock}. */
  private Open<T> open;

  /** A batch forming: its items, and the timer of its {@code maxWait}. */
  private static final class Open<T> {
    final List<T> items = new ArrayList<>();
    volatile Future<?> timer;
  }

  /**
   * @param maxBatchSize at most this many items per batch, at least 1
   * @param maxWaitMillis how long the open batch waits at most for a running one, milliseconds;
   *     0 for no bound (it waits for a running batch to be over)
   * @param scheduler times {@code maxWait}
   * @param spare where the loader calls run that no offering caller runs (the refresh
   *     executor): the second and later batches one offer starts, so that a {@code getAll} of
   *     more than {@code maxBatchSize} keys is not loaded one call after another on its caller's
   *     thread (where it refuses, the offer's own executor), and every batch that starts after
   *     its offers returned (where it refuses, the batch's flights end without loading)
   */
  Coalescer(Dispatch<T> dispatch, int maxBatchSize, long maxWaitMillis, Scheduler scheduler,
      Executor spare) {
    if (maxBatchSize < 1) {
      throw new IllegalArgumentException("maxBatchSize must be at least 1: " + maxBatchSize);
    }
    this.dispatch = dispatch;
    this.maxBatchSize = maxBatchSize;
    this.maxWaitMillis = maxWaitMillis;
    this.scheduler = scheduler;
    this.spare = spare;
  }

  /**
   * Offers items to load: started at once if the coalescer is idle (or the calling thread is inside
   * its loader call), otherwise added to the open batch (see the class comment).
   *
   * @param on where the loader call of the first batch these items start runs (a batch they only
   *     open starts later, on the spare executor)
   */
  void offer(List<T> items, Executor on) {
    if (items.isEmpty()) {
      return;
    }
    List<Open<T>> ready = new ArrayList<>(1);
    Open<T> opened = null;
    boolean now = callers.contains(Thread.currentThread());
    synchronized (lock) {
      if (now || running == 0) { // idle: every item starts now, in full batches and one more
        Open<T> batch = null;
        for (T item : items) {
          if (batch == null) {
            batch = new Open<>();
            ready.add(batch);
          }
          batch.items.add(item);
          if (batch.items.size() == maxBatchSize) {
            batch = null;
          }
        }
      } else {
        for (T item : items) {
          if (open == null) {
            open = opened = new Open<>();
          }
          open.items.add(item);
          if (open.items.size() == maxBatchSize) { // full: starts now, with this offer
            ready.add(open);
            open = null;
          }
        }
      }
      running += ready.size();
      if (opened != open) { // it filled up and starts now: nothing to time
        opened = null;
      }
    }
    if (opened != null && maxWaitMillis > 0) {
      time(opened);
    }
    if (ready.isEmpty()) {
      return;
    }
    Executor elsewhere = task -> {
      try {
        spare.execute(task);
      } catch (RejectedExecutionException e) {
        on.execute(task);
      }
    };
    for (int i = 0; i < ready.size(); i++) {
      start(ready.get(i), i == 0 ? on : elsewhere);
    }
  }

  /** The calling thread enters a loader call this coalescer started (see {@link #offer}). */
  void enter() {
    callers.add(Thread.currentThread());
  }

  /** The calling thread leaves that loader call. */
  void leave() {
    callers.remove(Thread.currentThread());
  }

  private void time(Open<T> batch) {
    try {
      batch.timer = scheduler.schedule(() -> flush(batch), maxWaitMillis, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      flush(batch); // no timer: start it now rather than leave it to wait without a bound
    }
  }

  /** The open batch's {@code maxWait} passed: it starts, unless it started already. */
  private void flush(Open<T> batch) {
    synchronized (lock) {
      if (open != batch) {
        return;
      }
      open = null;
      running++;
    }
    start(batch, spare);
  }

  /** A batch is over: the open batch, if any, starts. */
  private void over() {
    Open<T> next;
    synchronized (lock) {
      running--;
      next = open;
      if (next != null) {
        open = null;
        running++;
      }
    }
    if (next != null) {
      start(next, spare);
    }
  }

  private void start(Open<T> batch, Executor on) {
    Future<?> timer = batch.timer;
    if (timer != null) {
      timer.cancel(false);
    }
    CompletionStage<?> over;
    try {
      over = dispatch.start(batch.items, on);
    } catch (RuntimeException | Error e) {
      over();
      throw e;
    }
    over.whenComplete((ignored, error) -> over());
  }
}
