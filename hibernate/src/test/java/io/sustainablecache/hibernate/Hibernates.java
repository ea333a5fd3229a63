package io.sustainablecache.hibernate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CacheStoreFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.hibernate.CacheMode;
import org.hibernate.SessionFactory;
import org.hibernate.Transaction;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.cfg.Configuration;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.stat.Statistics;

/** Builds session factories over H2 and a store, as a service's instances would. */
final class Hibernates {

  private Hibernates() {}

  /**
   * The system property naming the adapter the integration tests run over ({@code spymemcached},
   * the module's failsafe configuration; Hibernate over ARCUS runs in the lab's {@code
   * HibernateScenarioIT}); unset, the only adapter on the class path.
   */
  static final String CLIENT = "sustainable-cache.it.client";

  /**
   * A store over a new client of this run's adapter, connected to {@code address}: found through
   * {@link CacheStoreFactory}, so the tests link neither client (ARCUS's {@code new
   * ArcusClient(cf, addresses)} over plain memcached, or spymemcached's {@code MemcachedClient}).
   * Close it after the session factories over it.
   */
  static CacheStoreFactory.OpenedStore open(InetSocketAddress address,
      Duration operationTimeout) {
    return adapter().open(CacheStoreFactory.Settings.builder()
        .addresses(List.of(address.getHostString() + ":" + address.getPort()))
        .operationTimeout(operationTimeout)
        .build());
  }

  /** This run's adapter: the one {@value #CLIENT} names, or the only one on the class path. */
  static CacheStoreFactory adapter() {
    return CacheStoreFactory.find(System.getProperty(CLIENT), Hibernates.class.getClassLoader());
  }

  /**
   * A session factory over the H2 database {@code database} (shared by every factory of this JVM
   * that names it), caching in {@code store} under the namespace prefix {@code prefix}.
   *
   * @param schema {@code create}, {@code update} or {@code none}
   */
  static SessionFactoryImplementor sessionFactory(HookedDataSource database, String schema,
      CacheStore store, String prefix, Map<String, Object> settings, Class<?>... entities) {
    return sessionFactory(database, schema, store, prefix, settings, null, entities);
  }

  /** As above, with an orm.xml mapping resource over the annotations ({@code null}: none). */
  static SessionFactoryImplementor sessionFactory(HookedDataSource database, String schema,
      CacheStore store, String prefix, Map<String, Object> settings, String mappingResource,
      Class<?>... entities) {
    Configuration configuration = new Configuration();
    if (mappingResource != null) {
      configuration.addResource(mappingResource);
    }
    for (Class<?> entity : entities) {
      configuration.addAnnotatedClass(entity);
    }
    Map<Object, Object> properties = configuration.getProperties();
    properties.put(AvailableSettings.JAKARTA_NON_JTA_DATASOURCE, database);
    properties.put(AvailableSettings.HBM2DDL_AUTO, schema);
    properties.put(AvailableSettings.USE_SECOND_LEVEL_CACHE, "true");
    properties.put(AvailableSettings.USE_QUERY_CACHE, "false");
    properties.put(AvailableSettings.CACHE_REGION_FACTORY, "sustainable");
    properties.put(AvailableSettings.GENERATE_STATISTICS, "true");
    properties.put(SustainableCacheRegionFactory.STORE, store);
    properties.put(SustainableCacheRegionFactory.NAMESPACE_PREFIX, prefix);
    properties.putAll(settings);
    return (SessionFactoryImplementor) configuration.buildSessionFactory();
  }

  /** Runs {@code work} in a transaction of a new session, and commits. */
  static void inTransaction(SessionFactory factory, Consumer<org.hibernate.Session> work) {
    try (var session = factory.openSession()) {
      Transaction tx = session.beginTransaction();
      work.accept(session);
      tx.commit();
    }
  }

  /** Finds an entity in a new session, in a transaction. */
  static <T> T find(SessionFactory factory, Class<T> type, long id) {
    try (var session = factory.openSession()) {
      Transaction tx = session.beginTransaction();
      T found = session.find(type, id);
      tx.commit();
      return found;
    }
  }

  /**
   * Waits until transactions that begin now begin later than the tests' {@code max-clock-skew}
   * (100 ms) after the changes made so far: only their reads may replace those changes'
   * tombstones.
   */
  static void afterTheSkew() {
    long until = System.currentTimeMillis() + 150;
    await().pollInterval(Duration.ofMillis(10)).until(() -> System.currentTimeMillis() > until);
  }

  /** The statements this factory prepared so far. */
  static long statements(SessionFactory factory) {
    return factory.getStatistics().getPrepareStatementCount();
  }

  /** A read of an entity's code. */
  @FunctionalInterface
  interface CodeRead {
    /** The code read, {@code null} or {@code "null"} when there is no entity. */
    String code() throws Exception;
  }

  /**
   * Reads until {@code code}, then three times more (each must be {@code code}); returns when the
   * last read that returned anything else began after {@code since} ({@link System#nanoTime()}),
   * or zero if none did. Fails if {@code code} is not read within 5 s.
   */
  static Duration lastOldRead(CodeRead read, String code, long since) throws Exception {
    Duration lastOld = Duration.ZERO;
    while (true) {
      long began = System.nanoTime();
      assertThat(Duration.ofNanos(began - since)).as("read %s within 5 s", code)
          .isLessThan(Duration.ofSeconds(5));
      if (code.equals(read.code())) {
        break;
      }
      lastOld = Duration.ofNanos(began - since);
    }
    for (int i = 0; i < 3; i++) {
      assertThat(read.code()).as("never the old entity again").isEqualTo(code);
    }
    return lastOld;
  }

  /** A coupon's code as the database holds it, the cache ignored; {@code null}: no row. */
  static String codeInDatabase(SessionFactory factory, Class<? extends Coupon> type, long id) {
    try (var session = factory.openSession()) {
      session.setCacheMode(CacheMode.IGNORE);
      Coupon coupon = session.find(type, id);
      return coupon == null ? null : coupon.code();
    }
  }

  /** The provider of {@code factory}. */
  static SustainableCacheRegionFactory regionFactory(SessionFactoryImplementor factory) {
    return (SustainableCacheRegionFactory) factory.getCache().getRegionFactory();
  }

  static Statistics statistics(SessionFactory factory) {
    return factory.getStatistics();
  }
}
