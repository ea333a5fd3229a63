package io.sustainablecache.jmh;

import io.sustainablecache.CacheStats;
import io.sustainablecache.Loader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.arcus.ArcusStore;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ConnectionFactoryBuilder;
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
 * A near hit against a hit through the shared store, one thread, in the same run (issue 14's
 * goal: at least 100 times the throughput, no allocation per near hit beyond the caller's own
 * objects, p99 at most 2 µs). Two caches over one ARCUS client and a real memcached, the same
 * key and a 100-character {@code String} value ({@code ValueCodec.utf8()}), TTL 1 h so no refresh
 * is ever due: {@link #storeHit} has no near cache; {@link #nearHit} has one (1,000 entries, bound
 * 1 s), whose polls of the invalidation log run in the background as in production (every 0.5 s),
 * with the sampling of near hits off and at its default (one in a thousand read again from the
 * store in the background: its allocation is counted with the near hits, as JMH counts every
 * thread), and with every near hit returning the value the near tier holds or a copy decoded
 * from its stored bytes ({@code copy}, {@code nearCacheCopy}).
 * Each fork prints the caches' counters at the end: the near cache's must show near hits only.
 *
 * <pre>{@code
 * mvn -B -DskipTests package
 * java -jar benchmarks/target/benchmarks.jar NearHitBenchmark -prof gc
 * java -jar benchmarks/target/benchmarks.jar NearHitBenchmark.nearHit -bm sample -tu us
 * java -jar benchmarks/target/benchmarks.jar NearHitBenchmark.nearHit -p sampling=0 -prof gc
 * }</pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@Threads(1)
@State(Scope.Benchmark)
public class NearHitBenchmark {

  /** The share of near hits checked against the store: off, and the default. */
  @Param({"0", "0.001"})
  public double sampling;

  /** Whether every near hit decodes its own copy of the value ({@code nearCacheCopy}). */
  @Param({"false", "true"})
  public boolean copy;

  ArcusClient client;
  SustainableCache<String> store;
  SustainableCache<String> near;
  Loader<String> loader;
  String key;

  @Setup(Level.Trial)
  public void setUp() throws IOException, InterruptedException {
    client = new ArcusClient(new ConnectionFactoryBuilder().build(),
        List.of(MemcachedServer.shared().address()));
    String namespace = "jmh-near-" + Long.toHexString(new SplittableRandom().nextLong() >>> 1);
    store = SustainableCache.builder(ArcusStore.of(client)).namespace(namespace)
        .ttl(Duration.ofHours(1)).codec(ValueCodec.utf8()).build();
    near = SustainableCache.builder(ArcusStore.of(client)).namespace(namespace)
        .ttl(Duration.ofHours(1)).codec(ValueCodec.utf8())
        .nearCache(1_000, Duration.ofSeconds(1), sampling).nearCacheCopy(copy).build();
    key = "hot";
    String value = "v".repeat(100);
    loader = k -> {
      throw new IllegalStateException("the benchmark's key was loaded: not a hit");
    };
    // Written through the near cache: its entries carry the namespace's generation (a cache
    // without one reads them; the other way round they would be misses).
    near.put(key, value);
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (near.stats().count("near_hit") == 0) {
      if (System.nanoTime() > giveUp) {
        throw new IllegalStateException("no near hit within 10 s: " + near.stats());
      }
      near.get(key, loader);
      Thread.sleep(10);
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    CacheStats nearStats = near.stats();
    System.out.println();
    System.out.println("store cache: " + store.stats());
    System.out.println("near cache: " + nearStats + "; near hits " + nearStats.count("near_hit")
        + ", near misses " + nearStats.count("near_miss"));
    near.close();
    store.close();
    client.shutdown();
  }

  /**
   * A hit through the shared store (one {@code gets}).
   *
   * @return the value, consumed by JMH
   */
  @Benchmark
  public String storeHit() {
    return store.get(key, loader);
  }

  /**
   * A near hit (no round trip).
   *
   * @return the value, consumed by JMH
   */
  @Benchmark
  public String nearHit() {
    return near.get(key, loader);
  }
}
