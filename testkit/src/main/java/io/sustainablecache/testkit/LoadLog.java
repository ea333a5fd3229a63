package io.sustainablecache.testkit;

import io.sustainablecache.Loader;
import io.sustainablecache.testkit.memcached.CountingLoader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A {@link CountingLoader} that also records every call: when it started ({@link
 * System#nanoTime()}), for which key, and whether a refresh thread of the cache ran it (a
 * background refresh) or a caller's thread (a miss the caller led). Thread-safe.
 */
final class LoadLog implements Loader<String> {

  /**
   * One loader call.
   *
   * @param nanos when it started, in {@link System#nanoTime()}
   * @param key the caller's key
   * @param refresh whether a refresh thread ran it; otherwise a caller did (a miss)
   */
  record Load(long nanos, String key, boolean refresh) {}

  private final CountingLoader database;
  private final String refreshThreadPrefix;
  private final ConcurrentLinkedQueue<Load> loads = new ConcurrentLinkedQueue<>();

  /**
   * @param loadTime how long each call takes
   * @param refreshThreadPrefix the name prefix of the cache's refresh threads
   */
  LoadLog(Duration loadTime, String refreshThreadPrefix) {
    this.database = new CountingLoader(loadTime);
    this.refreshThreadPrefix = refreshThreadPrefix;
  }

  @Override
  public String load(String key) throws InterruptedException, java.io.IOException {
    loads.add(new Load(System.nanoTime(), key,
        Thread.currentThread().getName().startsWith(refreshThreadPrefix)));
    return database.load(key);
  }

  /** Every call so far, in the order they started. */
  List<Load> snapshot() {
    List<Load> all = new ArrayList<>(loads);
    all.sort(Comparator.comparingLong(Load::nanos));
    return all;
  }

  /** The counting loader behind the log: calls, and overlapping calls of one key. */
  CountingLoader database() {
    return database;
  }
}
