package io.sustainablecache;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * An executor that queues tasks until the test runs them, and can be told to reject or to
 * silently discard. Thread-safe.
 */
final class ManualExecutor implements Executor {

  enum Behaviour { QUEUE, REJECT, DISCARD }

  private final Queue<Runnable> tasks = new ArrayDeque<>();
  private Behaviour behaviour = Behaviour.QUEUE;

  synchronized void behave(Behaviour behaviour) {
    this.behaviour = behaviour;
  }

  @Override
  public synchronized void execute(Runnable command) {
    switch (behaviour) {
      case QUEUE -> tasks.add(command);
      case REJECT -> throw new RejectedExecutionException("rejected by test");
      case DISCARD -> { }
      default -> throw new AssertionError(behaviour);
    }
  }

  synchronized int queued() {
    return tasks.size();
  }

  /** Runs every queued task on the calling thread; returns how many ran. */
  int runAll() {
    int ran = 0;
    while (true) {
      Runnable next;
      synchronized (this) {
        next = tasks.poll();
      }
      if (next == null) {
        return ran;
      }
      next.run();
      ran++;
    }
  }
}
