package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.CacheLoadException;
import io.sustainablecache.Loader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.ForwardingStore;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Which thread runs a caller's loader (issue 13, §2, and issue 15, "blocking async loaders"): a
 * synchronous loader runs on the caller's thread or on the refresh executor, an asynchronous one
 * is never started on the thread that completed a store round trip, and a load whose caller left
 * never runs on a client's or the scheduler's thread. The store's futures are held and completed
 * from a thread named like a client's I/O thread.
 */
final class LoaderThreadTest {

  private static final Duration TTL = Duration.ofSeconds(10);
  private static final String IO_THREAD = "client-io-thread";

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore server = InMemoryStore.create(clock);
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final List<String> loaderThreads = new CopyOnWriteArrayList<>();
  private SustainableCache<String> cache;

  @AfterEach
  void close() {
    if (cache != null) {
      cache.close();
    }
  }

  private Loader<String> recording(String value) {
    return key -> {
      loaderThreads.add(Thread.currentThread().getName());
      return value;
    };
  }

  private static void completeOnIoThread(Runnable completion) throws InterruptedException {
    Thread io = new Thread(completion, IO_THREAD);
    io.start();
    io.join(TimeUnit.SECONDS.toMillis(10));
  }

  @Test
  void syncLoaderOfACallerInterruptedDuringTheLeaseAdd_runsOnTheRefreshExecutor_notOnTheIoThread()
      throws Exception {
    HeldLeases store = new HeldLeases(server);
    ManualExecutor refreshes = new ManualExecutor();
    cache = SustainableCache.builder(store).namespace("t").ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler).refreshExecutor(refreshes)
        .fleetLease(true).build();

    AtomicReference<Throwable> callerFailure = new AtomicReference<>();
    Thread caller = new Thread(() -> {
      try {
        cache.get("k", recording("v"));
      } catch (Throwable t) {
        callerFailure.set(t);
      }
    }, "caller");
    caller.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> store.held.get() != null);
    caller.interrupt();
    caller.join(10_000);
    assertThat(callerFailure.get()).isInstanceOf(CacheLoadException.class)
        .hasMessageContaining("interrupted");

    completeOnIoThread(store::release);
    assertThat(loaderThreads).as("nothing ran on the I/O thread").isEmpty();
    assertThat(refreshes.queued()).as("the load was handed to the refresh executor").isEqualTo(1);

    refreshes.runAll();
    assertThat(loaderThreads).containsExactly(Thread.currentThread().getName());
    assertThat(cache.getIfPresent("k")).contains("v");
    assertThat(((DefaultSustainableCache<?>) cache).registeredKeyCount()).isZero();
  }

  @Test
  void whenTheRefreshExecutorRefusesTheLeftCallersLoad_theKeyIsReleasedNotStuck()
      throws Exception {
    HeldLeases store = new HeldLeases(server);
    ManualExecutor refreshes = new ManualExecutor();
    refreshes.behave(ManualExecutor.Behaviour.REJECT);
    cache = SustainableCache.builder(store).namespace("t").ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler).refreshExecutor(refreshes)
        .fleetLease(true).build();

    Thread caller = new Thread(() -> {
      try {
        cache.get("k", recording("v"));
      } catch (CacheLoadException expected) {
        // interrupted
      }
    }, "caller");
    caller.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> store.held.get() != null);
    caller.interrupt();
    caller.join(10_000);
    completeOnIoThread(store::release);

    assertThat(loaderThreads).isEmpty();
    assertThat(((DefaultSustainableCache<?>) cache).registeredKeyCount()).as("released").isZero();
    assertThat(store.leaseDeletes).as("the lease it won was given back").isEqualTo(1);
    store.holdNext = false;
    assertThat(cache.get("k", recording("v2"))).isEqualTo("v2");
    assertThat(loaderThreads).containsExactly(Thread.currentThread().getName());
  }

  @Test
  void closeInterruptingARefreshWaitingForItsLease_theLoaderNeverRunsLater() throws Exception {
    HeldLeases store = new HeldLeases(server);
    store.holdNext = false;
    cache = SustainableCache.builder(store).namespace("t").ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler).random(FixedRandom.neverEarly())
        .fleetLease(true)
        .closeTimeout(Duration.ofMillis(200)).build();
    cache.put("k", "v0");
    clock.advance(TTL.plusMillis(1));
    store.holdNext = true;

    assertThat(cache.get("k", recording("v1"))).isEqualTo("v0"); // stale: refresh scheduled
    await().atMost(Duration.ofSeconds(10)).until(() -> store.held.get() != null);
    cache.close(); // interrupts the refresh thread waiting for the lease
    completeOnIoThread(store::release);

    assertThat(loaderThreads).as("the refresh never loaded, on any thread").isEmpty();
    assertThat(store.leaseDeletes).as("the lease it won was given back").isEqualTo(1);
    assertThat(((DefaultSustainableCache<?>) cache).registeredKeyCount()).isZero();
  }

  @Test
  void asyncLoader_isNotStartedOnTheThreadThatCompletedTheStoreRead() throws Exception {
    HeldReads store = new HeldReads(server);
    ExecutorService refreshes = Executors.newSingleThreadExecutor(r -> new Thread(r, "refresh"));
    try {
      cache = SustainableCache.builder(store).namespace("t").ttl(TTL).codec(ValueCodec.utf8())
          .clock(clock).ticker(clock.ticker()).scheduler(scheduler).refreshExecutor(refreshes)
          .fleetLease(false)
          .build();
      CompletableFuture<String> value = cache.getAsync("k", key -> {
        loaderThreads.add(Thread.currentThread().getName());
        return CompletableFuture.completedFuture("v");
      });
      await().atMost(Duration.ofSeconds(10)).until(() -> store.held.get() != null);
      completeOnIoThread(store::release);

      assertThat(value.get(10, TimeUnit.SECONDS)).isEqualTo("v");
      assertThat(loaderThreads).containsExactly("refresh");
    } finally {
      refreshes.shutdownNow();
    }
  }

  @Test
  void asyncBulkLoader_isNotStartedOnTheThreadThatCompletedTheBulkRead() throws Exception {
    HeldReads store = new HeldReads(server);
    ExecutorService refreshes = Executors.newSingleThreadExecutor(r -> new Thread(r, "refresh"));
    try {
      cache = SustainableCache.builder(store).namespace("t").ttl(TTL).codec(ValueCodec.utf8())
          .clock(clock).ticker(clock.ticker()).scheduler(scheduler).refreshExecutor(refreshes)
          .fleetLease(false)
          .build();
      CompletableFuture<java.util.Map<String, String>> values =
          cache.getAllAsync(List.of("a", "b"), keys -> {
            loaderThreads.add(Thread.currentThread().getName());
            java.util.Map<String, String> loaded = new java.util.HashMap<>();
            keys.forEach(key -> loaded.put(key, key + "!"));
            return CompletableFuture.completedFuture(loaded);
          });
      await().atMost(Duration.ofSeconds(10)).until(() -> store.heldBulk.get() != null);
      completeOnIoThread(store::releaseBulk);

      assertThat(values.get(10, TimeUnit.SECONDS)).containsEntry("a", "a!").containsEntry("b", "b!");
      assertThat(loaderThreads).containsExactly("refresh");
    } finally {
      refreshes.shutdownNow();
    }
  }

  @Test
  void getIfPresentAsync_answersWhatIsThere_andNeverLoads() throws Exception {
    cache = SustainableCache.builder(server).namespace("t").ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler).build();
    assertThat(cache.getIfPresentAsync("k").get(1, TimeUnit.SECONDS)).isEmpty();
    cache.put("k", "v");
    assertThat(cache.getIfPresentAsync("k").get(1, TimeUnit.SECONDS)).contains("v");
    cache.invalidate("k");
    assertThat(cache.getIfPresentAsync("k").get(1, TimeUnit.SECONDS)).isEmpty();
    assertThat(cache.stats().loadCount()).isZero();
    assertThat(cache.stats().hitCount()).isEqualTo(1);
    assertThat(cache.stats().missCount()).isEqualTo(2);
    assertThatThrownBy(() -> cache.getIfPresentAsync(null))
        .isInstanceOf(NullPointerException.class);
  }

  /** Holds the next lease {@code add} (key with 0x7F) until {@link #release}; counts deletes. */
  private static final class HeldLeases extends ForwardingStore {
    final AtomicReference<Runnable> held = new AtomicReference<>();
    volatile boolean holdNext = true;
    volatile int leaseDeletes;

    HeldLeases(CacheStore delegate) {
      super(delegate);
    }

    @Override
    public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
      CompletableFuture<Boolean> added = super.add(key, value, exptime);
      if (!holdNext || !key.endsWith("\u007Flease")) { // not the generation's item
        return added;
      }
      holdNext = false;
      CompletableFuture<Boolean> answer = new CompletableFuture<>();
      held.set(() -> added.whenComplete((won, error) -> answer.complete(won)));
      return answer;
    }

    @Override
    public CompletableFuture<Boolean> delete(String key) {
      if (key.endsWith("\u007Flease")) {
        leaseDeletes++;
      }
      return super.delete(key);
    }

    void release() {
      held.get().run();
    }
  }

  /**
   * Holds the first single and bulk read of a caller's key until released (not the reads of the
   * namespace's generation, whose keys are internal).
   */
  private static final class HeldReads extends ForwardingStore {
    final AtomicReference<Runnable> held = new AtomicReference<>();
    final AtomicReference<Runnable> heldBulk = new AtomicReference<>();

    HeldReads(CacheStore delegate) {
      super(delegate);
    }

    @Override
    public CompletableFuture<Optional<StoreItem>> gets(String key) {
      CompletableFuture<Optional<StoreItem>> read = super.gets(key);
      if (held.get() != null || key.indexOf('\u007F') >= 0) {
        return read;
      }
      CompletableFuture<Optional<StoreItem>> answer = new CompletableFuture<>();
      held.set(() -> read.whenComplete((item, error) -> answer.complete(item)));
      return answer;
    }

    @Override
    public CompletableFuture<java.util.Map<String, StoreItem>> getsAll(
        java.util.Collection<String> keys) {
      CompletableFuture<java.util.Map<String, StoreItem>> read = super.getsAll(keys);
      if (heldBulk.get() != null || keys.stream().anyMatch(k -> k.indexOf('\u007F') >= 0)) {
        return read;
      }
      CompletableFuture<java.util.Map<String, StoreItem>> answer = new CompletableFuture<>();
      heldBulk.set(() -> read.whenComplete((items, error) -> answer.complete(items)));
      return answer;
    }

    void release() {
      held.get().run();
    }

    void releaseBulk() {
      heldBulk.get().run();
    }
  }
}
