package io.sustainablecache.jmh;

import io.sustainablecache.CacheStats;
import io.sustainablecache.Loader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.arcus.ArcusStore;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.CASValue;
import net.spy.memcached.CachedData;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.transcoders.Transcoder;
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
 * Throughput of a cache hit on a real memcached, against the raw ARCUS client reading the same
 * item, measured in the same JMH run. The goal: the cache reaches at least 0.97 times the
 * raw client's throughput.
 *
 * <ul>
 *   <li>{@link #cacheGet}: {@code SustainableCache.get(key, loader)} on a hit (default SUS policy,
 *       1 h TTL so no refresh is ever due, {@code ValueCodec.bytes()}). It does one {@code gets}
 *       through {@link ArcusStore} ({@code asyncGets} with a raw-bytes transcoder, waited with a
 *       timeout), validates the envelope, copies the payload out (the bytes codec), takes the
 *       refresh decision and returns.</li>
 *   <li>{@link #rawGets}: the fair raw equivalent of that network work: {@code
 *       client.asyncGets(storeKey, rawBytes).get(700 ms)} of the same item (same bytes on the
 *       wire), no decoding.</li>
 *   <li>{@link #rawGet}: plain {@code client.get(storeKey)} with the client's default
 *       transcoder, what an application without this library would typically write. {@code get}
 *       is a lighter server command than {@code gets} (no CAS in the reply), so this is an upper
 *       bound rather than the fair baseline.</li>
 * </ul>
 *
 * <p>The memcached address is the system property {@code memcached} ({@code host:port}); without
 * it {@link MemcachedServer#shared()} (module {@code sustainable-cache-testkit-memcached}) uses
 * {@code MEMCACHED_ADDRESS} if set, else starts the local {@code memcached} binary on a free
 * loopback port in each fork (its Docker step needs Testcontainers, which {@code benchmarks.jar}
 * does not contain). The client, cache and item are created once per trial; each fork prints the cache's
 * counters at the end, which must show only hits. The value is {@code size} bytes (default 128)
 * plus the 16-byte envelope header (24 bytes with {@code -p generation=true}). Four threads share one client (the network, not the CPU, is
 * the bottleneck; override with {@code -t}).
 *
 * <p>Run (repeat, or use several forks, and compare the ratio within one run):
 * <pre>{@code
 * mvn -B -DskipTests package
 * java -jar benchmarks/target/benchmarks.jar HitPathBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s
 * java -Dmemcached=127.0.0.1:11211 -jar benchmarks/target/benchmarks.jar HitPathBenchmark ...
 * }</pre>
 * Forked JVMs inherit the host JVM's {@code -D} options, so {@code -Dmemcached} reaches them.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@Threads(4)
@State(Scope.Benchmark)
public class HitPathBenchmark {

  /** The store operation timeout, the ARCUS client's default. */
  static final long TIMEOUT_MILLIS = 700;

  static {
    if (System.getProperty("net.spy.log.LoggerImpl") == null) {
      System.setProperty("net.spy.log.LoggerImpl", "net.spy.memcached.compat.log.SLF4JLogger");
    }
  }

  /** Counts loader calls: a hit-path benchmark must never load after the setup. */
  static final LongAdder LOADS = new LongAdder();

  @Param({"128"})
  public int size;

  /**
   * Whether the cache keeps the namespace's generation without a near cache ({@code
   * invalidateAllBound(1 s)}, issue 21): entries carry it (8 bytes more), a hit compares it in
   * memory, and the generation is polled every 500 ms on the scheduler's thread. The core's
   * default since issue 32; here off ({@code invalidateAllBound(0)}) by default, so that the
   * figures compare with the earlier runs; {@code -p generation=true} measures it.
   */
  @Param({"false"})
  public boolean generation;

  /**
   * Whether the entries are signed ({@code entryKey}, issue 31, part 5): a 16-byte HMAC-SHA256
   * tag more per item, computed over the entry on every store hit. {@code -p signed=false,true}
   * measures its cost beside the checksum-only entry in one run.
   */
  @Param({"false"})
  public boolean signed;

  MemcachedServer server;
  ArcusClient client;
  SustainableCache<byte[]> cache;
  Loader<byte[]> loader;
  String key;
  String storeKey;
  byte[] value;

  @Setup(Level.Trial)
  public void setUp() throws IOException, InterruptedException, ExecutionException,
      TimeoutException {
    InetSocketAddress address;
    String configured = System.getProperty("memcached");
    if (configured != null && !configured.isBlank()) {
      int colon = configured.lastIndexOf(':');
      if (colon <= 0) {
        throw new IllegalArgumentException("-Dmemcached expects host:port: " + configured);
      }
      address = new InetSocketAddress(configured.substring(0, colon),
          Integer.parseInt(configured.substring(colon + 1)));
    } else {
      server = MemcachedServer.shared();
      address = server.address();
    }
    System.out.println();
    System.out.println("memcached: " + (server != null ? server.description() : configured));
    client = new ArcusClient(new ConnectionFactoryBuilder().build(), List.of(address));
    SustainableCacheBuilder<byte[]> builder = SustainableCache.builder(ArcusStore.of(client))
        .namespace("jmh")
        .ttl(Duration.ofHours(1));
    builder.invalidateAllBound(generation ? Duration.ofSeconds(1) : Duration.ZERO);
    if (signed) {
      byte[] entryKey = new byte[32];
      new SplittableRandom().nextBytes(entryKey);
      builder.entryKey(entryKey);
    }
    cache = builder.build();
    key = "hit-" + Long.toHexString(new SplittableRandom().nextLong());
    storeKey = "jmh:" + key;
    value = new byte[size];
    Arrays.fill(value, (byte) 'v');
    byte[] payload = value;
    loader = k -> {
      LOADS.increment();
      return payload;
    };
    cache.put(key, value);
    check(cache.get(key, loader).length == size, "cache get after put");
    int header = (generation ? Envelope.GENERATION_HEADER_SIZE : Envelope.HEADER_SIZE)
        + Envelope.CHECKSUM_SIZE + (signed ? Envelope.TAG_SIZE : 0);
    check(rawGets().length == size + header, "raw gets");
    check(rawGet().length == size + header, "raw get");
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    CacheStats stats = cache.stats();
    System.out.println();
    System.out.println("cache counters: " + stats + ", loader calls " + LOADS.sum());
    cache.close();
    client.shutdown();
    // The shared testkit server (if any) is stopped by its JVM shutdown hook.
  }

  /**
   * A hit through the cache.
   *
   * @return the cached value, consumed by JMH
   */
  @Benchmark
  public byte[] cacheGet() {
    return cache.get(key, loader);
  }

  /**
   * The raw client's {@code gets} of the same item with a raw-bytes transcoder.
   *
   * @return the stored bytes, consumed by JMH
   * @throws InterruptedException if interrupted
   * @throws ExecutionException if the operation fails
   * @throws TimeoutException if it takes longer than 700 ms
   */
  @Benchmark
  public byte[] rawGets() throws InterruptedException, ExecutionException, TimeoutException {
    CASValue<byte[]> found = client.asyncGets(storeKey, RawBytes.INSTANCE)
        .get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    return found.getValue();
  }

  /**
   * The raw client's plain {@code get} with its default transcoder.
   *
   * @return the stored bytes, consumed by JMH
   */
  @Benchmark
  public byte[] rawGet() {
    return (byte[]) client.get(storeKey);
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new IllegalStateException("setup check failed: " + what);
    }
  }

  /** Identity transcoder, like the store's own (which is package-private in the adapter). */
  static final class RawBytes implements Transcoder<byte[]> {
    static final RawBytes INSTANCE = new RawBytes();

    @Override
    public boolean asyncDecode(CachedData data) {
      return false;
    }

    @Override
    public CachedData encode(byte[] value) {
      return new CachedData(8 << 8, value, getMaxSize());
    }

    @Override
    public byte[] decode(CachedData data) {
      return data.getData();
    }

    @Override
    public int getMaxSize() {
      return Integer.MAX_VALUE;
    }
  }
}
