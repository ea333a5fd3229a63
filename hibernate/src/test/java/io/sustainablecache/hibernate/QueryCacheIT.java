package io.sustainablecache.hibernate;

import static io.sustainablecache.hibernate.Hibernates.afterTheSkew;
import static io.sustainablecache.hibernate.Hibernates.inTransaction;
import static io.sustainablecache.hibernate.Hibernates.regionFactory;
import static io.sustainablecache.hibernate.Hibernates.statements;
import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.Transaction;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The query cache and its timestamps region over H2 and a real memcached, two instances, both
 * with near regions (which the timestamps region must not use).
 */
class QueryCacheIT {

  private static final String TIMESTAMPS = "default-update-timestamps-region";
  private final List<AutoCloseable> closing = new ArrayList<>();
  private final String prefix = "q" + UUID.randomUUID().toString().substring(0, 8) + "-";
  private CacheStore store;
  private SessionFactoryImplementor one;
  private SessionFactoryImplementor two;

  @BeforeEach
  void start() {
    HookedDataSource database = new HookedDataSource("jdbc:h2:mem:" + prefix
        + ";DB_CLOSE_DELAY=-1");
    store = store();
    one = factory(database, "create", store);
    two = factory(database, "none", store());
    inTransaction(one, s -> {
      s.persist(new RwCoupon(1, "A"));
      s.persist(new RwCoupon(2, "B"));
    });
    afterTheSkew(); // results of queries begun within the skew after the insert count as stale
  }

  @AfterEach
  void close() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
  }

  private CacheStore store() {
    CacheStoreFactory.OpenedStore opened = Hibernates.open(MemcachedServer.shared().address(),
        Duration.ofSeconds(1));
    closing.add(opened);
    return opened.store();
  }

  private SessionFactoryImplementor factory(HookedDataSource database, String schema,
      CacheStore over) {
    SessionFactoryImplementor factory = Hibernates.sessionFactory(database, schema, over, prefix,
        Map.of(AvailableSettings.USE_QUERY_CACHE, "true",
            SustainableCacheRegionFactory.SETTINGS, "max-clock-skew=100ms, near-cache=1000:10s"),
        RwCoupon.class, NonstrictCoupon.class);
    closing.add(factory::close);
    return factory;
  }

  /** The codes of coupons whose code is at least "A", by a cacheable query. */
  private static List<String> codes(SessionFactory factory) {
    try (Session session = factory.openSession()) {
      Transaction tx = session.beginTransaction();
      List<String> codes = session.createSelectionQuery(
              "select c.code from RwCoupon c where c.code >= :from order by c.id", String.class)
          .setParameter("from", "A").setCacheable(true).getResultList();
      tx.commit();
      return codes;
    }
  }

  private static long statementsOf(SessionFactory factory, Runnable read) {
    long before = statements(factory);
    read.run();
    return statements(factory) - before;
  }

  @Test
  void aCachedQuery_isAnsweredWithoutSql_onEveryInstance() {
    assertThat(codes(one)).containsExactly("A", "B");

    assertThat(statementsOf(one, () -> assertThat(codes(one)).containsExactly("A", "B")))
        .isZero();
    assertThat(statementsOf(two, () -> assertThat(codes(two)).containsExactly("A", "B")))
        .as("the other instance finds the same query's results").isZero();
    assertThat(two.getStatistics().getQueryCacheHitCount()).isEqualTo(1);
  }

  @Test
  void anUpdateOnOneInstance_makesTheOthersCachedResultsStale_atOnce_despiteNearRegions() {
    assertThat(codes(two)).containsExactly("A", "B");
    assertThat(codes(two)).containsExactly("A", "B");

    inTransaction(one, s -> s.find(RwCoupon.class, 2L).code("C"));

    assertThat(codes(two)).containsExactly("A", "C");
    assertThat(regionFactory(two).stats(TIMESTAMPS).orElseThrow().count("near_hit"))
        .as("timestamps are never near-cached").isZero();
  }

  @Test
  void anEvictedTimestamp_isTakenAsAnUpdateNow_notAsNoUpdate() {
    assertThat(codes(two)).containsExactly("A", "B");
    // a change that bypassed the timestamps (as if memcached evicted its timestamp)
    try (Session session = one.openSession()) {
      Transaction tx = session.beginTransaction();
      session.doWork(connection -> {
        try (var statement = connection.createStatement()) {
          statement.executeUpdate("update RwCoupon set code = 'C' where id = 2");
        }
      });
      tx.commit();
    }
    store.delete(prefix + TIMESTAMPS + ":tRwCoupon").join();

    assertThat(codes(two)).containsExactly("A", "C");
  }

  @Test
  void withMemcachedDown_queriesAreAnsweredByTheDatabase_andAChangeOfATableIsRolledBack() {
    MemcachedServer server = MemcachedServer.startLocal();
    closing.add(server::stop);
    CacheStoreFactory.OpenedStore opened = Hibernates.open(server.address(),
        Duration.ofSeconds(1));
    closing.add(opened);
    HookedDataSource database = new HookedDataSource("jdbc:h2:mem:" + prefix
        + "down;DB_CLOSE_DELAY=-1");
    SessionFactoryImplementor instance = factory(database, "create",
        opened.store());
    inTransaction(instance, s -> {
      s.persist(new RwCoupon(1, "A"));
      s.persist(new NonstrictCoupon(1, "A"));
    });
    afterTheSkew();
    assertThat(codes(instance)).containsExactly("A");
    assertThat(statementsOf(instance, () -> codes(instance))).isZero();

    server.stop();

    assertThat(statementsOf(instance, () -> assertThat(codes(instance)).containsExactly("A")))
        .as("no result is up to date without the timestamps").isPositive();
    // A change commits with memcached down (issue 31, part 2): the table's timestamp that could
    // not be written is owed (a tombstone once the store answers, which reads as "updated now",
    // so no cached result counts as up to date), and this instance's queries go on answering
    // from the database
    inTransaction(instance, s -> s.find(NonstrictCoupon.class, 1L).code("B"));
    assertThat(Hibernates.find(instance, NonstrictCoupon.class, 1).code()).as("committed")
        .isEqualTo("B");
    assertThat(statementsOf(instance, () -> assertThat(codes(instance)).containsExactly("A")))
        .as("queries still answered by the database").isPositive();
  }


  @Test
  void plantedBytesUnderATablesTimestamp_makeItsResultsStale_answeredByTheDatabase() {
    assertThat(codes(one)).containsExactly("A", "B");
    assertThat(statementsOf(one, () -> codes(one))).as("cached").isZero();
    String key = prefix + TIMESTAMPS + ":tRwCoupon";
    assertThat(store.gets(key).join()).as("the table's timestamp").isPresent();
    store.set(key, "planted".getBytes(java.nio.charset.StandardCharsets.UTF_8), 600).join();

    assertThat(statementsOf(one, () -> assertThat(codes(one)).containsExactly("A", "B")))
        .as("a timestamp that does not decode counts as an update now").isPositive();
    assertThat(regionFactory(one).stats(TIMESTAMPS).orElseThrow().count("corrupt_entry"))
        .isPositive();
  }
}
