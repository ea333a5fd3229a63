package io.sustainablecache.lab;

import io.sustainablecache.CacheStats;
import io.sustainablecache.SustainableCache;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import net.spy.memcached.ArcusClient;

/**
 * One reader JVM of the transactions scenario ({@link TxScenario}): reads the scenario's rows
 * through the core API ({@code cache.get(key, loader)}) at a steady rate, the loader querying the
 * scenario's H2 server over JDBC ({@code SELECT version FROM item WHERE id = ?}, then {@code
 * queryMillis} more: the rest of a load's work), and records for every read the key, the version
 * it returned, when it began ({@code System.nanoTime()}, comparable across the machine's JVMs)
 * and how long it took.
 *
 * <p>Arguments: {@code cacheAddress jdbcUrl namespace keys queryMillis readsPerSecond seconds
 * seed outPrefix nearMillis [threads warm]} (nearMillis 0: no near cache; threads: reading
 * threads, 2 if not given; warm {@code true}: every key is read once before the reader reports
 * ready, the hot-key mode's warm-up, so that the measured loads are the writes' alone). Protocol
 * (as {@link HibernateReader}'s): writes {@code outPrefix.ready} once its cache client is
 * connected, then reads the start instant (wall-clock milliseconds) from {@code outPrefix.go}
 * once the lab wrote it. Writes {@code outPrefix.reads} (per read: int key, long version, long
 * startNanos, long latencyNanos), {@code outPrefix.loads} (per loader call from the start
 * instant on: long startNanos, long endNanos) and {@code outPrefix.stats} (one line: reads,
 * failed reads, loader calls, store errors, then the cache's fenced hits, fenced loads, leases
 * won and leases lost, counted from the start instant on). With {@code
 * -Dio.sustainablecache.lab.noCache=true} every read calls the loader, the cache untouched
 * ({@link OutageScenario}'s baseline).
 */
final class TxReader {

  /** Bytes per read in the {@code .reads} file. */
  static final int RECORD_BYTES = 4 + 8 + 8 + 8;
  /** Bytes per loader call in the {@code .loads} file. */
  static final int LOAD_BYTES = 8 + 8;
  private static final int DEFAULT_THREADS = 2;
  /** {@code -Dio.sustainablecache.lab.noCache=true}: reads without the cache. */
  static final String NO_CACHE_PROPERTY = "io.sustainablecache.lab.noCache";

  private TxReader() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 10 && args.length != 12) {
      System.err.println("usage: TxReader cacheAddress jdbcUrl namespace keys queryMillis"
          + " readsPerSecond seconds seed outPrefix nearMillis [threads warm]");
      System.exit(2);
    }
    String jdbcUrl = args[1];
    int keys = Integer.parseInt(args[3]);
    long queryNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[4]));
    int rate = Integer.parseInt(args[5]);
    int seconds = Integer.parseInt(args[6]);
    long seed = Long.parseLong(args[7]);
    String out = args[8];
    long nearMillis = Long.parseLong(args[9]);
    int threadCount = args.length == 12 ? Integer.parseInt(args[10]) : DEFAULT_THREADS;
    boolean warm = args.length == 12 && Boolean.parseBoolean(args[11]);
    boolean noCache = Boolean.getBoolean(NO_CACHE_PROPERTY);

    ArcusClient client = TxScenario.client(StampedeLab.StoreHandle.parseAddress(args[0]));
    SustainableCache<String> cache = TxScenario.cache(client, args[2], null, nearMillis);
    AtomicLong loaderCalls = new AtomicLong();
    java.util.concurrent.atomic.AtomicBoolean measuring =
        new java.util.concurrent.atomic.AtomicBoolean();
    ConcurrentLinkedQueue<long[]> loads = new ConcurrentLinkedQueue<>();
    List<Connection> connections = new ArrayList<>();
    ThreadLocal<PreparedStatement> query = ThreadLocal.withInitial(() -> {
      try {
        Connection c = DriverManager.getConnection(jdbcUrl, "sa", "");
        synchronized (connections) {
          connections.add(c);
        }
        return c.prepareStatement(TxScenario.SELECT);
      } catch (SQLException e) {
        throw new IllegalStateException("cannot connect to " + jdbcUrl + ": " + e, e);
      }
    });
    io.sustainablecache.Loader<String> loader = key -> {
      boolean counted = measuring.get();
      long loadStart = System.nanoTime();
      if (counted) {
        loaderCalls.incrementAndGet();
      }
      String version = TxScenario.select(query.get(), TxScenario.id(key));
      LockSupport.parkNanos(queryNanos);
      if (counted) {
        loads.add(new long[] {loadStart, System.nanoTime()});
      }
      return version;
    };

    int perThread = rate * seconds / threadCount;
    int[][] readKeys = new int[threadCount][perThread];
    long[][] versions = new long[threadCount][perThread];
    long[][] starts = new long[threadCount][perThread];
    long[][] latencies = new long[threadCount][perThread];
    int[] done = new int[threadCount];
    AtomicLong failed = new AtomicLong();
    TxScenario.awaitConnected(client);
    if (warm) {
      for (int k = 0; k < keys; k++) {
        cache.get(TxScenario.key(k), loader);
      }
    }
    Files.writeString(Path.of(out + ".ready"), "ready\n");
    long startAt = Long.parseLong(HibernateReader.await(Path.of(out + ".go")).trim());
    while (System.currentTimeMillis() < startAt) {
      Thread.sleep(Math.max(1, Math.min(50, startAt - System.currentTimeMillis())));
    }
    CacheStats before = cache.stats();
    measuring.set(true);
    long begin = System.nanoTime();
    long end = begin + TimeUnit.SECONDS.toNanos(seconds);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < threadCount; t++) {
      int thread = t;
      Thread reader = new Thread(() -> {
        SplittableRandom random = new SplittableRandom(seed * 31 + thread);
        long gapNanos = TimeUnit.SECONDS.toNanos(1) * threadCount / rate;
        long next = begin + thread * gapNanos / threadCount;
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
          next = Math.max(next + gapNanos, now - TimeUnit.MILLISECONDS.toNanos(100));
          int key = random.nextInt(keys);
          long start = System.nanoTime();
          String value;
          try {
            value = noCache ? loader.load(TxScenario.key(key))
                : cache.get(TxScenario.key(key), loader);
          } catch (Exception e) {
            failed.incrementAndGet(); // a failed read returns nothing to check
            continue;
          }
          readKeys[thread][i] = key;
          versions[thread][i] = Long.parseLong(value);
          starts[thread][i] = start;
          latencies[thread][i] = System.nanoTime() - start;
          i++;
        }
        done[thread] = i;
      }, "tx-reader-" + t);
      threads.add(reader);
      reader.start();
    }
    for (Thread thread : threads) {
      thread.join();
    }
    try (DataOutputStream data = new DataOutputStream(new BufferedOutputStream(
        Files.newOutputStream(Path.of(out + ".reads")), 1 << 16))) {
      for (int t = 0; t < threadCount; t++) {
        for (int i = 0; i < done[t]; i++) {
          data.writeInt(readKeys[t][i]);
          data.writeLong(versions[t][i]);
          data.writeLong(starts[t][i]);
          data.writeLong(latencies[t][i]);
        }
      }
    }
    try (DataOutputStream data = new DataOutputStream(new BufferedOutputStream(
        Files.newOutputStream(Path.of(out + ".loads")), 1 << 16))) {
      for (long[] load : loads) {
        data.writeLong(load[0]);
        data.writeLong(load[1]);
      }
    }
    CacheStats stats = cache.stats();
    int total = Arrays.stream(done).sum();
    Files.writeString(Path.of(out + ".stats"), total + " " + failed.get() + " "
        + loaderCalls.get() + " " + stats.storeErrorCount() + " "
        + (stats.count("fenced_hit") - before.count("fenced_hit")) + " "
        + (stats.count("fenced_load") - before.count("fenced_load")) + " "
        + (stats.count("lease_won") - before.count("lease_won")) + " "
        + (stats.count("lease_lost") - before.count("lease_lost")) + "\n");
    System.out.println("reads " + total + " " + stats);
    cache.close();
    client.shutdown();
    synchronized (connections) {
      for (Connection c : connections) {
        c.close();
      }
    }
    System.exit(0);
  }

  /** The reads of a reader's {@code .reads} file, appended to {@code reads}. */
  static void readInto(Path file, TxScenario.Reads reads) throws IOException {
    long records = Files.size(file) / RECORD_BYTES;
    try (DataInputStream data = new DataInputStream(new java.io.BufferedInputStream(
        Files.newInputStream(file), 1 << 16))) {
      for (long i = 0; i < records; i++) {
        reads.add(data.readInt(), data.readLong(), data.readLong(), data.readLong());
      }
    }
  }

  /** The loader calls of a reader's {@code .loads} file: {start, end} nanos each. */
  static List<long[]> loads(Path file) throws IOException {
    long records = Files.size(file) / LOAD_BYTES;
    List<long[]> loads = new ArrayList<>();
    try (DataInputStream data = new DataInputStream(new java.io.BufferedInputStream(
        Files.newInputStream(file), 1 << 16))) {
      for (long i = 0; i < records; i++) {
        loads.add(new long[] {data.readLong(), data.readLong()});
      }
    }
    return loads;
  }
}
