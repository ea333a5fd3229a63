package io.sustainablecache;

import io.sustainablecache.internal.Engine;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Runs short tasks after a delay: how the cache times out loads, paces the polls of an instance
 * waiting for another instance's load, flushes refresh batches and forgets old failures.
 *
 * <p>The default, {@link #systemScheduler()}, is one daemon thread shared by every cache in the
 * JVM. Inject another to run the cache in simulated time (the delay is then a duration on the
 * cache's {@linkplain SustainableCacheBuilder#ticker ticker}) or to use a scheduler the application
 * already has. Tasks are short and never block; they may complete futures whose dependent stages
 * then run on the scheduler's thread.
 *
 * <p>Implementations must be thread-safe.
 */
@FunctionalInterface
public interface Scheduler {

  /**
   * Runs {@code task} once, after {@code delay}.
   *
   * @param task what to run; never {@code null}
   * @param delay how long to wait; zero or positive
   * @param unit the unit of {@code delay}; never {@code null}
   * @return a handle whose {@link Future#cancel} prevents the task from running if it has not
   *     started; never {@code null}
   * @throws java.util.concurrent.RejectedExecutionException if the scheduler is shut down
   */
  Future<?> schedule(Runnable task, long delay, TimeUnit unit);

  /**
   * The JVM-wide default: one daemon thread ({@code sustainable-cache-scheduler}) shared by all
   * caches, created on first use and never shut down; cancelled tasks are removed at once.
   *
   * @return the shared scheduler
   */
  static Scheduler systemScheduler() {
    return Engine.systemScheduler();
  }
}
