package io.sustainablecache.hibernate;

import static io.sustainablecache.hibernate.Hibernates.inTransaction;

import io.sustainablecache.hibernate.HibernateSecondLevelCacheIT.Access;
import io.sustainablecache.spi.CacheStoreFactory;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.hibernate.engine.spi.SessionFactoryImplementor;

/**
 * Another instance of the service in a JVM of its own, for {@link KilledWriterIT}: a session
 * factory over the same H2 database (over TCP) and the same memcached, driven by commands on standard
 * input, one per line, each answered by one line starting with {@code "> "} on standard output:
 *
 * <ul>
 *   <li>{@code update <access> <id> <code>}: {@code > ok} (or {@code > failed <exception>})</li>
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
      case "update":
        try {
          inTransaction(factory, s -> s.find(access.type, Long.parseLong(command[2]))
              .code(command[3]));
          return "ok";
        } catch (RuntimeException e) {
          return "failed " + e;
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
      default:
        throw new IllegalArgumentException("unknown command: " + String.join(" ", command));
    }
  }
}
