package io.sustainablecache.testing;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * An executor that queues tasks until the test runs them, and can be told to reject (as a
 * saturated pool does) or to silently discard (as a misconfigured one does). Use it as the
 * cache's refresh executor to decide exactly when background refreshes run.
 *
 * <p>Thread-safe; {@link #runAll()} runs tasks on the calling thread.
 */
public final class ManualExecutor implements Executor {

  /** What {@link #execute} does with a task. */
  public enum Behaviour {
    /** Keep it until {@link #runAll()} or {@link #runNext()}. */
    QUEUE,
    /** Throw {@link RejectedExecutionException}. */
    REJECT,
    /** Accept it and never run it. */
    DISCARD
  }

  private final Queue<Runnable> tasks = new ArrayDeque<>();
  private Behaviour behaviour = Behaviour.QUEUE;
  private long executed;

  /**
   * Changes what happens to tasks submitted from now on.
   *
   * @param behaviour the new behaviour; never {@code null}
   */
  public synchronized void behave(Behaviour behaviour) {
    this.behaviour = java.util.Objects.requireNonNull(behaviour, "behaviour");
  }

  @Override
  public synchronized void execute(Runnable command) {
    java.util.Objects.requireNonNull(command, "command");
    switch (behaviour) {
      case QUEUE -> tasks.add(command);
      case REJECT -> throw new RejectedExecutionException("rejected by ManualExecutor");
      case DISCARD -> { }
      default -> throw new AssertionError(behaviour);
    }
  }

  /**
   * The number of tasks waiting to run.
   *
   * @return a non-negative count
   */
  public synchronized int queued() {
    return tasks.size();
  }

  /**
   * The number of tasks run so far.
   *
   * @return a non-negative count
   */
  public synchronized long executed() {
    return executed;
  }

  /**
   * Runs the oldest queued task on the calling thread.
   *
   * @return whether a task ran
   */
  public boolean runNext() {
    Runnable next;
    synchronized (this) {
      next = tasks.poll();
      if (next == null) {
        return false;
      }
      executed++;
    }
    next.run();
    return true;
  }

  /**
   * Runs every queued task on the calling thread, including tasks queued by the tasks it runs.
   *
   * @return how many ran
   */
  public int runAll() {
    int ran = 0;
    while (runNext()) {
      ran++;
    }
    return ran;
  }
}
