package io.sustainablecache.internal;

import io.sustainablecache.BulkLoader;
import io.sustainablecache.Scheduler;
import io.sustainablecache.SustainableCacheBuilder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The one batcher of a cache: merges flights of different keys into few calls of one bulk loader,
 * in the manner of a query aggregator, without a timer when idle. Its flights, grouped by loader
 * ({@link Batch#group}): a loading cache's misses and refreshes (see {@link
 * SustainableCacheBuilder#build(BulkLoader)}), and the background refreshes of {@code getAll}
 * callers, from every call with the same loader instance. Per group:
 * <ul>
 *   <li>items offered while no batch of the group is running start at once (the first miss loads
 *       with no added wait), in batches of at most {@code maxBatchSize};</li>
 *   <li>items offered while a batch runs join the group's one <em>open</em> batch, which starts
 *       when a running batch is over, when it holds {@code maxBatchSize} items, or {@code maxWait}
 *       after it opened (if set), whichever comes first;</li>
 *   <li>items offered by a thread inside a loader call of this coalescer (a loader reading other
 *       keys of its own cache; see {@link #enter}) start at once: waiting for the running call
 *       would wait for itself.</li>
 * </ul>
 * Threads: a batch that an offer starts (the idle start, or the offer that fills the open batch)
 * runs its loader call through that offer's executor (the caller's thread, for the synchronous
 * API): that caller is the loader, as a plain cache's caller is; the second and later batches one
 * offer starts (a large {@code getAll}) run on the spare executor, in parallel. A batch that
 * starts later ({@code maxWait} passed, a running batch is over) runs on the spare executor: no
 * caller's thread that waits is ever taken for a loader call, so a loader that hangs holds no
 * waiting caller beyond its own load timeout.
 * A batch is a list of registered flights ({@link Leg}s), started through the pipeline's one
 * lease-load-write step ({@link Dispatch}: {@link LeaseStage#leaseThenLoad}), and is over once
 * each of its flights has an outcome (its load returned or failed, another instance answered it,
 * or its load timeout failed it), so a loader that never returns holds the next batch at most the
 * load timeout. Why not "when the loader call returns": an asynchronous loader returns at once,
 * and a flight that lost its lease never calls the loader. A group is kept while a batch of it
 * runs, and forgotten when none does. Thread-safe: the state is guarded by one lock, held for
 * map and list operations only; batches are started outside it.
 */
final class Coalescer<V> {

  /** Starts a batch. */
  @FunctionalInterface
  interface Dispatch<V> {
    /** Starts {@code legs} as one batch, a call of {@code loader} to run through {@code on}. */
    void start(List<Leg<V>> legs, Batch<V> loader, Executor on);
  }

  private final Dispatch<V> dispatch;
  private final int maxBatchSize;
  /** The open batch's longest wait, milliseconds on the scheduler; 0 for none. */
  private final long maxWaitMillis;
  private final Scheduler scheduler;
  /**
   * Where a batch runs that no offer present starts: the second and later batches one offer
   * starts, and every batch that starts later (see the class comment).
   */
  private final Executor spare;
  /** Threads inside a loader call this coalescer started (see {@link #enter}). */
  private final Set<Thread> callers = ConcurrentHashMap.newKeySet();
  private final Object lock = new Object();
  /** The groups with a batch running, by {@link Batch#group}. Guarded by {@link #lock}. */
  private final Map<Object, Group<V>> groups = new HashMap<>();

  /**
   * One loader's batches: how many run, and the one forming while they do. Kept while one runs
   * (an open batch forms only then). Guarded by {@link #lock}.
   */
  private static final class Group<V> {
    /** The loader of the offer that found the group idle: every batch of the group calls it. */
    final Batch<V> loader;
    int running;
    Open<V> open;

    Group(Batch<V> loader) {
      this.loader = loader;
    }
  }

  /** A batch forming: its group, its items, and the timer of its {@code maxWait}. */
  private static final class Open<V> {
    final Group<V> group;
    final List<Leg<V>> items = new ArrayList<>();
    volatile Future<?> timer;

    Open(Group<V> group) {
      this.group = group;
    }
  }

  /**
   * @param maxBatchSize at most this many items per batch, at least 1
   * @param maxWaitMillis how long an open batch waits at most for a running one, milliseconds;
   *     0 for no bound (it waits for a running batch to be over)
   * @param scheduler times {@code maxWait}
   * @param spare where the loader calls run that no offering caller runs (the refresh
   *     executor): the second and later batches one offer starts, so that a {@code getAll} of
   *     more than {@code maxBatchSize} keys is not loaded one call after another on its caller's
   *     thread (where it refuses, the offer's own executor), and every batch that starts after
   *     its offers returned (where it refuses, the batch's flights end without loading)
   */
  Coalescer(Dispatch<V> dispatch, int maxBatchSize, long maxWaitMillis, Scheduler scheduler,
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
   * Offers flights of {@code loader} to load: started at once if its group is idle (or the calling
   * thread is inside a loader call of this coalescer), otherwise added to the group's open batch
   * (see the class comment).
   *
   * @param on where the loader call of the first batch these items start runs (a batch they only
   *     open starts later, on the spare executor)
   */
  void offer(Batch<V> loader, List<Leg<V>> items, Executor on) {
    if (items.isEmpty()) {
      return;
    }
    List<Open<V>> ready = new ArrayList<>(1);
    Open<V> opened = null;
    boolean now = callers.contains(Thread.currentThread());
    synchronized (lock) {
      Group<V> group = groups.computeIfAbsent(loader.group(), key -> new Group<>(loader));
      if (now || group.running == 0) { // idle: every item starts now, in full batches and one more
        Open<V> batch = null;
        for (Leg<V> item : items) {
          if (batch == null) {
            batch = new Open<>(group);
            ready.add(batch);
          }
          batch.items.add(item);
          if (batch.items.size() == maxBatchSize) {
            batch = null;
          }
        }
      } else {
        for (Leg<V> item : items) {
          if (group.open == null) {
            group.open = opened = new Open<>(group);
          }
          group.open.items.add(item);
          if (group.open.items.size() == maxBatchSize) { // full: starts now, with this offer
            ready.add(group.open);
            group.open = null;
          }
        }
      }
      group.running += ready.size();
      if (opened != group.open) { // it filled up and starts now: nothing to time
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

  /**
   * The calling thread enters a loader call this coalescer started (a loading cache's call: see
   * {@link LoadPipeline#loading}); what it offers until it {@linkplain #leave leaves} starts at
   * once.
   */
  void enter() {
    callers.add(Thread.currentThread());
  }

  /** The calling thread leaves that loader call. */
  void leave() {
    callers.remove(Thread.currentThread());
  }

  /** How many loaders have a batch running or forming; for tests. */
  int groups() {
    synchronized (lock) {
      return groups.size();
    }
  }

  private void time(Open<V> batch) {
    try {
      batch.timer = scheduler.schedule(() -> flush(batch), maxWaitMillis, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      flush(batch); // no timer: start it now rather than leave it to wait without a bound
    }
  }

  /** An open batch's {@code maxWait} passed: it starts, unless it started already. */
  private void flush(Open<V> batch) {
    synchronized (lock) {
      if (batch.group.open != batch) {
        return;
      }
      batch.group.open = null;
      batch.group.running++;
    }
    start(batch, spare);
  }

  /** A batch of {@code group} is over: its open batch, if any, starts; else it may be idle. */
  private void over(Group<V> group) {
    Open<V> next;
    synchronized (lock) {
      group.running--;
      next = group.open;
      if (next != null) {
        group.open = null;
        group.running++;
      } else if (group.running == 0) {
        groups.remove(group.loader.group(), group);
      }
    }
    if (next != null) {
      start(next, spare);
    }
  }

  private void start(Open<V> batch, Executor on) {
    Future<?> timer = batch.timer;
    if (timer != null) {
      timer.cancel(false);
    }
    CompletableFuture<?>[] ends = new CompletableFuture<?>[batch.items.size()];
    for (int i = 0; i < ends.length; i++) {
      ends[i] = batch.items.get(i).flight().ended();
    }
    try {
      dispatch.start(batch.items, batch.group.loader, on);
    } catch (RuntimeException | Error e) {
      over(batch.group);
      throw e;
    }
    CompletableFuture.allOf(ends).whenComplete((ignored, error) -> over(batch.group));
  }
}
