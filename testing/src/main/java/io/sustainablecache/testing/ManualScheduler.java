package io.sustainablecache.testing;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.Scheduler;
import io.sustainablecache.Ticker;
import java.util.PriorityQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Scheduler} in the time of a ticker (usually a {@link FakeClock#ticker()}): tasks are
 * due at {@code ticker.read() + delay} and run only when the test calls {@link #runDue()} after
 * moving time, on the test's thread. Makes load timeouts, lease polls and batch flushes
 * deterministic. Delays are durations, so setting the wall clock alone ({@link
 * FakeClock#setMillis}) makes nothing due.
 *
 * <p>Thread-safe; tasks run on the thread calling {@link #runDue()}, in due order, ties in
 * scheduling order.
 */
public final class ManualScheduler implements Scheduler {

  private final Ticker ticker;
  private final PriorityQueue<Task> tasks = new PriorityQueue<>();
  private long sequence;

  private ManualScheduler(Ticker ticker) {
    this.ticker = ticker;
  }

  /**
   * A scheduler whose delays are measured on {@code ticker}.
   *
   * @param ticker the ticker tasks are due by, nanoseconds; never {@code null}
   * @return a new scheduler with no tasks
   */
  public static ManualScheduler on(Ticker ticker) {
    return new ManualScheduler(requireNonNull(ticker, "ticker"));
  }

  @Override
  public synchronized Future<?> schedule(Runnable task, long delay, TimeUnit unit) {
    requireNonNull(task, "task");
    if (delay < 0) {
      throw new IllegalArgumentException("delay must not be negative: " + delay);
    }
    Task scheduled = new Task(task, ticker.read() + unit.toNanos(delay), sequence++);
    tasks.add(scheduled);
    return scheduled;
  }

  /**
   * Lets {@code millis} of virtual time pass on {@code clock} in steps of at most {@code
   * stepMillis}, running the tasks that fall due after each step (as a background schedule would
   * run them: periodic polls at their times, not once at the end). The clock should be the one
   * whose {@link FakeClock#ticker()} this scheduler is {@linkplain #on on}.
   *
   * @param clock the clock to move; never {@code null}
   * @param millis how long, at least 0
   * @param stepMillis the longest step, at least 1
   * @throws IllegalArgumentException if {@code millis} is negative or {@code stepMillis} below 1
   */
  public void pass(FakeClock clock, long millis, long stepMillis) {
    requireNonNull(clock, "clock");
    if (millis < 0 || stepMillis < 1) {
      throw new IllegalArgumentException("millis must be >= 0 and stepMillis >= 1: " + millis
          + ", " + stepMillis);
    }
    for (long t = 0; t < millis; t += stepMillis) {
      clock.advanceMillis(Math.min(stepMillis, millis - t));
      runDue();
    }
  }

  /**
   * Runs every task due by the ticker's current time, including tasks they schedule that are due
   * too.
   *
   * @return how many ran
   */
  public int runDue() {
    int ran = 0;
    while (true) {
      Task next;
      synchronized (this) {
        next = tasks.peek();
        if (next == null || next.dueNanos - ticker.read() > 0) {
          return ran;
        }
        tasks.poll();
      }
      if (next.start()) {
        next.task.run();
        ran++;
      }
    }
  }

  /**
   * The number of tasks scheduled and neither run nor cancelled.
   *
   * @return a non-negative count
   */
  public synchronized int pending() {
    return (int) tasks.stream().filter(t -> t.state == Task.PENDING).count();
  }

  /**
   * When the next pending task is due, on the ticker.
   *
   * @return the ticker's nanoseconds at which it is due, or {@link Long#MAX_VALUE} if none is
   *     pending
   */
  public synchronized long nextDueNanos() {
    return tasks.stream().filter(t -> t.state == Task.PENDING)
        .mapToLong(t -> t.dueNanos).min().orElse(Long.MAX_VALUE);
  }


  private static final class Task implements Future<Object>, Comparable<Task> {
    static final int PENDING = 0;
    static final int STARTED = 1;
    static final int CANCELLED = 2;

    final Runnable task;
    final long dueNanos;
    final long sequence;
    int state;

    Task(Runnable task, long dueNanos, long sequence) {
      this.task = task;
      this.dueNanos = dueNanos;
      this.sequence = sequence;
    }

    synchronized boolean start() {
      if (state != PENDING) {
        return false;
      }
      state = STARTED;
      return true;
    }

    @Override
    public synchronized boolean cancel(boolean mayInterruptIfRunning) {
      if (state != PENDING) {
        return false;
      }
      state = CANCELLED;
      return true;
    }

    @Override
    public synchronized boolean isCancelled() {
      return state == CANCELLED;
    }

    @Override
    public synchronized boolean isDone() {
      return state != PENDING;
    }

    @Override
    public Object get() throws ExecutionException {
      throw new UnsupportedOperationException("ManualScheduler tasks have no result");
    }

    @Override
    public Object get(long timeout, TimeUnit unit) {
      throw new UnsupportedOperationException("ManualScheduler tasks have no result");
    }

    @Override
    public int compareTo(Task that) {
      return dueNanos != that.dueNanos ? Long.compare(dueNanos - that.dueNanos, 0)
          : Long.compare(sequence, that.sequence);
    }
  }
}
