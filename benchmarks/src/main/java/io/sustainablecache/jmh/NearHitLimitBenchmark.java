package io.sustainablecache.jmh;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.sustainablecache.CacheStats;
import io.sustainablecache.Loader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.InMemoryStore;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A near hit at the in-JVM limit (issue 23, part 4): {@code SustainableCache.get(key, loader)}
 * answered by the near cache, against Caffeine's own {@code getIfPresent} on the same keys and
 * values, in the same run, with one thread and with two. The goals: a near hit at most 3 times
 * Caffeine's time (a third of its throughput), two threads at least 1.8 times one thread's
 * throughput, at most 1 B/op amortized with the default sampling.
 *
 * <p>1,000 resident keys ({@code "key-0"} …), each a 100-character {@code String}
 * ({@code ValueCodec.utf8()}); TTL 1 h, so no refresh is ever due (the SUS decision returns
 * before its random draw); a near cache of 1,000 entries with a bound of 1 s, its log polled in
 * the background as in production, and the default sampling (one near hit in a thousand read
 * again from the store in the background, whose allocation JMH counts with the near hits, since
 * it counts every thread of the fork). The store is the in-memory one of the {@code testing}
 * module ({@link InMemoryStore}): a near hit never reaches it; the sampled reads and the log's
 * polls do, without a network. Caffeine's cache ({@link #caffeine}) is built as the near tier
 * builds its own (bounded to 1,000 entries, maintenance on the calling thread) and holds the
 * same keys and values; so is a second one that expires its entries ({@link #caffeineExpiring},
 * which reads the ticker once per read, as a near hit does), and {@link #nanoTime} is that one
 * reading alone. Each thread walks the keys in order from its own offset.
 *
 * <p>Each fork prints the near cache's counters at the end: only near hits (no near miss after
 * setup, no load).
 *
 * <pre>{@code
 * mvn -B -o -q -pl benchmarks -am package -DskipTests
 * java -jar benchmarks/target/benchmarks.jar NearHitLimitBenchmark -f 2 -wi 3 -w 2s -i 5 -r 2s -prof gc
 * }</pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(2)
@State(Scope.Benchmark)
public class NearHitLimitBenchmark {

  static final int KEYS = 1_000;

  /** The share of near hits checked against the store ({@code 0.001} is the default). */
  @Param({"0.001"})
  public double sampling;

  InMemoryStore store;
  SustainableCache<String> near;
  Cache<String, String> caffeine;
  Cache<String, String> caffeineExpiring;
  Loader<String> loader;
  String[] keys;
  long nearMissesAfterSetup;

  /** Each thread's position in the keys. */
  @State(Scope.Thread)
  public static class Cursor {
    private static final AtomicInteger STARTS = new AtomicInteger();
    int next = STARTS.getAndAdd(KEYS / 2) % KEYS;

    int next() {
      int i = next;
      next = i + 1 == KEYS ? 0 : i + 1;
      return i;
    }
  }

  /**
   * The CPU time of each benchmark thread in each iteration, reported as {@code cpuNanos} in the
   * throughput's unit: divided by the throughput it is the CPU nanoseconds per operation, which
   * does not depend on how much of a core the thread got (this machine is shared). It includes
   * the operations JMH runs while synchronizing the threads' iterations, which it does not count
   * (a slight overestimate with two threads).
   */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.OPERATIONS)
  public static class CpuTime {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private long start;
    /** This thread's CPU time in the iteration, nanoseconds. */
    public long cpuNanos;

    @Setup(Level.Iteration)
    public void start() {
      cpuNanos = 0;
      start = THREADS.getCurrentThreadCpuTime();
    }

    @TearDown(Level.Iteration)
    public void stop() {
      cpuNanos = THREADS.getCurrentThreadCpuTime() - start;
    }
  }

  @Setup(Level.Trial)
  public void setUp() throws InterruptedException {
    store = InMemoryStore.create();
    near = SustainableCache.builder(store).namespace("jmh")
        .ttl(Duration.ofHours(1)).codec(ValueCodec.utf8())
        .nearCache(KEYS, Duration.ofSeconds(1), sampling).build();
    caffeine = Caffeine.newBuilder().executor(Runnable::run).maximumSize(KEYS).build();
    caffeineExpiring = Caffeine.newBuilder().executor(Runnable::run).maximumSize(KEYS)
        .expireAfterWrite(Duration.ofHours(1)).build();
    loader = k -> {
      throw new IllegalStateException("the benchmark's key was loaded: not a hit");
    };
    keys = new String[KEYS];
    for (int i = 0; i < KEYS; i++) {
      keys[i] = "key-" + i;
      String value = ("v" + i + "-").repeat(40).substring(0, 100);
      near.put(keys[i], value); // written through the near cache: the entry enters at once
      caffeine.put(keys[i], value);
      caffeineExpiring.put(keys[i], value);
    }
    // Every key must be a near hit before measuring (the first poll confirms the tier).
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      long misses = near.stats().count("near_miss");
      for (String key : keys) {
        near.get(key, loader);
        caffeine.getIfPresent(key);
        caffeineExpiring.getIfPresent(key);
      }
      if (near.stats().count("near_miss") == misses) {
        break;
      }
      if (System.nanoTime() > giveUp) {
        throw new IllegalStateException("not every key a near hit within 10 s: " + near.stats());
      }
      Thread.sleep(10);
    }
    nearMissesAfterSetup = near.stats().count("near_miss");
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    CacheStats stats = near.stats();
    System.out.println();
    System.out.println("near cache: near hits " + stats.count("near_hit") + ", near misses after"
        + " setup " + (stats.count("near_miss") - nearMissesAfterSetup) + ", samples "
        + stats.count("near_sample") + ", loads " + stats.loadSuccessCount() + "; " + stats);
    near.close();
  }

  /**
   * A near hit through {@code get}, one thread.
   *
   * @param cpu this thread's CPU time
   * @return the value, consumed by JMH
   */
  @Benchmark
  @Threads(1)
  public String nearHit(Cursor cursor, CpuTime cpu) {
    return near.get(keys[cursor.next()], loader);
  }

  /**
   * A near hit through {@code get}, two threads.
   *
   * @param cpu this thread's CPU time
   * @return the value, consumed by JMH
   */
  @Benchmark
  @Threads(2)
  public String nearHit2(Cursor cursor, CpuTime cpu) {
    return near.get(keys[cursor.next()], loader);
  }

  /**
   * Caffeine's {@code getIfPresent} on the same keys, one thread.
   *
   * @param cpu this thread's CPU time
   * @return the value, consumed by JMH
   */
  @Benchmark
  @Threads(1)
  public String caffeine(Cursor cursor, CpuTime cpu) {
    return caffeine.getIfPresent(keys[cursor.next()]);
  }

  /**
   * Caffeine's {@code getIfPresent} on the same keys, two threads.
   *
   * @param cpu this thread's CPU time
   * @return the value, consumed by JMH
   */
  @Benchmark
  @Threads(2)
  public String caffeine2(Cursor cursor, CpuTime cpu) {
    return caffeine.getIfPresent(keys[cursor.next()]);
  }

  /**
   * Caffeine's {@code getIfPresent} on the same keys in a cache that expires its entries ({@code
   * expireAfterWrite}), one thread: it reads its ticker ({@code System.nanoTime()}) once per read,
   * as a near hit must (the near cache's bound).
   *
   * @param cpu this thread's CPU time
   * @return the value, consumed by JMH
   */
  @Benchmark
  @Threads(1)
  public String caffeineExpiring(Cursor cursor, CpuTime cpu) {
    return caffeineExpiring.getIfPresent(keys[cursor.next()]);
  }

  /**
   * One {@code System.nanoTime()}, the default ticker's reading, which a near hit takes once:
   * the floor under a near hit on this machine, with Caffeine's read on top.
   *
   * @param cpu this thread's CPU time
   * @return the reading, consumed by JMH
   */
  @Benchmark
  @Threads(1)
  public long nanoTime(CpuTime cpu) {
    return System.nanoTime();
  }
}
