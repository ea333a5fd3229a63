package io.sustainablecache.hibernate;

import static io.sustainablecache.hibernate.Hibernates.afterTheSkew;
import static io.sustainablecache.hibernate.Hibernates.find;
import static io.sustainablecache.hibernate.Hibernates.inTransaction;
import static io.sustainablecache.hibernate.Hibernates.regionFactory;
import static io.sustainablecache.hibernate.Hibernates.statements;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sustainablecache.CacheStats;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BiFunction;
import org.hibernate.Session;
import org.hibernate.Transaction;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.stat.CacheRegionStatistics;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Hibernate over H2 with its second-level cache in a real memcached (over spymemcached; over a
 * real ArcusClient, Hibernate runs end to end in the lab's {@code HibernateScenarioIT}): each
 * access type read, updated, deleted and rolled back; two session factories over one memcached as
 * two instances of a service; bad bytes under a region's keys; memcached down. Statements are
 * counted with Hibernate's statistics.
 */
class HibernateSecondLevelCacheIT extends SecondLevelCacheFixture {

  /** The access types, with their coupon entity. */
  enum Access {
    READ_WRITE(RwCoupon.class, "rw-coupon", RwCoupon::new),
    NONSTRICT_READ_WRITE(NonstrictCoupon.class, "nonstrict-coupon", NonstrictCoupon::new),
    READ_ONLY(ReadOnlyCoupon.class, "read-only-coupon", ReadOnlyCoupon::new);

    final Class<? extends Coupon> type;
    final String region;
    final BiFunction<Long, String, Coupon> create;

    Access(Class<? extends Coupon> type, String region, BiFunction<Long, String, Coupon> create) {
      this.type = type;
      this.region = region;
      this.create = create;
    }
  }



  // ---------------------------------------------------------------------------------------------
  // Reads

  @ParameterizedTest
  @EnumSource(Access.class)
  void anEntityIsCached_andReadWithoutSql_withHibernatesAndTheLibrarysStatistics(Access access) {
    persist(one, access, 1, "A");
    assertThat(code(one, access, 1)).isEqualTo("A"); // NONSTRICT caches on this first read

    assertThat(statementsOfRead(one, access, 1)).as("a second-level cache hit").isZero();
    assertThat(code(one, access, 1)).isEqualTo("A");

    CacheRegionStatistics region = one.getStatistics().getDomainDataRegionStatistics(
        access.region);
    assertThat(region.getHitCount()).isGreaterThanOrEqualTo(2);
    assertThat(region.getPutCount()).isEqualTo(1);
    assertThat(region.getMissCount()).isEqualTo(access == Access.NONSTRICT_READ_WRITE ? 1 : 0);
    CacheStats stats = regionFactory(one).stats(access.region).orElseThrow();
    assertThat(stats.hitCount()).isEqualTo(region.getHitCount());
    assertThat(stats.count("put")).isEqualTo(1);
    assertThat(regionFactory(one).regionNames()).contains(access.region);
  }

  @Test
  void eachRegion_hasMicrometerMetersTaggedWithItsName_removedWhenTheSessionFactoryCloses() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    SessionFactoryImplementor metered = factory("none",
        Map.of(SustainableCacheRegionFactory.METER_REGISTRY, registry));
    persist(metered, Access.READ_WRITE, 1, "A");
    assertThat(code(metered, Access.READ_WRITE, 1)).isEqualTo("A");
    assertThat(code(metered, Access.READ_WRITE, 1)).isEqualTo("A");

    CacheStats stats = regionFactory(metered).stats("rw-coupon").orElseThrow();
    assertThat(registry.get("cache.gets").tags("cache", "rw-coupon", "cache.manager", "hibernate",
        "result", "hit").functionCounter().count()).isEqualTo(stats.hitCount()).isEqualTo(2);
    assertThat(registry.get("cache.puts").tags("cache", "rw-coupon").functionCounter().count())
        .isEqualTo(1);
    assertThat(regionFactory(metered).regionNames()).hasSize(3).allSatisfy(region -> assertThat(
        registry.find("cache.gets").tags("cache", region, "cache.manager", "hibernate").meters())
        .as("region %s", region).isNotEmpty());
    assertThat(registry.get("cache.gets").tags("cache", "read-only-coupon", "result", "hit")
        .functionCounter().count()).as("each region its own").isZero();

    metered.close();

    assertThat(registry.find("cache.gets").tag("cache.manager", "hibernate").meters()).isEmpty();
  }

  @Test
  void aMeterRegistrySettingThatIsNoRegistry_failsTheStartSayingWhy() {
    assertThatThrownBy(() -> factory("none",
        Map.of(SustainableCacheRegionFactory.METER_REGISTRY, "registry")))
        .hasStackTraceContaining("must be an io.micrometer.core.instrument.MeterRegistry");
  }

  @Test
  void theTestsRunOverOneAdapter_theOneThisExecutionIsFor() {
    CacheStoreFactory only = CacheStoreFactory.find(null, getClass().getClassLoader());
    String client = System.getProperty(Hibernates.CLIENT);
    if (client != null) {
      assertThat(only.client()).isEqualTo(client);
    }
    assertThat(store.getClass().getSimpleName()).isEqualTo(
        only.client().equals("arcus") ? "ArcusStore" : "SpymemcachedStore");
  }

  @Test
  void theShortNameSelectsTheProvider() {
    assertThat(one.getCache().getRegionFactory())
        .isInstanceOf(SustainableCacheRegionFactory.class);
  }

  // ---------------------------------------------------------------------------------------------
  // Changes per access type

  @ParameterizedTest
  @EnumSource(value = Access.class, names = {"READ_WRITE", "NONSTRICT_READ_WRITE"})
  void anUpdate_isReadAfterTheCommit(Access access) {
    persist(one, access, 1, "A");
    assertThat(code(one, access, 1)).isEqualTo("A");

    update(one, access, 1, "B");

    long before = statements(one);
    assertThat(code(one, access, 1)).isEqualTo("B");
    if (access == Access.READ_WRITE) {
      assertThat(statements(one) - before).as("READ_WRITE caches the committed state")
          .isZero();
    }
  }

  @ParameterizedTest
  @EnumSource(Access.class)
  void aDelete_leavesNoEntityCached(Access access) {
    persist(one, access, 1, "A");
    assertThat(code(one, access, 1)).isEqualTo("A");

    inTransaction(one, s -> s.remove(s.find(access.type, 1L)));

    assertThat(code(one, access, 1)).isNull();
    assertThat(code(one, access, 1)).isNull();
  }

  @ParameterizedTest
  @EnumSource(value = Access.class, names = {"READ_WRITE", "NONSTRICT_READ_WRITE"})
  void aRollback_leavesTheCommittedEntity_andItIsCachedAgain(Access access) {
    persist(one, access, 1, "A");
    assertThat(code(one, access, 1)).isEqualTo("A");

    try (Session session = one.openSession()) {
      Transaction tx = session.beginTransaction();
      session.find(access.type, 1L).code("B");
      session.flush(); // the update reaches the database (and, READ_WRITE, the fence the store)
      tx.rollback();
    }

    assertThat(code(one, access, 1)).isEqualTo("A");
    afterTheSkew();
    assertThat(code(one, access, 1)).isEqualTo("A"); // cached again by this read
    assertThat(statementsOfRead(one, access, 1)).isZero();
  }

  @Test
  void aVersionedEntity_isCachedWithItsVersion_afterEachUpdate() {
    persist(one, Access.READ_WRITE, 1, "A");
    for (int i = 1; i <= 3; i++) {
      update(one, Access.READ_WRITE, 1, "v" + i);
      long before = statements(one);
      RwCoupon coupon = find(one, RwCoupon.class, 1);
      assertThat(statements(one) - before).as("read from the cache").isZero();
      assertThat(coupon.version).isEqualTo(i);
      assertThat(coupon.code).isEqualTo("v" + i);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // READ_WRITE: the fence

  /**
   * Issue 30: until the commit, other sessions (on any instance) read the committed row from the
   * cache, with no SQL; the writing session reads its own change, never the cached row.
   */
  @Test
  void whileATransactionHoldsTheFence_othersReadTheCommittedRowFromTheCache_theWriterItsOwn() {
    SessionFactoryImplementor two = factory("none", Map.of());
    persist(one, Access.READ_WRITE, 1, "A");
    assertThat(code(two, Access.READ_WRITE, 1)).isEqualTo("A");

    try (Session writer = one.openSession()) {
      Transaction tx = writer.beginTransaction();
      writer.find(RwCoupon.class, 1L).code("B");
      writer.flush(); // lockItem: the fence

      for (int i = 0; i < 2; i++) {
        assertThat(statementsOfRead(two, Access.READ_WRITE, 1))
            .as("read %d: the value the fence replaced, from the cache", i).isZero();
      }
      assertThat(code(two, Access.READ_WRITE, 1)).as("the committed row").isEqualTo("A");
      assertThat(code(one, Access.READ_WRITE, 1)).as("another session of the writer's instance")
          .isEqualTo("A");
      writer.clear();
      assertThat(writer.find(RwCoupon.class, 1L).code).as("the writing session: its own change")
          .isEqualTo("B");
      tx.commit(); // beforeCommit, then afterUpdate: the fence replaced by the committed state
    }

    assertThat(statementsOfRead(two, Access.READ_WRITE, 1)).isZero();
    assertThat(code(two, Access.READ_WRITE, 1)).isEqualTo("B");
  }

  /**
   * Issue 30: in the commit step (after the fence's {@code beforeCommit()}, which keeps the value
   * it replaced readable for the commit window), the writing session still reads its own change,
   * never the replaced row: a synchronization's {@code beforeCompletion} runs after Hibernate's
   * before-completion callbacks, so after the mark.
   */
  @Test
  void inTheCommitStep_theWritingSessionStillReadsItsOwnChange() {
    SessionFactoryImplementor two = factory("none", Map.of());
    persist(one, Access.READ_WRITE, 1, "A");
    assertThat(code(two, Access.READ_WRITE, 1)).isEqualTo("A");
    String[] seen = new String[2];
    try (Session writer = one.openSession()) {
      Transaction tx = writer.beginTransaction();
      writer.find(RwCoupon.class, 1L).code("B");
      writer.flush(); // lockItem: the fence
      tx.registerSynchronization(new jakarta.transaction.Synchronization() {
        @Override
        public void beforeCompletion() {
          writer.clear();
          seen[0] = writer.find(RwCoupon.class, 1L).code;
          seen[1] = Envelope.fenceCommitting(cachedBytes()) ? "marked" : "not";
        }

        @Override
        public void afterCompletion(int status) {}
      });
      tx.commit();
    }
    assertThat(seen[1]).as("the fence, before the synchronization ran").isEqualTo("marked");
    assertThat(seen[0]).as("the writing session, in the commit step").isEqualTo("B");
    assertThat(code(two, Access.READ_WRITE, 1)).isEqualTo("B");
  }

  /**
   * A fence over an entity that was not cached carries no prior (issue 30): readers go to the
   * database while it stands, and cache nothing. (Over a cached entity they are answered with it
   * from the cache: {@code HibernateTwoInstancesIT}.)
   */
  @Test
  void whileATransactionHoldsTheFenceOfAnUncachedEntity_readersGoToTheDatabase_andCacheNothing() {
    SessionFactoryImplementor two = factory("none", Map.of());
    persist(one, Access.READ_WRITE, 1, "A");
    assertThat(code(two, Access.READ_WRITE, 1)).isEqualTo("A");

    try (Session writer = one.openSession()) {
      Transaction tx = writer.beginTransaction();
      writer.find(RwCoupon.class, 1L).code("B");
      // evicted after the writer's read (which may cache the entity again if it loads it more
      // than max-clock-skew after an evict) and before its flush
      one.getCache().evictEntityData(RwCoupon.class, 1L);
      writer.flush(); // lockItem: the fence, over the evict's tombstone

      for (int i = 0; i < 2; i++) {
        assertThat(statementsOfRead(two, Access.READ_WRITE, 1)).as("read %d goes to the database",
            i).isEqualTo(1);
      }
      assertThat(code(two, Access.READ_WRITE, 1)).as("the committed row").isEqualTo("A");
      tx.commit(); // afterUpdate: the fence replaced by the committed state
    }

    assertThat(statementsOfRead(two, Access.READ_WRITE, 1)).isZero();
    assertThat(code(two, Access.READ_WRITE, 1)).isEqualTo("B");
  }

  @ParameterizedTest
  @EnumSource(value = Access.class, names = {"READ_WRITE", "NONSTRICT_READ_WRITE"})
  void aRowReadBeforeAnUpdateCommitted_isNotCachedAfterTheCommit(Access access) {
    SessionFactoryImplementor two = factory("none", Map.of());
    persist(one, access, 1, "A");
    one.getCache().evictEntityData(access.type, 1L);
    afterTheSkew();

    // a reader on instance two reads "A", and before it puts it into the cache, instance one
    // updates the row to "B" and commits
    database.afterNextQuery(() -> update(one, access, 1, "B"));
    assertThat(code(two, access, 1)).as("the reader's own answer").isEqualTo("A");

    assertThat(code(two, access, 1)).isEqualTo("B");
    assertThat(code(one, access, 1)).isEqualTo("B");
  }

  @Test
  void aRowReadBeforeADeleteCommitted_isNotCachedAfterTheCommit() {
    SessionFactoryImplementor two = factory("none", Map.of());
    persist(one, Access.READ_WRITE, 1, "A");
    one.getCache().evictEntityData(RwCoupon.class, 1L);
    afterTheSkew();

    database.afterNextQuery(() -> inTransaction(one, s -> s.remove(s.find(RwCoupon.class, 1L))));
    assertThat(code(two, Access.READ_WRITE, 1)).isEqualTo("A");

    assertThat(code(two, Access.READ_WRITE, 1)).as("no deleted entity cached").isNull();
  }

  /**
   * Issue 30: a NONSTRICT entity is cached again one read after an update, not {@code
   * max-clock-skew} after it (60 s here), once this instance has seen the update's tombstone
   * before a session began; a session that read the row before the commit still caches nothing,
   * though that tombstone was seen before its put.
   */
  @Test
  void nonstrict_aSessionBegunAfterThisInstanceSawTheUpdate_cachesTheRow_oneBegunBeforeDoesNot() {
    SessionFactoryImplementor two = factory("none",
        Map.of(SustainableCacheRegionFactory.SETTINGS, "max-clock-skew=60s"));
    Access access = Access.NONSTRICT_READ_WRITE;
    persist(one, access, 1, "A"); // NONSTRICT: not cached by the insert

    // a reader on two reads "A"; before it puts it, one updates the row to "B" (a tombstone in
    // the flush and one after the commit), and another session on two sees the tombstone
    database.afterNextQuery(() -> {
      update(one, access, 1, "B");
      assertThat(code(two, access, 1)).as("began before the sighting: not cached")
          .isEqualTo("B");
    });
    assertThat(code(two, access, 1)).as("the paused reader's own answer").isEqualTo("A");

    assertThat(code(two, access, 1)).as("began after the sighting: cached").isEqualTo("B");
    assertThat(statementsOfRead(two, access, 1)).as("a hit, well within the 60 s skew").isZero();
    assertThat(code(two, access, 1)).isEqualTo("B");
    assertThat(code(one, access, 1)).isEqualTo("B");
  }

  // ---------------------------------------------------------------------------------------------
  // Bad input

  private String storeKeyOfCoupon1() {
    return prefix + "rw-coupon:" + RwCoupon.class.getName() + "/1";
  }

  private byte[] cachedBytes() {
    return store.gets(storeKeyOfCoupon1()).join().orElseThrow().value();
  }

  private void plantAndRead(byte[] bytes) {
    store.set(storeKeyOfCoupon1(), bytes, 600).join();
    afterTheSkew(); // a valid envelope's time counts: reads must begin after it to replace it

    long before = statements(one);
    assertThat(code(one, Access.READ_WRITE, 1)).isEqualTo("A");
    assertThat(statements(one) - before).as("a miss").isEqualTo(1);
    assertThat(statementsOfRead(one, Access.READ_WRITE, 1)).as("cached again").isZero();
  }

  @Test
  void foreignTruncatedOrSerializedBytesUnderARegionKey_areAMiss() throws IOException {
    persist(one, Access.READ_WRITE, 1, "A");
    assertThat(statementsOfRead(one, Access.READ_WRITE, 1)).as("cached on insert").isZero();
    byte[] good = cachedBytes();
    assertThat(Envelope.kind(good)).isEqualTo(Envelope.KIND_VALUE);

    plantAndRead("foreign bytes".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    plantAndRead(Arrays.copyOf(good, good.length - 5)); // a truncated entry
    ByteArrayOutputStream serialized = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(serialized)) {
      out.writeObject(new HashMap<>(Map.of("planted", 1)));
    }
    byte[] planted = Envelope.encode(Envelope.fetchedAt(good), Envelope.expiresAt(good),
        Envelope.loadMillis(good), Envelope.generation(good), serialized.toByteArray());
    plantAndRead(planted); // a valid envelope around a Java serialization stream
    // issue 31: the entity's last byte flipped was served (another version) until its TTL
    byte[] lastPayloadByte = good.clone();
    lastPayloadByte[good.length - 1 - Envelope.CHECKSUM_SIZE] ^= 0x55;
    plantAndRead(lastPayloadByte);
    byte[] lastByte = good.clone();
    lastByte[good.length - 1] ^= 0x01;
    plantAndRead(lastByte);

    assertThat(regionFactory(one).stats("rw-coupon").orElseThrow().count("corrupt_entry"))
        .as("each planted entry counted by the read and by the put that replaced it")
        .isEqualTo(10);
  }

  @Test
  void anEntryWrittenByAnotherVersionOfTheEntityMapping_isAMiss() {
    SessionFactoryImplementor v1 = Hibernates.sessionFactory(database, "update", store, prefix,
        Map.of(SustainableCacheRegionFactory.SETTINGS, SKEW), Product.class);
    closing.add(v1::close);
    inTransaction(v1, s -> s.persist(new Product(7, "pen", 5)));
    long before = statements(v1);
    assertThat(find(v1, Product.class, 7).stock).isEqualTo(5);
    assertThat(statements(v1) - before).as("cached by v1").isZero();

    // the next version maps Product without stock (orm.xml): a property fewer
    SessionFactoryImplementor v2 = Hibernates.sessionFactory(database, "none", store, prefix,
        Map.of(SustainableCacheRegionFactory.SETTINGS, SKEW), "product-v2.orm.xml",
        Product.class);
    closing.add(v2::close);

    before = statements(v2);
    Product product = find(v2, Product.class, 7);
    assertThat(statements(v2) - before).as("v1's entry is a miss for v2").isEqualTo(1);
    assertThat(product.name).isEqualTo("pen");
    assertThat(product.stock).as("not mapped by v2").isNull();
    assertThat(regionFactory(v2).stats("product").orElseThrow().count("corrupt_entry")).isPositive();
  }

  @Test
  void withMemcachedDown_readsAndInsertsAreAnsweredByTheDatabase_andNothingIsThrown() {
    MemcachedServer server = MemcachedServer.startLocal();
    closing.add(server::stop);
    // Each region's first operations wait their timeout for the dead server before its breaker
    // opens (about 15 of them): a short timeout keeps the test short; what it checks does not
    // depend on it (a timeout while the server is up only sends a read to the database).
    CacheStore dying = store(server, Duration.ofMillis(300));
    database = new HookedDataSource("jdbc:h2:mem:" + prefix + "down;DB_CLOSE_DELAY=-1");
    SessionFactoryImplementor instance = factory("create", dying, Map.of());
    for (Access access : Access.values()) {
      persist(instance, access, 1, "A");
      assertThat(code(instance, access, 1)).isEqualTo("A");
    }

    server.stop();

    for (Access access : Access.values()) {
      long before = statements(instance);
      assertThat(code(instance, access, 1)).isEqualTo("A");
      assertThat(statements(instance) - before).as("from the database").isEqualTo(1);
      persist(instance, access, 2, "B");
      assertThat(code(instance, access, 2)).isEqualTo("B");
    }
    assertThat(regionFactory(instance).stats("rw-coupon").orElseThrow().storeErrorCount())
        .isPositive();

    update(instance, Access.NONSTRICT_READ_WRITE, 1, "C"); // its invalidations owed
    assertThat(code(instance, Access.NONSTRICT_READ_WRITE, 1)).isEqualTo("C");
    update(instance, Access.READ_WRITE, 1, "C"); // issue 31: commits, its invalidation owed
    assertThat(code(instance, Access.READ_WRITE, 1)).isEqualTo("C");
    assertThat(regionFactory(instance).stats("rw-coupon").orElseThrow().count("unprotected_write"))
        .isPositive();

    SessionFactoryImplementor closed = factory("none", dying, Map.of(
        SustainableCacheRegionFactory.SETTINGS, SKEW + ", fail-writes-when-store-down=true"));
    assertThatThrownBy(() -> update(closed, Access.READ_WRITE, 1, "D"))
        .as("failing closed: the fence cannot be placed, so the update is refused")
        .hasStackTraceContaining("could not be placed");
    assertThat(code(closed, Access.READ_WRITE, 1)).as("rolled back").isEqualTo("C");
  }

  @Test
  void theTransactionalAccessType_failsTheStartWithAMessage() {
    assertThatThrownBy(() -> Hibernates.sessionFactory(database, "update", store, prefix,
        Map.of(), TransactionalCoupon.class))
        .hasStackTraceContaining("does not support the TRANSACTIONAL access type");
  }
}
