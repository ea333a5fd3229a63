package io.sustainablecache.lab;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;

/**
 * The database behind the caches: every query takes {@code queryMillis}, optionally longer under
 * concurrency ({@code queryMillis * (1 + slowdown * (concurrent - 1))}, an overloaded DB). A bulk
 * query ({@link #queryAll}, {@code SELECT ... WHERE id IN (...)}) takes as long as one query and
 * counts as one call but as one load per key. Ids matching {@link #absentIds} have no row (the
 * query returns {@code null}); queries started within {@link #failDuring} fail after their query
 * time. It records every query (start, end, keys), from which the lab computes loads, concurrency
 * and the charts.
 *
 * <p>In virtual time a query returns at once with a future the event loop completes later. In
 * real time it blocks the calling thread for the query time, as a JDBC call does, and returns a
 * completed future: a cold miss holds the request thread and a refresh holds a refresh thread.
 * Every value is unique ({@code key@start#n}, with {@code /r} appended when a background refresh
 * loaded it), so a request can tell whether it received the value it read from the cache or one
 * loaded for it, and the store can tell refreshes from fills. Thread-safe.
 */
final class SimulatedDatabase {

  /**
   * One query as the database saw it.
   *
   * @param start when it started, epoch milliseconds of the timeline
   * @param end when it returned
   * @param key the id (the first id of a bulk query)
   * @param keys how many ids it loaded (1, or the size of a bulk query)
   * @param failed whether it failed
   * @param refresh whether a background refresh asked for it (not a caller's miss)
   */
  record Query(long start, long end, String key, int keys, boolean failed, boolean refresh) {

    Query shifted(long by) {
      return new Query(start - by, end - by, key, keys, failed, refresh);
    }
  }

  /** The suffix of values loaded by a background refresh, so that the store can tell them. */
  static final String REFRESH_SUFFIX = "/r";

  private final Timeline timeline;
  private final long queryMillis;
  private final double slowdown;
  private final AtomicInteger concurrent = new AtomicInteger();
  private final LongAdder loads = new LongAdder();
  private final AtomicLong sequence = new AtomicLong();
  private final List<Query> queries = new ArrayList<>();
  private final ConcurrentHashMap<String, Boolean> filledKeys = new ConcurrentHashMap<>();
  private volatile Predicate<String> absent = key -> false;
  private volatile long failFrom = Long.MAX_VALUE;
  private volatile long failTo = Long.MIN_VALUE;

  SimulatedDatabase(Timeline timeline, long queryMillis, double slowdown) {
    this.timeline = timeline;
    this.queryMillis = queryMillis;
    this.slowdown = slowdown;
  }

  /** Ids for which the database has no row. */
  void absentIds(Predicate<String> absentIds) {
    this.absent = absentIds;
  }

  /** Queries started in {@code [fromMillis, toMillis)} fail (after their query time). */
  void failDuring(long fromMillis, long toMillis) {
    this.failFrom = fromMillis;
    this.failTo = toMillis;
  }

  boolean failing(long atMillis) {
    return atMillis >= failFrom && atMillis < failTo;
  }

  /** One row: its value, or {@code null} if the id has none. */
  CompletableFuture<String> query(String key) {
    return query(key, false);
  }

  /** One row, for a caller's miss or for a background refresh. */
  CompletableFuture<String> query(String key, boolean refresh) {
    return run(List.of(key), refresh).thenApply(values -> values.get(key));
  }

  /** One bulk query; the map leaves out ids without a row. */
  CompletableFuture<Map<String, String>> queryAll(Collection<String> keys, boolean refresh) {
    return run(keys, refresh);
  }

  private CompletableFuture<Map<String, String>> run(Collection<String> keys, boolean refresh) {
    long start = timeline.millis();
    int now = concurrent.incrementAndGet();
    loads.add(keys.size());
    boolean fails = failing(start);
    long duration = Math.round(queryMillis * (1 + slowdown * (now - 1)));
    Map<String, String> values = new HashMap<>();
    for (String key : keys) {
      if (!absent.test(key)) {
        values.put(key, key + "@" + start + "#" + sequence.incrementAndGet()
            + (refresh ? REFRESH_SUFFIX : ""));
      }
    }
    String first = keys.iterator().next();
    if (timeline.isVirtual()) {
      CompletableFuture<Map<String, String>> result = new CompletableFuture<>();
      timeline.schedule(start + duration, () -> {
        finish(start, first, keys, fails, refresh);
        if (fails) {
          result.completeExceptionally(new IOException("database unavailable"));
        } else {
          result.complete(values);
        }
      });
      return result;
    }
    try {
      timeline.block(duration);
    } finally {
      finish(start, first, keys, fails, refresh);
    }
    return fails ? CompletableFuture.failedFuture(new IOException("database unavailable"))
        : CompletableFuture.completedFuture(values);
  }

  private void finish(long start, String first, Collection<String> keys, boolean failed,
      boolean refresh) {
    concurrent.decrementAndGet();
    if (!failed) {
      for (String key : keys) {
        filledKeys.put(key, Boolean.TRUE);
      }
    }
    Query query = new Query(start, timeline.millis(), first, keys.size(), failed, refresh);
    synchronized (queries) {
      queries.add(query);
    }
  }

  /** Whether a query for {@code key} has completed: the key's first fill is done. */
  boolean filled(String key) {
    return filledKeys.containsKey(key);
  }

  /** Loads (ids queried, bulk queries counting each id) since the start. */
  long loads() {
    return loads.sum();
  }

  /** Every query that has returned, in the order they returned. */
  List<Query> queries() {
    synchronized (queries) {
      return List.copyOf(queries);
    }
  }
}
