package io.sustainablecache.lab;

import io.sustainablecache.CacheStats;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.WriteFence;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import net.spy.memcached.ArcusClient;

/**
 * The writer JVM of the transactions scenario's hot-key mode ({@link TxHotScenario}): one JDBC
 * transaction a second on the hot row ({@code item} 0), each updating it, invalidating or
 * fencing its key as the mode says, and holding {@code holdMillis} before the commit. In its own
 * JVM so that the comparison with the previous release's fence ({@code
 * -Dio.sustainablecache.internal.fenceWithoutPrior=true}, read once per JVM) runs in the same
 * lab run as the others.
 *
 * <p>Modes: {@code fenced} (fence, update, {@code beforeCommit()}, commit, {@code committed()}),
 * {@code fenced-put} (the same, completed with {@code committed(newVersion)}),
 * {@code fenced-noprior} (the previous release: fence, update, commit, {@code committed()}; run
 * with the property), {@code after-commit} (update, commit, invalidate: Spring's {@code
 * TransactionAwareCacheDecorator}), {@code plain} (update, invalidate, commit: {@code @CacheEvict}
 * inside {@code @Transactional}), {@code spring} (Spring's own {@code
 * TransactionAwareCacheDecorator} over this project's {@code SustainableCacheManager} with its
 * transaction awareness off, in a {@code TransactionTemplate} of a {@code
 * DataSourceTransactionManager} over the writer's connection: the eviction after the commit,
 * as an application that wraps the manager in Spring's {@code TransactionAwareCacheManagerProxy}
 * gets).
 *
 * <p>Arguments: {@code cacheAddress jdbcUrl namespace mode holdMillis writes outPrefix
 * [intervalMillis]} (the writes' spacing, a second if not given; {@link OutageScenario} writes
 * more often). Protocol
 * as {@link TxReader}'s ({@code .ready}, {@code .go}; before {@code .ready}, one transaction of
 * the mode on row 1, which nobody reads, warms the code up); the first transaction begins 500 ms
 * after the start instant, the next ones a second apart. Writes {@code outPrefix.commits} (a line per
 * committed write: version, then the {@code System.nanoTime()} instants the transaction began,
 * its commit step began ({@code beforeCommit()}, or the commit), the commit returned and the whole
 * write returned) and {@code outPrefix.stats} (one line: refused writes, lost invalidations,
 * store operations, fence release failures, store errors) and {@code outPrefix.refused} (a line
 * per refused write: the {@code System.nanoTime()} instant its transaction began).
 */
final class TxHotWriter {

  /** The hot row's id. */
  static final int HOT = 0;

  /** When the first transaction begins, after the start instant. */
  static final long FIRST_MILLIS = 500;

  /** A row nobody reads: the writer's warm-up transaction. */
  static final int WARM_UP = 1;

  private final SustainableCache<String> cache;
  private final String mode;
  private final long holdNanos;
  private final Connection connection;
  private final PreparedStatement update;
  private final PreparedStatement select;
  private final StringBuilder commits = new StringBuilder();
  private final StringBuilder refusals = new StringBuilder();
  /** Mode {@code spring}: Spring's decorator over the manager's cache, and the transactions. */
  private org.springframework.cache.Cache decorator;
  private org.springframework.transaction.support.TransactionTemplate template;
  private long refused;
  private long lost;

  private TxHotWriter(SustainableCache<String> cache, String mode, long holdNanos,
      Connection connection, PreparedStatement update, PreparedStatement select) {
    this.cache = cache;
    this.mode = mode;
    this.holdNanos = holdNanos;
    this.connection = connection;
    this.update = update;
    this.select = select;
  }

  /** One transaction on row {@code id}, recorded in {@link #commits} if it committed. */
  private void transaction(int id) throws SQLException {
    if (mode.equals("spring")) {
      springTransaction(id);
      return;
    }
    String key = TxScenario.key(id);
    long begin = System.nanoTime();
    WriteFence<String> fence = null;
    if (mode.startsWith("fenced")) {
      try {
        fence = cache.fence(key);
      } catch (RuntimeException e) {
        refuse(begin); // the key is not protected: the row must not change
        return;
      }
    }
    long version;
    long commitStep;
    try {
      update.setInt(1, id);
      update.executeUpdate();
      version = Long.parseLong(TxScenario.select(select, id));
      if (mode.equals("plain")) {
        cache.invalidate(key); // throws if the store failed: the transaction rolls back
      }
      LockSupport.parkNanos(holdNanos);
      commitStep = System.nanoTime();
      if (mode.equals("fenced") || mode.equals("fenced-put")) {
        fence.beforeCommit(); // throws if the store did not confirm: roll back
      }
      connection.commit();
    } catch (SQLException | RuntimeException e) {
      connection.rollback();
      if (fence != null) {
        fence.rolledBack();
      }
      refuse(begin);
      return;
    }
    long committed = System.nanoTime();
    switch (mode) {
      case "after-commit" -> {
        try {
          cache.invalidate(key);
        } catch (RuntimeException e) {
          lost++; // committed; Spring logs the exception of afterCommit
        }
      }
      case "fenced", "fenced-noprior" -> fence.committed();
      case "fenced-put" -> fence.committed(Long.toString(version));
      default -> { }
    }
    record(version, begin, commitStep, committed, System.nanoTime());
  }

  private void refuse(long begin) {
    refused++;
    refusals.append(begin).append('\n');
  }

  private void record(long version, long begin, long commitStep, long committed,
      long returned) {
    commits.append(version).append(' ').append(begin).append(' ').append(commitStep)
        .append(' ').append(committed).append(' ').append(returned).append('\n');
  }

  /**
   * Mode {@code spring}: the update, Spring's decorator's {@code evict} (deferred by it to after
   * the commit), the hold, the commit, in a {@code TransactionTemplate}. A failure before the
   * commit rolls back (refused); an eviction that throws after the commit leaves the write
   * committed (lost, as in the other after-commit mode).
   */
  private void springTransaction(int id) {
    String key = TxScenario.key(id);
    long begin = System.nanoTime();
    long[] at = new long[2]; // the commit step began, the commit returned
    long version;
    try {
      version = template.execute(status -> {
        org.springframework.transaction.support.TransactionSynchronizationManager
            .registerSynchronization(
                new org.springframework.transaction.support.TransactionSynchronization() {
                  @Override
                  public void beforeCommit(boolean readOnly) {
                    at[0] = System.nanoTime();
                  }

                  @Override
                  public void afterCommit() { // before the decorator's: registered first
                    at[1] = System.nanoTime();
                  }
                });
        try {
          update.setInt(1, id);
          update.executeUpdate();
          long v = Long.parseLong(TxScenario.select(select, id));
          decorator.evict(key);
          LockSupport.parkNanos(holdNanos);
          return v;
        } catch (SQLException e) {
          throw new IllegalStateException(e);
        }
      });
    } catch (RuntimeException e) {
      if (at[1] == 0) {
        refuse(begin);
        return;
      }
      lost++; // committed; the eviction after the commit threw
      version = -1;
    }
    if (version < 0) { // the version is not known: the row's, as nobody else writes it
      try {
        version = Long.parseLong(TxScenario.select(select, id));
        connection.commit();
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
    }
    record(version, begin, at[0], at[1], System.nanoTime());
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 7 && args.length != 8) {
      System.err.println("usage: TxHotWriter cacheAddress jdbcUrl namespace mode holdMillis"
          + " writes outPrefix [intervalMillis]");
      System.exit(2);
    }
    long intervalNanos = TimeUnit.MILLISECONDS.toNanos(args.length == 8
        ? Long.parseLong(args[7]) : 1_000);
    String jdbcUrl = args[1];
    String mode = args[3];
    long holdNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[4]));
    int writes = Integer.parseInt(args[5]);
    String out = args[6];
    boolean withoutPrior = Boolean.getBoolean("io.sustainablecache.internal.fenceWithoutPrior");
    if (mode.equals("fenced-noprior") != withoutPrior) {
      System.err.println("mode " + mode + " with fenceWithoutPrior=" + withoutPrior);
      System.exit(2);
    }
    ArcusClient client = TxScenario.client(StampedeLab.StoreHandle.parseAddress(args[0]));
    AtomicLong storeOps = new AtomicLong();
    SustainableCache<String> cache;
    io.sustainablecache.spring.SustainableCacheManager manager = null;
    if (mode.equals("spring")) {
      manager = io.sustainablecache.spring.SustainableCacheManager.builder(
              TxScenario.store(client, storeOps))
          .transactionAware(false)
          .keyEncoder(key -> (String) key) // the readers' keys, as they are
          .cache("hot", io.sustainablecache.spring.CacheSpec.builder().namespace(args[2])
              .codec(io.sustainablecache.ValueCodec.utf8(), String.class)
              .settings(io.sustainablecache.CacheSettings.parse("ttl=10m")).build())
          .dynamic(false)
          .build();
      @SuppressWarnings("unchecked")
      SustainableCache<String> nativeCache = (SustainableCache<String>) (SustainableCache<?>)
          manager.getCache("hot").getNativeCache();
      cache = nativeCache;
    } else {
      cache = TxScenario.cache(client, args[2], storeOps, 0);
    }
    TxHotWriter writer;
    try (Connection c = DriverManager.getConnection(jdbcUrl + ";LOCK_TIMEOUT=10000", "sa", "");
        PreparedStatement update = c.prepareStatement(
            "UPDATE item SET version = version + 1 WHERE id = ?");
        PreparedStatement select = c.prepareStatement(TxScenario.SELECT)) {
      c.setAutoCommit(false);
      TxScenario.awaitConnected(client);
      writer = new TxHotWriter(cache, mode, holdNanos, c, update, select);
      if (manager != null) {
        writer.decorator = new org.springframework.cache.transaction.TransactionAwareCacheDecorator(
            manager.getCache("hot"));
        writer.template = new org.springframework.transaction.support.TransactionTemplate(
            new org.springframework.jdbc.datasource.DataSourceTransactionManager(
                new org.springframework.jdbc.datasource.SingleConnectionDataSource(c, true)));
      }
      writer.transaction(WARM_UP); // the code paths of the mode warmed up, on a row nobody reads
      writer.commits.setLength(0);
      writer.refusals.setLength(0);
      writer.refused = 0;
      writer.lost = 0;
      long warmUpOps = storeOps.get();
      Files.writeString(Path.of(out + ".ready"), "ready\n");
      long startAt = Long.parseLong(HibernateReader.await(Path.of(out + ".go")).trim());
      while (System.currentTimeMillis() < startAt) {
        Thread.sleep(Math.max(1, Math.min(20, startAt - System.currentTimeMillis())));
      }
      storeOps.addAndGet(-warmUpOps);
      long first = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FIRST_MILLIS);
      for (int i = 0; i < writes; i++) {
        long at = first + intervalNanos * i;
        while (System.nanoTime() < at) {
          LockSupport.parkNanos(Math.min(at - System.nanoTime(), 1_000_000L));
        }
        writer.transaction(HOT);
      }
    }
    Thread.sleep(200); // a release's retries, if any, are counted
    CacheStats stats = cache.stats();
    Files.writeString(Path.of(out + ".commits"), writer.commits);
    Files.writeString(Path.of(out + ".refused"), writer.refusals);
    Files.writeString(Path.of(out + ".stats"), writer.refused + " " + writer.lost + " "
        + storeOps.get() + " "
        + stats.count("fence_release_failure") + " " + stats.storeErrorCount() + "\n");
    System.out.println("writer " + mode + " " + stats);
    if (manager != null) {
      manager.close();
    } else {
      cache.close();
    }
    client.shutdown();
    System.exit(0);
  }
}
