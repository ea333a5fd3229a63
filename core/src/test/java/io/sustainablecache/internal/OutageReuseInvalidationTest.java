package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.RefreshPolicyTest;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import io.sustainablecache.testing.ScriptedStore;
import io.sustainablecache.testing.ScriptedStore.Op;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The outage reuse ({@code outageReuse}, on) against the invalidation promise of this instance:
 * a read that fails on the store may share a load of the key registered less than {@code
 * outageReuse} ago, but never one registered before an {@code invalidate} or {@code put} on this
 * instance that returned before the read began, even with the ticker standing still (every load
 * then registered "0 ms ago"). The row's version is bumped before each change, as an application
 * commits and then invalidates; a loader reads the version when it is called.
 */
final class OutageReuseInvalidationTest {

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final ScriptedStore store = ScriptedStore.over(InMemoryStore.create(clock));
  private final AtomicLong version = new AtomicLong(1);

  private SustainableCache<String> cache() {
    return SustainableCache.builder(store).namespace("o").ttl(Duration.ofMinutes(1))
        .codec(ValueCodec.utf8()).refreshExecutor(new ManualExecutor()).clock(clock)
        .ticker(clock.ticker()).scheduler(ManualScheduler.on(clock.ticker()))
        .random(RefreshPolicyTest.fixed(0.5)).storeProbeInterval(Duration.ZERO)
        .outageReuse(Duration.ofMillis(50)).build();
  }

  /** The change: {@code invalidate} or {@code put} of a value the loader never returns. */
  private Consumer<SustainableCache<String>> change(boolean put) {
    return cache -> {
      long changed = version.incrementAndGet();
      if (put) {
        cache.put("k", "v" + changed + "#put");
      } else {
        cache.invalidate("k");
      }
    };
  }

  @ParameterizedTest(name = "put={0}")
  @ValueSource(booleans = {false, true})
  void aFailedReadAfterTheChangeReturned_doesNotShareALoadInFlightFromBeforeIt(boolean put) {
    try (SustainableCache<String> cache = cache()) {
      CompletableFuture<String> rowReadBeforeTheChange = new CompletableFuture<>();
      store.fail(Op.GETS, 1);
      CompletableFuture<String> before = cache.getAsync("k", key -> rowReadBeforeTheChange);

      change(put).accept(cache);

      store.fail(Op.GETS, 1); // begins after the change returned; its store read fails
      CompletableFuture<String> after = cache.getAsync("k",
          key -> CompletableFuture.completedFuture("v" + version.get()));
      rowReadBeforeTheChange.complete("v1");

      assertThat(before.join()).isEqualTo("v1");
      assertThat(after.join()).as("loaded after the change, not shared from before it")
          .isEqualTo("v2");
    }
  }

  @ParameterizedTest(name = "put={0}")
  @ValueSource(booleans = {false, true})
  void aFailedReadAfterTheChangeReturned_doesNotShareALoadCompletedBeforeIt(boolean put) {
    try (SustainableCache<String> cache = cache()) {
      store.fail(Op.GETS, 1);
      assertThat(cache.get("k", key -> "v" + version.get())).isEqualTo("v1");

      change(put).accept(cache);

      store.fail(Op.GETS, 1);
      assertThat(cache.get("k", key -> "v" + version.get()))
          .as("the ticker stood still, yet the load before the change is not reused")
          .isEqualTo("v2");
    }
  }

  @ParameterizedTest(name = "async={0}")
  @ValueSource(booleans = {false, true})
  void withoutAChange_failedReadsWithinTheReuse_shareOneLoad(boolean async) {
    try (SustainableCache<String> cache = cache()) {
      AtomicLong loads = new AtomicLong();
      for (int i = 0; i < 5; i++) {
        store.fail(Op.GETS, 1);
        String value = async
            ? cache.getAsync("k", key -> CompletableFuture.completedFuture(
                "v" + version.get() + "#" + loads.incrementAndGet())).join()
            : cache.get("k", key -> "v" + version.get() + "#" + loads.incrementAndGet());
        assertThat(value).isEqualTo("v1#1");
      }
      assertThat(loads).as("one load per key per outageReuse").hasValue(1);

      clock.advance(Duration.ofMillis(50));
      store.fail(Op.GETS, 1);
      assertThat(cache.get("k", key -> "v" + version.get() + "#" + loads.incrementAndGet()))
          .as("past the reuse, a read loads again").isEqualTo("v1#2");
    }
  }
}
