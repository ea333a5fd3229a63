package io.sustainablecache.internal;

/**
 * A task that must learn when it will not run: the start of a load, a refresh, the write after a
 * load. An executor that refuses it ({@link CallerRuns} once its caller left, the refresh executor
 * when full or closed, and the tasks {@code close()} finds still queued) calls {@link #refused()}
 * instead, so that the task's flight ends at once instead of holding its key until the load
 * timeout.
 */
interface Refusable extends Runnable {

  /** Called instead of {@link #run} when no executor will run the task. */
  void refused();

  /** A task that runs {@code task}, or {@code onRefusal} if it is refused. */
  static Refusable of(Runnable task, Runnable onRefusal) {
    return new Refusable() {
      @Override
      public void run() {
        task.run();
      }

      @Override
      public void refused() {
        onRefusal.run();
      }
    };
  }
}
