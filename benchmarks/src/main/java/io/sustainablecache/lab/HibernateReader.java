package io.sustainablecache.lab;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import net.spy.memcached.ArcusClient;
import org.hibernate.CacheMode;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.stat.Statistics;

/**
 * One reader JVM of the Hibernate scenario ({@link HibernateScenario}): its own {@code
 * SessionFactory} over the scenario's H2 server and second-level cache, and threads that find
 * entities by id in a closed loop ({@code session.find(LabItem.class, id)} in a new session,
 * outside a transaction), ids Zipf-distributed. Records every read after the warm-up (id, the
 * version it returned, when it began in {@code System.nanoTime()}, comparable across the
 * machine's JVMs, and its latency), and Hibernate's statistics over that window. Once the lab
 * says the writers stopped, waits {@code nearMillis} more and checks every entity it read that
 * its second-level cache holds against the row: the stale entities after quiescence.
 *
 * <p>A run's arguments: {@code provider accessType cacheAddress jdbcUrl namespacePrefix entities
 * zipf threads seconds warmSeconds seed outPrefix nearMillis}. Protocol: writes {@code
 * outPrefix.ready} once its session factory is built, reads the start instant (wall-clock
 * milliseconds) from {@code outPrefix.go}, waits for {@code outPrefix.done} (the writers
 * stopped) before its check. Writes {@code outPrefix.reads} ({@link TxReader#RECORD_BYTES} per
 * read) and {@code outPrefix.stats}: reads, failed reads, window nanoseconds, SQL statements,
 * second-level cache hits, misses and puts in the window, cached entities checked, stale ones.
 */
final class HibernateReader {

  private static final int SEQUENCE = 1 << 18;

  private HibernateReader() {}

  /**
   * Arguments: {@code controlPrefix}. Runs {@code controlPrefix.0}, {@code controlPrefix.1}, ...
   * in turn, each file a run's arguments on one line, until a file says {@code stop}: one JVM
   * for every run of the scenario, so each run costs a session factory, not a JVM's start.
   */
  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: HibernateReader controlPrefix");
      System.exit(2);
    }
    for (int n = 0; ; n++) {
      String line = await(Path.of(args[0] + "." + n)).trim();
      if (line.equals("stop")) {
        break;
      }
      run(line.split(" "));
    }
    System.exit(0);
  }

  /** One run, from its arguments (see the class's documentation). */
  private static void run(String[] args) throws Exception {
    if (args.length != 13) {
      throw new IllegalArgumentException("a run takes 13 arguments: " + String.join(" ", args));
    }
    HibernateScenario.Provider provider = HibernateScenario.Provider.of(args[0]);
    String jdbcUrl = args[3];
    int entities = Integer.parseInt(args[5]);
    double zipf = Double.parseDouble(args[6]);
    int threads = Integer.parseInt(args[7]);
    long seconds = Long.parseLong(args[8]);
    long warmSeconds = Long.parseLong(args[9]);
    long seed = Long.parseLong(args[10]);
    String out = args[11];
    long nearMillis = Long.parseLong(args[12]);

    ArcusClient client = provider.sustainable()
        ? TxScenario.client(StampedeLab.StoreHandle.parseAddress(args[2])) : null;
    try (SessionFactory factory = HibernateScenario.sessionFactory(provider, args[1], jdbcUrl,
        client == null ? null : HibernateScenario.store(client), args[4], nearMillis)) {
      Files.writeString(Path.of(out + ".ready"), "ready\n");
      long startAt = Long.parseLong(await(Path.of(out + ".go")).trim());
      while (System.currentTimeMillis() < startAt) {
        Thread.sleep(Math.max(1, Math.min(20, startAt - System.currentTimeMillis())));
      }
      long begin = System.nanoTime();
      long measureFrom = begin + TimeUnit.SECONDS.toNanos(warmSeconds);
      long end = begin + TimeUnit.SECONDS.toNanos(seconds);
      Statistics statistics = factory.getStatistics();
      long[] before = new long[4];
      Thread snapshot = new Thread(() -> {
        while (System.nanoTime() < measureFrom) {
          LockSupport.parkNanos(Math.min(measureFrom - System.nanoTime(), 5_000_000L));
        }
        counters(statistics, before);
      });
      snapshot.start();
      AtomicLong failed = new AtomicLong();
      List<TxScenario.Reads> perThread = new ArrayList<>();
      BitSet read = new BitSet(entities);
      List<Thread> readers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        TxScenario.Reads reads = new TxScenario.Reads();
        perThread.add(reads);
        int[] ids = NearScenario.zipfSequence(entities, zipf, SEQUENCE, seed * 31 + t);
        Thread reader = new Thread(() -> {
          int i = 0;
          while (true) {
            long start = System.nanoTime();
            if (start >= end) {
              break;
            }
            int id = ids[i++ & (SEQUENCE - 1)];
            long version;
            try (Session session = factory.openSession()) {
              version = session.find(LabItem.class, (long) id).version();
            } catch (RuntimeException e) {
              failed.incrementAndGet();
              continue;
            }
            if (start >= measureFrom) {
              reads.add(id, version, start, System.nanoTime() - start);
            }
          }
        }, "hibernate-reader-" + t);
        readers.add(reader);
        reader.start();
      }
      for (Thread reader : readers) {
        reader.join();
      }
      snapshot.join();
      long window = System.nanoTime() - measureFrom;
      long[] after = counters(statistics, new long[4]);
      long total = 0;
      try (DataOutputStream data = new DataOutputStream(new BufferedOutputStream(
          Files.newOutputStream(Path.of(out + ".reads")), 1 << 16))) {
        for (TxScenario.Reads reads : perThread) {
          total += reads.size;
          for (int i = 0; i < reads.size; i++) {
            read.set(reads.keys[i]);
            data.writeInt(reads.keys[i]);
            data.writeLong(reads.versions[i]);
            data.writeLong(reads.starts[i]);
            data.writeLong(reads.latencies[i]);
          }
        }
      }
      await(Path.of(out + ".done"));
      Thread.sleep(nearMillis + 100);
      long[] check = provider.cached() ? check(factory, jdbcUrl, read) : new long[2];
      HibernateScenario.signal(Path.of(out + ".stats"), total + " " + failed.get() + " " + window
          + " " + (after[0] - before[0]) + " " + (after[1] - before[1]) + " "
          + (after[2] - before[2]) + " " + (after[3] - before[3]) + " " + check[0] + " "
          + check[1]);
      System.out.println("reads " + total + ", failed " + failed.get() + ", "
          + statistics.getPrepareStatementCount() + " statements");
    } finally {
      if (client != null) {
        client.shutdown();
      }
    }
  }

  /** Statements, second-level cache hits, misses and puts so far. */
  private static long[] counters(Statistics statistics, long[] into) {
    into[0] = statistics.getPrepareStatementCount();
    into[1] = statistics.getSecondLevelCacheHitCount();
    into[2] = statistics.getSecondLevelCacheMissCount();
    into[3] = statistics.getSecondLevelCachePutCount();
    return into;
  }

  /**
   * After quiescence: of the entities read, those the second-level cache holds ({@code [0]}) and
   * those whose cached version is not the row's ({@code [1]}).
   */
  private static long[] check(SessionFactory factory, String jdbcUrl, BitSet read)
      throws SQLException {
    long[] rows = new long[read.length()];
    try (Connection c = DriverManager.getConnection(jdbcUrl, "sa", "");
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT id, version FROM lab_item WHERE id < "
            + rows.length)) {
      while (r.next()) {
        rows[r.getInt(1)] = r.getLong(2);
      }
    }
    long cached = 0;
    long stale = 0;
    for (int id = read.nextSetBit(0); id >= 0; id = read.nextSetBit(id + 1)) {
      if (!factory.getCache().containsEntity(LabItem.class, (long) id)) {
        continue;
      }
      try (Session session = factory.openSession()) {
        session.setCacheMode(CacheMode.GET); // the cached state, and nothing cached by the check
        cached++;
        if (session.find(LabItem.class, (long) id).version() != rows[id]) {
          stale++;
        }
      }
    }
    return new long[] {cached, stale};
  }

  /** The content of {@code file}, once it exists (the lab writes it whole, then moves it). */
  static String await(Path file) throws Exception {
    long limit = System.currentTimeMillis() + 300_000;
    while (!Files.exists(file)) {
      if (System.currentTimeMillis() > limit) {
        throw new IllegalStateException("no " + file + " after 5 minutes");
      }
      Thread.sleep(10);
    }
    return Files.readString(file);
  }
}
