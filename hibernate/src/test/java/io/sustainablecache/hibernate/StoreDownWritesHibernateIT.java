package io.sustainablecache.hibernate;

import static io.sustainablecache.hibernate.Hibernates.regionFactory;
import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.CacheStats;
import io.sustainablecache.hibernate.HibernateSecondLevelCacheIT.Access;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testkit.memcached.FaultProxy;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 31, part 2, through Hibernate: instance W reaches memcached through a {@link FaultProxy},
 * instance R directly (a partition that reaches only the writer: the worst case for staleness,
 * since R keeps reading the entries W's changes replaced). memcached hangs for W ({@link
 * FaultProxy#blackhole()}), then goes away ({@link FaultProxy#refuse()}, {@link
 * FaultProxy#dropConnections()}), and W updates entities in transactions all along: every update
 * commits, W reads each change at once, and once W paid the invalidations it owed after memcached
 * answered again, R reads every change. Before issue 31, 489 of 492 {@code READ_WRITE} updates
 * failed with "the write fence ... could not be placed".
 */
class StoreDownWritesHibernateIT extends SecondLevelCacheFixture {

  private static final int ENTITIES = 8;

  @ParameterizedTest
  @EnumSource(value = Access.class, names = {"READ_WRITE", "NONSTRICT_READ_WRITE"})
  void updatesCommitWhileMemcachedHangsAndIsGone_andAreReadEverywhereOnceTheDebtIsPaid(
      Access access) throws Exception {
    FaultProxy proxy = FaultProxy.start(MemcachedServer.shared().address());
    closing.add(proxy);
    CacheStoreFactory.OpenedStore behindProxy = Hibernates.open(proxy.address(),
        Duration.ofMillis(200));
    closing.add(behindProxy);
    SessionFactoryImplementor w = factory("none", behindProxy.store(), Map.of());
    SessionFactoryImplementor r = one;
    for (long id = 1; id <= ENTITIES; id++) {
      persist(r, access, id, "v0");
      assertThat(code(r, access, id)).isEqualTo("v0");
      assertThat(code(w, access, id)).isEqualTo("v0");
      assertThat(statementsOfRead(r, access, id)).as("cached").isZero();
    }

    List<Throwable> failed = new ArrayList<>();
    proxy.blackhole(); // hung: nothing answers
    updateAll(w, access, "v1", failed);
    proxy.refuse(); // gone: connections refused
    proxy.dropConnections();
    updateAll(w, access, "v2", failed);
    assertThat(failed).as("updates that did not commit").isEmpty();
    for (long id = 1; id <= ENTITIES; id++) {
      assertThat(code(w, access, id)).as("W reads its change while memcached is down")
          .isEqualTo("v2");
    }
    CacheStats owed = regionFactory(w).stats(access.region).orElseThrow();
    assertThat(owed.count("unprotected_write")).as("changes committed unprotected")
        .isGreaterThanOrEqualTo(2L * ENTITIES);
    assertThat(owed.keysAwaitingInvalidation()).isEqualTo(ENTITIES);

    long recovered = System.nanoTime();
    proxy.passThrough();
    long giveUp = recovered + TimeUnit.SECONDS.toNanos(30);
    while (regionFactory(w).stats(access.region).orElseThrow().keysAwaitingInvalidation() > 0) {
      assertThat(System.nanoTime()).as("W pays what it owes within 30 s of memcached's return")
          .isLessThan(giveUp);
      Thread.sleep(5);
    }
    long paidMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - recovered);
    System.out.println("StoreDownWritesHibernateIT " + access + ": " + 2 * ENTITIES
        + " updates committed while memcached was down, paid " + paidMillis
        + " ms after it answered again");

    for (long id = 1; id <= ENTITIES; id++) {
      assertThat(code(r, access, id)).as("R, once W paid its debt (%d ms after memcached"
          + " answered)", paidMillis).isEqualTo("v2");
      assertThat(code(w, access, id)).isEqualTo("v2");
    }
  }

  private static void updateAll(SessionFactoryImplementor factory, Access access, String code,
      List<Throwable> failed) {
    for (long id = 1; id <= ENTITIES; id++) {
      try {
        update(factory, access, id, code);
      } catch (RuntimeException e) {
        failed.add(e);
      }
    }
  }
}
