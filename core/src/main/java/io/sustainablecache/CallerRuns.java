package io.sustainablecache;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * An executor that runs its tasks on the one thread waiting in {@link #drive}: how the
 * synchronous API keeps a caller's {@link Loader} on the caller's thread (and a refresh's on the
 * refresh thread) while every flow is written once, asynchronously. Continuations that may call a
 * loader are attached with this executor; the waiting thread runs them between parks.
 *
 * <p>Once the waiter has left (its wait ended, timed out or was interrupted), the executor refuses
 * tasks with a {@link RejectedExecutionException}, and tasks still queued then are handed to
 * {@code fallback}: a caller's loader never runs on whatever thread happens to complete a store
 * round trip (a client's I/O thread, the scheduler). Single-use: one {@code drive} per instance,
 * from the thread that created it.
 */
final class CallerRuns implements Executor {

  private final Thread owner = Thread.currentThread();
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final Executor fallback;
  private volatile boolean left;

  /**
   * @param fallback where the tasks still queued when the waiter leaves go: each runs at most
   *     once; one the fallback rejects is dropped ({@link Refusable#refused} is called for it)
   */
  CallerRuns(Executor fallback) {
    this.fallback = fallback;
  }

  @Override
  public void execute(Runnable task) {
    if (left) {
      throw new RejectedExecutionException("the waiting caller has left");
    }
    tasks.add(task);
    if (left) { // the waiter left between our check and our add: it will not run what is queued
      handOff();
    } else {
      LockSupport.unpark(owner);
    }
  }

  private void handOff() {
    Runnable task;
    while ((task = tasks.poll()) != null) {
      try {
        fallback.execute(task);
      } catch (RejectedExecutionException e) {
        if (task instanceof Refusable refusable) {
          refusable.refused();
        }
      }
    }
  }

  /**
   * Runs submitted tasks on this thread until {@code future} completes, then returns its result.
   *
   * @throws ExecutionException if the future failed
   * @throws TimeoutException if it did not complete within {@code timeoutNanos}
   * @throws InterruptedException if this thread was interrupted while waiting
   */
  <T> T drive(CompletableFuture<T> future, long timeoutNanos)
      throws ExecutionException, TimeoutException, InterruptedException {
    if (Thread.currentThread() != owner) {
      throw new IllegalStateException("CallerRuns is driven by the thread that created it");
    }
    long deadline = System.nanoTime() + timeoutNanos;
    if (!future.isDone()) {
      future.whenComplete((value, error) -> LockSupport.unpark(owner));
    }
    try {
      while (true) {
        runQueued();
        if (future.isDone()) {
          return future.get();
        }
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
          throw new TimeoutException();
        }
        LockSupport.parkNanos(this, remaining);
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
      }
    } finally {
      left = true;
      handOff();
    }
  }

  private void runQueued() {
    Runnable task;
    while ((task = tasks.poll()) != null) {
      task.run();
    }
  }
}
