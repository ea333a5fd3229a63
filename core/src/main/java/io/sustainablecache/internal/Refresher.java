package io.sustainablecache.internal;

import io.sustainablecache.spi.CacheStore;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The executor of background work (refresh loads, and writes that follow an asynchronous load):
 * the caller's, or a bounded pool the cache owns and shuts down on {@link #close()}. Never runs a
 * task on the submitting thread: a task the executor rejects (full or closed), or that {@code
 * close()} finds still queued, is {@linkplain Refusable#refused() refused}, which ends its flight
 * and counts it. Thread-safe.
 */
final class Refresher implements AutoCloseable {

  private final Executor executor;
  private final ThreadPoolExecutor owned;
  private final long closeTimeoutMillis;
  private final CacheStore store;
  private final Executor asExecutor = task -> {
    if (!offer(task)) {
      throw new RejectedExecutionException("the refresh executor refused the task");
    }
  };
  private volatile boolean closed;

  Refresher(CacheConfig<?> config) {
    if (config.executor() != null) {
      this.executor = config.executor();
      this.owned = null;
    } else {
      this.owned = newPool(config.namespace(), config.refreshThreads(),
          config.refreshQueueCapacity());
      this.executor = owned;
    }
    this.closeTimeoutMillis = config.closeTimeout().toMillis();
    this.store = config.store();
  }

  /**
   * Hands a task to the executor; if the executor rejects it or the cache is closed, calls its
   * {@link Refusable#refused()} on this thread instead.
   *
   * @return whether the executor accepted the task
   */
  boolean submit(Refusable task) {
    if (offer(task)) {
      return true;
    }
    task.refused();
    return false;
  }

  /** Hands a task to the executor; {@code false} if it was rejected (the task will not run). */
  private boolean offer(Runnable task) {
    if (closed) {
      return false;
    }
    try {
      executor.execute(task);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }

  /**
   * The executor as an {@link Executor}: throws {@link RejectedExecutionException} for a task it
   * rejects, leaving the refusal to the caller ({@link CallerRuns}).
   */
  Executor asExecutor() {
    return asExecutor;
  }

  boolean isClosed() {
    return closed;
  }

  /**
   * Stops accepting tasks; shuts the owned pool down, waits up to the close timeout for running
   * tasks, then interrupts them and waits up to the close timeout once more; on a thread that may
   * not wait ({@link Waiting}) it only shuts the pool down. A caller's executor is left alone.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (owned == null) {
      return;
    }
    owned.shutdown();
    if (!Waiting.allowed(store)) {
      return; // running and queued refreshes end on their own; this thread must not wait
    }
    try {
      if (!owned.awaitTermination(closeTimeoutMillis, TimeUnit.MILLISECONDS)) {
        // tasks never started end their flights now instead of at their load timeout
        for (Runnable neverRun : owned.shutdownNow()) {
          if (neverRun instanceof Refusable refusable) {
            refusable.refused();
          }
        }
        // a refresh that was waiting (for its lease, say) has let go of its flight by then
        owned.awaitTermination(closeTimeoutMillis, TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      owned.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  private static ThreadPoolExecutor newPool(String namespace, int threads, int queueCapacity) {
    BlockingQueue<Runnable> queue = queueCapacity == 0
        ? new SynchronousQueue<>()
        : new ArrayBlockingQueue<>(queueCapacity);
    String prefix = "sustainable-cache-refresh-" + (namespace.isEmpty() ? "" : namespace + "-");
    AtomicInteger counter = new AtomicInteger();
    ThreadFactory factory = runnable -> {
      Thread thread = new Thread(runnable, prefix + counter.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
    ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
        queue, factory, new ThreadPoolExecutor.AbortPolicy());
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }
}
