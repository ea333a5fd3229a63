package io.sustainablecache.hibernate;

import static org.awaitility.Awaitility.await;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spymemcached.SpymemcachedStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import net.spy.memcached.MemcachedClient;
import org.hibernate.SessionFactory;
import org.hibernate.Transaction;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.cfg.Configuration;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.stat.Statistics;

/** Builds session factories over H2 and a store, as a service's instances would. */
final class Hibernates {

  private Hibernates() {}

  /** A spymemcached client with the recommended settings, connected. */
  static MemcachedClient connect(InetSocketAddress address, Duration operationTimeout) {
    MemcachedClient client;
    try {
      client = new MemcachedClient(SpymemcachedStore.recommendedSettings()
          .setOpTimeout(operationTimeout.toMillis()).setDaemon(true).build(), List.of(address));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    await("the client to connect").atMost(Duration.ofSeconds(5)).pollInterval(
        Duration.ofMillis(10)).until(() -> client.getAvailableServers().contains(address));
    return client;
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

  static Statistics statistics(SessionFactory factory) {
    return factory.getStatistics();
  }
}
