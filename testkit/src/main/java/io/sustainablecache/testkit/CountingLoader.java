package io.sustainablecache.testkit;

import io.sustainablecache.Loader;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * A loader that stands in for a database: it takes a fixed time per load, returns a value that
 * depends only on the key ({@link #valueOf}), and counts its calls and how many of them ran
 * concurrently for one key, naming the threads of the first overlap. Thread-safe. (A thread
 * loads one key at a time, so thread names identify the concurrent calls.)
 */
final class CountingLoader implements Loader<String> {

  private final Duration loadTime;
  private final LongAdder loads = new LongAdder();
  private final ConcurrentHashMap<String, Set<String>> running = new ConcurrentHashMap<>();
  private final AtomicInteger maxConcurrentLoadsOfOneKey = new AtomicInteger();
  private final AtomicReference<String> firstOverlap = new AtomicReference<>();

  CountingLoader(Duration loadTime) {
    this.loadTime = loadTime;
  }

  /** The value the loader returns for a key, which every caller must see. */
  static String valueOf(String key) {
    return "value of " + key;
  }

  @Override
  public String load(String key) throws InterruptedException {
    Set<String> loaders = running.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet());
    String self = Thread.currentThread().getName();
    loaders.add(self);
    int concurrent = loaders.size();
    maxConcurrentLoadsOfOneKey.accumulateAndGet(concurrent, Math::max);
    if (concurrent > 1) {
      firstOverlap.compareAndSet(null, "key " + key + " loaded at once by " + loaders);
    }
    try {
      loads.increment();
      // The query's duration: real time that must pass, as in a database.
      Thread.sleep(loadTime.toMillis());
      return valueOf(key);
    } finally {
      loaders.remove(self);
    }
  }

  /** Loader calls so far, in every thread (misses and refreshes). */
  long loads() {
    return loads.sum();
  }

  /** The largest number of calls for one key that were running at the same time. */
  int maxConcurrentLoadsOfOneKey() {
    return maxConcurrentLoadsOfOneKey.get();
  }

  /** The first time two calls for one key overlapped: the key and the threads, or "none". */
  String firstOverlap() {
    String overlap = firstOverlap.get();
    return overlap == null ? "none" : overlap;
  }
}
