package io.sustainablecache.testkit.memcached;

import io.sustainablecache.Loader;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * A loader that stands in for a database: it takes a fixed time per load, returns a value that
 * depends only on the key ({@link #valueOf}), and counts its calls and how many of them ran
 * concurrently for one key, naming the threads of the first overlap. While it is {@linkplain
 * #failing failing} (a database outage), every call takes the same time and then throws an
 * {@link IOException}. Thread-safe. (A thread loads one key at a time, so thread names identify
 * the concurrent calls.)
 */
public final class CountingLoader implements Loader<String> {

  private final Duration loadTime;
  private final LongAdder loads = new LongAdder();
  private final ConcurrentHashMap<String, Set<String>> running = new ConcurrentHashMap<>();
  private final AtomicInteger maxConcurrentLoadsOfOneKey = new AtomicInteger();
  private final AtomicReference<String> firstOverlap = new AtomicReference<>();
  private final ConcurrentHashMap<String, Long> firstFailureMillis = new ConcurrentHashMap<>();
  private volatile boolean failing;

  /**
   * Creates a loader that answers.
   *
   * @param loadTime how long each call takes; never {@code null}
   */
  public CountingLoader(Duration loadTime) {
    this.loadTime = loadTime;
  }

  /**
   * The value the loader returns for a key, which every caller must see.
   *
   * @param key a key
   * @return {@code "value of " + key}
   */
  public static String valueOf(String key) {
    return "value of " + key;
  }

  @Override
  public String load(String key) throws InterruptedException, IOException {
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
      long started = System.currentTimeMillis();
      // The query's duration: real time that must pass, as in a database.
      Thread.sleep(loadTime.toMillis());
      if (failing) {
        firstFailureMillis.putIfAbsent(key, started);
        throw new IOException("database unavailable");
      }
      return valueOf(key);
    } finally {
      loaders.remove(self);
    }
  }

  /**
   * Makes every call from now on fail, or answer again.
   *
   * @param failing whether calls fail
   */
  public void failing(boolean failing) {
    this.failing = failing;
  }

  /**
   * Loader calls so far, in every thread (misses and refreshes).
   *
   * @return the number of calls started
   */
  public long loads() {
    return loads.sum();
  }

  /**
   * The largest number of calls for one key that were running at the same time.
   *
   * @return 0 before the first call, 1 if calls for one key never overlapped
   */
  public int maxConcurrentLoadsOfOneKey() {
    return maxConcurrentLoadsOfOneKey.get();
  }

  /**
   * The first time two calls for one key overlapped.
   *
   * @return the key and the threads, or {@code "none"}
   */
  public String firstOverlap() {
    String overlap = firstOverlap.get();
    return overlap == null ? "none" : overlap;
  }

  /**
   * When each key's first failed call started, epoch milliseconds: one entry per key that
   * failed.
   *
   * @return a snapshot
   */
  public List<Long> firstFailureMillis() {
    return List.copyOf(firstFailureMillis.values());
  }
}
