package io.sustainablecache.lab;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * A bounded refresh executor in virtual time, with the semantics of the cache's default
 * {@code ThreadPoolExecutor}: {@code threads} workers, a queue of {@code queueCapacity}, rejection
 * beyond. A worker stays busy until the database query its task started completes, as a thread
 * blocked in JDBC would. Used only on the virtual timeline's thread.
 */
final class SimExecutor implements Executor {

  private final VirtualTimeline timeline;
  private final int threads;
  private final int queueCapacity;
  private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
  private int busy;
  private boolean running;
  private CompletableFuture<?> claimed;

  SimExecutor(VirtualTimeline timeline, int threads, int queueCapacity) {
    this.timeline = timeline;
    this.threads = threads;
    this.queueCapacity = queueCapacity;
  }

  @Override
  public void execute(Runnable task) {
    if (busy < threads) {
      busy++;
      timeline.schedule(timeline.millis(), () -> run(task));
    } else if (queue.size() < queueCapacity) {
      queue.add(task);
    } else {
      throw new RejectedExecutionException("refresh executor saturated");
    }
  }

  /** Whether a task of this executor (a background refresh) is running on the timeline now. */
  boolean inTask() {
    return running;
  }

  /** Called by the loader: the running task's worker is busy until {@code query} completes. */
  <T> CompletableFuture<T> track(CompletableFuture<T> query) {
    if (running) {
      claimed = query;
    }
    return query;
  }

  private void run(Runnable task) {
    running = true;
    claimed = null;
    try {
      task.run();
    } finally {
      running = false;
    }
    CompletableFuture<?> query = claimed;
    claimed = null;
    if (query == null || query.isDone()) {
      release();
    } else {
      query.whenComplete((v, e) -> release());
    }
  }

  private void release() {
    Runnable next = queue.poll();
    if (next == null) {
      busy--;
    } else {
      timeline.schedule(timeline.millis(), () -> run(next));
    }
  }
}
