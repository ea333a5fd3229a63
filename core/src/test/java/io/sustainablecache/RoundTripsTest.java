package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.ForwardingStore;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * How many <em>sequential</em> store round trips a cold {@code get} waits for before its loader
 * runs (issue 23: three before, the read, the lease's {@code add} and a re-read after it). The
 * store holds every operation until the test releases a round: the operations issued so far are
 * answered together, in the order they were issued (as memcached answers one connection), and
 * what their answers issue waits for the next round. A cold {@code getAll} waits for two as well,
 * its winners re-reading their items with one {@code getsAll} behind all the leases' {@code add}s.
 */
final class RoundTripsTest {

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore server = InMemoryStore.create(clock);
  private final RoundStore store = new RoundStore(server);
  private final SustainableCache<String> cache = SustainableCache.builder(store).namespace("r")
      .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
      .scheduler(ManualScheduler.on(clock.ticker())).refreshExecutor(new ManualExecutor())
      .random(FixedRandom.neverEarly()) // the fleet lease is on by default
      // every store call counts: no generation of the namespace, whose polls
      // are store calls too
      .invalidateAllBound(Duration.ZERO)
      .build();

  @AfterEach
  void close() {
    cache.close();
  }

  @Test
  void aColdGet_reachesItsLoaderAfterTwoSequentialRoundTrips_withTheFleetLease() {
    AtomicInteger loaderCalls = new AtomicInteger();
    CompletableFuture<String> read = cache.getAsync("cold", key -> {
      loaderCalls.incrementAndGet();
      return CompletableFuture.completedFuture("v");
    });
    int rounds = 0;
    while (loaderCalls.get() == 0 && store.pending() > 0) {
      store.releaseRound();
      rounds++;
    }

    assertThat(loaderCalls).as("the loader ran").hasValue(1);
    assertThat(rounds).as("sequential round trips before the loader").isEqualTo(2);
    while (store.pending() > 0) {
      store.releaseRound();
    }
    assertThat(read).isCompletedWithValue("v");
    assertThat(server.gets("r:cold").join()).as("written").isPresent();
    assertThat(server.gets("r:cold\u007Flease").join()).as("the lease released").isEmpty();
  }

  @Test
  void aColdGetAll_reachesItsLoaderAfterTwoSequentialRoundTrips_rereadingItsItemsWithOneGetsAll() {
    List<String> page = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      page.add("p" + i);
    }
    AtomicInteger loaderCalls = new AtomicInteger();
    CompletableFuture<Map<String, String>> read = cache.getAllAsync(page, keys -> {
      loaderCalls.incrementAndGet();
      Map<String, String> values = new java.util.HashMap<>();
      keys.forEach(key -> values.put(key, key + "!"));
      return CompletableFuture.completedFuture(values);
    });
    int rounds = 0;
    while (loaderCalls.get() == 0 && store.pending() > 0) {
      store.releaseRound();
      rounds++;
    }

    assertThat(loaderCalls).as("one bulk loader call").hasValue(1);
    assertThat(rounds).as("sequential round trips before the loader").isEqualTo(2);
    assertThat(store.singleReads).as("no gets per key: the re-read is one getsAll").hasValue(0);
    assertThat(store.bulkReads).as("the read and the re-read").hasValue(2);
    while (store.pending() > 0) {
      store.releaseRound();
    }
    assertThat(read.join()).hasSize(100).containsEntry("p7", "p7!");
  }

  /** Holds every operation until {@link #releaseRound}; then runs them in order on the server. */
  private static final class RoundStore extends ForwardingStore {
    private final List<Runnable> held = new ArrayList<>();
    final AtomicInteger singleReads = new AtomicInteger();
    final AtomicInteger bulkReads = new AtomicInteger();

    RoundStore(CacheStore server) {
      super(server);
    }

    synchronized int pending() {
      return held.size();
    }

    /** Answers every operation issued so far, in order; what they issue waits for the next. */
    void releaseRound() {
      List<Runnable> round;
      synchronized (this) {
        round = new ArrayList<>(held);
        held.clear();
      }
      round.forEach(Runnable::run);
    }

    private synchronized <T> CompletableFuture<T> hold(Supplier<CompletableFuture<T>> op) {
      CompletableFuture<T> answer = new CompletableFuture<>();
      held.add(() -> op.get().whenComplete((value, error) -> {
        if (error != null) {
          answer.completeExceptionally(error);
        } else {
          answer.complete(value);
        }
      }));
      return answer;
    }

    @Override
    public CompletableFuture<Optional<StoreItem>> gets(String key) {
      singleReads.incrementAndGet();
      return hold(() -> delegate().gets(key));
    }

    @Override
    public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
      bulkReads.incrementAndGet();
      return hold(() -> delegate().getsAll(keys));
    }

    @Override
    public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
      return hold(() -> delegate().add(key, value, exptime));
    }

    @Override
    public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
      return hold(() -> delegate().set(key, value, exptime));
    }

    @Override
    public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
        int exptime) {
      return hold(() -> delegate().cas(key, casToken, value, exptime));
    }

    @Override
    public CompletableFuture<Boolean> delete(String key) {
      return hold(() -> delegate().delete(key));
    }
  }
}
