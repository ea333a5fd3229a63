package io.sustainablecache.lab;

import com.github.benmanes.caffeine.cache.Caffeine;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.arcus.ArcusStore;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.ForwardingStore;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ConnectionFactoryBuilder;

/**
 * One reader JVM of the near scenario's churn runs ({@link NearScenario}): reads hot keys through
 * a cache at a steady rate and records, for every read, the key, the version it returned and
 * when it began ({@code System.nanoTime()}); every 50 ms it samples its counters (reads, local
 * hits: near hits, or the recipe's hits; store reads). The value of a key is its version in the "database", another memcached
 * that the loader reads and the scenario's writer changes.
 *
 * <p>Modes: {@code near} (the library's near cache, bound Δ), {@code ttl} (the recipe most
 * services use: a Caffeine cache whose entries expire Δ after they were written, in front of the
 * library without a near cache), {@code none} (the library alone).
 *
 * <p>Arguments: {@code mode cacheAddresses(comma-separated) dbAddress namespace keys deltaMillis
 * readsPerSecond seconds startAtWallMillis seed outPrefix}. Writes {@code outPrefix.reads} (per
 * read: int key, long version, long startNanos) and {@code outPrefix.samples} (per line: nanos
 * reads nearHits storeReads).
 */
final class NearReader {

  static final Duration TTL = Duration.ofSeconds(10);
  static final Duration OPERATION_TIMEOUT = Duration.ofMillis(500);
  static final int NEAR_SIZE = 10_000;
  private static final int THREADS = 2;

  private NearReader() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 11) {
      System.err.println("usage: NearReader near|ttl|none cacheAddresses dbAddress namespace keys"
          + " deltaMillis readsPerSecond seconds startAtWallMillis seed outPrefix");
      System.exit(2);
    }
    String mode = args[0];
    List<InetSocketAddress> cacheAddresses = new ArrayList<>();
    for (String address : args[1].split(",")) {
      cacheAddresses.add(StampedeLab.StoreHandle.parseAddress(address));
    }
    InetSocketAddress dbAddress = StampedeLab.StoreHandle.parseAddress(args[2]);
    String namespace = args[3];
    int keys = Integer.parseInt(args[4]);
    Duration delta = Duration.ofMillis(Long.parseLong(args[5]));
    int rate = Integer.parseInt(args[6]);
    int seconds = Integer.parseInt(args[7]);
    long startAt = Long.parseLong(args[8]);
    long seed = Long.parseLong(args[9]);
    String out = args[10];

    ArcusClient cacheClient = new ArcusClient(new ConnectionFactoryBuilder()
        .setOpTimeout(OPERATION_TIMEOUT.toMillis()).build(), cacheAddresses);
    ArcusClient dbClient = new ArcusClient(new ConnectionFactoryBuilder().build(),
        List.of(dbAddress));
    AtomicLong storeReads = new AtomicLong();
    CacheStore store = new ForwardingStore(ArcusStore.builder(cacheClient)
        .operationTimeout(OPERATION_TIMEOUT).build()) {
      @Override
      public CompletableFuture<Optional<StoreItem>> gets(String key) {
        storeReads.incrementAndGet();
        return super.gets(key);
      }
    };
    var builder = SustainableCache.builder(store).namespace(namespace).ttl(TTL)
        .codec(ValueCodec.utf8());
    if (mode.equals("near")) {
      builder.nearCache(NEAR_SIZE, delta);
    }
    SustainableCache<String> cache = builder.build();
    Function<String, String> loader = key -> {
      Object value = dbClient.get(key);
      return value == null ? "0" : value.toString().trim();
    };
    Function<String, String> read;
    AtomicLong localMisses = new AtomicLong();
    if (mode.equals("ttl")) {
      com.github.benmanes.caffeine.cache.Cache<String, String> local = Caffeine.newBuilder()
          .maximumSize(NEAR_SIZE).expireAfterWrite(delta).build();
      read = key -> local.get(key, k -> {
        localMisses.incrementAndGet();
        return cache.get(k, loader::apply);
      });
    } else {
      read = key -> cache.get(key, loader::apply);
    }

    int perThread = rate * seconds / THREADS;
    int[][] readKeys = new int[THREADS][perThread];
    long[][] versions = new long[THREADS][perThread];
    long[][] starts = new long[THREADS][perThread];
    int[] done = new int[THREADS];
    AtomicLong reads = new AtomicLong();
    List<long[]> samples = new ArrayList<>();
    while (System.currentTimeMillis() < startAt) {
      Thread.sleep(Math.max(1, Math.min(50, startAt - System.currentTimeMillis())));
    }
    long begin = System.nanoTime();
    long end = begin + TimeUnit.SECONDS.toNanos(seconds);
    Thread sampler = new Thread(() -> {
      while (System.nanoTime() < end + 50_000_000L) {
        synchronized (samples) {
          long readsSoFar = reads.get();
          long localHits = mode.equals("ttl") ? Math.max(0, readsSoFar - localMisses.get())
              : cache.stats().count("near_hit");
          samples.add(new long[] {System.nanoTime(), readsSoFar, localHits, storeReads.get()});
        }
        LockSupport.parkNanos(50_000_000L);
      }
    }, "near-reader-sampler");
    sampler.start();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      int thread = t;
      Thread reader = new Thread(() -> {
        SplittableRandom random = new SplittableRandom(seed * 31 + thread);
        long gapNanos = TimeUnit.SECONDS.toNanos(1) * THREADS / rate;
        long next = begin;
        int i = 0;
        while (i < perThread) {
          long now = System.nanoTime();
          if (now >= end) {
            break;
          }
          if (now < next) {
            LockSupport.parkNanos(Math.min(next - now, 1_000_000L));
            continue;
          }
          next += gapNanos;
          int key = random.nextInt(keys);
          long start = System.nanoTime();
          String value;
          try {
            value = read.apply("k" + key);
          } catch (RuntimeException e) {
            continue; // a failed read returns nothing to check
          }
          readKeys[thread][i] = key;
          versions[thread][i] = Long.parseLong(value);
          starts[thread][i] = start;
          i++;
          reads.incrementAndGet();
        }
        done[thread] = i;
      }, "near-reader-" + t);
      threads.add(reader);
      reader.start();
    }
    for (Thread thread : threads) {
      thread.join();
    }
    sampler.join();
    try (DataOutputStream data = new DataOutputStream(new BufferedOutputStream(
        Files.newOutputStream(Path.of(out + ".reads")), 1 << 16))) {
      for (int t = 0; t < THREADS; t++) {
        for (int i = 0; i < done[t]; i++) {
          data.writeInt(readKeys[t][i]);
          data.writeLong(versions[t][i]);
          data.writeLong(starts[t][i]);
        }
      }
    }
    try (PrintWriter text = new PrintWriter(Files.newBufferedWriter(Path.of(out + ".samples"),
        StandardCharsets.US_ASCII))) {
      synchronized (samples) {
        for (long[] sample : samples) {
          text.println(sample[0] + " " + sample[1] + " " + sample[2] + " " + sample[3]);
        }
      }
    }
    System.out.println("reads " + Arrays.stream(done).sum() + " " + cache.stats());
    cache.close();
    cacheClient.shutdown();
    dbClient.shutdown();
    System.exit(0);
  }

  /** Reads a reader's {@code .reads} file into arrays from {@code from}; returns the end. */
  static int readInto(Path file, int[] keys, long[] versions, long[] starts, int from)
      throws IOException {
    long records = Files.size(file) / 20;
    int n = from;
    try (var data = new java.io.DataInputStream(new java.io.BufferedInputStream(
        Files.newInputStream(file), 1 << 16))) {
      for (long i = 0; i < records; i++, n++) {
        keys[n] = data.readInt();
        versions[n] = data.readLong();
        starts[n] = data.readLong();
      }
    }
    return n;
  }
}
