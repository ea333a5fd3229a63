package io.sustainablecache.jmh;

import io.sustainablecache.Loader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * The CPU time and allocation the cache adds to a hit, without the network: {@code
 * SustainableCache.get(key, loader)} over a store that answers every {@code gets} with the same
 * prebuilt item and allocates nothing ({@link #cacheGet}), against calling that store directly
 * ({@link #storeGets}). The difference is the cache layer's own cost per hit: key validation and
 * namespacing, envelope check, payload decode ({@code size} bytes, {@link ValueCodec#bytes()}
 * copies them), clock read, SUS decision ("early" read: no random draw), hit counter and the
 * completed future. {@link HitPathBenchmark} shows how that compares with a memcached round trip.
 *
 * <p>Run:
 * <pre>{@code
 * java -jar benchmarks/target/benchmarks.jar CacheOverheadBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -prof gc
 * }</pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Thread)
public class CacheOverheadBenchmark {

  @Param({"128"})
  public int size;

  /**
   * Whether the cache keeps the namespace's generation without a near cache ({@code
   * invalidateAllBound}, issue 21): the stored entry carries generation 42, which the store's
   * generation item holds, and each hit compares them in memory. {@code -p
   * generation=false,true} measures both in one run.
   */
  @Param({"false"})
  public boolean generation;

  /**
   * Whether the entry is signed ({@code entryKey}, issue 31, part 5): a hit verifies its
   * HMAC-SHA256 tag instead of the checksum alone. {@code -p signed=false,true} measures both in
   * one run; the setup writes the signed entry through the cache itself.
   */
  @Param({"false"})
  public boolean signed;

  ConstantStore store;
  SustainableCache<byte[]> cache;
  Loader<byte[]> loader;
  String key;
  String storeKey;

  @Setup(Level.Trial)
  public void setUp() {
    long now = System.currentTimeMillis();
    byte[] payload = new byte[size];
    Arrays.fill(payload, (byte) 'v');
    byte[] envelope = Envelope.encode(now, now + Duration.ofHours(1).toMillis(), 5,
        generation ? GENERATION : 0, payload);
    store = new ConstantStore(Optional.of(new StoreItem(envelope, 42L)), generation);
    SustainableCacheBuilder<byte[]> builder = SustainableCache.builder(store).namespace("jmh")
        .ttl(Duration.ofHours(1)).fleetLease(false);
    // with it, one poll at build and no other in a run; without it, off (the core's default
    // since issue 32 is on), so that the figures compare with the earlier runs
    builder.invalidateAllBound(generation ? Duration.ofHours(1) : Duration.ZERO);
    key = "hit";
    storeKey = "jmh:hit";
    if (signed) {
      byte[] entryKey = new byte[32];
      Arrays.fill(entryKey, (byte) 'k');
      builder.entryKey(entryKey);
      cache = builder.build();
      cache.put(key, payload); // the signed entry, written through the store's set
    } else {
      cache = builder.build();
    }
    loader = k -> {
      throw new IllegalStateException("a hit must not load");
    };
    if (cache.get(key, loader).length != size) {
      throw new IllegalStateException("setup check failed");
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    System.out.println();
    System.out.println("cache counters: " + cache.stats());
    cache.close();
  }

  /**
   * A hit through the cache over the constant store.
   *
   * @return the decoded value, consumed by JMH
   */
  @Benchmark
  public byte[] cacheGet() {
    return cache.get(key, loader);
  }

  /**
   * The store call alone, the part of {@link #cacheGet} that is not the cache's.
   *
   * @return the stored item, consumed by JMH
   */
  @Benchmark
  public Optional<StoreItem> storeGets() throws Exception {
    return store.gets(storeKey).get(1, TimeUnit.SECONDS);
  }

  /** The generation of {@link #generation}'s entry and of the store's generation item. */
  static final long GENERATION = 42;

  /**
   * Answers every read with one prebuilt, already completed future (with {@code generation},
   * the generation's item for its key); a {@code set} (the setup's signed entry) replaces it,
   * other writes are not expected.
   */
  static final class ConstantStore implements CacheStore {
    /** The item every read answers; {@link #set} (the setup's only write) replaces it. */
    private volatile CompletableFuture<Optional<StoreItem>> item;
    /** The generation item's key, or {@code null} without a generation. */
    private final String generationKey;
    private final CompletableFuture<Optional<StoreItem>> generationItem =
        CompletableFuture.completedFuture(Optional.of(new StoreItem(
            Long.toString(GENERATION).getBytes(StandardCharsets.US_ASCII), 7L)));

    ConstantStore(Optional<StoreItem> item, boolean generation) {
      this.item = CompletableFuture.completedFuture(item);
      this.generationKey = generation ? "jmh:\u007Fnear:gen" : null;
    }

    @Override
    public CompletableFuture<Optional<StoreItem>> gets(String key) {
      return generationKey != null && key.equals(generationKey) ? generationItem : item;
    }

    @Override
    public boolean hasCounters() {
      return true; // what invalidateAllBound asks of a store; incr itself is never called
    }

    @Override
    public CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
      throw new UnsupportedOperationException("read-only"); // a store with counters, unused
    }

    @Override
    public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
      throw new UnsupportedOperationException("read-only");
    }

    @Override
    public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
      item = CompletableFuture.completedFuture(Optional.of(new StoreItem(value.clone(), 42L)));
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
        int exptime) {
      throw new UnsupportedOperationException("read-only");
    }

    @Override
    public CompletableFuture<Boolean> delete(String key) {
      throw new UnsupportedOperationException("read-only");
    }
  }
}
