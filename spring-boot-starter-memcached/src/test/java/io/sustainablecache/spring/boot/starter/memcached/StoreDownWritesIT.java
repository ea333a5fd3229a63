package io.sustainablecache.spring.boot.starter.memcached;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.CacheStats;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.spring.SustainableCacheManager;
import io.sustainablecache.spring.boot.autoconfigure.SustainableCacheAutoConfiguration;
import io.sustainablecache.testkit.memcached.FaultProxy;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.cache.autoconfigure.CacheAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cache.Cache;
import org.springframework.cache.annotation.CacheEvict;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

/**
 * Issue 31, part 2, as users hit it: two instances (Spring contexts with the starter's manager,
 * transaction-aware as shipped) reach one real memcached through a {@link FaultProxy}, and share
 * one H2 database with Spring's {@link DataSourceTransactionManager}. Writer threads on instance
 * W rename rows in {@code @Transactional} methods that evict the key ({@code @CacheEvict}, so a
 * write fence); readers on W and on R read through {@code @Cacheable(sync = true)}. memcached
 * hangs ({@link FaultProxy#blackhole()}: nothing answers, as under SIGSTOP), then goes away
 * ({@link FaultProxy#refuse()} and {@link FaultProxy#dropConnections()}: as killed, but its
 * entries, now stale, are still there when it returns, the worst case), then answers again.
 *
 * <ul>
 *   <li>Every write commits: no exception reaches the caller (before issue 31: 0 of 35).</li>
 *   <li>W never answers a read that began after a write returned with an older row (while
 *       memcached is down, its reads load; after, it invalidates each key it owes before it
 *       reads it).</li>
 *   <li>R, which owes nothing, is the bound for other instances: no read of R that began after
 *       W paid its debt (its {@code keysAwaitingInvalidation} back to 0) gets an older row; how
 *       long after memcached answered again that took is measured and printed.</li>
 * </ul>
 *
 * <p>{@code -Dstoredown.hang=10s -Dstoredown.kill=10s} runs the outage of docs/results.md
 * (default 3 s each, to keep the suite short: each phase outlasts the two operation timeouts
 * that open the breaker).
 */
final class StoreDownWritesIT {

  private static final int KEYS = 16;
  private static final int WRITERS = 2;
  private static final int READERS_PER_INSTANCE = 2;
  /** The most versions a key gets in one run: the writers' records are arrays of this size. */
  private static final int MAX_VERSIONS = 100_000;
  /** The default outage reuse ({@code outage-reuse}, 50 ms), ns. */
  private static final long OUTAGE_REUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
  private static final Duration HANG = Duration.parse("PT"
      + System.getProperty("storedown.hang", "3s").toUpperCase());
  private static final Duration KILL = Duration.parse("PT"
      + System.getProperty("storedown.kill", "3s").toUpperCase());

  /** The service: titles read through the cache, renamed in transactions. */
  static class Titles {
    private final JdbcTemplate jdbc;

    Titles(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @Cacheable(cacheNames = "titles", sync = true)
    public String title(long id) {
      return jdbc.queryForObject("select title from book where id = ?", String.class, id);
    }

    @Transactional
    @CacheEvict(cacheNames = "titles", key = "#p0")
    public void rename(long id, String title) {
      jdbc.update("update book set title = ? where id = ?", title, id);
    }
  }

  /** One instance: its own context, the database shared by name. */
  @Configuration(proxyBeanMethods = false)
  @EnableTransactionManagement(order = 0)
  @EnableCaching(order = 1)
  static class App {
    @Bean
    DataSource dataSource(org.springframework.core.env.Environment env) {
      JdbcDataSource h2 = new JdbcDataSource();
      h2.setURL("jdbc:h2:mem:" + env.getProperty("test.db") + ";DB_CLOSE_DELAY=-1");
      return h2;
    }

    @Bean
    PlatformTransactionManager transactionManager(DataSource dataSource) {
      return new DataSourceTransactionManager(dataSource);
    }

    @Bean
    Titles titles(DataSource dataSource) {
      JdbcTemplate jdbc = new JdbcTemplate(dataSource);
      jdbc.execute("create table if not exists book (id bigint primary key,"
          + " title varchar(50) not null)");
      for (long id = 0; id < KEYS; id++) {
        jdbc.update("merge into book (id, title) key (id) values (?, ?)", id, "v0");
      }
      return new Titles(jdbc);
    }
  }

  /** Every read: when it began, which key, which version, on which instance. */
  private static final class Reads {
    final List<long[]> all = new ArrayList<>();

    synchronized void add(long began, long id, int version) {
      all.add(new long[] {began, id, version});
    }

    synchronized List<long[]> snapshot() {
      return new ArrayList<>(all);
    }
  }

  @Test
  void writesCommitThroughAHangAndAKill_andNoReadAfterTheDebtIsPaidIsStale() throws Exception {
    MemcachedServer server = MemcachedServer.shared();
    String db = "storedown-" + UUID.randomUUID();
    String namespace = "sd" + UUID.randomUUID().toString().substring(0, 8) + ".";
    try (FaultProxy proxy = FaultProxy.start(server.address())) {
      InetSocketAddress a = proxy.address();
      ApplicationContextRunner runner = new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(SustainableCacheAutoConfiguration.class,
              CacheAutoConfiguration.class))
          .withUserConfiguration(App.class)
          .withPropertyValues(
              "test.db=" + db,
              "sustainable-cache.addresses=" + a.getHostString() + ":" + a.getPort(),
              "sustainable-cache.namespace-prefix=" + namespace,
              "sustainable-cache.settings.ttl=10m", // staleness is not ended by a TTL here
              "sustainable-cache.caches.titles.value-type=java.lang.String");
      runner.run(writer -> runner.run(reader -> {
        assertThat(writer).hasNotFailed();
        assertThat(reader).hasNotFailed();
        run(proxy, writer.getBean(Titles.class), reader.getBean(Titles.class),
            (SustainableCache<?>) writer.getBean(SustainableCacheManager.class)
                .getCache("titles").getNativeCache(),
            reader.getBean(SustainableCacheManager.class).getCache("titles"));
      }));
    }
  }

  private static void run(FaultProxy proxy, Titles w, Titles r, SustainableCache<?> wCache,
      Cache rSpring) throws Exception {
    for (long id = 0; id < KEYS; id++) {
      assertThat(w.title(id)).isEqualTo("v0");
      awaitCached(rSpring, id);
    }
    // committed[id * MAX_VERSIONS + v]: when write v of key id returned (nanoTime), 0 before
    AtomicLongArray committed = new AtomicLongArray(KEYS * MAX_VERSIONS);
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicLong attempts = new AtomicLong();
    AtomicLong failedWrites = new AtomicLong();
    AtomicLong outageWrites = new AtomicLong();
    AtomicBoolean outage = new AtomicBoolean();
    List<Throwable> writeFailures = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < WRITERS; t++) {
      int writer = t;
      threads.add(new Thread(() -> {
        int[] versions = new int[KEYS];
        while (running.get()) {
          long id = writer + (long) WRITERS * ThreadLocalRandom.current().nextInt(KEYS / WRITERS);
          int version = versions[(int) id] + 1;
          boolean during = outage.get();
          attempts.incrementAndGet();
          try {
            w.rename(id, "v" + version);
            versions[(int) id] = version;
            committed.set((int) id * MAX_VERSIONS + version, System.nanoTime());
            if (during) {
              outageWrites.incrementAndGet();
            }
          } catch (RuntimeException e) {
            failedWrites.incrementAndGet();
            synchronized (writeFailures) {
              writeFailures.add(e);
            }
          }
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
      }, "writer-" + t));
    }
    Reads onW = new Reads();
    Reads onR = new Reads();
    for (int t = 0; t < 2 * READERS_PER_INSTANCE; t++) {
      Titles titles = t % 2 == 0 ? w : r;
      Reads reads = t % 2 == 0 ? onW : onR;
      threads.add(new Thread(() -> {
        try {
          while (running.get()) {
            long id = ThreadLocalRandom.current().nextInt(KEYS);
            long began = System.nanoTime();
            reads.add(began, id, Integer.parseInt(titles.title(id).substring(1)));
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }, "reader-" + t));
    }
    threads.forEach(Thread::start);

    Thread.sleep(1_000);
    outage.set(true);
    long down = System.nanoTime();
    proxy.blackhole();
    Thread.sleep(HANG.toMillis());
    proxy.refuse();
    proxy.dropConnections();
    Thread.sleep(KILL.toMillis());
    outage.set(false);
    long recovered = System.nanoTime();
    proxy.passThrough();
    // W pays what it owes once its client is connected again
    long giveUp = recovered + TimeUnit.SECONDS.toNanos(60);
    long paid;
    while (true) {
      if (wCache.stats().keysAwaitingInvalidation() == 0) {
        paid = System.nanoTime();
        break;
      }
      assertThat(System.nanoTime()).as("W's owed invalidations paid within 60 s")
          .isLessThan(giveUp);
      Thread.sleep(5);
    }
    Thread.sleep(2_000); // reads after the debt was paid
    running.set(false);
    for (Thread thread : threads) {
      thread.join(30_000);
    }
    CacheStats stats = wCache.stats();

    long wStale = stale(onW.snapshot(), committed, 0, 0);
    // R's reads may be as old as the outage reuse allows (docs/failures.md): a read whose store
    // read failed (R's breaker still open until its probe) may take R's load of the key
    // registered up to 50 ms before it began, which read the row then
    long rStaleAfterPaid = stale(onR.snapshot(), committed, paid, OUTAGE_REUSE_NANOS);
    long rStaleAfterRecovery = stale(onR.snapshot(), committed, recovered, OUTAGE_REUSE_NANOS);
    long rReadsAfterPaid = onR.snapshot().stream().filter(x -> x[0] > paid).count();
    String summary = String.format("outage %d ms (hang %s, kill %s): %d writes attempted, %d"
        + " failed, %d committed during the outage (%.1f %% of all committed); W: %d changes"
        + " committed unprotected, %d keys owed in all; W paid its debt %d ms after memcached"
        + " answered again; W: %d reads, %d stale after their write returned; R: %d reads, %d"
        + " stale after memcached answered again (before W paid), %d of %d reads after W paid"
        + " stale", TimeUnit.NANOSECONDS.toMillis(recovered - down), HANG, KILL, attempts.get(),
        failedWrites.get(), outageWrites.get(),
        100.0 * outageWrites.get() / Math.max(1, attempts.get() - failedWrites.get()),
        stats.count("unprotected_write"), stats.count("invalidation_owed"),
        TimeUnit.NANOSECONDS.toMillis(paid - recovered), onW.snapshot().size(), wStale,
        onR.snapshot().size(), rStaleAfterRecovery, rStaleAfterPaid, rReadsAfterPaid);
    System.out.println("StoreDownWritesIT: " + summary);

    assertThat(failure.get()).as("a reader failed; " + summary).isNull();
    assertThat(writeFailures).as("writes that did not commit; " + summary).isEmpty();
    assertThat(outageWrites.get()).as("writes committed while memcached was down; " + summary)
        .isGreaterThanOrEqualTo(4);
    assertThat(stats.count("unprotected_write")).as(summary).isPositive();
    assertThat(wStale).as("W's reads that began after a write returned and got an older row; "
        + summary).isZero();
    assertThat(rReadsAfterPaid).as(summary).isPositive();
    assertThat(rStaleAfterPaid).as("R's reads that began after W paid its debt and got an older"
        + " row; " + summary).isZero();
  }

  /**
   * The reads that began after {@code from} (nanoTime) and got an older version than a write of
   * their key that had returned more than {@code allowedNanos} before they began.
   */
  private static long stale(List<long[]> reads, AtomicLongArray committed, long from,
      long allowedNanos) {
    long stale = 0;
    for (long[] read : reads) {
      long began = read[0];
      if (began <= from) {
        continue;
      }
      int base = (int) read[1] * MAX_VERSIONS;
      int newest = 0;
      for (int v = 1; v < MAX_VERSIONS; v++) {
        long at = committed.get(base + v);
        if (at == 0) {
          break;
        }
        if (at < began - allowedNanos) {
          newest = v;
        }
      }
      if (read[2] < newest) {
        stale++;
      }
    }
    return stale;
  }

  private static void awaitCached(Cache spring, long id) throws InterruptedException {
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (spring.get(id) == null) {
      assertThat(System.nanoTime()).as("key %d cached within 10 s", id).isLessThan(giveUp);
      spring.get(id, () -> "v0");
      Thread.sleep(2);
    }
  }
}
