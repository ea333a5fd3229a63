package io.sustainablecache.hibernate;

import static io.sustainablecache.hibernate.Hibernates.find;
import static io.sustainablecache.hibernate.Hibernates.inTransaction;
import static io.sustainablecache.hibernate.Hibernates.statements;
import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.hibernate.HibernateSecondLevelCacheIT.Access;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import jakarta.persistence.PersistenceException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.h2.tools.Server;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 30, part 2, from outside: a writer in another JVM ({@link SecondJvm}) fences a
 * READ_WRITE entity (an update flushed in a transaction) and is killed before its commit, while
 * this JVM keeps updating the same entity in short transactions, a few a second, and reads it on
 * another session factory. The dead writer's hold ends at most {@code fence-timeout} (4 s here)
 * after it placed it, whatever the live writers do: the entity is served from the cache again
 * (a read with no SQL) within that plus a margin derived from what this test measures after the
 * kill. Before issue 30, each live writer's join extended the one shared end, and the entity
 * was never cached again while the writes went on.
 *
 * <p>H2 over TCP, so that the killed JVM's transaction holds the row until its connection drops
 * (then the database rolls it back), as a real database does. Runs over spymemcached only: what
 * it checks is the fence's holders across processes, which {@code WriteFenceContract} covers
 * over real memcached, and the adapters' store contracts cover the operations it uses on both.
 */
class KilledWriterIT {

  /**
   * Short, so that the test is: but long enough that this JVM commits several updates between
   * the kill and the dead writer's end on a busy machine (the updates wait for the dead writer's
   * row lock until it is killed).
   */
  private static final Duration FENCE_TIMEOUT = Duration.ofSeconds(4);
  private static final Duration SKEW = Duration.ofMillis(100);
  private static final String SETTINGS = "max-clock-skew=" + SKEW.toMillis() + "ms, fence-timeout="
      + FENCE_TIMEOUT.toSeconds() + "s";
  /** The pause between this JVM's updates: a few a second. */
  private static final Duration UPDATE_PAUSE = Duration.ofMillis(200);
  /** The pause between the reader's reads. */
  private static final Duration READ_PAUSE = Duration.ofMillis(20);
  /** How long after the dead writer's placement the test gives up waiting for a cached read. */
  private static final Duration GIVE_UP = FENCE_TIMEOUT.plusSeconds(10);

  private static final Access RW = Access.READ_WRITE;
  private static final long ID = 1;

  private final String prefix = "k" + UUID.randomUUID().toString().substring(0, 8) + "-";
  private final List<AutoCloseable> closing = new ArrayList<>();
  private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
  private Process writer;
  private PrintWriter toWriter;

  @AfterEach
  void close() throws Exception {
    if (writer != null) {
      writer.destroyForcibly();
      writer.waitFor(30, TimeUnit.SECONDS);
    }
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
  }

  private SessionFactoryImplementor factory(String url, String schema) {
    CacheStoreFactory.OpenedStore store = Hibernates.open(MemcachedServer.shared().address(),
        Duration.ofSeconds(1));
    closing.add(store);
    SessionFactoryImplementor factory = Hibernates.sessionFactory(new HookedDataSource(url),
        schema, store.store(), prefix, Map.of(SustainableCacheRegionFactory.SETTINGS, SETTINGS),
        RwCoupon.class, NonstrictCoupon.class, ReadOnlyCoupon.class);
    closing.add(factory::close);
    return factory;
  }

  /** Starts the writer's JVM over the same database, memcached, namespace and settings. */
  private void startWriter(String url) throws Exception {
    InetSocketAddress memcached = MemcachedServer.shared().address();
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        // it lives seconds: the test JVMs' own compiler and collector (the root pom's argLine)
        "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
        "-cp", System.getProperty("java.class.path"),
        "-Dnet.spy.log.LoggerImpl=net.spy.memcached.compat.log.SLF4JLogger"));
    String client = System.getProperty(Hibernates.CLIENT);
    if (client != null) {
      command.add("-D" + Hibernates.CLIENT + "=" + client);
    }
    command.addAll(List.of(SecondJvm.class.getName(), url,
        memcached.getHostString() + ":" + memcached.getPort(), prefix, SETTINGS));
    writer = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    toWriter = new PrintWriter(writer.getOutputStream(), true, StandardCharsets.UTF_8);
    Thread output = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(
          writer.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line = in.readLine(); line != null; line = in.readLine()) {
          if (line.startsWith("> ")) {
            answers.add(line.substring(2));
          }
        }
      } catch (IOException e) {
        answers.add("failed " + e);
      }
    }, "writer-jvm-output");
    output.setDaemon(true);
    output.start();
    assertThat(answer(Duration.ofSeconds(60))).as("the writer's JVM started").isEqualTo("ready");
  }

  private String answer(Duration atMost) throws InterruptedException {
    String answer = answers.poll(atMost.toMillis(), TimeUnit.MILLISECONDS);
    assertThat(answer).as("the writer's JVM answered within %s", atMost).isNotNull();
    return answer;
  }

  private Server h2;

  @BeforeEach
  void startDatabase() throws Exception {
    h2 = Server.createTcpServer("-tcpPort", "0", "-ifNotExists").start();
    closing.add(h2::stop);
  }

  /** One read of the entity: when it began and ended (epoch ms), and the SQL it took. */
  private record Read(long began, long ended, long statements) {}

  /** One update of this JVM: when it began and returned (epoch ms), and whether it committed. */
  private record Update(long began, long returned, boolean committed) {}

  @Test
  void aWriterKilledInsideItsTransaction_whileAnotherKeepsWriting_holdsTheEntityAtMostTheFenceTimeout()
      throws Exception {
    // a row lock waits for the killed writer's connection to drop
    String url = "jdbc:h2:tcp://localhost:" + h2.getPort() + "/mem:" + prefix
        + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";
    SessionFactoryImplementor updating = factory(url, "create");
    SessionFactoryImplementor reading = factory(url, "none"); // its statements are the reader's
    inTransaction(updating, s -> s.persist(RW.create.apply(ID, "u0")));
    startWriter(url);
    // the writer's JVM runs an update first, so that its flush below is not its first
    toWriter.println("update " + RW + " " + ID + " u0");
    assertThat(answer(Duration.ofSeconds(30))).isEqualTo("ok");
    assertThat(find(reading, RW.type, ID).code()).isEqualTo("u0");

    AtomicBoolean running = new AtomicBoolean(true);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Read> reads = new ArrayList<>();
    List<Update> updates = new ArrayList<>();
    Thread reader = new Thread(() -> {
      try {
        while (running.get()) {
          long began = System.currentTimeMillis();
          long before = statements(reading);
          find(reading, RW.type, ID);
          long ended = System.currentTimeMillis();
          synchronized (reads) {
            reads.add(new Read(began, ended, statements(reading) - before));
          }
          Thread.sleep(READ_PAUSE.toMillis());
        }
      } catch (Throwable t) {
        failure.compareAndSet(null, t);
      }
    }, "reader");
    Thread updater = new Thread(() -> {
      try {
        for (int i = 1; running.get(); i++) {
          String code = "u" + i;
          long began = System.currentTimeMillis();
          boolean committed = true;
          try {
            inTransaction(updating, s -> s.find(RW.type, ID).code(code));
          } catch (PersistenceException e) {
            committed = false; // the dead writer's row lock, before its connection dropped
          }
          synchronized (updates) {
            updates.add(new Update(began, System.currentTimeMillis(), committed));
          }
          Thread.sleep(UPDATE_PAUSE.toMillis());
        }
      } catch (Throwable t) {
        failure.compareAndSet(null, t);
      }
    }, "updater");
    reader.start();
    updater.start();

    // The writer fences the entity; killed before it commits.
    Thread.sleep(300);
    toWriter.println("fence " + RW + " " + ID + " dead");
    String[] fenced = answer(Duration.ofSeconds(30)).split(" ");
    assertThat(fenced[0]).as("the writer fenced").isEqualTo("fenced");
    writer.destroyForcibly();
    assertThat(writer.waitFor(30, TimeUnit.SECONDS)).as("the writer killed").isTrue();
    long killed = System.currentTimeMillis();
    long placedAfter = Long.parseLong(fenced[1]); // the fence was placed during its flush
    long placedBy = Long.parseLong(fenced[2]);

    // Until a read after the first commit after the placement is served from the cache, or
    // until giving up.
    long giveUp = placedAfter + GIVE_UP.toMillis();
    while (System.currentTimeMillis() < giveUp && cachedAgain(reads, updates, placedBy) == null) {
      Thread.sleep(50);
    }
    Thread.sleep(500); // some updates and reads after it, for the margin
    running.set(false);
    reader.join(30_000);
    updater.join(30_000);
    assertThat(failure.get()).as("the reader or the updater failed").isNull();

    List<Update> afterKill = updates.stream().filter(u -> u.began() >= killed).toList();
    assertThat(afterKill).as("updates after the kill").hasSizeGreaterThan(2);
    assertThat(afterKill.stream().filter(Update::committed).count())
        .as("updates committed after the kill").isGreaterThan(2);
    Update firstCommit = firstCommitAfter(updates, placedBy);
    assertThat(firstCommit).as("an update began after the placement and committed").isNotNull();
    Read cached = cachedAgain(reads, updates, placedBy);

    // The margin, from what happened after the kill: the dead writer's hold is dropped by the
    // first change of the fence after its end (an update's join or release: within one update
    // cycle); the last live holder's release then leaves a tombstone (the fence was shared),
    // and either a read more than the clock skew later caches the row or the next update
    // (unshared) commits its value into the cache (within another cycle); the next read is a hit
    // (within one read cycle). Plus 500 ms for a descheduled thread between those steps.
    long longestUpdateCycle = 0;
    for (int i = 1; i < afterKill.size(); i++) {
      longestUpdateCycle = Math.max(longestUpdateCycle,
          afterKill.get(i).began() - afterKill.get(i - 1).began());
    }
    long longestReadCycle = 0;
    List<Read> readsAfterKill;
    synchronized (reads) {
      readsAfterKill = reads.stream().filter(r -> r.began() >= killed).toList();
    }
    for (int i = 1; i < readsAfterKill.size(); i++) {
      longestReadCycle = Math.max(longestReadCycle,
          readsAfterKill.get(i).began() - readsAfterKill.get(i - 1).began());
    }
    long margin = 2 * longestUpdateCycle + longestReadCycle + SKEW.toMillis() + 500;
    long uncachedReads = readsAfterKill.stream()
        .filter(r -> r.began() >= firstCommit.returned() && (cached == null
            || r.began() < cached.began()) && r.statements() > 0).count();
    long commitsDuringTheHold;
    synchronized (updates) {
      commitsDuringTheHold = updates.stream().filter(u -> u.committed()
          && u.returned() < placedAfter + FENCE_TIMEOUT.toMillis() && u.began() > placedBy)
          .count();
    }
    String summary = String.format("fence placed %d to %d ms before the kill; first commit after"
        + " it returned %d ms after the placement, %d commits before the dead writer's hold"
        + " ended; %s; %d reads with SQL in between; longest update cycle after the kill %d ms,"
        + " read cycle %d ms: margin %d ms",
        killed - placedBy, killed - placedAfter, firstCommit.returned() - placedAfter,
        commitsDuringTheHold,
        cached == null ? "no read served from the cache since"
            : "first read served from the cache since began " + (cached.began() - placedAfter)
                + " ms after the placement", uncachedReads, longestUpdateCycle,
        longestReadCycle, margin);
    System.out.println("KilledWriterIT: " + summary);

    assertThat(cached).as("a read served from the cache again; " + summary).isNotNull();
    assertThat(cached.began() - placedBy)
        .as("from the placement to the first read served from the cache after the first commit"
            + " since; " + summary)
        .isLessThanOrEqualTo(FENCE_TIMEOUT.toMillis() + margin);
    assertThat(cached.ended() - placedAfter)
        .as("the dead writer's fence held the entity until its end; " + summary)
        .isGreaterThanOrEqualTo(FENCE_TIMEOUT.toMillis());
  }

  /** The first update that began after {@code placed} and committed, or {@code null}. */
  private static Update firstCommitAfter(List<Update> updates, long placed) {
    synchronized (updates) {
      return updates.stream().filter(u -> u.began() > placed && u.committed()).findFirst()
          .orElse(null);
    }
  }

  /**
   * The first read with no SQL that began after the first commit after the placement: until
   * that commit the fence may answer with the entity it replaced (the dead writer committed
   * nothing), from it on the entity is served from the cache only once the dead writer's hold
   * ended. {@code null} if there is none yet.
   */
  private static Read cachedAgain(List<Read> reads, List<Update> updates, long placed) {
    Update first = firstCommitAfter(updates, placed);
    if (first == null) {
      return null;
    }
    synchronized (reads) {
      return reads.stream().filter(r -> r.began() > first.returned() && r.statements() == 0)
          .findFirst().orElse(null);
    }
  }
}
