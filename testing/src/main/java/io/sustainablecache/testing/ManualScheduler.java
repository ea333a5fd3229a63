package io.sustainablecache.testing;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.Scheduler;
import java.time.InstantSource;
import java.util.PriorityQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Scheduler} in the time of a clock (usually a {@link FakeClock}): tasks are due at
 * {@code clock.millis() + delay} and run only when the test calls {@link #runDue()} after moving
 * the clock, on the test's thread. Makes load timeouts, lease polls and batch flushes
 * deterministic.
 *
 * <p>Thread-safe; tasks run on the thread calling {@link #runDue()}, in due order, ties in
 * scheduling order.
 */
public final class ManualScheduler implements Scheduler {

  private final InstantSource clock;
  private final PriorityQueue<Task> tasks = new PriorityQueue<>();
  private long sequence;

  private ManualScheduler(InstantSource clock) {
    this.clock = clock;
  }

  /**
   * A scheduler whose delays are measured on {@code clock}.
   *
   * @param clock the clock tasks are due by; never {@code null}
   * @return a new scheduler with no tasks
   */
  public static ManualScheduler on(InstantSource clock) {
    return new ManualScheduler(requireNonNull(clock, "clock"));
  }

  @Override
  public synchronized Future<?> schedule(Runnable task, long delay, TimeUnit unit) {
    requireNonNull(task, "task");
    if (delay < 0) {
      throw new IllegalArgumentException("delay must not be negative: " + delay);
    }
    Task scheduled = new Task(task, clock.millis() + unit.toMillis(delay), sequence++);
    tasks.add(scheduled);
    return scheduled;
  }

  /**
   * Runs every task due by the clock's current time, including tasks they schedule that are due
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
        if (next == null || next.dueMillis > clock.millis()) {
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
   * When the earliest pending task is due, or {@code Long.MAX_VALUE} if none.
   *
   * @return epoch milliseconds on the clock
   */
  public synchronized long nextDueMillis() {
    return tasks.stream().filter(t -> t.state == Task.PENDING)
        .mapToLong(t -> t.dueMillis).min().orElse(Long.MAX_VALUE);
  }

  private static final class Task implements Future<Object>, Comparable<Task> {
    static final int PENDING = 0;
    static final int STARTED = 1;
    static final int CANCELLED = 2;

    final Runnable task;
    final long dueMillis;
    final long sequence;
    int state;

    Task(Runnable task, long dueMillis, long sequence) {
      this.task = task;
      this.dueMillis = dueMillis;
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
      return dueMillis != that.dueMillis ? Long.compare(dueMillis, that.dueMillis)
          : Long.compare(sequence, that.sequence);
    }
  }
}
