package io.sustainablecache.internal;

import io.sustainablecache.Scheduler;
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
        Thread thread = new SchedulerThread(runnable);
        thread.setDaemon(true);
        return thread;
      });
      executor.setRemoveOnCancelPolicy(true);
      executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
      return executor;
    }
  }

  /** The shared thread's class, so that {@link #isSchedulerThread} need not remember it. */
  private static final class SchedulerThread extends Thread {
    SchedulerThread(Runnable runnable) {
      super(runnable, "sustainable-cache-scheduler");
    }
  }

  /** Whether {@code thread} is the shared scheduler's thread (see {@link Waiting}). */
  static boolean isSchedulerThread(Thread thread) {
    return thread instanceof SchedulerThread;
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
