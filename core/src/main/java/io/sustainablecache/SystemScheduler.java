package io.sustainablecache;

import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/** {@link Scheduler#systemScheduler()}: one shared daemon thread, created lazily. */
enum SystemScheduler implements Scheduler {
  INSTANCE;

  /** Holder idiom: the thread starts only when a cache first schedules something. */
  private static final class Pool {
    static final ScheduledThreadPoolExecutor EXECUTOR = create();

    private static ScheduledThreadPoolExecutor create() {
      ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
        Thread thread = new Thread(runnable, "sustainable-cache-scheduler");
        thread.setDaemon(true);
        return thread;
      });
      executor.setRemoveOnCancelPolicy(true);
      executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
      return executor;
    }
  }

  @Override
  public Future<?> schedule(Runnable task, long delay, TimeUnit unit) {
    return Pool.EXECUTOR.schedule(task, delay, unit);
  }

  @Override
  public String toString() {
    return "Scheduler.systemScheduler()";
  }
}
