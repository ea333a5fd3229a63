package io.sustainablecache.lab;

import java.time.InstantSource;
import java.util.concurrent.Executor;

/**
 * The lab's time and scheduling: virtual (a discrete-event loop on one thread, exactly
 * repeatable) or real (wall clock, thread pools). Also the {@link InstantSource} and, through
 * {@link #ticker()}, the ticker handed to the caches under test, so the library's own decisions
 * run on the lab's time.
 */
interface Timeline extends InstantSource {

  /** Runs {@code task} at {@code atMillis} (epoch milliseconds) or as soon as possible after. */
  void schedule(long atMillis, Runnable task);

  /** Where request bodies and load completions run: inline (virtual) or on worker threads. */
  Executor workers();

  /**
   * The monotonic view of this timeline for the caches under test ({@code
   * SustainableCacheBuilder.ticker}): virtual time in nanoseconds, or the system ticker.
   */
  io.sustainablecache.Ticker ticker();

  /** Whether time is simulated. */
  boolean isVirtual();

  /** Blocks the calling thread for {@code millis} of real time; virtual timelines never block. */
  void block(long millis);

  /**
   * The scheduler the caches under test use for their timed work (load timeouts, lease polls,
   * batch flushes): on this timeline's time.
   */
  io.sustainablecache.Scheduler scheduler();
}
