package io.sustainablecache.hibernate;

import static io.sustainablecache.hibernate.Hibernates.afterTheSkew;
import static io.sustainablecache.hibernate.Hibernates.inTransaction;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testing.RoundTripStore;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.stream.LongStream;
import org.hibernate.CacheMode;
import org.hibernate.Session;
import org.hibernate.Transaction;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.stat.Statistics;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link SustainableHibernate#findMultiple} over a real memcached (each adapter: the module's two
 * failsafe executions): 100 ids of which 90 are cached in two store round trips (one bulk read,
 * one wave of writes) and one SQL statement, where {@code session.findMultiple} takes one round
 * trip per id; the same answers as {@code findMultiple} for every kind of id list; a change
 * committed between the bulk read and the writes never leaves a stale entity cached; the prefetch
 * never outlives its call. Round trips are counted by a {@link RoundTripStore} under the provider,
 * SQL statements and hits by Hibernate's statistics.
 */
class FindMultipleIT {

  private static final String SKEW = "max-clock-skew=100ms";

  /** The access types that change entities, with their coupon entity. */
  enum Access {
    READ_WRITE(RwCoupon.class, RwCoupon::new),
    NONSTRICT_READ_WRITE(NonstrictCoupon.class, NonstrictCoupon::new),
    READ_ONLY(ReadOnlyCoupon.class, ReadOnlyCoupon::new);

    final Class<? extends Coupon> type;
    final java.util.function.BiFunction<Long, String, Coupon> create;

    Access(Class<? extends Coupon> type,
        java.util.function.BiFunction<Long, String, Coupon> create) {
      this.type = type;
      this.create = create;
    }
  }

  private final List<AutoCloseable> closing = new ArrayList<>();
  private final String prefix = "fm" + UUID.randomUUID().toString().substring(0, 8) + "-";
  private HookedDataSource database;
  private RoundTripStore store;
  private SessionFactoryImplementor one;

  @BeforeEach
  void start() {
    database = new HookedDataSource("jdbc:h2:mem:" + prefix + ";DB_CLOSE_DELAY=-1");
    CacheStoreFactory.OpenedStore opened = Hibernates.open(MemcachedServer.shared().address(),
        Duration.ofSeconds(1));
    closing.add(opened);
    store = new RoundTripStore(opened.store());
    one = factory("create");
  }

  @AfterEach
  void close() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
  }

  private SessionFactoryImplementor factory(String schema) {
    return factory(schema, SKEW);
  }

  private SessionFactoryImplementor factory(String schema, String settings) {
    SessionFactoryImplementor factory = Hibernates.sessionFactory(database, schema, store, prefix,
        Map.of(SustainableCacheRegionFactory.SETTINGS, settings), RwCoupon.class,
        NonstrictCoupon.class, ReadOnlyCoupon.class);
    closing.add(factory::close);
    return factory;
  }

  /** Rows 1..count, none cached. */
  private void rows(Access access, int count) {
    try (Session session = one.openSession()) {
      session.setCacheMode(CacheMode.IGNORE);
      Transaction tx = session.beginTransaction();
      for (long id = 1; id <= count; id++) {
        session.persist(access.create.apply(id, "c" + id));
      }
      tx.commit();
    }
  }

  private static List<Long> ids(long from, long to) {
    return LongStream.rangeClosed(from, to).boxed().toList();
  }

  private static List<String> codes(List<? extends Coupon> found) {
    return found.stream().map(c -> c == null ? null : c.code()).toList();
  }

  /** A measured call in a new session of {@code factory}, statistics and counts zeroed first. */
  private <T> T measured(SessionFactoryImplementor factory, java.util.function.Function<Session, T>
      work) {
    factory.getStatistics().clear();
    store.reset();
    try (Session session = factory.openSession()) {
      return store.measure(() -> work.apply(session));
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Round trips and statements

  @ParameterizedTest
  @EnumSource(Access.class)
  void hundredIdsNinetyCached_twoStoreRoundTrips_oneStatement(Access access) {
    rows(access, 100);
    try (Session session = one.openSession()) {
      session.findMultiple(access.type, ids(1, 90)); // Hibernate caches the 90
    }
    assertThat(one.getStatistics().getSecondLevelCachePutCount()).isEqualTo(90);

    List<? extends Coupon> found = measured(one,
        s -> SustainableHibernate.findMultiple(s, access.type, ids(1, 100)));

    Statistics statistics = one.getStatistics();
    assertThat(codes(found)).containsExactlyElementsOf(
        ids(1, 100).stream().map(id -> "c" + id).toList());
    assertThat(statistics.getPrepareStatementCount()).as("SQL statements").isEqualTo(1);
    assertThat(statistics.getSecondLevelCacheHitCount()).isEqualTo(90);
    assertThat(statistics.getSecondLevelCacheMissCount()).isEqualTo(10);
    assertThat(statistics.getSecondLevelCachePutCount()).as("puts counted").isEqualTo(10);
    assertThat(store.roundTrips()).as("store round trips: the bulk read, the writes")
        .isEqualTo(2);
    assertThat(store.bulkReads()).isEqualTo(1);
    assertThat(store.singleReads()).as("no read per id").isEqualTo(0);
    assertThat(store.operations()).as("one bulk read and one write per entity loaded")
        .isEqualTo(11);

    // every id cached now: one round trip, no statement
    found = measured(one, s -> SustainableHibernate.findMultiple(s, access.type, ids(1, 100)));
    assertThat(found).hasSize(100).doesNotContainNull();
    assertThat(one.getStatistics().getPrepareStatementCount()).isZero();
    assertThat(one.getStatistics().getSecondLevelCacheHitCount()).isEqualTo(100);
    assertThat(store.roundTrips()).isEqualTo(1);
    assertThat(store.operations()).isEqualTo(1);
  }

  @Test
  void withANearRegion_eachWriteAlsoRecordsItsChange_fourRoundTrips() {
    SessionFactoryImplementor near = factory("none", SKEW + ", near-cache=1000:1s");
    rows(Access.READ_WRITE, 100);
    try (Session session = near.openSession()) {
      session.findMultiple(RwCoupon.class, ids(1, 90));
    }

    List<RwCoupon> found = measured(near,
        s -> SustainableHibernate.findMultiple(s, RwCoupon.class, ids(1, 100)));

    assertThat(found).hasSize(100).doesNotContainNull();
    assertThat(near.getStatistics().getPrepareStatementCount()).isEqualTo(1);
    assertThat(store.bulkReads()).isEqualTo(1);
    assertThat(store.singleReads()).isEqualTo(0);
    assertThat(store.roundTrips()).as("the bulk read; the writes; their records: incr, set")
        .isEqualTo(4);
    assertThat(store.operations()).isEqualTo(1 + 3 * 10);
  }

  @Test
  void sessionFindMultiple_takesOneRoundTripPerId_theComparison() {
    rows(Access.READ_WRITE, 100);
    try (Session session = one.openSession()) {
      session.findMultiple(RwCoupon.class, ids(1, 90));
    }

    List<RwCoupon> found = measured(one, s -> s.findMultiple(RwCoupon.class, ids(1, 100)));

    assertThat(found).hasSize(100).doesNotContainNull();
    assertThat(one.getStatistics().getPrepareStatementCount()).isEqualTo(1);
    assertThat(store.singleReads()).as("a read per id, and per entity put")
        .isGreaterThanOrEqualTo(110);
    assertThat(store.roundTrips()).as("each awaited on its own, and the puts' writes")
        .isGreaterThanOrEqualTo(120);
  }

  // ---------------------------------------------------------------------------------------------
  // The same answers as findMultiple

  @Test
  void orderDuplicatesUnknownNullAndOtherTypedIds_areAnsweredAsFindMultipleAnswers() {
    rows(Access.READ_WRITE, 10);
    try (Session session = one.openSession()) {
      session.findMultiple(RwCoupon.class, List.of(2L, 4L, 6L));
    }
    List<Object> ids = Arrays.asList(6L, 3L, 6L, 999L, 1L, 4L, 3L, 2L);
    List<String> expected;
    try (Session session = one.openSession()) {
      session.setCacheMode(CacheMode.IGNORE);
      expected = codes(session.findMultiple(RwCoupon.class, ids));
    }

    List<RwCoupon> found = measured(one,
        s -> SustainableHibernate.findMultiple(s, RwCoupon.class, ids));

    assertThat(codes(found)).containsExactlyElementsOf(expected);
    assertThat(codes(found)).containsExactly("c6", "c3", "c6", null, "c1", "c4", "c3", "c2");
    assertThat(one.getStatistics().getPrepareStatementCount()).isEqualTo(1);
    assertThat(store.singleReads()).isEqualTo(0);
    assertThat(store.bulkReads()).isEqualTo(1);

    // a null id fails as findMultiple fails it
    List<Object> withNull = Arrays.asList(1L, null);
    Class<? extends Throwable> refused;
    try (Session session = one.openSession()) {
      refused = org.assertj.core.api.Assertions.catchThrowable(
          () -> session.findMultiple(RwCoupon.class, withNull)).getClass();
    }
    try (Session session = one.openSession()) {
      assertThatThrownBy(() -> SustainableHibernate.findMultiple(session, RwCoupon.class,
          withNull)).isInstanceOf(refused);
    }

    // ids Hibernate coerces (Integer for a Long id) are answered the same, read as usual
    List<RwCoupon> coerced = measured(one,
        s -> SustainableHibernate.findMultiple(s, RwCoupon.class, List.of(1, 2)));
    assertThat(codes(coerced)).containsExactly("c1", "c2");
    // and options that skip the second-level cache skip the prefetch
    List<RwCoupon> ignored = measured(one, s -> SustainableHibernate.findMultiple(s,
        RwCoupon.class, List.of(1L, 2L), CacheMode.IGNORE));
    assertThat(codes(ignored)).containsExactly("c1", "c2");
    assertThat(store.operations()).isEqualTo(0);
  }

  @Test
  void foreignBytesUnderAPrefetchedKey_areAMiss_loadedAndCachedAgain() {
    rows(Access.READ_WRITE, 3);
    try (Session session = one.openSession()) {
      session.findMultiple(RwCoupon.class, ids(1, 3));
    }
    String key2 = prefix + "rw-coupon:" + RwCoupon.class.getName() + "/2";
    store.set(key2, "foreign bytes".getBytes(StandardCharsets.UTF_8), 600).join();
    afterTheSkew();

    List<RwCoupon> found = measured(one,
        s -> SustainableHibernate.findMultiple(s, RwCoupon.class, ids(1, 3)));

    assertThat(codes(found)).containsExactly("c1", "c2", "c3");
    assertThat(one.getStatistics().getSecondLevelCacheHitCount()).isEqualTo(2);
    assertThat(one.getStatistics().getPrepareStatementCount()).isEqualTo(1);
    assertThat(one.getStatistics().getSecondLevelCachePutCount()).as("cached again")
        .isEqualTo(1);
    measured(one, s -> SustainableHibernate.findMultiple(s, RwCoupon.class, ids(1, 3)));
    assertThat(one.getStatistics().getPrepareStatementCount()).isZero();
  }

  // ---------------------------------------------------------------------------------------------
  // Changes between the bulk read and the writes

  @ParameterizedTest
  @EnumSource(value = Access.class, names = {"READ_WRITE", "NONSTRICT_READ_WRITE"})
  void aRowUpdatedAfterThePrefetchAndItsQuery_isNotCachedStale(Access access) {
    SessionFactoryImplementor two = factory("none");
    rows(access, 3);
    afterTheSkew();

    // instance two prefetches (nothing cached) and queries "c2"; before it caches what it read,
    // instance one updates the row to "B" and commits
    database.afterNextQuery(() -> inTransaction(one, s -> s.find(access.type, 2L).code("B")));
    List<? extends Coupon> found;
    try (Session session = two.openSession()) {
      found = SustainableHibernate.findMultiple(session, access.type, ids(1, 3));
    }
    assertThat(codes(found)).as("the reader's own answer").containsExactly("c1", "c2", "c3");

    for (SessionFactoryImplementor instance : List.of(two, one)) {
      try (Session session = instance.openSession()) {
        assertThat(codes(SustainableHibernate.findMultiple(session, access.type, ids(1, 3))))
            .containsExactly("c1", "B", "c3");
      }
    }
  }

  @Test
  void aRowDeletedAfterThePrefetchAndItsQuery_isNotCached() {
    SessionFactoryImplementor two = factory("none");
    rows(Access.READ_WRITE, 3);
    afterTheSkew();

    database.afterNextQuery(
        () -> inTransaction(one, s -> s.remove(s.find(RwCoupon.class, 2L))));
    try (Session session = two.openSession()) {
      assertThat(codes(SustainableHibernate.findMultiple(session, RwCoupon.class, ids(1, 3))))
          .containsExactly("c1", "c2", "c3");
    }

    try (Session session = two.openSession()) {
      assertThat(codes(SustainableHibernate.findMultiple(session, RwCoupon.class, ids(1, 3))))
          .as("no deleted entity cached").containsExactly("c1", null, "c3");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The prefetch's scope

  @Test
  void thePrefetchEndsWithItsCall_evenWhenTheCallThrows() {
    rows(Access.READ_WRITE, 2);
    try (Session session = one.openSession()) {
      session.findMultiple(RwCoupon.class, ids(1, 2));
    }
    try (Session session = one.openSession()) {
      Supplier<Object> failing = () -> {
        assertThat(session.find(RwCoupon.class, 1L).code()).isEqualTo("c1");
        throw new IllegalStateException("the work failed");
      };
      store.reset();
      assertThatThrownBy(() -> SustainableHibernate.prefetch(session, RwCoupon.class,
          ids(1, 2), failing)).isInstanceOf(IllegalStateException.class);
      assertThat(store.singleReads()).as("answered by the prefetch").isEqualTo(0);

      session.clear();
      store.reset();
      assertThat(session.find(RwCoupon.class, 2L).code()).isEqualTo("c2");
      assertThat(store.singleReads()).as("read from the store: the prefetch ended")
        .isEqualTo(1);
      EntityAccess access = (EntityAccess) one.getMappingMetamodel()
          .getEntityDescriptor(RwCoupon.class).getCacheAccessStrategy();
      assertThat(Prefetch.of(access.cache(),
          session.unwrap(org.hibernate.engine.spi.SharedSessionContractImplementor.class)))
          .as("unbound").isNull();
    }
  }

  @Test
  void anotherSessionOnTheSameThread_doesNotUseThePrefetch() {
    rows(Access.READ_WRITE, 2);
    try (Session session = one.openSession()) {
      session.findMultiple(RwCoupon.class, ids(1, 1)); // 1 cached, 2 not
    }
    Map<String, Object> seen = new HashMap<>();
    try (Session session = one.openSession()) {
      SustainableHibernate.prefetch(session, RwCoupon.class, ids(1, 2), () -> {
        store.reset();
        try (Session other = one.openSession()) {
          seen.put("code", other.find(RwCoupon.class, 1L).code());
        }
        seen.put("reads", store.singleReads());
        return null;
      });
    }
    assertThat(seen).containsEntry("code", "c1").containsEntry("reads", 1);
  }
}
