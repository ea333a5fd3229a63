package io.sustainablecache.micrometer;

import static io.sustainablecache.micrometer.StoppedObservations.high;
import static io.sustainablecache.micrometer.StoppedObservations.low;
import static io.sustainablecache.micrometer.StoppedObservations.parentOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import io.sustainablecache.CacheLoadException;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.WriteFence;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The observations of a real cache on the in-memory store, in Micrometer's {@link
 * TestObservationRegistry} (which also checks that each is started, scoped and stopped
 * correctly), driven by a fake clock and a manual refresh executor.
 */
final class SustainableCacheObservationsTest {

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);
  private final ManualExecutor refreshes = new ManualExecutor();
  private final TestObservationRegistry registry = TestObservationRegistry.create();
  private final StoppedObservations stopped = StoppedObservations.in(registry);
  private final SustainableCache<String> cache = TestCaches.books(store, clock, refreshes)
      .fleetLease(true)
      .observer(SustainableCacheObservations.observer(registry))
      .build();


  @AfterEach
  void close() {
    cache.close();
  }

  @Test
  void aColdMiss_onAThreadWithAnObservation_isItsChildLease_andItsChildLoad_whichTheLoaderSees() {
    Observation request = Observation.start("http.server.requests", registry);
    Observation[] query = new Observation[1];
    try (Observation.Scope scope = request.openScope()) {
      cache.get("b1", key -> {
        query[0] = Observation.start("db.query", registry); // the loader's own observation
        query[0].stop();
        return "Dune";
      });
    }
    request.stop();

    Observation.Context load = stopped.only(SustainableCacheObservations.LOAD.getName());
    assertThat(parentOf(load)).isSameAs(request.getContext());
    assertThat(low(load, SustainableCacheObservations.NAMESPACE)).isEqualTo("books");
    assertThat(low(load, SustainableCacheObservations.OUTCOME)).isEqualTo("success");
    assertThat(low(load, SustainableCacheObservations.THREAD)).isEqualTo("caller");
    assertThat(high(load, SustainableCacheObservations.KEY))
        .isEqualTo("b1");
    assertThat(high(load, SustainableCacheObservations.KEYS))
        .isEqualTo("1");
    assertThat(load.getError()).isNull();
    assertThat(parentOf(query[0].getContext())).isSameAs(load);

    Observation.Context lease = stopped.only(SustainableCacheObservations.LEASE.getName());
    assertThat(parentOf(lease)).isSameAs(request.getContext());
    assertThat(low(lease, SustainableCacheObservations.OUTCOME)).isEqualTo("acquired");
    assertThat(stopped.all().indexOf(lease)).isLessThan(stopped.all().indexOf(load));
  }

  @Test
  void aStoreHit_thatAsksForNoRefresh_makesNoObservationAtAll() {
    try (SustainableCache<String> quiet = SustainableCache.builder(store).namespace("quiet")
        .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).clock(clock)
        .ticker(clock.ticker()).random(FixedRandom.neverEarly()).refreshExecutor(refreshes)
        .observer(SustainableCacheObservations.observer(registry)).build()) {
      quiet.get("b1", key -> "Dune");
      registry.clear();

      assertThat(quiet.get("b1", key -> "not called")).isEqualTo("Dune");
      assertThat(quiet.getAll(List.of("b1"), keys -> {
        throw new AssertionError("not called");
      })).containsEntry("b1", "Dune");

      TestObservationRegistryAssert.assertThat(registry).doesNotHaveAnyObservation();
    }
  }

  @Test
  void aBackgroundRefresh_isARoot_andTheParentOfItsLeaseAndItsLoad() {
    cache.get("b1", key -> "Dune");
    stopped.clear();
    Observation request = Observation.start("http.server.requests", registry);
    try (Observation.Scope scope = request.openScope()) {
      cache.get("b1", key -> "unused"); // a hit: always early, so it asks for a refresh
    }
    request.stop();
    assertThat(stopped.all()).containsExactly(request.getContext()); // the refresh has not run

    refreshes.runAll();

    Observation.Context refresh = stopped.only(SustainableCacheObservations.REFRESH.getName());
    assertThat(refresh.getParentObservation()).isNull();
    assertThat(low(refresh, SustainableCacheObservations.OUTCOME)).isEqualTo("success");
    Observation.Context lease = stopped.named(SustainableCacheObservations.LEASE.getName()).get(0);
    assertThat(parentOf(lease)).isSameAs(refresh);
    assertThat(low(lease, SustainableCacheObservations.OUTCOME)).isEqualTo("acquired");
    Observation.Context load = stopped.named(SustainableCacheObservations.LOAD.getName()).get(0);
    assertThat(parentOf(load)).isSameAs(refresh);
    assertThat(low(load, SustainableCacheObservations.THREAD)).isEqualTo("background");
    assertThat(cache.get("b1", key -> "unused")).isEqualTo("unused"); // the refreshed value
  }

  @Test
  void aLoaderThatThrows_isTheLoadsError_withTheOutcomeFailure() {
    IllegalStateException down = new IllegalStateException("database down");

    assertThatThrownBy(() -> cache.get("b1", key -> {
      throw down;
    })).isInstanceOf(CacheLoadException.class).hasCause(down);

    Observation.Context load = stopped.only(SustainableCacheObservations.LOAD.getName());
    assertThat(low(load, SustainableCacheObservations.OUTCOME)).isEqualTo("failure");
    assertThat(load.getError()).isSameAs(down);
  }

  @Test
  void aWriteFence_placeBeforeCommitAndRelease_areThreeFenceSteps() {
    WriteFence<String> fence = cache.fence("b1");
    fence.beforeCommit();
    fence.committed("Dune Messiah");

    List<Observation.Context> steps = stopped.named(SustainableCacheObservations.FENCE.getName());
    assertThat(steps).extracting(c -> low(c, SustainableCacheObservations.FENCE_STEP))
        .containsExactly("place", "before.commit", "release");
    assertThat(steps).extracting(c -> low(c, SustainableCacheObservations.OUTCOME))
        .containsExactly("placed", "success", "committed");
    assertThat(steps).allSatisfy(c -> assertThat(
        high(c, SustainableCacheObservations.KEY))
        .isEqualTo("b1"));
    assertThat(cache.get("b1", key -> "not called")).isEqualTo("Dune Messiah");
  }

  @Test
  void aFenceCompletedTwice_isAFailedRelease_andStillThrows() {
    WriteFence<String> fence = cache.fence("b1");
    fence.rolledBack();

    assertThatThrownBy(fence::committed).isInstanceOf(IllegalStateException.class);

    List<Observation.Context> releases = stopped.named(SustainableCacheObservations.FENCE.getName())
        .stream().filter(c -> "release".equals(low(c, SustainableCacheObservations.FENCE_STEP)))
        .toList();
    assertThat(releases).extracting(c -> low(c, SustainableCacheObservations.OUTCOME))
        .containsExactly("rolled.back", "failure");
    assertThat(releases.get(1).getError()).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void theDocumentedKeyNames_areTheOnesSet() {
    assertThat(SustainableCacheObservations.LOAD.getLowCardinalityKeyNames())
        .extracting(k -> k.asString()).containsExactly("cache.namespace", "outcome", "thread");
    assertThat(SustainableCacheObservations.FENCE.getLowCardinalityKeyNames())
        .extracting(k -> k.asString()).containsExactly("cache.namespace", "outcome", "fence.step");
    assertThat(SustainableCacheObservations.LEASE.getHighCardinalityKeyNames())
        .extracting(k -> k.asString()).containsExactly("key", "keys");
  }

  @Test
  void theManualsTracingSection_listsExactlyTheObservations() throws java.io.IOException {
    String manual = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs",
        "manual.md"));
    int from = manual.indexOf("### Tracing\n");
    assertThat(from).as("the manual's Tracing section").isNotNegative();
    String section = manual.substring(from, manual.indexOf("\n## ", from));
    java.util.regex.Matcher bullet = java.util.regex.Pattern.compile("(?m)^- `([a-z.]+)`:")
        .matcher(section);
    List<String> documented = new java.util.ArrayList<>();
    while (bullet.find()) {
      documented.add(bullet.group(1));
    }

    assertThat(documented).containsExactly(java.util.Arrays.stream(
        SustainableCacheObservations.values()).map(o -> o.getName()).toArray(String[]::new));
  }
}
