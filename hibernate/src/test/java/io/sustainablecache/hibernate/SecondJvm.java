package io.sustainablecache.hibernate;

import static io.sustainablecache.hibernate.Hibernates.find;
import static io.sustainablecache.hibernate.Hibernates.inTransaction;
import static io.sustainablecache.hibernate.Hibernates.regionFactory;
import static io.sustainablecache.hibernate.Hibernates.statements;

import io.sustainablecache.hibernate.HibernateSecondLevelCacheIT.Access;
import io.sustainablecache.spi.CacheStoreFactory;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.hibernate.engine.spi.SessionFactoryImplementor;

/**
 * Another instance of the service in a JVM of its own, for {@link TwoJvmsIT}: a session factory
 * over the same H2 database (over TCP) and the same memcached, driven by commands on standard
 * input, one per line, each answered by one line starting with {@code "> "} on standard output:
 *
 * <ul>
 *   <li>{@code read <access> <id>}: {@code > <code or null> <statements prepared>}</li>
 *   <li>{@code update <access> <id> <code>}: {@code > ok} (or {@code > failed <exception>})</li>
 *   <li>{@code read-start <access> <id>}: starts a thread that reads the entity in a loop;
 *       {@code > started} once its first read returned</li>
 *   <li>{@code read-stop <access>}: stops that thread and waits for it; {@code > <reads>} (or
 *       {@code > failed <exception>} if a read threw)</li>
 *   <li>{@code near-hits <access>}: the region's near hits so far</li>
 *   <li>{@code fence <access> <id> <code>}: changes the entity's code in a transaction and
 *       flushes it (a READ_WRITE entity's fence stands, the row is locked), and neither commits
 *       nor rolls back: {@code > fenced <ms before the flush> <ms after it>} (epoch ms), for a
 *       writer that is killed before its commit</li>
 * </ul>
 *
 * <p>Arguments: the JDBC URL, memcached's {@code host:port}, the namespace prefix and the
 * provider's settings spec; the adapter is the one {@value Hibernates#CLIENT} names (or the only
 * one on the class path). Prints {@code > ready} when the session factory is up.
 */
final class SecondJvm {

  /** The loop {@code read-start} started, or {@code null}; only the command loop touches it. */
  private static Reading reading;

  /** The session of {@code fence}, left open: its transaction never ends. */
  private static org.hibernate.Session fencing;

  private SecondJvm() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    String[] hostPort = args[1].split(":");
    try (CacheStoreFactory.OpenedStore store = Hibernates.open(
        new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1])),
        Duration.ofSeconds(1))) {
      SessionFactoryImplementor factory = Hibernates.sessionFactory(
          new HookedDataSource(args[0]), "none", store.store(), args[2],
          Map.of(SustainableCacheRegionFactory.SETTINGS, args[3]), RwCoupon.class,
          NonstrictCoupon.class, ReadOnlyCoupon.class);
      try (factory) {
        out.println("> ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
            StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null && !line.equals("quit");
            line = in.readLine()) {
          out.println("> " + answer(factory, line.split(" ")));
        }
      }
    }
  }

  private static String answer(SessionFactoryImplementor factory, String[] command) {
    Access access = Access.valueOf(command[1]);
    switch (command[0]) {
      case "read": {
        long before = statements(factory);
        Coupon coupon = find(factory, access.type, Long.parseLong(command[2]));
        return (coupon == null ? "null" : coupon.code()) + " " + (statements(factory) - before);
      }
      case "update":
        try {
          inTransaction(factory, s -> s.find(access.type, Long.parseLong(command[2]))
              .code(command[3]));
          return "ok";
        } catch (RuntimeException e) {
          return "failed " + e;
        }
      case "read-start": {
        if (reading != null) {
          throw new IllegalStateException("already reading");
        }
        reading = new Reading(factory, access, Long.parseLong(command[2]));
        reading.awaitFirstRead();
        return "started";
      }
      case "read-stop": {
        if (reading == null) {
          throw new IllegalStateException("not reading");
        }
        Reading stopping = reading;
        reading = null;
        return stopping.stop();
      }
      case "fence": {
        if (fencing != null) {
          throw new IllegalStateException("already fencing");
        }
        // Another JVM may update the row meanwhile: the row is read locked (FOR UPDATE, from the
        // database), and a lost race is tried again.
        for (int attempt = 1; ; attempt++) {
          org.hibernate.Session session = factory.openSession();
          try {
            session.beginTransaction();
            session.find(access.type, Long.parseLong(command[2]),
                jakarta.persistence.LockModeType.PESSIMISTIC_WRITE).code(command[3]);
            long before = System.currentTimeMillis();
            session.flush();
            fencing = session;
            return "fenced " + before + " " + System.currentTimeMillis();
          } catch (RuntimeException e) {
            session.close();
            if (attempt == 10) {
              return "failed " + e;
            }
          }
        }
      }
      case "near-hits":
        return Long.toString(regionFactory(factory).stats(access.region).orElseThrow()
            .count("near_hit"));
      default:
        throw new IllegalArgumentException("unknown command: " + String.join(" ", command));
    }
  }

  /** A thread reading one entity in a loop until stopped, counting its reads. */
  private static final class Reading {

    private final CountDownLatch firstRead = new CountDownLatch(1);
    private final AtomicLong reads = new AtomicLong();
    private final AtomicReference<RuntimeException> failure = new AtomicReference<>();
    private final Thread thread;
    private volatile boolean stopped;

    Reading(SessionFactoryImplementor factory, Access access, long id) {
      thread = new Thread(() -> {
        try {
          while (!stopped) {
            find(factory, access.type, id);
            reads.incrementAndGet();
            firstRead.countDown();
          }
        } catch (RuntimeException e) {
          failure.set(e);
        } finally {
          firstRead.countDown();
        }
      }, "second-jvm-reader");
      thread.start();
    }

    void awaitFirstRead() {
      try {
        if (!firstRead.await(30, TimeUnit.SECONDS)) {
          throw new IllegalStateException("no read returned within 30 s");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }

    String stop() {
      stopped = true;
      try {
        thread.join(30_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      if (thread.isAlive()) {
        return "failed the reader did not stop within 30 s";
      }
      RuntimeException e = failure.get();
      return e != null ? "failed " + e : Long.toString(reads.get());
    }
  }
}
