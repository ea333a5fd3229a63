package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Issue 24, shared mutable values: without {@code nearCacheCopy}, every near hit returns the
 * instance the near cache holds (the one the loader's caller got, or the store reader's), so one
 * caller's change is what the next near hit returns; with it, every near hit decodes its own copy
 * from the stored bytes, and no caller's change reaches another read. Virtual time, one instance,
 * an in-memory store.
 */
final class NearCacheCopyTest {

  private static final Duration DELTA = Duration.ofSeconds(1);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final ManualExecutor refreshes = new ManualExecutor();
  private final InMemoryStore memory = InMemoryStore.create(clock);

  /** A mutable list of strings, one per line. */
  private static final ValueCodec<List<String>> LINES = new ValueCodec<>() {
    @Override
    public byte[] encode(List<String> value) {
      return String.join("\n", value).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public List<String> decode(byte[] bytes, int offset, int length) {
      return new ArrayList<>(Arrays.asList(
          new String(bytes, offset, length, StandardCharsets.UTF_8).split("\n", -1)));
    }
  };

  /** A mutable bean. */
  static final class Account {
    String owner;
    long balance;

    Account(String owner, long balance) {
      this.owner = owner;
      this.balance = balance;
    }
  }

  private static final ValueCodec<Account> ACCOUNTS = new ValueCodec<>() {
    @Override
    public byte[] encode(Account value) {
      return (value.owner + "=" + value.balance).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public Account decode(byte[] bytes, int offset, int length) {
      String[] parts = new String(bytes, offset, length, StandardCharsets.UTF_8).split("=");
      return new Account(parts[0], Long.parseLong(parts[1]));
    }
  };

  private <V> SustainableCache<V> cache(ValueCodec<V> codec, boolean copy) {
    SustainableCache<V> cache = SustainableCache.builder(memory).namespace("copy")
        .ttl(Duration.ofMinutes(10)).codec(codec).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(refreshes).random(FixedRandom.neverEarly()).nearCache(100, DELTA, 0)
        .nearCacheCopy(copy).build();
    scheduler.runDue(); // the first poll
    return cache;
  }

  @Test
  void copyOn_mutatingTheLoadedListOrANearHitsList_changesNoLaterNearHit() {
    try (SustainableCache<List<String>> cache = cache(LINES, true)) {
      List<String> loaded = cache.get("k", key -> new ArrayList<>(List.of("a", "b")));
      loaded.add("loader's caller was here");

      List<String> first = cache.get("k", key -> List.of("never loaded"));
      assertThat(first).containsExactly("a", "b");
      first.clear();

      List<String> second = cache.get("k", key -> List.of("never loaded"));
      assertThat(second).containsExactly("a", "b").isNotSameAs(first).isNotSameAs(loaded);
      assertThat(cache.stats().count("near_hit")).isEqualTo(2);
    }
  }

  @Test
  void copyOn_mutatingAnArrayANearHitReturned_changesNoLaterNearHit() {
    try (SustainableCache<byte[]> cache = cache(ValueCodec.bytes(), true)) {
      cache.put("k", new byte[] {1, 2, 3});
      cache.get("k", key -> new byte[0]); // read from the store, then held near

      byte[] hit = cache.get("k", key -> new byte[0]);
      hit[0] = 99;

      assertThat(cache.get("k", key -> new byte[0])).containsExactly(1, 2, 3);
      assertThat(cache.stats().count("near_hit")).isEqualTo(2);
    }
  }

  @Test
  void copyOn_mutatingABeanReadFromTheStore_changesNoLaterNearHit_getAllToo() {
    try (SustainableCache<Account> cache = cache(ACCOUNTS, true)) {
      cache.put("k", new Account("ann", 10));
      Account read = cache.get("k", key -> null); // from the store: the near tier holds it now
      read.balance = -1_000_000;

      Map<String, Account> all = cache.getAll(Set.of("k"), keys -> Map.of());
      assertThat(all.get("k").balance).isEqualTo(10);
      all.get("k").owner = "mallory";

      Account hit = cache.get("k", key -> null);
      assertThat(hit.owner).isEqualTo("ann");
      assertThat(hit.balance).isEqualTo(10);
      assertThat(cache.stats().count("near_hit")).isEqualTo(2);
    }
  }

  @Test
  void copyOff_everyNearHitSharesTheLoadedInstance_soOneCallersChangeIsTheNextHit() {
    try (SustainableCache<List<String>> cache = cache(LINES, false)) {
      List<String> loaded = cache.get("k", key -> new ArrayList<>(List.of("a")));
      loaded.add("changed by the loader's caller");

      List<String> hit = cache.get("k", key -> List.of("never loaded"));

      assertThat(hit).isSameAs(loaded).containsExactly("a", "changed by the loader's caller");
      assertThat(memory.gets("copy:k").join()).as("the store keeps what was loaded")
          .hasValueSatisfying(item -> assertThat(new String(item.value(),
              io.sustainablecache.internal.Envelope.payloadOffset(item.value()),
              io.sustainablecache.internal.Envelope.payloadLength(item.value()),
              StandardCharsets.UTF_8)).endsWith("a"));
    }
  }

  @Test
  void nearCacheCopy_withoutANearCache_orSetTwice_isRefused() {
    assertThatIllegalStateException().isThrownBy(() -> SustainableCache.builder(memory)
        .ttl(Duration.ofMinutes(1)).nearCacheCopy(true).build())
        .withMessageContaining("nearCacheCopy(true) needs a near cache");
    assertThatIllegalStateException().isThrownBy(() -> SustainableCache.builder(memory)
        .nearCacheCopy(false).nearCacheCopy(true))
        .withMessageContaining("nearCacheCopy was already set");
  }
}
