package io.sustainablecache.arcus;

import static io.sustainablecache.micrometer.StoppedObservations.low;
import static io.sustainablecache.micrometer.StoppedObservations.parentOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.sustainablecache.RefreshPolicy;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.WriteFence;
import io.sustainablecache.micrometer.StoppedObservations;
import io.sustainablecache.micrometer.SustainableCacheObservations;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The micrometer module's observations over a real memcached (its own process, through this
 * adapter, opened by {@link ArcusStoreFactory} with the server's address): a write fence's three
 * steps in a transaction's observation, and a background refresh on the cache's own refresh
 * thread with its lease and load, as a tracing backend would receive them. It lives here, not in
 * the micrometer module, so that the micrometer module needs no adapter and waits for no
 * adapter's ITs in a parallel build; {@link StoppedObservations} comes from that module's test
 * jar.
 */
final class ArcusObservationsIT {

  /** The store's operation timeout: every round trip of the steps below ends within it. */
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(1);
  private static final Duration LOAD_TIMEOUT = Duration.ofSeconds(5);

  private final MemcachedServer server = MemcachedServer.startLocal();
  private final CacheStoreFactory.OpenedStore store = CacheStoreFactory.find("arcus", null)
      .open(CacheStoreFactory.Settings.builder()
          .addresses(List.of(server.address().getHostString() + ":" + server.address().getPort()))
          .operationTimeout(OPERATION_TIMEOUT).build());
  private final TestObservationRegistry registry = TestObservationRegistry.create();
  private final StoppedObservations stopped = StoppedObservations.in(registry);
  private final SustainableCache<String> cache = SustainableCache.builder(store.store())
      .namespace("observed")
      .ttl(Duration.ofMinutes(1))
      .loadTimeout(LOAD_TIMEOUT)
      .refreshPolicy(RefreshPolicy.sustainable(1.0, 1.0))
      .random(FixedRandom.alwaysEarly()) // every hit asks for a refresh
      .codec(ValueCodec.utf8())
      .observer(SustainableCacheObservations.observer(registry))
      .build();


  @AfterEach
  void close() throws Exception {
    cache.close();
    store.close();
    server.stop();
  }

  @Test
  void aWriteFence_isThreeStepsOfTheTransaction_andItsCommittedValueIsServedWithoutALoad() {
    cache.get("book-1", key -> "Dune"); // cached before the transaction (a load, a lease)
    stopped.clear();

    Observation tx = Observation.start("tx", registry);
    try (Observation.Scope scope = tx.openScope()) {
      WriteFence<String> fence = cache.fence("book-1");
      fence.beforeCommit();
      fence.committed("Dune Messiah");
    }
    tx.stop();

    List<Observation.Context> steps = stopped.named(SustainableCacheObservations.FENCE.getName());
    assertThat(steps).extracting(c -> low(c, SustainableCacheObservations.FENCE_STEP))
        .containsExactly("place", "before.commit", "release");
    assertThat(steps).extracting(c -> low(c, SustainableCacheObservations.OUTCOME))
        .containsExactly("placed", "success", "committed");
    assertThat(steps).allSatisfy(step -> assertThat(parentOf(step)).isSameAs(tx.getContext()));
    long misses = cache.stats().missCount();
    assertThat(cache.get("book-1", key -> "not the committed value")).isEqualTo("Dune Messiah");
    assertThat(cache.stats().missCount()).as("a hit").isEqualTo(misses);
  }

  @Test
  void aBackgroundRefresh_onTheRefreshThread_isARootWithItsLeaseAndLoad() {
    cache.get("book-2", key -> "Emma");
    stopped.clear();
    Observation request = Observation.start("http.server.requests", registry);
    try (Observation.Scope scope = request.openScope()) {
      assertThat(cache.get("book-2", key -> "Emma, refreshed")).isEqualTo("Emma"); // a hit
    }
    request.stop();

    // The refresh's lease, load, write and release are each bounded by a round trip's timeout
    // or the load timeout (about 9 s at worst); twice that on a loaded machine.
    Duration bound = LOAD_TIMEOUT.plus(OPERATION_TIMEOUT.multipliedBy(4)).multipliedBy(2);
    await("the refresh's observation").atMost(bound)
        .until(() -> !stopped.named(SustainableCacheObservations.REFRESH.getName()).isEmpty());

    Observation.Context refresh =
        stopped.named(SustainableCacheObservations.REFRESH.getName()).get(0);
    assertThat(refresh.getParentObservation()).as("a root, not the request's").isNull();
    assertThat(low(refresh, SustainableCacheObservations.OUTCOME)).isEqualTo("success");
    Observation.Context lease =
        stopped.named(SustainableCacheObservations.LEASE.getName()).get(0);
    assertThat(parentOf(lease)).isSameAs(refresh);
    assertThat(low(lease, SustainableCacheObservations.OUTCOME)).isEqualTo("acquired");
    Observation.Context load =
        stopped.named(SustainableCacheObservations.LOAD.getName()).get(0);
    assertThat(parentOf(load)).isSameAs(refresh);
    assertThat(low(load, SustainableCacheObservations.THREAD)).isEqualTo("background");
    assertThat(low(load, SustainableCacheObservations.OUTCOME)).isEqualTo("success");
    await("the refreshed value, written to memcached").atMost(bound)
        .until(() -> cache.get("book-2", key -> "Emma, refreshed").equals("Emma, refreshed"));
  }
}
