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
 * seed outPrefix nearMillis} (0: no near cache). Protocol (as {@link HibernateReader}'s): writes
 * {@code outPrefix.ready} once its cache client is connected, then reads the start instant
 * (wall-clock milliseconds) from {@code outPrefix.go} once the lab wrote it. Writes {@code
 * outPrefix.reads} (per read: int key, long version, long startNanos, long latencyNanos) and {@code outPrefix.stats} (one line: reads,
 * failed reads, loader calls, store errors).
 */
final class TxReader {

  /** Bytes per read in the {@code .reads} file. */
  static final int RECORD_BYTES = 4 + 8 + 8 + 8;
  private static final int THREADS = 2;

  private TxReader() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 10) {
      System.err.println("usage: TxReader cacheAddress jdbcUrl namespace keys queryMillis"
          + " readsPerSecond seconds seed outPrefix nearMillis");
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

    ArcusClient client = TxScenario.client(StampedeLab.StoreHandle.parseAddress(args[0]));
    SustainableCache<String> cache = TxScenario.cache(client, args[2], null, nearMillis);
    AtomicLong loaderCalls = new AtomicLong();
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
      loaderCalls.incrementAndGet();
      String version = TxScenario.select(query.get(), TxScenario.id(key));
      LockSupport.parkNanos(queryNanos);
      return version;
    };

    int perThread = rate * seconds / THREADS;
    int[][] readKeys = new int[THREADS][perThread];
    long[][] versions = new long[THREADS][perThread];
    long[][] starts = new long[THREADS][perThread];
    long[][] latencies = new long[THREADS][perThread];
    int[] done = new int[THREADS];
    AtomicLong failed = new AtomicLong();
    TxScenario.awaitConnected(client);
    Files.writeString(Path.of(out + ".ready"), "ready\n");
    long startAt = Long.parseLong(HibernateReader.await(Path.of(out + ".go")).trim());
    while (System.currentTimeMillis() < startAt) {
      Thread.sleep(Math.max(1, Math.min(50, startAt - System.currentTimeMillis())));
    }
    long begin = System.nanoTime();
    long end = begin + TimeUnit.SECONDS.toNanos(seconds);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      int thread = t;
      Thread reader = new Thread(() -> {
        SplittableRandom random = new SplittableRandom(seed * 31 + thread);
        long gapNanos = TimeUnit.SECONDS.toNanos(1) * THREADS / rate;
        long next = begin + thread * gapNanos / THREADS;
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
            value = cache.get(TxScenario.key(key), loader);
          } catch (RuntimeException e) {
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
      for (int t = 0; t < THREADS; t++) {
        for (int i = 0; i < done[t]; i++) {
          data.writeInt(readKeys[t][i]);
          data.writeLong(versions[t][i]);
          data.writeLong(starts[t][i]);
          data.writeLong(latencies[t][i]);
        }
      }
    }
    CacheStats stats = cache.stats();
    int total = Arrays.stream(done).sum();
    Files.writeString(Path.of(out + ".stats"), total + " " + failed.get() + " "
        + loaderCalls.get() + " " + stats.storeErrorCount() + "\n");
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
}
