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
import org.hibernate.engine.spi.SessionFactoryImplementor;

/**
 * Another instance of the service in a JVM of its own, for {@link TwoJvmsIT}: a session factory
 * over the same H2 database (over TCP) and the same memcached, driven by commands on standard
 * input, one per line, each answered by one line starting with {@code "> "} on standard output:
 *
 * <ul>
 *   <li>{@code read <access> <id>}: {@code > <code or null> <statements prepared>}</li>
 *   <li>{@code update <access> <id> <code>}: {@code > ok} (or {@code > failed <exception>})</li>
 *   <li>{@code read-for <access> <id> <millis>}: reads in a loop that long; {@code > <reads>}</li>
 *   <li>{@code near-hits <access>}: the region's near hits so far</li>
 * </ul>
 *
 * <p>Arguments: the JDBC URL, memcached's {@code host:port}, the namespace prefix and the
 * provider's settings spec; the adapter is the one {@value Hibernates#CLIENT} names (or the only
 * one on the class path). Prints {@code > ready} when the session factory is up.
 */
final class SecondJvm {

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
      case "read-for": {
        long id = Long.parseLong(command[2]);
        long end = System.nanoTime() + Duration.ofMillis(Long.parseLong(command[3])).toNanos();
        long reads = 0;
        while (System.nanoTime() < end) {
          find(factory, access.type, id);
          reads++;
        }
        return Long.toString(reads);
      }
      case "near-hits":
        return Long.toString(regionFactory(factory).stats(access.region).orElseThrow()
            .nearHitCount());
      default:
        throw new IllegalArgumentException("unknown command: " + String.join(" ", command));
    }
  }
}
