package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ScriptedStore;
import io.sustainablecache.testing.ScriptedStore.Op;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * How long an invalidation fences out older loads (found by {@code PerKeyStateStressTest} (core-model-checks)).
 *
 * <p>{@code invalidate} replaces the item with a tombstone that lives {@code loadTimeout + 10 s},
 * so that a load that read the key before the invalidation (on any host) fails its {@code cas}
 * against the changed token, or its {@code add} against the present item. But the next load or a
 * {@code put} replaces the tombstone with a fresh entry that lives only {@code ttl + grace}; once
 * that entry expires unread, the key is empty, and an old load still running would find nothing
 * to fence it. Hence the rule ({@link EntryWriter#fenceMillis()}): a load whose write would be
 * issued later than the shortest entry lifetime after it started is not written. A write issued
 * in time but held on the network for longer than an entry's lifetime remains unfenced (see
 * docs/design.md).
 */
final class InvalidationFenceTest {

  private static final Duration TTL = Duration.ofSeconds(4); // the entry lives ttl + 2 s grace

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore server = InMemoryStore.create(clock);

  @Test
  void aLoadSlowerThanTheEntryLifetime_isReturnedButNotWritten() {
    try (SustainableCache<String> cache = host(server)) {
      assertThat(cache.get("k", key -> {
        clock.advance(TTL.plusSeconds(2)); // ttl + grace
        return "slow";
      })).isEqualTo("slow");
      assertThat(cache.getIfPresent("k")).isEmpty();
      assertThat(cache.stats().count("skipped_write")).isEqualTo(1);
    }
  }

  private SustainableCache<String> host(CacheStore store) {
    return SustainableCache.builder(store).namespace("f").ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).refreshExecutor(new ManualExecutor())
        .random(FixedRandom.neverEarly())
        .build();
  }

  @Test
  void aLoadOnAnotherHostThatBeganBeforeTheInvalidate_mustNotBeServedAfterIt_evenOnceTheFreshEntryExpired() {
    try (SustainableCache<String> a = host(server); SustainableCache<String> b = host(server)) {
      CompletableFuture<String> slowQuery = new CompletableFuture<>();
      CompletableFuture<String> bRead = b.getAsync("k", key -> slowQuery); // B reads the old row

      a.invalidate("k"); // the row changed
      assertThat(a.get("k", key -> "new")).isEqualTo("new"); // the fresh entry replaces the tombstone
      clock.advance(TTL.plusSeconds(4)); // nobody reads it: it expires; B's load is within 30 s
      slowQuery.complete("old"); // B's query returns the row it read before the invalidate

      assertThat(bRead).isCompletedWithValue("old"); // fine: B's read began before the invalidate
      assertThat(a.get("k", key -> "newer"))
          .as("a read that starts after invalidate returned must not get a value loaded before it")
          .isNotEqualTo("old");
      assertThat(b.stats().count("skipped_write")).as("B's late load was not written").isEqualTo(1);
    }
  }

  /** The control: without a fresh entry, the tombstone outlives the old load and rejects it. */
  @Test
  void aLoadOnAnotherHostThatBeganBeforeTheInvalidate_isRejectedByTheTombstone_whileItStands() {
    try (SustainableCache<String> a = host(server); SustainableCache<String> b = host(server)) {
      CompletableFuture<String> slowQuery = new CompletableFuture<>();
      CompletableFuture<String> bRead = b.getAsync("k", key -> slowQuery);

      a.invalidate("k");
      clock.advance(TTL.plusSeconds(4)); // as above, but nobody replaced the tombstone
      slowQuery.complete("old");

      assertThat(bRead).isCompletedWithValue("old");
      assertThat(a.get("k", key -> "newer")).isEqualTo("newer");
    }
  }

  @Test
  void aWriteStillOnTheWire_whileTheFreshEntryStands_isRejected() {
    ScriptedStore wire = ScriptedStore.over(server);
    ScriptedStore.Hold adds = wire.holdRequests(Op.ADD);
    try (SustainableCache<String> cache = SustainableCache.builder(wire).namespace("f").ttl(TTL)
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .refreshExecutor(new ManualExecutor())
        // every add is held, the one creating the namespace's generation too: none here
        .invalidateAllBound(Duration.ZERO)
        .random(FixedRandom.neverEarly()).fleetLease(false).build()) {
      assertThat(cache.get("k", key -> "old")).isEqualTo("old"); // its add is held on the wire
      assertThat(adds.waiting()).isEqualTo(1);

      cache.invalidate("k"); // the row changed; the tombstone would reject the held add
      cache.put("k", "new"); // ... and a put (or the next load) replaces the tombstone
      clock.advance(TTL); // within the put's entry's ttl + grace
      adds.release(); // the server applies the old add only now

      assertThat(cache.get("k", key -> "newer"))
          .as("a read that starts after invalidate returned must not get a value loaded before it")
          .isNotEqualTo("old");
    }
  }

  /**
   * Found by {@code PerKeyStateStressTest} (core-model-checks) (about 1 run in 300): a reader reads a tombstone, is
   * descheduled, and comes back after the tombstone expired and another reader started a flight
   * from reading nothing. Its stale tombstone supersedes that flight (the conservative rule of
   * {@link KeyRegistry#begin}: counted), and the flight it registers must start at the time of the
   * registration, not at its stale clock reading: otherwise the next caller takes it for timed
   * out and loads the key a third time.
   */
  @Test
  void aReaderThatStalledSinceItsRead_registersItsFlightNow_soTheNextCallerJoinsIt() {
    KeyRegistry registry = ((DefaultSustainableCache<?>) SustainableCache.builder(server)
        .namespace("r").ttl(TTL).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .refreshExecutor(new ManualExecutor()).random(FixedRandom.neverEarly())
        .loadTimeout(Duration.ofSeconds(5)).build()).registry();
    long staleRead = clock.millis(); // the reader read a tombstone written now, with token 10
    clock.advance(Duration.ofSeconds(18)); // the tombstone expired; another reader found nothing
    KeyRegistry.Begin fresh = registry.begin("k", "r:k", Flight.Origin.MISS, 0, clock.millis(), -1);
    assertThat(fresh).isInstanceOf(KeyRegistry.Started.class);

    KeyRegistry.Begin stalled =
        registry.begin("k", "r:k", Flight.Origin.MISS, 10, staleRead, staleRead);
    KeyRegistry.Begin next = registry.begin("k", "r:k", Flight.Origin.MISS, 0, clock.millis(), -1);

    assertThat(stalled).isInstanceOf(KeyRegistry.Started.class);
    assertThat(registry.supersededCount()).isEqualTo(1);
    Flight<?> registered = ((KeyRegistry.Started<?>) stalled).flight();
    assertThat(registered.startedAt).isEqualTo(clock.millis());
    assertThat(next).isInstanceOf(KeyRegistry.Joined.class);
    assertThat(((KeyRegistry.Joined<?>) next).flight()).isSameAs(registered);
  }
}
