package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import io.sustainablecache.testing.ScriptedStore;
import io.sustainablecache.testing.ScriptedStore.Hold;
import io.sustainablecache.testing.ScriptedStore.Op;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 30: a read that misses the store after a load of its key returned, while that load's
 * write-back is still on its way to the store, takes the load's value instead of loading the key
 * again; a read after an {@code invalidate} does not. Before, a hot key reloaded after a write
 * cost 1.6 loads a write in {@code TransactionalWriteLoadsIT}: readers that came in that gap each
 * loaded once more.
 */
final class ReadDuringWriteBackTest {

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final ScriptedStore store = ScriptedStore.over(InMemoryStore.create(clock));
  private final SustainableCache<String> cache = SustainableCache.builder(store).namespace("c")
      .ttl(Duration.ofMinutes(1)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
      .scheduler(ManualScheduler.on(clock.ticker())).refreshExecutor(new ManualExecutor())
      .build();
  private final AtomicInteger loads = new AtomicInteger();
  private Hold adds;

  @AfterEach
  void release() {
    if (adds != null) {
      adds.release();
    }
  }

  private String load(String key) {
    return "v" + loads.incrementAndGet();
  }

  /** The first load, whose write-back (an {@code add}) is held: the lease was taken before. */
  private String firstLoadHoldingItsWrite(String key) {
    adds = store.holdRequests(Op.ADD);
    return load(key);
  }

  @Test
  void aReadWhileTheWriteBackIsOnItsWay_takesTheLoadsValue_andLoadsNothing() {
    assertThat(cache.get("k", this::firstLoadHoldingItsWrite)).isEqualTo("v1");
    assertThat(adds.waiting()).as("the write-back, not landed").isEqualTo(1);

    CompletableFuture<String> read = cache.getAsync("k",
        key -> CompletableFuture.completedFuture(load(key)));
    assertThat(read).as("the store misses: the load's value, at once").isCompletedWithValue("v1");
    assertThat(cache.getAll(List.of("k"), keys -> {
      throw new AssertionError("loaded " + keys);
    })).containsEntry("k", "v1");
    assertThat(loads).hasValue(1);

    adds.release();
    assertThat(cache.get("k", this::load)).as("from the store now").isEqualTo("v1");
    assertThat(loads).hasValue(1);
  }

  @Test
  void aReadAfterAnInvalidate_whileTheWriteBackIsOnItsWay_loadsAgain() {
    assertThat(cache.get("k", this::firstLoadHoldingItsWrite)).isEqualTo("v1");

    cache.invalidate("k");
    adds.release(); // the write lands after the invalidation: refused (the key changed)

    assertThat(cache.get("k", this::load)).isEqualTo("v2");
    assertThat(loads).hasValue(2);
  }
}
