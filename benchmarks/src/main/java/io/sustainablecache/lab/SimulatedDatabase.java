package io.sustainablecache.lab;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The database behind the caches: every query takes {@code queryMillis}, optionally longer under
 * concurrency ({@code queryMillis * (1 + slowdown * (concurrent - 1))}, an overloaded DB). It
 * counts queries and concurrent queries.
 *
 * <p>In virtual time a query returns at once with a future the event loop completes later. In
 * real time it blocks the calling thread for the query time, as a JDBC call does, and returns a
 * completed future: a cold miss holds the request thread and a refresh holds a refresh thread.
 * Thread-safe.
 */
final class SimulatedDatabase {

  private final Timeline timeline;
  private final long queryMillis;
  private final double slowdown;
  private final AtomicInteger concurrent = new AtomicInteger();
  private final AtomicInteger maxConcurrentMeasured = new AtomicInteger();
  private final LongAdder queries = new LongAdder();
  private final LongAdder measuredQueries = new LongAdder();
  private final List<Long> queryStarts = new ArrayList<>();
  private final ConcurrentHashMap<String, Boolean> filledKeys = new ConcurrentHashMap<>();
  private volatile long measureFromMillis = Long.MAX_VALUE;

  SimulatedDatabase(Timeline timeline, long queryMillis, double slowdown) {
    this.timeline = timeline;
    this.queryMillis = queryMillis;
    this.slowdown = slowdown;
  }

  /** Queries issued from {@code startMillis} on count as measured (after warm-up). */
  void measureFrom(long startMillis) {
    this.measureFromMillis = startMillis;
  }

  CompletableFuture<String> query(String key) {
    long start = timeline.millis();
    int now = concurrent.incrementAndGet();
    queries.increment();
    if (start >= measureFromMillis) {
      measuredQueries.increment();
      maxConcurrentMeasured.accumulateAndGet(now, Math::max);
    }
    synchronized (queryStarts) {
      queryStarts.add(start);
    }
    long duration = Math.round(queryMillis * (1 + slowdown * (now - 1)));
    String value = key + "@" + start;
    if (timeline.isVirtual()) {
      CompletableFuture<String> result = new CompletableFuture<>();
      timeline.schedule(start + duration, () -> {
        concurrent.decrementAndGet();
        filledKeys.put(key, Boolean.TRUE);
        result.complete(value);
      });
      return result;
    }
    try {
      timeline.block(duration);
    } finally {
      concurrent.decrementAndGet();
    }
    filledKeys.put(key, Boolean.TRUE);
    return CompletableFuture.completedFuture(value);
  }

  /** Whether a query for {@code key} has completed: the key's first fill is done. */
  boolean filled(String key) {
    return filledKeys.containsKey(key);
  }

  long queries() {
    return queries.sum();
  }

  long measuredQueries() {
    return measuredQueries.sum();
  }

  int maxConcurrentMeasured() {
    return maxConcurrentMeasured.get();
  }

  List<Long> queryStarts() {
    synchronized (queryStarts) {
      return List.copyOf(queryStarts);
    }
  }
}
