package io.sustainablecache.spring.boot.starter.memcached;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.CacheStats;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.spring.SustainableCacheManager;
import io.sustainablecache.spring.boot.autoconfigure.SustainableCacheAutoConfiguration;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
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
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Issue 30, part 1, as users hit it, through the starter's manager (transaction-aware, as
 * shipped) over a real memcached, a real H2 database and Spring's {@link
 * DataSourceTransactionManager}: one hot key read through {@code @Cacheable(sync = true)} by
 * reader threads all the time, while a {@code @Transactional} method updates the row, evicts the
 * key with {@code @CacheEvict} and holds the transaction open 100 ms before its commit, ten
 * times. The loads of the hot key:
 *
 * <ul>
 *   <li>while a transaction holds its fence (from the write's call to right before its commit):
 *       none, the readers are answered with the row the fence replaced (before issue 30 every
 *       read in that time loaded: 30 loads per write here, 13 to 196 in the issue);</li>
 *   <li>the reloads of the new rows (unfenced loads, cached): about one per write (1.0 to 1.2
 *       measured), shared by the readers (and by the fleet, through its lease);</li>
 *   <li>fenced loads: from right before the commit ({@code WriteFence.beforeCommit()}) until the
 *       fence's release after it, reads are still answered with the replaced row, for at most
 *       100 ms after {@code beforeCommit()} (the commit window; the commit and the release
 *       normally land within it); only a release later than that makes reads load without
 *       caching until it lands (before the commit window, they loaded back to back: 1.6 to 2.7
 *       fenced loads per write, 2.5 to 4.4 loads per write in all over ten runs).</li>
 * </ul>
 *
 * <p>In all, at most {@link #MAX_LOADS_PER_WRITE} loads per committed write (issue 30's goal is
 * 1.1 fleet-wide on average; the margin is for the reload race above); the fenced loads of a
 * write whose commit step (from the hold's end to the write's return) outlasted the commit
 * window, which a descheduled writer thread causes, are excused, counted from the writer's own
 * record.
 *
 * <p>No read that began after a write returned gets an older row, and the writing transaction
 * reads its own change (its {@code @Cacheable} read of the key it evicted, inside it).
 *
 * <p>Over one adapter only (spymemcached, this starter's): what it measures is the fence's
 * protocol and Spring's transaction callbacks; the adapters' store contracts cover the operations
 * the fence uses on both.
 */
final class TransactionalWriteLoadsIT {

  private static final long HOT = 1;
  private static final int WRITES = 10;
  /** How long each writing transaction stays open after its evict, before its commit. */
  private static final Duration HOLD = Duration.ofMillis(100);
  private static final int READERS = 3;

  /**
   * The bound on reloads of the new row per committed write (unfenced loads). The goal is one
   * (issue 30: 1.1 fleet-wide): the first reader's load, which the others in this JVM share. Two
   * races made a second one, each found here on a busy machine (1.6) and fixed: a reader that
   * missed while the first reload's write was on its way (the flight now stays registered until
   * its write is answered: ReadDuringWriteBackTest), and a reload that began between the
   * release's landing and its answer, which the release voided (now voided before the release is
   * sent: ReadDuringWriteBackTest). 1.00 in 6 runs since, 3 of them beside four busy loops; 1.5
   * is a margin, not an expected cost.
   */
  private static final double MAX_RELOADS_PER_WRITE = 1.5;

  /** How long after {@code beforeCommit()} reads are answered with the replaced row. */
  private static final long COMMIT_WINDOW_MILLIS = 100;

  /** The bound on all loads of the hot key per committed write, fenced ones included. */
  private static final double MAX_LOADS_PER_WRITE = 1.5;

  /** The service: titles read through the cache, renamed in transactions. */
  static class Titles {
    private final JdbcTemplate jdbc;
    /** When each load of the cache's loader outside a transaction began: the readers' loads. */
    private final List<Long> loads = Collections.synchronizedList(new ArrayList<>());
    /** Reads inside a transaction: the writing transaction reading its own change. */
    private final AtomicInteger ownReads = new AtomicInteger();

    Titles(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @Cacheable(cacheNames = "titles", sync = true)
    public String title(long id) {
      if (TransactionSynchronizationManager.isActualTransactionActive()) {
        ownReads.incrementAndGet();
      } else {
        loads.add(System.nanoTime());
      }
      return jdbc.queryForObject("select title from book where id = ?", String.class, id);
    }

    /**
     * Updates the row and evicts the key (after this method, inside the transaction), then runs
     * {@code beforeCommit} right before the commit: after the evict, as the synchronization the
     * evict registers comes after this one.
     */
    @Transactional
    @CacheEvict(cacheNames = "titles", key = "#p0")
    public void rename(long id, String title, Runnable beforeCommit) {
      jdbc.update("update book set title = ? where id = ?", title, id);
      TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
        @Override
        public void beforeCommit(boolean readOnly) {
          beforeCommit.run();
        }
      });
    }

    List<Long> loads() {
      synchronized (loads) {
        return new ArrayList<>(loads);
      }
    }

    int ownReads() {
      return ownReads.get();
    }
  }

  /** The transaction's advice around the cache's, so that the evict runs inside the transaction. */
  @Configuration(proxyBeanMethods = false)
  @EnableTransactionManagement(order = 0)
  @EnableCaching(order = 1)
  static class App {
    @Bean
    DataSource dataSource() {
      JdbcDataSource h2 = new JdbcDataSource();
      h2.setURL("jdbc:h2:mem:titles-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
      return h2;
    }

    @Bean
    PlatformTransactionManager transactionManager(DataSource dataSource) {
      return new DataSourceTransactionManager(dataSource);
    }

    @Bean
    Titles titles(DataSource dataSource) {
      JdbcTemplate jdbc = new JdbcTemplate(dataSource);
      jdbc.execute("create table book (id bigint primary key, title varchar(50) not null)");
      jdbc.update("insert into book (id, title) values (?, ?)", HOT, "v0");
      return new Titles(jdbc);
    }
  }

  private static String address() {
    InetSocketAddress a = MemcachedServer.shared().address();
    return a.getHostString() + ":" + a.getPort();
  }

  /** The version a title names: {@code "v7"} is 7. */
  private static int version(String title) {
    return Integer.parseInt(title.substring(1));
  }

  /** One reader's reads: when each began ({@link System#nanoTime()}) and the version it got. */
  private static final class Reads {
    private long[] began = new long[4096];
    private int[] versions = new int[4096];
    private int size;

    void add(long at, int version) {
      if (size == began.length) {
        began = Arrays.copyOf(began, size * 2);
        versions = Arrays.copyOf(versions, size * 2);
      }
      began[size] = at;
      versions[size++] = version;
    }
  }

  @Test
  void aTransactionalEvictOfAHotKey_costsAboutOneLoadPerWrite_noReadAfterItIsStale_andTheWriterReadsItsOwnChange()
      throws Exception {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(SustainableCacheAutoConfiguration.class,
            CacheAutoConfiguration.class))
        .withUserConfiguration(App.class)
        .withPropertyValues(
            "sustainable-cache.addresses=" + address(),
            "sustainable-cache.namespace-prefix=tx" + UUID.randomUUID().toString().substring(0, 8)
                + ".",
            // no refresh ahead within the test: every load counted is one a write caused
            "sustainable-cache.settings.ttl=10m",
            "sustainable-cache.caches.titles.value-type=java.lang.String")
        .run(context -> {
          assertThat(context).hasNotFailed();
          Titles titles = context.getBean(Titles.class);
          Cache spring = context.getBean(SustainableCacheManager.class).getCache("titles");
          measure(titles, spring, (SustainableCache<?>) spring.getNativeCache());
        });
  }

  private static void measure(Titles titles, Cache spring, SustainableCache<?> cache)
      throws Exception {
    // Warm up: the load's write is asynchronous; wait until the key is cached.
    assertThat(titles.title(HOT)).isEqualTo("v0");
    awaitCached(spring, "v0");

    AtomicBoolean reading = new AtomicBoolean(true);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Reads> reads = new ArrayList<>();
    List<Thread> readers = new ArrayList<>();
    for (int r = 0; r < READERS; r++) {
      Reads mine = new Reads();
      reads.add(mine);
      Thread reader = new Thread(() -> {
        try {
          while (reading.get()) {
            long began = System.nanoTime();
            mine.add(began, version(titles.title(HOT)));
            LockSupport.parkNanos(300_000); // a few thousand reads a second in all
          }
        } catch (Throwable t) {
          failure.compareAndSet(null, t);
        }
      }, "hot-reader-" + r);
      readers.add(reader);
      reader.start();
    }

    Thread.sleep(100);
    int loadsBefore = titles.loads().size();
    CacheStats before = cache.stats();
    long[] began = new long[WRITES + 1];
    long[] held = new long[WRITES + 1];
    long[] returned = new long[WRITES + 1];
    String[] ownRead = new String[WRITES + 1];
    for (int i = 1; i <= WRITES; i++) {
      int write = i;
      began[i] = System.nanoTime();
      titles.rename(HOT, "v" + i, () -> {
        // read-your-writes: the transaction's own read of the key it evicted
        ownRead[write] = titles.title(HOT);
        LockSupport.parkNanos(HOLD.toNanos());
        held[write] = System.nanoTime();
      });
      returned[i] = System.nanoTime();
      // the readers reload the new row; the next write fences the key with it cached, as a hot
      // key is between writes
      awaitCached(spring, "v" + i);
      Thread.sleep(50);
    }
    long end = System.nanoTime();
    List<Long> loads = new ArrayList<>(titles.loads().subList(loadsBefore, titles.loads().size()));
    CacheStats after = cache.stats();
    reading.set(false);
    for (Thread reader : readers) {
      reader.join(10_000);
    }
    assertThat(failure.get()).as("a reader failed").isNull();

    // The loads, by when they began: while a transaction held its fence before its commit, from
    // right before its commit until the write returned, after it returned.
    int duringHolds = 0;
    int duringCommits = 0;
    int afterWrites = 0;
    for (long at : loads) {
      for (int i = 1; i <= WRITES; i++) {
        long next = i == WRITES ? end : began[i + 1];
        if (began[i] <= at && at < held[i]) {
          duringHolds++;
        } else if (held[i] <= at && at < returned[i]) {
          duringCommits++;
        } else if (returned[i] <= at && at < next) {
          afterWrites++;
        }
      }
    }

    // What the readers got, against when each write returned.
    int total = 0;
    int readsDuringHolds = 0;
    List<String> stale = new ArrayList<>();
    for (Reads r : reads) {
      for (int k = 0; k < r.size; k++) {
        total++;
        long at = r.began[k];
        int committedBefore = 0;
        for (int i = 1; i <= WRITES; i++) {
          if (returned[i] < at) {
            committedBefore = i;
          }
          if (began[i] < at && at < held[i]) {
            readsDuringHolds++;
          }
        }
        if (r.versions[k] < committedBefore) {
          stale.add("a read began " + TimeUnit.NANOSECONDS.toMicros(at - returned[committedBefore])
              + " µs after write " + committedBefore + " returned and got v" + r.versions[k]);
        }
      }
    }
    long[] commitMicros = new long[WRITES];
    for (int i = 1; i <= WRITES; i++) {
      commitMicros[i - 1] = TimeUnit.NANOSECONDS.toMicros(returned[i] - held[i]);
    }
    long slow = Arrays.stream(commitMicros)
        .filter(micros -> micros > TimeUnit.MILLISECONDS.toMicros(COMMIT_WINDOW_MILLIS)).count();
    Arrays.sort(commitMicros);
    // A fenced load (its read found the fence without the replaced row: from right before a
    // commit until its release) caches nothing; the others are the reloads of the new rows. (By
    // time alone, a load whose read found the fence may call the loader after the write returned.)
    long fenced = after.count("fenced_load") - before.count("fenced_load");
    long reloads = loads.size() - fenced;
    String summary = String.format("%d writes, %d loads of the hot key (%.2f per write): %d of"
        + " them fenced (not cached), %d reloads of the new rows; by when they began, %d while a"
        + " transaction held its fence, %d from right before a commit until the write returned,"
        + " %d after the writes returned; %d reads, %d of them while a transaction held its"
        + " fence, %d answered with the value a fence replaced; from the hold's end to the"
        + " write's return: median %d µs, longest %d µs, %d longer than the commit window",
        WRITES, loads.size(),
        (double) loads.size() / WRITES, fenced, reloads, duringHolds, duringCommits, afterWrites,
        total, readsDuringHolds, after.count("fenced_hit") - before.count("fenced_hit"),
        commitMicros[WRITES / 2], commitMicros[WRITES - 1], slow);
    System.out.println("TransactionalWriteLoadsIT: " + summary);

    for (int i = 1; i <= WRITES; i++) {
      assertThat(ownRead[i]).as("write %d's own read of the key, inside its transaction", i)
          .isEqualTo("v" + i);
    }
    assertThat(titles.ownReads()).as("the writer's own reads went to its transaction")
        .isEqualTo(WRITES);
    assertThat(stale).as("reads that began after a write returned and got an older row; "
        + summary).isEmpty();
    assertThat(readsDuringHolds).as("reads while the transactions held their fences; " + summary)
        .isGreaterThanOrEqualTo(WRITES);
    assertThat(after.count("fenced_hit") - before.count("fenced_hit"))
        .as("reads answered with the value a fence replaced; " + summary).isPositive();
    assertThat(duringHolds).as("loads while a transaction held its fence; " + summary).isZero();
    assertThat(reloads).as("each write's new row is loaded: " + summary)
        .isGreaterThanOrEqualTo(WRITES);
    assertThat((double) reloads / WRITES)
        .as("reloads of the new row per committed write; " + summary)
        .isLessThanOrEqualTo(MAX_RELOADS_PER_WRITE);
    assertThat((double) (loads.size() - (slow > 0 ? fenced : 0)) / WRITES)
        .as("loads per committed write, fenced ones included unless a commit step outlasted"
            + " the commit window; " + summary)
        .isLessThanOrEqualTo(MAX_LOADS_PER_WRITE);
  }

  /** Waits until the cache holds {@code title} for the hot key (a peek, no load). */
  private static void awaitCached(Cache spring, String title) throws InterruptedException {
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      Cache.ValueWrapper cached = spring.get(HOT);
      if (cached != null && title.equals(cached.get())) {
        return;
      }
      assertThat(System.nanoTime()).as("%s cached within 10 s", title).isLessThan(giveUp);
      Thread.sleep(2);
    }
  }
}
