package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 15, "getAll after another host's invalidate returns the old value": host B has a load of
 * the key in flight that read the old row; host A invalidates and returns. Every read method on
 * B that starts after that must not join B's old load. Two caches over one in-memory server are
 * the two hosts; the test over real memcached is in the testkit's {@code SustainableCacheContract}.
 */
final class ReadAfterInvalidateTest {

  private static final Duration TTL = Duration.ofSeconds(10);

  /** A read method of host B, given the fresh row's loader source. */
  interface Read extends BiFunction<SustainableCache<String>, AtomicReference<String>, String> {}

  static Stream<Arguments> readMethods() {
    return Stream.of(
        Arguments.of("get", (Read) (c, row) -> c.get("k", k -> row.get())),
        Arguments.of("find", (Read) (c, row) -> c.find("k", k -> row.get()).orElseThrow()),
        Arguments.of("getAsync", (Read) (c, row) -> c.getAsync("k",
            k -> CompletableFuture.completedFuture(row.get())).join()),
        Arguments.of("findAsync", (Read) (c, row) -> c.findAsync("k",
            k -> CompletableFuture.completedFuture(row.get())).join().orElseThrow()),
        Arguments.of("getAll", (Read) (c, row) -> c.getAll(List.of("k"), keys -> {
          Map<String, String> values = new HashMap<>();
          keys.forEach(key -> values.put(key, row.get()));
          return values;
        }).get("k")),
        Arguments.of("getAllAsync", (Read) (c, row) -> c.getAllAsync(List.of("k"), keys -> {
          Map<String, String> values = new HashMap<>();
          keys.forEach(key -> values.put(key, row.get()));
          return CompletableFuture.completedFuture(values);
        }).join().get("k")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("readMethods")
  void aReadOnHostB_startedAfterHostAsInvalidateReturned_neverJoinsBsOlderLoad(String method,
      Read read) throws Exception {
    FakeClock clock = FakeClock.atRoundSecond();
    InMemoryStore server = InMemoryStore.create(clock);
    ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
    try (SustainableCache<String> a = host(server, clock, scheduler);
        SustainableCache<String> b = host(server, clock, scheduler)) {
      AtomicReference<String> row = new AtomicReference<>("old");
      CompletableFuture<String> oldQuery = new CompletableFuture<>();
      CompletableFuture<String> before = b.getAsync("k", key -> {
        String value = row.get();
        return oldQuery.thenApply(ignored -> value);
      });

      row.set("new");
      a.invalidate("k");
      clock.advance(Duration.ofMillis(1));
      CompletableFuture<String> after = CompletableFuture.supplyAsync(() -> read.apply(b, row));
      String answer = after.get(10, TimeUnit.SECONDS);
      oldQuery.complete("done");

      assertThat(answer).as(method + " after the invalidate").isEqualTo("new");
      assertThat(before.get(10, TimeUnit.SECONDS)).isEqualTo("old");
    }
  }

  private static SustainableCache<String> host(InMemoryStore server, FakeClock clock,
      ManualScheduler scheduler) {
    return SustainableCache.builder(server).namespace("r").ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler).fleetLease(false).build();
  }
}
