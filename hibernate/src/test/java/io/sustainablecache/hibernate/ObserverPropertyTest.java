package io.sustainablecache.hibernate;

import static io.sustainablecache.hibernate.Hibernates.find;
import static io.sustainablecache.hibernate.Hibernates.inTransaction;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.CacheObserver;
import io.sustainablecache.CacheObserver.Kind;
import io.sustainablecache.testing.InMemoryStore;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.hibernate.cache.CacheException;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.junit.jupiter.api.Test;

/**
 * Issue 31 §6: {@value SustainableCacheRegionFactory#OBSERVER} gives every region's cache the
 * application's {@link CacheObserver}, so a {@code READ_WRITE} update's write fence is traced
 * step by step, in its region's namespace; a read answered from the region is not observed.
 */
final class ObserverPropertyTest {

  /** A step the observer saw end: its kind, cache and outcome. */
  private record Ended(Kind kind, String cache, String outcome) {}

  @Test
  void aReadWriteUpdate_tracesItsFence_andAHitIsNotObserved() {
    String prefix = "obs" + System.nanoTime() + "-";
    HookedDataSource database = new HookedDataSource("jdbc:h2:mem:" + prefix
        + ";DB_CLOSE_DELAY=-1");
    List<Ended> ended = new CopyOnWriteArrayList<>();
    CacheObserver observer = step -> outcome -> ended.add(
        new Ended(step.kind(), step.namespace(), outcome));
    try (SessionFactoryImplementor factory = Hibernates.sessionFactory(database, "create",
        InMemoryStore.create(), prefix, Map.of(SustainableCacheRegionFactory.OBSERVER, observer),
        RwCoupon.class)) {
      inTransaction(factory, s -> s.persist(new RwCoupon(1, "A")));
      assertThat(find(factory, RwCoupon.class, 1).code()).isEqualTo("A"); // loaded, cached
      ended.clear();
      assertThat(find(factory, RwCoupon.class, 1).code()).isEqualTo("A");
      assertThat(ended).as("a hit begins no step").isEmpty();

      inTransaction(factory, s -> s.find(RwCoupon.class, 1L).code("B"));

      String namespace = StoreKeys.namespace(prefix, "rw-coupon"); // RwCoupon's region
      assertThat(ended).extracting(Ended::kind)
          .containsExactly(Kind.FENCE, Kind.FENCE_BEFORE_COMMIT, Kind.FENCE_RELEASE);
      assertThat(ended).extracting(Ended::outcome)
          .containsExactly("placed", "success", "committed");
      assertThat(ended).extracting(Ended::cache).containsOnly(namespace);
    }
  }

  @Test
  void somethingElseThanAnObserver_failsTheSessionFactorysStart_namingWhatWasGiven() {
    assertThatThrownBy(() -> SustainableCacheRegionFactory.observer("io.example.MyObserver"))
        .isInstanceOf(CacheException.class)
        .hasMessage(SustainableCacheRegionFactory.OBSERVER + " must be an"
            + " io.sustainablecache.CacheObserver instance (with Micrometer:"
            + " SustainableCacheObservations.observer(observationRegistry)), not a"
            + " java.lang.String");
    assertThat(SustainableCacheRegionFactory.observer(null)).isNull();
  }
}
