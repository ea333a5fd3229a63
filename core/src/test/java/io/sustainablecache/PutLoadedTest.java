package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.internal.Envelope;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link SustainableCache#putLoaded}: a value the caller loaded itself (Hibernate's put from a
 * load) is cached only if nothing changed the key since the caller's read of the source began.
 * Two caches over one {@link InMemoryStore} are two hosts; time is virtual.
 */
final class PutLoadedTest {

  private static final Duration TTL = Duration.ofMinutes(10);
  private static final Duration SKEW = Duration.ofSeconds(2);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final InMemoryStore server = InMemoryStore.create(clock);
  private final SustainableCache<String> writer = cache();
  private final SustainableCache<String> reader = cache();

  private SustainableCache<String> cache() {
    return SustainableCache.builder(server).namespace("p").ttl(TTL).codec(ValueCodec.utf8())
        .clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(new ManualExecutor()).random(FixedRandom.neverEarly())
        .maxClockSkew(SKEW).fleetLease(false).build();
  }

  @AfterEach
  void close() {
    writer.close();
    reader.close();
  }

  private byte kind(String key) {
    return Envelope.kind(server.gets("p:" + key).join().orElseThrow().value());
  }

  @Test
  void aValueReadBeforeAFencedCommit_isNotCachedAfterTheRelease() {
    Instant readStart = clock.instant(); // the reader's transaction begins, reads "old"
    clock.advance(Duration.ofSeconds(5));
    WriteFence<String> fence = writer.fence("k");
    clock.advance(Duration.ofSeconds(1));
    fence.committed(); // "new" committed: the fence becomes a tombstone
    clock.advance(Duration.ofSeconds(5));

    assertThat(reader.putLoaded("k", "old", readStart)).isFalse();
    assertThat(kind("k")).isEqualTo(Envelope.KIND_TOMBSTONE);
    assertThat(reader.getIfPresent("k")).isEmpty();
  }

  @Test
  void whileAFenceStands_nothingIsCached_andTheFenceStays() {
    WriteFence<String> fence = writer.fence("k");
    clock.advance(Duration.ofSeconds(10));

    assertThat(reader.putLoaded("k", "old", clock.instant())).isFalse();
    assertThat(kind("k")).isEqualTo(Envelope.KIND_FENCE);
    fence.rolledBack();
  }

  @Test
  void aReadThatBeganAfterTheReleaseAndTheSkew_isCached() {
    writer.fence("k").committed();
    clock.advance(SKEW.plusMillis(1));

    assertThat(reader.putLoaded("k", "new", clock.instant())).isTrue();
    assertThat(writer.getIfPresent("k")).contains("new");
  }

  @Test
  void aReadThatBeganWithinTheSkewAfterAnInvalidation_isNotCached() {
    writer.invalidate("k");
    clock.advance(SKEW.minusMillis(1));

    assertThat(reader.putLoaded("k", "maybe-old", clock.instant())).isFalse();
    assertThat(reader.getIfPresent("k")).isEmpty();
  }

  @Test
  void aValueThisCacheCannotDecode_committedAfterTheReadBegan_isKept_andAnOlderOneReplaced() {
    // another version of the service wrote the key: this one cannot decode its value
    SustainableCache<String> otherVersion = SustainableCache.builder(server).namespace("p")
        .ttl(TTL).codec(new ValueCodec<String>() {
          @Override
          public byte[] encode(String value) {
            return ValueCodec.utf8().encode(value);
          }

          @Override
          public String decode(byte[] bytes, int offset, int length) {
            throw new IllegalArgumentException("written by another version");
          }
        }).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(new ManualExecutor()).random(FixedRandom.neverEarly())
        .maxClockSkew(SKEW).fleetLease(false).build();
    Instant readStart = clock.instant();
    clock.advance(Duration.ofSeconds(5));
    writer.fence("k").committed("new"); // committed after otherVersion's read began

    assertThat(otherVersion.putLoaded("k", "old", readStart)).isFalse();
    assertThat(writer.getIfPresent("k")).contains("new");

    clock.advance(SKEW.plusMillis(1));
    assertThat(otherVersion.putLoaded("k", "new", clock.instant())).isTrue();
    otherVersion.close();
  }

  @Test
  void anEmptyKey_isFilled_andALiveValueIsKept() {
    assertThat(reader.putLoaded("k", "first", clock.instant())).isTrue();
    assertThat(writer.putLoaded("k", "second", clock.instant())).isFalse();
    assertThat(writer.getIfPresent("k")).contains("first");
  }

  @Test
  void anExpiredValue_isReplaced() {
    reader.put("k", "old");
    clock.advance(TTL.plusSeconds(1));

    assertThat(reader.putLoaded("k", "new", clock.instant())).isTrue();
    assertThat(writer.getIfPresent("k")).contains("new");
  }
}
