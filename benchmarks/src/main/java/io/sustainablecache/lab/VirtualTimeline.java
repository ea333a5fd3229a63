package io.sustainablecache.lab;

import java.time.Instant;
import java.util.PriorityQueue;
import java.util.concurrent.Executor;

/**
 * Simulated time: a priority queue of events run one at a time on the calling thread. Ties run
 * in scheduling order, so a run is a pure function of its configuration and seed. Not
 * thread-safe: everything happens on the thread that calls {@link #runUntil}.
 */
final class VirtualTimeline implements Timeline {

  private record Event(long at, long seq, Runnable task) {}

  private final PriorityQueue<Event> events = new PriorityQueue<>((a, b) -> a.at != b.at
      ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
  private long now;
  private long seq;

  VirtualTimeline(long startMillis) {
    this.now = startMillis;
  }

  @Override
  public long millis() {
    return now;
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(now);
  }

  /** Virtual time in nanoseconds: it only moves forward, so it is monotonic. */
  @Override
  public io.sustainablecache.Ticker ticker() {
    return () -> now * 1_000_000L;
  }

  @Override
  public void schedule(long atMillis, Runnable task) {
    events.add(new Event(Math.max(atMillis, now), seq++, task));
  }

  @Override
  public Executor workers() {
    return Runnable::run;
  }

  @Override
  public boolean isVirtual() {
    return true;
  }

  @Override
  public void block(long millis) {
    throw new IllegalStateException("virtual time never blocks a thread");
  }

  /** Cancellable tasks at {@code now + delay} of virtual time. */
  @Override
  public io.sustainablecache.Scheduler scheduler() {
    return (task, delay, unit) -> {
      java.util.concurrent.FutureTask<Void> future = new java.util.concurrent.FutureTask<>(task,
          null);
      schedule(now + unit.toMillis(delay), future);
      return future;
    };
  }

  /** Runs every event due up to {@code endMillis}, advancing the clock; returns how many ran. */
  long runUntil(long endMillis) {
    long ran = 0;
    while (!events.isEmpty() && events.peek().at <= endMillis) {
      Event event = events.poll();
      now = event.at;
      event.task.run();
      ran++;
    }
    now = Math.max(now, endMillis);
    return ran;
  }
}
