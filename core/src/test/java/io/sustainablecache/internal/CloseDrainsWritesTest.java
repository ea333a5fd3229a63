package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.WriteFence;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import io.sustainablecache.testing.ScriptedStore;
import io.sustainablecache.testing.ScriptedStore.Hold;
import io.sustainablecache.testing.ScriptedStore.Op;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 31, part 4: {@code close()} waits for the store writes and lease releases the cache
 * issued (a load's write-back, the fleet lease's delete, a fence's release and its retries, a
 * write handed to the refresh executor), so that a client shut down right after it drops
 * nothing; and gives up at {@code closeTimeout}, measured on the cache's scheduler and ticker
 * (here fake ones: the test moves time), counting and logging what was left, never throwing.
 *
 * <p>The store's answers are held with a {@link ScriptedStore} (a slow store) and released by
 * the test. A {@code close()} that waits is seen as a thread parked in it; the bound of each
 * wait for that is generous, and what is asserted is the order of events, never a duration.
 */
final class CloseDrainsWritesTest {

  /** Long in fake time, and as long on the wall clock that backs it up: never reached here. */
  private static final Duration CLOSE_TIMEOUT = Duration.ofHours(1);

  private static final Duration PATIENCE = Duration.ofSeconds(60);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore server = InMemoryStore.create(clock);
  private final ScriptedStore store = ScriptedStore.over(server);
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final ManualExecutor executor = new ManualExecutor();
  private final List<Hold> holds = new ArrayList<>();
  private final List<Thread> closers = new ArrayList<>();

  private SustainableCacheBuilder<String> builder() {
    return SustainableCache.builder(store).namespace("c").ttl(Duration.ofMinutes(1))
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(executor).closeTimeout(CLOSE_TIMEOUT);
  }

  private DefaultSustainableCache<String> cache() {
    return (DefaultSustainableCache<String>) builder().build();
  }

  /** Holds the requests of a kind from now on (they reach the server at release). */
  private Hold hold(Op op) {
    Hold hold = store.holdRequests(op);
    holds.add(hold);
    return hold;
  }

  /** Calls {@code close()} on a thread of its own and returns once it waits or has returned. */
  private Thread closeInBackground(SustainableCache<?> cache) {
    Thread closer = new Thread(cache::close, "closer");
    closers.add(closer);
    closer.start();
    await("close() waiting or returned").atMost(PATIENCE).until(() -> !closer.isAlive()
        || closer.getState() == Thread.State.TIMED_WAITING
        || closer.getState() == Thread.State.WAITING);
    return closer;
  }

  private static void awaitReturned(Thread closer) throws InterruptedException {
    closer.join(PATIENCE.toMillis());
    assertThat(closer.isAlive()).as("close() returned").isFalse();
  }

  private Optional<StoreItem> item(String storeKey) {
    return server.gets(storeKey).join();
  }

  private static String value(StoreItem item) {
    byte[] bytes = item.value();
    return Envelope.kind(bytes) == Envelope.KIND_VALUE
        ? new String(bytes, Envelope.payloadOffset(bytes), Envelope.payloadLength(bytes),
            StandardCharsets.UTF_8)
        : "kind " + Envelope.kind(bytes);
  }

  @AfterEach
  void releaseEverything() throws InterruptedException {
    holds.forEach(Hold::release);
    for (Thread closer : closers) {
      closer.join(PATIENCE.toMillis());
    }
  }

  @Test
  void close_waitsForAColdLoadsWriteBackAndLeaseRelease_stillOnTheWire() throws Exception {
    DefaultSustainableCache<String> cache = cache();
    // the loader runs after the lease was taken: the write-back (add) and the lease's delete
    // that follow it are held, as a client's queue holds them right after get() returns
    AtomicReference<Hold> writes = new AtomicReference<>();
    AtomicReference<Hold> deletes = new AtomicReference<>();
    assertThat(cache.get("k", key -> {
      writes.set(hold(Op.ADD));
      deletes.set(hold(Op.DELETE));
      return "v";
    })).isEqualTo("v");
    assertThat(writes.get().waiting()).as("the write-back, held").isEqualTo(1);
    assertThat(deletes.get().waiting()).as("the lease's delete: once the write is answered")
        .isZero();
    assertThat(cache.pendingWrites()).isEqualTo(1);

    Thread closer = closeInBackground(cache);
    assertThat(closer.isAlive()).as("close() waits while the write is unanswered").isTrue();

    writes.get().release();
    assertThat(deletes.get().waiting()).as("the lease's delete, issued and held").isEqualTo(1);
    assertThat(closer.isAlive()).as("close() waits for the lease's delete").isTrue();
    deletes.get().release();
    awaitReturned(closer);

    assertThat(item("c:k")).as("the value, written").map(CloseDrainsWritesTest::value)
        .contains("v");
    assertThat(item("c:k\u007Flease")).as("no lease left").isEmpty();
    assertThat(cache.pendingWrites()).isZero();
    assertThat(cache.stats().count("unfinished_at_close")).isZero();
  }

  @Test
  void close_givesUpAtCloseTimeout_onTheCachesTicker_countsWhatIsLeft_andDoesNotThrow()
      throws Exception {
    DefaultSustainableCache<String> cache = (DefaultSustainableCache<String>) builder().build();
    AtomicReference<Hold> deletes = new AtomicReference<>();
    cache.get("k", key -> {
      deletes.set(hold(Op.DELETE)); // the lease's delete never answers before close() gives up
      return "v";
    });
    long closing = clock.ticker().read();
    Thread closer = closeInBackground(cache);
    assertThat(closer.isAlive()).isTrue();
    assertThat(scheduler.nextDueNanos() - closing)
        .as("close()'s bound, on the cache's ticker").isEqualTo(CLOSE_TIMEOUT.toNanos());

    scheduler.pass(clock, CLOSE_TIMEOUT.toMillis() - 1, CLOSE_TIMEOUT.toMillis());
    assertThat(closer.isAlive()).as("1 ms before the bound: still waiting").isTrue();
    scheduler.pass(clock, 1, 1);
    awaitReturned(closer); // no exception: the thread would have died with one all the same

    assertThat(cache.stats().count("unfinished_at_close")).as("the lease's delete, left")
        .isEqualTo(1);
    assertThat(deletes.get().waiting()).as("the lease's delete, still held").isEqualTo(1);
  }

  @Test
  void aWriteThatFails_endsTheWait_isNotThrown_andIsNotCountedAsUnfinished() throws Exception {
    ScriptedStore failing = ScriptedStore.over(server);
    ScriptedStore slow = ScriptedStore.over(failing);
    DefaultSustainableCache<String> cache = (DefaultSustainableCache<String>) SustainableCache
        .builder(slow).namespace("c").ttl(Duration.ofMinutes(1)).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler).refreshExecutor(executor)
        .closeTimeout(CLOSE_TIMEOUT).build();
    AtomicReference<Hold> deletes = new AtomicReference<>();
    cache.get("k", key -> {
      deletes.set(slow.holdRequests(Op.DELETE));
      failing.fail(Op.DELETE, Integer.MAX_VALUE); // the server is gone when it is sent
      return "v";
    });
    holds.add(deletes.get());
    Thread closer = closeInBackground(cache);
    assertThat(closer.isAlive()).isTrue();

    deletes.get().release();
    awaitReturned(closer);

    assertThat(failing.count(Op.DELETE)).as("the delete reached the (failing) store").isEqualTo(1);
    assertThat(cache.stats().count("unfinished_at_close")).isZero();
  }

  @Test
  void close_retriesAFenceReleaseWaitingOutItsBackOff_atOnce_andWaitsForIt() throws Exception {
    DefaultSustainableCache<String> cache = cache();
    cache.put("k", "old");
    WriteFence<String> fence = cache.fence("k");
    store.fail(Op.GETS, 1); // the release's first read fails: retried 100 ms later
    int scheduled = scheduler.pending(); // the namespace's generation poll, by default
    fence.committed();
    assertThat(scheduler.pending()).as("the retry, scheduled").isEqualTo(scheduled + 1);
    assertThat(Envelope.kind(item("c:k").orElseThrow().value())).as("the fence stands")
        .isEqualTo(Envelope.KIND_FENCE);
    long before = clock.ticker().read();
    Hold reads = hold(Op.GETS); // the retry's read, held: close() waits for it

    Thread closer = closeInBackground(cache);
    assertThat(reads.waiting()).as("the retry, run by close() before its back-off ended")
        .isEqualTo(1);
    assertThat(closer.isAlive()).as("close() waits for the release in progress").isTrue();

    reads.release();
    awaitReturned(closer);

    assertThat(clock.ticker().read()).as("no time passed: the back-off was not waited out")
        .isEqualTo(before);
    assertThat(Envelope.kind(item("c:k").orElseThrow().value())).as("the fence, released")
        .isEqualTo(Envelope.KIND_TOMBSTONE);
    assertThat(cache.stats().count("unfinished_at_close")).isZero();
    assertThat(cache.stats().count("fence_release_failure")).isZero();
  }

  @Test
  void close_givesUpAFenceReleaseThatFailsAgain_insteadOfWaitingForAStoreThatIsDown()
      throws Exception {
    DefaultSustainableCache<String> cache = cache();
    cache.put("k", "old");
    WriteFence<String> fence = cache.fence("k");
    store.fail(Op.GETS, 2); // the release's read fails, and its retry's too: the store is down
    fence.committed();
    long before = clock.ticker().read();

    Thread closer = closeInBackground(cache);
    awaitReturned(closer);

    assertThat(clock.ticker().read()).as("no time passed: no back-off was waited out")
        .isEqualTo(before);
    assertThat(cache.stats().count("fence_release_failure")).as("given up, and counted")
        .isEqualTo(1);
    assertThat(cache.stats().count("unfinished_at_close")).isZero();
    assertThat(Envelope.kind(item("c:k").orElseThrow().value()))
        .as("the fence stands until the writer's hold ends").isEqualTo(Envelope.KIND_FENCE);
    scheduler.pass(clock, 10_000, 100); // the retry's timer, had close() not run it
    assertThat(Envelope.kind(item("c:k").orElseThrow().value()))
        .as("not retried after the cache closed (the store answers again now)")
        .isEqualTo(Envelope.KIND_FENCE);
  }

  @Test
  void close_waitsForALoadsWrite_queuedInTheCallersRefreshExecutor() throws Exception {
    DefaultSustainableCache<String> cache = cache();
    CompletableFuture<String> query = new CompletableFuture<>();
    CompletableFuture<String> read = cache.getAsync("k", key -> query);
    // the loader completes on another thread: its write is handed to the refresh executor
    Thread database = new Thread(() -> query.complete("v"), "database");
    database.start();
    database.join(PATIENCE.toMillis());
    assertThat(read.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)).isEqualTo("v");
    assertThat(executor.queued()).as("the write, queued").isEqualTo(1);

    Thread closer = closeInBackground(cache);
    assertThat(closer.isAlive()).as("close() waits for the queued write").isTrue();

    executor.runAll();
    awaitReturned(closer);

    assertThat(item("c:k")).map(CloseDrainsWritesTest::value).contains("v");
    assertThat(item("c:k\u007Flease")).isEmpty();
  }

  @Test
  void close_withNothingPending_returnsWithoutWaiting_andKeepsNoTimer() {
    DefaultSustainableCache<String> cache = cache();
    cache.get("k", key -> "v");
    assertThat(cache.pendingWrites()).isZero(); // the in-memory store answers at once

    cache.close();

    assertThat(scheduler.pending()).isZero();
    assertThat(cache.stats().count("unfinished_at_close")).isZero();
  }
}
