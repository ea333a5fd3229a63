package io.sustainablecache.lab;

import java.time.Instant;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Wall-clock time. Scheduled tasks fire on a small scheduler and immediately hop to an unbounded
 * worker pool, so a slow request never delays the next arrival (open loop, like JMeter's constant
 * throughput timer). Thread-safe.
 */
final class RealTimeline implements Timeline, AutoCloseable {

  private final ScheduledExecutorService scheduler =
      Executors.newScheduledThreadPool(2, daemon("lab-scheduler-"));
  private final ExecutorService workers = Executors.newCachedThreadPool(daemon("lab-request-"));

  @Override
  public long millis() {
    return System.currentTimeMillis();
  }

  @Override
  public Instant instant() {
    return Instant.now();
  }

  @Override
  public io.sustainablecache.Ticker ticker() {
    return io.sustainablecache.Ticker.systemTicker();
  }

  @Override
  public void schedule(long atMillis, Runnable task) {
    scheduler.schedule(() -> workers.execute(task), Math.max(0, atMillis - millis()),
        TimeUnit.MILLISECONDS);
  }

  @Override
  public ExecutorService workers() {
    return workers;
  }

  @Override
  public boolean isVirtual() {
    return false;
  }

  @Override
  public void block(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  @Override
  public io.sustainablecache.Scheduler scheduler() {
    return io.sustainablecache.Scheduler.systemScheduler();
  }

  /** Waits until {@code atMillis} of wall-clock time. */
  void sleepUntil(long atMillis) {
    long wait = atMillis - millis();
    if (wait > 0) {
      block(wait);
    }
  }

  @Override
  public void close() {
    scheduler.shutdownNow();
    workers.shutdown();
    try {
      workers.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    workers.shutdownNow();
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
