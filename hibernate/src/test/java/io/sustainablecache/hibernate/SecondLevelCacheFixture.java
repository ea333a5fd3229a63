package io.sustainablecache.hibernate;

import static io.sustainablecache.hibernate.Hibernates.find;
import static io.sustainablecache.hibernate.Hibernates.inTransaction;
import static io.sustainablecache.hibernate.Hibernates.statements;

import io.sustainablecache.hibernate.HibernateSecondLevelCacheIT.Access;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.hibernate.SessionFactory;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What {@link HibernateSecondLevelCacheIT} and {@link HibernateTwoInstancesIT} share: per test an
 * H2 database and a namespace of their own, a store over a new client of this execution's adapter,
 * the first instance's session factory ({@code one}) over the three coupon entities, and what
 * every test opened closed after it. (Two classes so that failsafe's two forks run them side by
 * side.)
 */
abstract class SecondLevelCacheFixture {

  /** Hosts of one machine agree on the time; the provider's default is 2 s. */
  static final String SKEW = "max-clock-skew=100ms";

  final List<AutoCloseable> closing = new ArrayList<>();
  final String prefix = "h" + UUID.randomUUID().toString().substring(0, 8) + "-";
  HookedDataSource database;
  CacheStore store;
  SessionFactoryImplementor one;

  @BeforeEach
  void start() {
    database = new HookedDataSource("jdbc:h2:mem:" + prefix + ";DB_CLOSE_DELAY=-1");
    store = store(MemcachedServer.shared());
    one = factory("create", Map.of());
  }

  @AfterEach
  void close() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
  }

  CacheStore store(MemcachedServer server) {
    return store(server, Duration.ofSeconds(1));
  }

  /** A store over its own client whose operations time out after {@code timeout}. */
  CacheStore store(MemcachedServer server, Duration timeout) {
    CacheStoreFactory.OpenedStore opened = Hibernates.open(server.address(), timeout);
    closing.add(opened);
    return opened.store();
  }

  /** Another instance of the service: its own session factory and client. */
  SessionFactoryImplementor factory(String schema, Map<String, Object> settings) {
    return factory(schema, store, settings);
  }

  SessionFactoryImplementor factory(String schema, CacheStore over,
      Map<String, Object> settings) {
    Map<String, Object> all = new HashMap<>(settings);
    all.putIfAbsent(SustainableCacheRegionFactory.SETTINGS, SKEW);
    SessionFactoryImplementor factory = Hibernates.sessionFactory(database, schema, over, prefix,
        all, RwCoupon.class, NonstrictCoupon.class, ReadOnlyCoupon.class);
    closing.add(factory::close);
    return factory;
  }

  static void persist(SessionFactory factory, Access access, long id, String code) {
    inTransaction(factory, s -> s.persist(access.create.apply(id, code)));
  }

  static void update(SessionFactory factory, Access access, long id, String code) {
    inTransaction(factory, s -> s.find(access.type, id).code(code));
  }

  static String code(SessionFactory factory, Access access, long id) {
    Coupon coupon = find(factory, access.type, id);
    return coupon == null ? null : coupon.code();
  }

  /** Reads the entity and returns the statements the read prepared. */
  static long statementsOfRead(SessionFactory factory, Access access, long id) {
    long before = statements(factory);
    find(factory, access.type, id);
    return statements(factory) - before;
  }
}
