package io.sustainablecache.hibernate;

import static io.sustainablecache.hibernate.Hibernates.afterTheSkew;
import static io.sustainablecache.hibernate.Hibernates.inTransaction;
import static io.sustainablecache.hibernate.Hibernates.regionFactory;
import static io.sustainablecache.hibernate.Hibernates.statements;
import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.Transaction;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Collection and natural-id regions (READ_WRITE) over H2 and a real memcached: cached, changed on
 * one instance and read on another, rolled back, planted bytes.
 */
class CollectionAndNaturalIdIT {

  private final List<AutoCloseable> closing = new ArrayList<>();
  private final String prefix = "c" + UUID.randomUUID().toString().substring(0, 8) + "-";
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
    inTransaction(one, s -> s.persist(new Shop(1, "s1", List.of("a", "b"))));
    afterTheSkew(); // the insert fenced the collection's key: reads begun since may cache it
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
        Map.of(SustainableCacheRegionFactory.SETTINGS, "max-clock-skew=100ms"), Shop.class);
    closing.add(factory::close);
    return factory;
  }

  private static List<String> tags(SessionFactory factory) {
    try (Session session = factory.openSession()) {
      Transaction tx = session.beginTransaction();
      List<String> tags = new ArrayList<>(session.find(Shop.class, 1L).tags);
      tx.commit();
      return tags;
    }
  }

  private static Long byCode(SessionFactory factory, String code) {
    try (Session session = factory.openSession()) {
      Transaction tx = session.beginTransaction();
      Shop shop = session.bySimpleNaturalId(Shop.class).load(code);
      tx.commit();
      return shop == null ? null : shop.id;
    }
  }

  private static long statementsOf(SessionFactory factory, Runnable read) {
    long before = statements(factory);
    read.run();
    return statements(factory) - before;
  }

  @Test
  void aCollectionIsCached_andReadWithoutSql_onEveryInstance() {
    assertThat(tags(one)).containsExactly("a", "b");
    assertThat(statementsOf(one, () -> tags(one))).isZero();
    assertThat(statementsOf(two, () -> assertThat(tags(two)).containsExactly("a", "b")))
        .isZero();
    assertThat(one.getStatistics().getDomainDataRegionStatistics("shop-tags").getPutCount())
        .isEqualTo(1);
    assertThat(two.getStatistics().getDomainDataRegionStatistics("shop-tags").getHitCount())
        .isEqualTo(1);
  }

  @Test
  void aCollectionChangedOnOneInstance_isReadOnTheOther() {
    assertThat(tags(two)).containsExactly("a", "b");

    inTransaction(one, s -> s.find(Shop.class, 1L).tags.add("c"));

    assertThat(tags(two)).containsExactly("a", "b", "c");
    afterTheSkew();
    assertThat(tags(two)).containsExactly("a", "b", "c");
    assertThat(statementsOf(two, () -> tags(two))).as("cached again").isZero();
  }

  @Test
  void aCollectionChangeRolledBack_leavesTheCommittedElements() {
    assertThat(tags(two)).containsExactly("a", "b");
    try (Session session = one.openSession()) {
      Transaction tx = session.beginTransaction();
      session.find(Shop.class, 1L).tags.add("c");
      session.flush();
      tx.rollback();
    }

    assertThat(tags(two)).containsExactly("a", "b");
  }

  @Test
  void aNaturalId_isResolvedFromTheCache_andItsChangeIsSeenOnTheOtherInstance() {
    assertThat(byCode(two, "s1")).isEqualTo(1L);
    assertThat(statementsOf(two, () -> assertThat(byCode(two, "s1")).isEqualTo(1L)))
        .as("the natural id and the entity from the cache").isZero();
    assertThat(two.getStatistics().getDomainDataRegionStatistics("shop##NaturalId")
        .getHitCount()).isPositive();

    inTransaction(one, s -> s.find(Shop.class, 1L).code = "s2");

    assertThat(byCode(two, "s1")).isNull();
    assertThat(byCode(two, "s2")).isEqualTo(1L);
  }

  @Test
  void plantedBytesUnderACollectionKey_areAMiss() {
    assertThat(tags(one)).containsExactly("a", "b");
    String key = prefix + "shop-tags:" + Shop.class.getName() + ".tags/1";
    assertThat(store.gets(key).join()).as("the collection's entry").isPresent();
    store.set(key, "planted".getBytes(StandardCharsets.UTF_8), 600).join();

    assertThat(statementsOf(one, () -> assertThat(tags(one)).containsExactly("a", "b")))
        .isEqualTo(1);
  }

  @Test
  void plantedBytesUnderANaturalIdKey_areAMiss_answeredByTheDatabase() {
    assertThat(byCode(one, "s1")).isEqualTo(1L);
    String key = StoreKeys.namespace(prefix, "shop##NaturalId") + ":" + Shop.class.getName()
        + "/n's1";
    assertThat(store.gets(key).join()).as("the natural id's entry").isPresent();
    store.set(key, "planted".getBytes(StandardCharsets.UTF_8), 600).join();

    assertThat(statementsOf(one, () -> assertThat(byCode(one, "s1")).isEqualTo(1L)))
        .as("resolved by the database").isPositive();
    assertThat(regionFactory(one).stats("shop##NaturalId").orElseThrow().count("corrupt_entry"))
        .isPositive();
  }

  @Test
  void withMemcachedDown_collectionsAndNaturalIds_areAnsweredByTheDatabase_failuresCounted() {
    MemcachedServer server = MemcachedServer.startLocal();
    closing.add(server::stop);
    CacheStoreFactory.OpenedStore dying = Hibernates.open(server.address(),
        Duration.ofSeconds(1));
    closing.add(dying);
    HookedDataSource database = new HookedDataSource("jdbc:h2:mem:" + prefix
        + "down;DB_CLOSE_DELAY=-1");
    SessionFactoryImplementor instance = factory(database, "create", dying.store());
    inTransaction(instance, s -> s.persist(new Shop(1, "s1", List.of("a", "b"))));
    afterTheSkew();
    assertThat(tags(instance)).containsExactly("a", "b");
    assertThat(byCode(instance, "s1")).isEqualTo(1L);
    assertThat(statementsOf(instance, () -> tags(instance))).as("cached").isZero();

    server.stop();

    assertThat(statementsOf(instance, () -> assertThat(tags(instance))
        .containsExactly("a", "b"))).as("from the database").isPositive();
    assertThat(statementsOf(instance, () -> assertThat(byCode(instance, "s1")).isEqualTo(1L)))
        .as("from the database").isPositive();
    assertThat(regionFactory(instance).stats("shop-tags").orElseThrow().storeErrorCount())
        .isPositive();
    assertThat(regionFactory(instance).stats("shop##NaturalId").orElseThrow().storeErrorCount())
        .isPositive();
  }

}
