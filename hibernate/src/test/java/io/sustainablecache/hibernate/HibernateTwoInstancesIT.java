package io.sustainablecache.hibernate;

import static io.sustainablecache.hibernate.Hibernates.codeInDatabase;
import static io.sustainablecache.hibernate.Hibernates.find;
import static io.sustainablecache.hibernate.Hibernates.inTransaction;
import static io.sustainablecache.hibernate.Hibernates.lastOldRead;
import static io.sustainablecache.hibernate.Hibernates.regionFactory;
import static io.sustainablecache.hibernate.Hibernates.statements;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.CacheStats;
import io.sustainablecache.hibernate.HibernateSecondLevelCacheIT.Access;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testkit.memcached.FaultProxy;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import jakarta.persistence.PersistenceException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.Transaction;
import org.hibernate.cache.CacheException;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Two session factories over one memcached as two instances of a service (each adapter, like
 * {@link HibernateSecondLevelCacheIT}): a bulk update empties a region on every instance, an
 * update is read on the other at once, or within the near regions' bound (even when its
 * invalidations are lost), and concurrent readers and writers on both leave nothing stale.
 */
class HibernateTwoInstancesIT extends SecondLevelCacheFixture {

  @ParameterizedTest
  @EnumSource(value = Access.class, names = {"READ_WRITE", "NONSTRICT_READ_WRITE"})
  void aBulkUpdate_withoutANearRegion_emptiesTheRegion_onEveryInstance(Access access) {
    // plain memcached has no prefix flush: the region's default generation empties it
    bulkUpdate_emptiesTheRegion_onEveryInstance(access, SKEW);
  }

  @ParameterizedTest
  @EnumSource(value = Access.class, names = {"READ_WRITE", "NONSTRICT_READ_WRITE"})
  void aBulkUpdate_withANearRegion_emptiesTheRegion_onEveryInstance(Access access) {
    bulkUpdate_emptiesTheRegion_onEveryInstance(access, SKEW + ", near-cache=1000:1s");
  }

  private void bulkUpdate_emptiesTheRegion_onEveryInstance(Access access, String settings) {
    Map<String, Object> spec = Map.of(SustainableCacheRegionFactory.SETTINGS, settings);
    database = new HookedDataSource("jdbc:h2:mem:" + prefix + "bulk;DB_CLOSE_DELAY=-1");
    SessionFactoryImplementor first = factory("create", spec);
    SessionFactoryImplementor second = factory("none", store(MemcachedServer.shared()), spec);
    persist(first, access, 1, "A");
    assertThat(code(second, access, 1)).isEqualTo("A");
    assertThat(statementsOfRead(second, access, 1)).isZero();

    inTransaction(first, s -> s.createMutationQuery("update " + access.type.getSimpleName()
        + " set code = 'B'").executeUpdate());

    assertThat(code(first, access, 1)).isEqualTo("B");
    await().atMost(Duration.ofMillis(1_500)).pollInterval(Duration.ofMillis(20))
        .until(() -> "B".equals(code(second, access, 1)));
  }

  // ---------------------------------------------------------------------------------------------
  // Two instances: an update read on the other

  @ParameterizedTest
  @EnumSource(value = Access.class, names = {"READ_WRITE", "NONSTRICT_READ_WRITE"})
  void anUpdateCommittedOnOneInstance_isReadOnTheOtherAtOnce(Access access) {
    SessionFactoryImplementor two = factory("none", store(MemcachedServer.shared()), Map.of());
    persist(one, access, 1, "A");
    assertThat(code(two, access, 1)).isEqualTo("A");
    assertThat(statementsOfRead(two, access, 1)).isZero();

    update(one, access, 1, "B");

    assertThat(code(two, access, 1)).isEqualTo("B");
  }

  /**
   * Issue 30: while one instance's transaction has changed a READ_WRITE entity (flushed: its
   * fence stands) and not committed, the other instance reads the committed entity from the
   * cache, with no SQL (the fence answers with the entity it replaced); the writing session,
   * cleared, reads its own uncommitted change from its transaction, not the cached entity; after
   * the commit the other instance reads the new entity. Before issue 30 the other instance's
   * reads went to the database while the fence stood.
   */
  @Test
  void whileAWriterHasNotCommitted_theOtherInstanceReadsTheCommittedEntityFromTheCache_andTheWriterItsOwnChange() {
    Access access = Access.READ_WRITE;
    SessionFactoryImplementor two = factory("none", store(MemcachedServer.shared()), Map.of());
    persist(one, access, 1, "A");
    assertThat(code(two, access, 1)).isEqualTo("A");
    assertThat(statementsOfRead(two, access, 1)).as("cached").isZero();
    CacheStats before = regionFactory(two).stats(access.region).orElseThrow();

    try (Session writer = one.openSession()) {
      Transaction tx = writer.beginTransaction();
      writer.find(access.type, 1L).code("B");
      writer.flush(); // the update: the fence stands, the row is changed, nothing committed

      for (int i = 0; i < 3; i++) {
        long statements = statements(two);
        assertThat(code(two, access, 1)).as("the other instance, read %d", i).isEqualTo("A");
        assertThat(statements(two) - statements).as("SQL of the other instance's read %d", i)
            .isZero();
      }
      CacheStats during = regionFactory(two).stats(access.region).orElseThrow();
      assertThat(during.count("fenced_hit") - before.count("fenced_hit"))
          .as("answered with the entity the fence replaced").isEqualTo(3);

      writer.clear(); // not from the persistence context: from the second-level cache or the row
      long statements = statements(one);
      assertThat(writer.find(access.type, 1L).code()).as("the writer's own read, after clear()")
          .isEqualTo("B");
      assertThat(statements(one) - statements).as("SQL of the writer's own read").isPositive();
      tx.commit();
    }

    assertThat(code(two, access, 1)).as("the other instance, after the commit").isEqualTo("B");
    assertThat(codeInDatabase(one, access.type, 1)).isEqualTo("B");
  }

  /**
   * The near regions' bound in the tests that measure it: the reads of the old entity must end
   * within it (plus 100 ms of scheduling) after the commit.
   */
  private static final Duration NEAR_BOUND = Duration.ofMillis(500);

  /** Settings with a near region of bound {@code bound}. */
  private static Map<String, Object> near(Duration bound) {
    return Map.of(SustainableCacheRegionFactory.SETTINGS,
        SKEW + ", near-cache=1000:" + bound.toMillis() + "ms");
  }

  @ParameterizedTest
  @EnumSource(value = Access.class, names = {"READ_WRITE", "NONSTRICT_READ_WRITE"})
  void withANearRegion_anUpdateOnOneInstance_isReadOnTheOtherWithinTheBound(Access access)
      throws Exception {
    database = new HookedDataSource("jdbc:h2:mem:" + prefix + "near;DB_CLOSE_DELAY=-1");
    SessionFactoryImplementor first = factory("create", near(NEAR_BOUND));
    SessionFactoryImplementor second = factory("none", store(MemcachedServer.shared()),
        near(NEAR_BOUND));
    persist(first, access, 1, "A");
    readNear(second, access, "A");

    update(first, access, 1, "B");
    long committed = System.nanoTime();

    assertThat(lastOldRead(() -> code(second, access, 1), "B", committed))
        .as("the last read of the old entity began within the bound (%d ms) after the commit",
            NEAR_BOUND.toMillis())
        .isLessThanOrEqualTo(NEAR_BOUND.plusMillis(100));
  }

  /**
   * Reads the entity on {@code instance} until it is {@code code} from the near region: once from
   * the database or the store (a NONSTRICT entity's first read caches it in the store, not near),
   * once more from the store into the near region, then near. A near region serves only while
   * its last poll is within the bound, so on a loaded machine, where a poll can be late, the
   * near read is tried again until one is served near (within 10 s).
   */
  private static void readNear(SessionFactoryImplementor instance, Access access, String code) {
    for (int i = 0; i < 2; i++) {
      assertThat(code(instance, access, 1)).isEqualTo(code);
    }
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      long nearHits = regionFactory(instance).stats(access.region).orElseThrow()
          .count("near_hit");
      assertThat(code(instance, access, 1)).isEqualTo(code);
      assertThat(regionFactory(instance).stats(access.region).orElseThrow().count("near_hit"))
          .as("served from the near region").isGreaterThan(nearHits);
    });
  }

  /**
   * The other instance cannot reach memcached after the update (a blackhole: it reads neither
   * the invalidation log nor the entries): its near region still stops serving the old entity
   * within the bound, and its reads go to the database.
   */
  @ParameterizedTest
  @EnumSource(value = Access.class, names = {"READ_WRITE", "NONSTRICT_READ_WRITE"})
  void withANearRegion_anUpdate_isReadOnTheOtherWithinTheBound_whenItsInvalidationsAreLost(
      Access access) throws Exception {
    FaultProxy proxy = FaultProxy.start(MemcachedServer.shared().address());
    closing.add(proxy);
    CacheStoreFactory.OpenedStore behindProxy = Hibernates.open(proxy.address(),
        Duration.ofMillis(200));
    closing.add(behindProxy);
    database = new HookedDataSource("jdbc:h2:mem:" + prefix + "lost;DB_CLOSE_DELAY=-1");
    SessionFactoryImplementor first = factory("create", near(NEAR_BOUND));
    SessionFactoryImplementor second = factory("none", behindProxy.store(),
        near(NEAR_BOUND));
    persist(first, access, 1, "A");
    readNear(second, access, "A");

    proxy.blackhole();
    update(first, access, 1, "B");
    long committed = System.nanoTime();

    assertThat(lastOldRead(() -> code(second, access, 1), "B", committed))
        .as("the last read of the old entity began within the bound (%d ms) after the commit",
            NEAR_BOUND.toMillis())
        .isLessThanOrEqualTo(NEAR_BOUND.plusMillis(100));
    assertThat(regionFactory(second).stats(access.region).orElseThrow().storeErrorCount())
        .as("its store unreachable").isPositive();
  }

  /**
   * Readers on two instances and a writer on each, on one entity, for each access type (READ_ONLY
   * entities are deleted and inserted again instead of updated): after the last commit, both
   * instances read what the database holds, twice (the second read from the cache).
   */
  @ParameterizedTest
  @EnumSource(Access.class)
  void concurrentReadersAndWriters_onTwoInstances_leaveNoStaleEntityCached(Access access)
      throws Exception {
    SessionFactoryImplementor two = factory("none", store(MemcachedServer.shared()), Map.of());
    persist(one, access, 1, "v0");
    AtomicBoolean writing = new AtomicBoolean(true);
    List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    List<Thread> readers = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      SessionFactory reading = i % 2 == 0 ? one : two;
      readers.add(started(() -> {
        try {
          while (writing.get()) {
            find(reading, access.type, 1);
          }
        } catch (Throwable t) {
          failures.add(t);
        }
      }));
    }
    List<Thread> writers = new ArrayList<>();
    for (int w = 0; w < 2; w++) {
      SessionFactory writer = w == 0 ? one : two;
      String name = "w" + w + "-";
      writers.add(started(() -> {
        for (int i = 1; i <= 15; i++) {
          try {
            if (access == Access.READ_ONLY) {
              inTransaction(writer, s -> {
                Coupon c = s.find(access.type, 1L);
                if (c != null) {
                  s.remove(c);
                }
              });
              persist(writer, access, 1, name + i);
            } else {
              update(writer, access, 1, name + i);
            }
          } catch (PersistenceException e) {
            if (e instanceof CacheException) {
              failures.add(e); // the provider's failure, not the other writer's
            }
            // else the other writer's version, row lock or insert won: the transaction failed
          } catch (Throwable t) {
            failures.add(t);
          }
        }
      }));
    }
    for (Thread writer : writers) {
      writer.join(60_000);
    }
    writing.set(false);
    for (Thread reader : readers) {
      reader.join(10_000);
    }

    assertThat(failures).isEmpty();
    String committed = codeInDatabase(one, access.type, 1);
    assertThat(committed).as("the writers wrote").isNotEqualTo("v0");
    for (SessionFactory instance : List.of(one, two)) {
      for (int i = 0; i < 2; i++) {
        assertThat(code(instance, access, 1)).as("read %d after quiescence", i)
            .isEqualTo(committed);
      }
    }
  }

  private static Thread started(Runnable work) {
    Thread thread = new Thread(work);
    thread.start();
    return thread;
  }
}
