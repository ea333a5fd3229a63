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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 30: a write costs one load. A reader that reloads the key after its fence's release
 * landed and before the writer's {@code committed()} returned reads the new row (the commit came
 * first); its load is the key's one reload and is cached, not voided, so the readers after it hit.
 * Before, {@code committed()} voided this JVM's loads of the key after the release landed, that
 * reload among them, and the next reader loaded the row again: 1.6 loads per write in {@code
 * TransactionalWriteLoadsIT} on a busy machine (2026-11-30).
 */
final class ReloadDuringReleaseTest {

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final ScriptedStore store = ScriptedStore.over(InMemoryStore.create(clock));
  private final SustainableCache<String> cache = SustainableCache.builder(store).namespace("c")
      .ttl(Duration.ofMinutes(1)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
      .scheduler(ManualScheduler.on(clock.ticker())).refreshExecutor(new ManualExecutor())
      .build();
  private final AtomicInteger loads = new AtomicInteger();

  private String load(String key) {
    return "v" + loads.incrementAndGet();
  }

  @Test
  void aReloadBetweenTheReleaseLandingAndCommittedReturning_isCached_andTheNextReadHits()
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
