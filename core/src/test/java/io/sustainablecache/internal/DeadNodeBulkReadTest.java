package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.BulkLoader;
import io.sustainablecache.BulkPeek;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.PartialReadException;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 31: a dead node costs a {@code getAll} its own keys only. Over a {@link ClusterStore}
 * (three nodes; a dead node's operations fail at once, as {@code FailureMode.Cancel}; a bulk read
 * fails for the dead node's keys with a {@link PartialReadException} carrying the others'
 * items, as the adapters' bulk read does), the keys of the surviving nodes are served from the
 * store and only the dead node's keys are loaded, and not written back. Before the fix, the
 * failed bulk read was a miss of every key: {@code getAll} loaded all of them.
 */
final class DeadNodeBulkReadTest {

  private static final String NS = "dn";
  private static final int KEYS = 30;

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final ManualExecutor refreshes = new ManualExecutor();
  private final ClusterStore cluster = new ClusterStore(clock, 3);
  private final List<Set<String>> calls = new CopyOnWriteArrayList<>();
  private final BulkLoader<String> db = keys -> {
    calls.add(Set.copyOf(keys));
    Map<String, String> values = new HashMap<>();
    keys.forEach(key -> values.put(key, key + "!"));
    return values;
  };
  private final List<String> keys = IntStream.range(0, KEYS).mapToObj(i -> "k" + i).toList();
  private SustainableCache<String> cache;
  private Set<String> deadKeys;

  @BeforeEach
  void warmEveryKeyThenKillANode() {
    cache = SustainableCache.builder(cluster).namespace(NS).ttl(Duration.ofMinutes(10))
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(refreshes).random(FixedRandom.neverEarly()).build();
    assertThat(cache.getAll(keys, db)).hasSize(KEYS);
    assertThat(cache.getAll(keys, db)).hasSize(KEYS);
    assertThat(calls).as("loads while every node is up: one call, for every key").hasSize(1);
    calls.clear();
    cluster.kill(1);
    deadKeys = keys.stream().filter(key -> cluster.nodeOf(NS + ":" + key) == 1)
        .collect(Collectors.toSet());
    assertThat(deadKeys).as("keys on the dead node").isNotEmpty().hasSizeLessThan(KEYS);
  }

  @AfterEach
  void close() {
    cache.close();
  }

  @Test
  void getAll_loadsOnlyTheDeadNodesKeys_everyTime() {
    for (int round = 0; round < 2; round++) {
      Map<String, String> all = cache.getAll(keys, db);
      assertThat(all).as("round %d", round).hasSize(KEYS)
          .allSatisfy((key, value) -> assertThat(value).isEqualTo(key + "!"));
      assertThat(calls).as("round %d: one bulk load, of the dead node's keys only", round)
          .hasSize(round + 1);
      assertThat(calls.get(round)).as("round %d", round).isEqualTo(deadKeys);
      clock.advance(Duration.ofMillis(100)); // past the outage reuse: the next round loads
    }
    assertThat(cache.stats().storeErrorCount()).as("the failed parts, counted")
        .isGreaterThanOrEqualTo(2);
  }

  @Test
  void getAllAsync_loadsOnlyTheDeadNodesKeys() {
    Map<String, String> all = cache.getAllAsync(keys,
        missing -> CompletableFuture.completedFuture(db.loadAll(missing))).join();
    assertThat(all).hasSize(KEYS);
    assertThat(calls).containsExactly(deadKeys);
  }

  @Test
  void peekAll_answersTheSurvivingNodesKeys_andReadsNothingOfTheDeadNodesKeys() {
    BulkPeek<String> peek = cache.peekAll(keys);
    Map<String, String> expected = new HashMap<>();
    keys.stream().filter(key -> !deadKeys.contains(key)).forEach(key -> expected.put(key,
        key + "!"));
    assertThat(peek.values()).isEqualTo(expected);
    assertThat(calls).isEmpty();
  }

  /** The SPI's default bulk read (one {@code gets} per key) fails partially the same way. */
  @Test
  void theDefaultBulkRead_failsOnlyTheKeysWhoseReadFailed() {
    InMemoryStore memory = InMemoryStore.create(clock);
    CacheStore flaky = new CacheStore() {
      @Override
      public CompletableFuture<Optional<StoreItem>> gets(String key) {
        return key.startsWith("bad") ? CompletableFuture.failedFuture(new StoreException("down"))
            : memory.gets(key);
      }

      @Override
      public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
        return memory.add(key, value, exptime);
      }

      @Override
      public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
        return memory.set(key, value, exptime);
      }

      @Override
      public CompletableFuture<io.sustainablecache.spi.CasOutcome> cas(String key, long casToken,
          byte[] value, int exptime) {
        return memory.cas(key, casToken, value, exptime);
      }

      @Override
      public CompletableFuture<Boolean> delete(String key) {
        return memory.delete(key);
      }
    };
    flaky.set("good1", "v".getBytes(StandardCharsets.US_ASCII), 0).join();
    List<String> some = List.of("good1", "good2", "bad1", "bad2");
    Throwable failure = failureOf(flaky.getsAll(some));
    assertThat(failure).isInstanceOf(PartialReadException.class);
    PartialReadException partial = (PartialReadException) failure;
    assertThat(partial.failedKeys()).containsExactlyInAnyOrder("bad1", "bad2");
    assertThat(partial.found()).containsOnlyKeys("good1");
    assertThat(partial.getMessage()).doesNotContain("bad1").doesNotContain("good1");

    Throwable none = failureOf(flaky.getsAll(List.of("bad1", "bad2")));
    assertThat(none).as("no key read: a plain failure").isInstanceOf(StoreException.class)
        .isNotInstanceOf(PartialReadException.class);
    assertThat(flaky.getsAll(List.of("good1", "good2")).join()).containsOnlyKeys("good1");
  }

  @Test
  void aPartialReadException_checksWhatItCarries() {
    StoreItem item = new StoreItem(new byte[] {1}, 7);
    Collection<String> failed = new ArrayList<>(List.of("b"));
    PartialReadException e = new PartialReadException("m", null, Map.of("a", item), failed);
    failed.add("c");
    assertThat(e.failedKeys()).as("copied").containsExactly("b");
    assertThat(e.found()).containsExactly(Map.entry("a", item));
    org.assertj.core.api.Assertions.assertThatThrownBy(
        () -> new PartialReadException("m", null, Map.of(), List.of()))
        .isInstanceOf(IllegalArgumentException.class);
    org.assertj.core.api.Assertions.assertThatThrownBy(
        () -> new PartialReadException("m", null, Map.of("a", item), List.of("a")))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static Throwable failureOf(CompletableFuture<?> future) {
    try {
      future.join();
    } catch (CompletionException e) {
      return e.getCause();
    }
    throw new AssertionError("the read did not fail");
  }
}
