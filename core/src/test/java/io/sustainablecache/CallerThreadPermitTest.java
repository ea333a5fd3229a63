package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.ForwardingStore;
import io.sustainablecache.testing.InMemoryStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Issue 24, "thread permits": a synchronous call leaves the caller's thread as it found it. The
 * synchronous API drives the asynchronous flow on the caller's thread and used to unpark that
 * thread once too often (it unparked itself when its own loader completed the flow), so the
 * caller's next {@code LockSupport.parkNanos}, in its own code, returned at once. Each test makes a
 * miss, then parks for 50 ms and measures that it did park.
 */
final class CallerThreadPermitTest {

  private static final Duration TTL = Duration.ofMinutes(10);
  private static final long PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
  private static final long AT_LEAST_NANOS = TimeUnit.MILLISECONDS.toNanos(40);
  private static final int ROUNDS = 5;

  /** A store whose answers come on another thread, as a client's I/O thread completes them. */
  private static final class AnswersElsewhere extends ForwardingStore {
    private final Executor elsewhere = CompletableFuture.delayedExecutor(1, TimeUnit.MILLISECONDS);

    AnswersElsewhere(CacheStore delegate) {
      super(delegate);
    }

    private <T> CompletableFuture<T> later(CompletableFuture<T> answer) {
      return answer.thenApplyAsync(value -> value, elsewhere);
    }

    @Override
    public CompletableFuture<Optional<StoreItem>> gets(String key) {
      return later(super.gets(key));
    }

    @Override
    public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
      return later(super.add(key, value, exptime));
    }

    @Override
    public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
      return later(super.set(key, value, exptime));
    }
  }

  private static SustainableCache<String> cache(CacheStore store, boolean fleetLease) {
    return SustainableCache.builder(store).namespace("permits").ttl(TTL)
        .codec(ValueCodec.utf8()).fleetLease(fleetLease).build();
  }

  /** After each of {@link #ROUNDS} misses, the caller parks 50 ms: it must last 40 ms or more. */
  private static void eachMissLeavesNoPermit(SustainableCache<String> cache,
      Consumer<String> miss) {
    try (cache) {
      for (int round = 0; round < ROUNDS; round++) {
        miss.accept("k" + round);
        long start = System.nanoTime();
        LockSupport.parkNanos(PARK_NANOS);
        long parked = System.nanoTime() - start;
        assertThat(parked).as("round %d: parked %d µs right after the miss returned", round,
            parked / 1_000).isGreaterThanOrEqualTo(AT_LEAST_NANOS);
      }
    }
  }

  @Test
  void get_ofAMiss_loadedOnTheCallersThread_leavesItNoPermit() {
    SustainableCache<String> cache = cache(InMemoryStore.create(), false);
    eachMissLeavesNoPermit(cache, key -> assertThat(cache.get(key, k -> "v")).isEqualTo("v"));
  }

  @Test
  void get_ofAMiss_whoseStoreAnswersOnAnotherThread_underTheFleetLease_leavesNoPermit() {
    SustainableCache<String> cache = cache(new AnswersElsewhere(InMemoryStore.create()), true);
    eachMissLeavesNoPermit(cache, key -> assertThat(cache.get(key, k -> "v")).isEqualTo("v"));
  }

  @Test
  void getAll_ofMisses_leavesNoPermit() {
    SustainableCache<String> cache = cache(new AnswersElsewhere(InMemoryStore.create()), false);
    eachMissLeavesNoPermit(cache, key -> assertThat(cache.getAll(List.of(key, key + "'"),
        keys -> keys.stream().collect(java.util.stream.Collectors.toMap(k -> k, k -> "v"))))
        .hasSize(2));
  }
}
