package io.sustainablecache.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.Loader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.WriteFence;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreItem;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Write fences around database transactions ({@link SustainableCache#fence}, issue 21) over a
 * real memcached through an adapter, each "host" a client of its own: what a fence on one client
 * means for reads and loads on another, under real races; the server's expiry of a dead writer's
 * fence; two writers holding one fence; {@code invalidateAll} without a near cache across two
 * clients (issue 21, part 2). Every interleaving in virtual time is the core's {@code
 * WriteFenceTest}.
 *
 * <p>Subclasses name the adapter's {@link StoreConnector}; every store and cache a test opens is
 * closed after it. The project runs it over one adapter (spymemcached): it checks the core's
 * fence over a store, and both adapters pass {@link CacheStoreContract}, whose operations are all
 * the fence uses.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class WriteFenceContract extends ServerContract {

  private final String namespace = "fence-" + UUID.randomUUID().toString().substring(0, 8);

  /** Creates the contract; subclasses are instantiated by JUnit. */
  protected WriteFenceContract() {}


  private CacheStore newStore() {
    return newStore(Duration.ofSeconds(2));
  }

  private SustainableCache<String> cache(CacheStore store) {
    return cache(store, Duration.ofSeconds(30));
  }

  private SustainableCache<String> cache(CacheStore store, Duration fenceTimeout) {
    SustainableCache<String> cache = SustainableCache.builder(store).namespace(namespace)
        .ttl(Duration.ofSeconds(30)).codec(ValueCodec.utf8()).fenceTimeout(fenceTimeout).build();
    closeAfter(cache);
    return cache;
  }

  /** A cache without a near cache whose {@code invalidateAll} is a generation (issue 21). */
  private SustainableCache<String> generationCache(CacheStore store, Duration bound) {
    SustainableCache<String> cache = SustainableCache.builder(store).namespace(namespace)
        .ttl(Duration.ofSeconds(30)).codec(ValueCodec.utf8()).invalidateAllBound(bound).build();
    closeAfter(cache);
    return cache;
  }

  private Optional<byte[]> raw(CacheStore store, String key) {
    return store.gets(namespace + ":" + key).join().map(StoreItem::value);
  }

  /**
   * Issue 30: until {@code beforeCommit()}, and for the commit window after it (100 ms by the
   * fence's time), the other client's reads are answered with the value the fence replaced; past
   * the window they load and cache nothing until the release. (Within the window a read may be
   * late on a loaded machine and load: only what holds either way is asserted there; the time
   * past the window is a lower bound, waited for.)
   */
  @Test
  void aFenceOnOneClient_answersTheOthersReadsWithThePrior_throughTheCommitWindow_thenTheyLoad() {
    CacheStore storeOfA = newStore();
    SustainableCache<String> a = cache(storeOfA);
    SustainableCache<String> b = cache(newStore());
    AtomicReference<String> row = new AtomicReference<>("old");
    AtomicInteger loads = new AtomicInteger();
    Loader<String> db = key -> {
      loads.incrementAndGet();
      return row.get();
    };
    assertThat(b.get("k", db)).isEqualTo("old");
    // the load's write is not awaited by its caller: the fence must find it to carry it
    await().atMost(Duration.ofSeconds(5)).until(() -> raw(storeOfA, "k")
        .filter(bytes -> Envelope.kind(bytes) == Envelope.KIND_VALUE).isPresent());

    WriteFence<String> fence = a.fence("k");
    assertThat(Envelope.kind(raw(storeOfA, "k").orElseThrow())).isEqualTo(Envelope.KIND_FENCE);
    assertThat(b.get("k", db)).isEqualTo("old");
    assertThat(b.get("k", db)).isEqualTo("old");
    assertThat(loads).as("reads during the transaction: the value the fence replaced")
        .hasValue(1);
    fence.beforeCommit();
    long marked = System.nanoTime(); // the mark's time is earlier: the window ends before +100 ms
    assertThat(Envelope.fenceCommitting(raw(storeOfA, "k").orElseThrow())).isTrue();
    assertThat(Envelope.fencePrior(raw(storeOfA, "k").orElseThrow()))
        .as("the prior kept for the commit window").isNotNull();
    assertThat(b.get("k", db)).as("the prior, or past the window a load").isEqualTo("old");
    await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
        .until(() -> System.nanoTime() - marked > TimeUnit.MILLISECONDS.toNanos(100));
    assertThat(b.getIfPresent("k")).as("past the commit window: nothing cached").isEmpty();
    int before = loads.get();
    assertThat(b.get("k", db)).isEqualTo("old");
    assertThat(loads).as("past the commit window: a load").hasValue(before + 1);

    row.set("new");
    fence.committed("new");

    assertThat(b.get("k", db)).isEqualTo("new");
    assertThat(a.get("k", db)).isEqualTo("new");
    assertThat(loads).as("the committed value, cached by the release").hasValue(before + 1);
  }

  /**
   * Issue 21, part 2: {@code invalidateAll} without a near cache on plain memcached as on ARCUS
   * ({@code invalidateAllBound}: a new generation of the namespace), across two clients: the
   * caller sees it when the call returns; the other client serves the old value from no read
   * that began more than the bound after that return; a load the other client began before it
   * and answered after is not written; a write fence placed before it still stands after it.
   */
  @Test
  void invalidateAllWithoutANearCache_acrossTwoClients_fencesLoadsInFlight_andKeepsFences()
      throws Exception {
    Duration bound = Duration.ofSeconds(1);
    SustainableCache<String> a = generationCache(newStore(), bound);
    CacheStore storeOfB = newStore();
    SustainableCache<String> b = generationCache(storeOfB, bound);
    // build() waits for the first read of the generation at most the bound (a new client may
    // still be connecting); until it succeeds a caller's write throws and loads are not written
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      a.put("known", "a");
      b.put("known", "b");
    });
    a.get("x", key -> "old");
    // a load's write is not awaited by its caller: the other client's read may arrive first
    await().atMost(Duration.ofSeconds(5))
        .untilAsserted(() -> assertThat(b.getIfPresent("x")).contains("old"));
    WriteFence<String> fence = b.fence("fenced");
    CompletableFuture<String> query = new CompletableFuture<>();
    CompletableFuture<String> inFlight = b.getAsync("slow", key -> query);

    a.invalidateAll();
    long returned = System.nanoTime();
    assertThat(a.getIfPresent("x")).as("the caller, at once").isEmpty();
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10)).untilAsserted(() -> {
      long began = System.nanoTime();
      Optional<String> seen = b.getIfPresent("x");
      if (seen.isPresent()) {
        assertThat(TimeUnit.NANOSECONDS.toMillis(began - returned))
            .as("a read of the other client that served the old value began, ms after")
            .isLessThanOrEqualTo(bound.toMillis());
      }
      assertThat(seen).isEmpty();
    });

    query.complete("read before invalidateAll");
    assertThat(inFlight.get(5, TimeUnit.SECONDS)).isEqualTo("read before invalidateAll");
    assertThat(raw(storeOfB, "slow")).as("the load in flight, not written").isEmpty();
    assertThat(b.stats().count("stale_set_discard")).isEqualTo(1);
    assertThat(b.get("slow", key -> "after")).isEqualTo("after");
    await().atMost(Duration.ofSeconds(5))
        .untilAsserted(() -> assertThat(a.getIfPresent("slow")).contains("after"));

    assertThat(a.get("fenced", key -> "uncommitted")).as("the fence stands").isEqualTo("uncommitted");
    assertThat(a.getIfPresent("fenced")).as("nothing cached under it").isEmpty();
    fence.committed("committed");
    assertThat(a.get("fenced", key -> "other")).isEqualTo("committed");
    assertThat(a.stats().count("corrupt_entry") + b.stats().count("corrupt_entry")).isZero();
  }

  /**
   * The race on a real server, both clients busy: host B's threads read the key in a loop
   * while host A fences it, commits a new row and completes the fence; once {@code committed()}
   * returned, no read that starts on either host returns the old row, and the key ends cached
   * with the new one.
   */
  @Test
  void readersRacingAFencedCommitOnAnotherClient_neverSeeTheOldRowAfterTheCommit()
      throws Exception {
    SustainableCache<String> a = cache(newStore());
    SustainableCache<String> b = cache(newStore());
    int trials = 100;
    for (int trial = 0; trial < trials; trial++) {
      String key = "race-" + trial;
      AtomicReference<String> row = new AtomicReference<>("old");
      Loader<String> db = k -> row.get();
      b.get(key, db);
      AtomicBoolean stop = new AtomicBoolean();
      List<CompletableFuture<Void>> readers = new ArrayList<>();
      for (int r = 0; r < 2; r++) {
        readers.add(CompletableFuture.runAsync(() -> {
          while (!stop.get()) {
            b.get(key, db);
          }
        }));
      }
      WriteFence<String> fence = a.fence(key);
      if (trial % 2 == 0) { // as the integrations do; odd trials as a core caller may
        fence.beforeCommit();
      }
      row.set("new");
      fence.committed();
      for (int i = 0; i < 20; i++) {
        assertThat(b.get(key, db)).as("trial %d, host B", trial).isEqualTo("new");
        assertThat(a.get(key, db)).as("trial %d, host A", trial).isEqualTo("new");
      }
      stop.set(true);
      CompletableFuture.allOf(readers.toArray(new CompletableFuture<?>[0]))
          .get(30, TimeUnit.SECONDS);
      assertThat(b.getIfPresent(key)).as("trial %d, cached", trial).contains("new");
    }
  }

  @Test
  void aFenceWhoseWriterDied_expiresOnTheServerAfterTheFenceTimeout() {
    CacheStore store = newStore();
    SustainableCache<String> writer = cache(store, Duration.ofSeconds(1));
    SustainableCache<String> reader = cache(newStore());
    writer.fence("dead"); // never completed

    assertThat(reader.get("dead", key -> "loaded")).isEqualTo("loaded");
    assertThat(reader.getIfPresent("dead")).as("not cached under the fence").isEmpty();
    await().atMost(Duration.ofSeconds(5)).until(() -> raw(store, "dead").isEmpty());
    assertThat(reader.get("dead", key -> "loaded")).isEqualTo("loaded");
    assertThat(reader.getIfPresent("dead")).as("cached again").contains("loaded");
  }

  @Test
  void twoClientsHoldOneFence_untilBothCompleted() {
    CacheStore store = newStore();
    SustainableCache<String> a = cache(store);
    SustainableCache<String> b = cache(newStore());
    WriteFence<String> first = a.fence("two");
    WriteFence<String> second = b.fence("two");
    assertThat(Envelope.fenceHolders(raw(store, "two").orElseThrow())).isEqualTo(2);

    first.committed("first's");
    assertThat(Envelope.kind(raw(store, "two").orElseThrow())).isEqualTo(Envelope.KIND_FENCE);
    second.rolledBack();
    assertThat(Envelope.kind(raw(store, "two").orElseThrow()))
        .isEqualTo(Envelope.KIND_TOMBSTONE);
  }

  /**
   * Issue 30: a writer that died holds the key no longer than its own hold, while another client
   * keeps writing it (each joins the fence; before, each join pushed the dead writer's end).
   */
  @Test
  void aDeadWritersHold_ends_whileAnotherClientKeepsWritingTheKey() {
    CacheStore store = newStore();
    SustainableCache<String> dead = cache(store, Duration.ofSeconds(1));
    SustainableCache<String> writer = cache(newStore(), Duration.ofSeconds(1));
    SustainableCache<String> reader = cache(newStore(), Duration.ofSeconds(1));
    AtomicInteger version = new AtomicInteger();
    Loader<String> db = key -> "v" + version.get();
    dead.fence("busy"); // never completed
    long deadAt = System.nanoTime();
    boolean cached = false;
    // writes keep coming, each its own short transaction; bounded: 30 holds of the dead writer
    while (!cached && System.nanoTime() - deadAt < Duration.ofSeconds(30).toNanos()) {
      WriteFence<String> fence = writer.fence("busy");
      fence.beforeCommit();
      version.incrementAndGet();
      fence.committed();
      assertThat(reader.get("busy", db)).isEqualTo("v" + version.get());
      cached = reader.getIfPresent("busy").isPresent();
    }
    assertThat(cached).as("cached again while the key is written").isTrue();
    assertThat(Envelope.kind(raw(store, "busy").orElseThrow())).isEqualTo(Envelope.KIND_VALUE);
  }
}
