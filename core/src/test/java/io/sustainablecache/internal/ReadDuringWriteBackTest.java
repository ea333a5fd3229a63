package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.WriteFence;
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
 * Issue 30, a write costs one load: the races that made a second reload of a hot key after a
 * write. A read that misses the store after a load of its key returned, while that load's
 * write-back is still on its way to the store, takes the load's value instead of loading the key
 * again; a read after an {@code invalidate} does not. A reload between a fence's release landing
 * and {@code committed()} returning is cached. Before each fix, a hot key reloaded after a write
 * cost 1.6 loads a write in {@code TransactionalWriteLoadsIT}.
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

  /**
   * A reader that reloads the key after its fence's release landed and before the writer's
   * {@code committed()} returned reads the new row (the commit came first); its load is the
   * write's one reload and is cached, not voided, so the readers after it hit. Before, {@code
   * committed()} voided this JVM's loads of the key after the release landed, that reload among
   * them, and the next reader loaded the row again (1.6 loads per write in {@code
   * TransactionalWriteLoadsIT} on a busy machine, 2026-11-30).
   */
  @Test
  void aReloadBetweenAReleaseLandingAndCommittedReturning_isCached_andTheNextReadHits()
      throws Exception {
    assertThat(cache.get("k", this::load)).isEqualTo("v1");
    WriteFence<String> fence = cache.fence("k");
    fence.beforeCommit();

    Hold releases = store.holdResponses(Op.CAS); // the tombstone lands; its answer waits
    Thread writer = new Thread(fence::committed, "writer");
    writer.start();
    await().until(() -> releases.waiting() == 1);
    clock.advance(Duration.ofMillis(5)); // the reader comes after the tombstone's instant

    CompletableFuture<String> row = new CompletableFuture<>();
    CompletableFuture<String> reload = cache.getAsync("k", key -> {
      loads.incrementAndGet();
      return row;
    });
    assertThat(loads).as("the reader found the tombstone and reloads").hasValue(2);

    releases.release();
    writer.join(10_000);
    assertThat(writer.isAlive()).as("committed() returned").isFalse();
    row.complete("v2");
    assertThat(reload).isCompletedWithValue("v2");

    assertThat(cache.get("k", this::load)).as("the reload was cached").isEqualTo("v2");
    assertThat(loads).as("one reload for the write").hasValue(2);
  }
}
