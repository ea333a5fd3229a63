package io.sustainablecache.internal;

import io.sustainablecache.Loader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
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
 *
 * <p>The caller's thread is left as it was found: no unpark permit outlives {@code drive}. A
 * thread is unparked only while it is parked here (or about to park), once per park, never by
 * itself (a task it runs that queues another, a loader of its own that completes the future), and
 * never after it left; a permit it did not take by parking is taken before it goes on. (Before,
 * every synchronous miss left the caller's thread a permit, so its next {@code
 * LockSupport.park}, in the application's own code, returned at once.)
 */
final class CallerRuns implements Executor {

  private final Thread owner = Thread.currentThread();
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final Executor fallback;
  private volatile boolean left;

  /** The owner runs (tasks, checks); no unpark is due. */
  private static final int RUNNING = 0;
  /** The owner parks, or is about to: whoever makes it runnable wakes it. */
  private static final int PARKED = 1;
  /** Another thread claimed this park and is unparking the owner. */
  private static final int WAKING = 2;
  /** That unpark was issued. */
  private static final int WOKEN = 3;

  /** Where the owner is in its wait; an unpark is issued only by the thread that claims a park. */
  private final AtomicInteger parking = new AtomicInteger(RUNNING);

  /**
   * @param fallback where the tasks still queued when the waiter leaves go: each runs at most
   *     once; one the fallback rejects is dropped ({@link Refusable#refused} is called for it)
   */
  CallerRuns(Executor fallback) {
    this.fallback = fallback;
  }

  /** The thread that waits in {@link #drive} and runs the tasks: the caller. */
  Thread owner() {
    return owner;
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
      wake();
    }
  }

  /**
   * Unparks the owner if it parks, or is about to: at most one unpark per park, issued by the one
   * thread that claims it. The owner itself never claims one (it is running, not parked), and a
   * thread that finds it running leaves it be: it sees the new task or the completed future when
   * it checks before parking (it announces {@link #PARKED} before that check; the waker makes its
   * change before reading the state).
   */
  private void wake() {
    if (parking.get() == PARKED && parking.compareAndSet(PARKED, WAKING)) {
      LockSupport.unpark(owner);
      parking.set(WOKEN);
    }
  }

  /**
   * Ends one park of the owner. If no other thread claimed it, no unpark is coming. If one did,
   * its unpark is waited for (a few instructions away, unless the waker was descheduled); when the owner did not park after all, or
   * its park ran out (its deadline, not the unpark, ended it), the permit that unpark left is
   * taken here, at once: a permit is never left behind for the caller's own code. A park that
   * returned before its deadline took the permit itself (or was woken by another party's unpark
   * or spuriously, in which case, as with any JDK blocking method, a permit may remain).
   */
  private void settle(boolean parked, long deadline) {
    if (parking.compareAndSet(PARKED, RUNNING)) {
      return;
    }
    while (parking.get() == WAKING) {
      Thread.yield(); // the waker is between its claim and its unpark: let it run
    }
    if (!parked || System.nanoTime() - deadline >= 0) {
      LockSupport.parkNanos(this, 1); // takes the pending permit (at once if there is one)
    }
    parking.set(RUNNING);
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
      future.whenComplete((value, error) -> wake());
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
        parking.set(PARKED);
        boolean parked = tasks.isEmpty() && !future.isDone();
        if (parked) {
          LockSupport.parkNanos(this, remaining);
        }
        settle(parked, deadline);
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
