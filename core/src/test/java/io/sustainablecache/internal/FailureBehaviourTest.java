package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.sustainablecache.CacheLoadException;
import io.sustainablecache.CacheStats;
import io.sustainablecache.KeyPolicy;
import io.sustainablecache.Loader;
import io.sustainablecache.RefreshPolicy;
import io.sustainablecache.RefreshPolicyTest;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.SustainableCacheTest;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Failure behaviour and bad input, deterministic: a fake clock, the in-memory memcached model
 * (one-second expiry tick), and executors the test controls.
 */
final class FailureBehaviourTest {

  private static final Duration TTL = Duration.ofSeconds(10);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);
  private final ManualExecutor executor = new ManualExecutor();
  private final AtomicInteger attempts = new AtomicInteger();

  private SustainableCacheBuilder<String> builder() {
    return SustainableCache.builder(store).namespace("f").ttl(TTL).codec(ValueCodec.utf8())
        .refreshExecutor(executor).clock(clock).ticker(clock.ticker())
        .random(RefreshPolicyTest.fixed(0.5));
  }

  /**
   * The namespace's generation (on by default) that another instance's entries carry, read from
   * an entry {@code cache} writes.
   */
  private long generationOf(SustainableCache<String> cache) {
    cache.put("generation-probe", "p");
    return Envelope.generation(store.gets("f:generation-probe").join().orElseThrow().value());
  }

  private Loader<String> failing() {
    return key -> {
      attempts.incrementAndGet();
      throw new IOException("db down");
    };
  }

  // ----------------------------------------------------------------------------------------------
  // Loader failing every call

  @Test
  void failingLoader_staleServedUntilHardExpiry_thenTheErrorReachesTheCaller() {
    try (SustainableCache<String> cache = builder().build()) { // SUS, grace max(2 s, 1 s) = 2 s
      cache.get("k", key -> "v1");
      clock.advance(TTL.plusMillis(100)); // logically expired, inside the grace period

      assertThat(cache.get("k", failing())).isEqualTo("v1");
      executor.runAll();
      clock.advance(Duration.ofMillis(1_500));
      assertThat(cache.get("k", failing())).isEqualTo("v1");
      executor.runAll();
      assertThat(cache.stats().count("stale_hit")).isEqualTo(2);
      assertThat(cache.stats().refreshFailureCount()).isPositive();

      clock.advance(Duration.ofSeconds(2)); // past ttl + grace + the server's tick: gone
      assertThat(store.gets("f:k").join()).isEmpty();
      assertThatThrownBy(() -> cache.get("k", failing()))
          .isInstanceOf(CacheLoadException.class).hasRootCauseMessage("db down");
    }
  }

  @Test
  void failedRefreshBacksOff_atMostOneAttemptPerKeyPerWindow() {
    try (SustainableCache<String> cache = builder().failureBackoff(Duration.ofSeconds(1))
        .build()) {
      cache.get("k", key -> "v1");
      clock.advance(TTL.plusMillis(10)); // stale: every read wants a refresh

      cache.get("k", failing());
      executor.runAll();
      assertThat(attempts).hasValue(1);
      // With the draw fixed at 0.5 the first window is exactly 1 s.
      for (int i = 0; i < 9; i++) {
        clock.advanceMillis(100);
        cache.get("k", failing());
        executor.runAll();
      }
      assertThat(attempts).as("no attempt within the first second").hasValue(1);
      assertThat(cache.stats().count("refresh_backoff")).isEqualTo(9);

      clock.advanceMillis(100);
      cache.get("k", failing());
      executor.runAll();
      assertThat(attempts).hasValue(2);

      // The second failure doubles the window: 2 s.
      clock.advanceMillis(1_900);
      cache.get("k", failing());
      executor.runAll();
      assertThat(attempts).hasValue(2);
    }
  }

  @Test
  void successfulRefreshClearsTheBackoff() {
    try (SustainableCache<String> cache = builder().build()) {
      cache.get("k", key -> "v1");
      clock.advance(TTL.plusMillis(10));
      cache.get("k", failing());
      executor.runAll();
      clock.advance(Duration.ofSeconds(1));
      cache.get("k", key -> "v2");
      executor.runAll();
      assertThat(cache.getIfPresent("k")).contains("v2");

      clock.advance(TTL.plusMillis(10)); // v2 expires: refreshed at once, no leftover back-off
      cache.get("k", key -> "v3");
      assertThat(executor.runAll()).isEqualTo(1);
      assertThat(cache.getIfPresent("k")).contains("v3");
    }
  }

  @Test
  void serveStaleOnError_reloadPoliciesReturnTheStaleValueWhenTheReloadFails() {
    try (SustainableCache<String> cache = builder().refreshPolicy(RefreshPolicy.none())
        .build()) {
      cache.get("k", key -> "v1");
      clock.advance(TTL.plusMillis(100));

      assertThat(cache.get("k", failing())).isEqualTo("v1");
      assertThat(cache.stats().count("stale_on_error")).isEqualTo(1);
      assertThat(cache.stats().loadFailureCount()).isEqualTo(1);
    }
  }

  @Test
  void serveStaleOnErrorDisabled_theReloadErrorReachesTheCaller() {
    try (SustainableCache<String> cache = builder().refreshPolicy(RefreshPolicy.none())
        .serveStaleOnError(false).build()) {
      cache.get("k", key -> "v1");
      clock.advance(TTL.plusMillis(100));

      assertThatThrownBy(() -> cache.get("k", failing())).isInstanceOf(CacheLoadException.class);
      assertThat(cache.stats().count("stale_on_error")).isZero();
    }
  }

  // ----------------------------------------------------------------------------------------------
  // Saturation and close

  @Test
  void tenThousandKeysDueAtOnce_callersNeverBlock_rejectionsCounted_noKeyLeftInFlight() {
    CountDownLatch release = new CountDownLatch(1);
    int keys = 10_000;
    try (SustainableCache<String> cache = SustainableCache.builder(store).ttl(TTL)
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .refreshPolicy(SustainableCacheTest.EAGER_SUS)
        .random(RefreshPolicyTest.fixed(Math.nextDown(1.0))).refreshThreads(2)
        .refreshQueueCapacity(100).build()) {
      for (int i = 0; i < keys; i++) {
        cache.put("k" + i, "v");
      }
      Loader<String> blocked = key -> {
        release.await(10, TimeUnit.SECONDS);
        return "new";
      };

      assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
        for (int i = 0; i < keys; i++) {
          assertThat(cache.get("k" + i, blocked)).isEqualTo("v");
        }
      });

      CacheStats stats = cache.stats();
      assertThat(stats.count("refresh_scheduled")).isEqualTo(102);
      assertThat(stats.count("refresh_rejected")).isEqualTo(keys - 102);
      DefaultSustainableCache<?> impl = (DefaultSustainableCache<?>) cache;
      assertThat(impl.registeredKeyCount()).isEqualTo(102);

      release.countDown();
      await().atMost(Duration.ofSeconds(10)).until(() -> impl.registeredKeyCount() == 0);
      assertThat(cache.stats().refreshSuccessCount()).isEqualTo(102);
    }
  }

  @Test
  void closeInterruptsARefreshThatDoesNotFinish_withinTheBound() {
    AtomicBoolean interrupted = new AtomicBoolean();
    CountDownLatch started = new CountDownLatch(1);
    SustainableCache<String> cache = SustainableCache.builder(store).ttl(TTL)
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .refreshPolicy(SustainableCacheTest.EAGER_SUS)
        .closeTimeout(Duration.ofMillis(200))
        .random(RefreshPolicyTest.fixed(Math.nextDown(1.0))).build();
    cache.put("k", "v");
    cache.get("k", key -> {
      started.countDown();
      try {
        new CountDownLatch(1).await(60, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        interrupted.set(true);
        throw e;
      }
      return "never";
    });
    await().atMost(Duration.ofSeconds(5)).until(() -> started.getCount() == 0);

    cache.close(); // waits the 200 ms closeTimeout, then interrupts the refresh thread

    await().atMost(Duration.ofSeconds(5)).untilTrue(interrupted);
    cache.invalidate("k"); // still works after close
    assertThat(cache.getIfPresent("k")).isEmpty();
  }

  // ----------------------------------------------------------------------------------------------
  // Bad input: keys

  @Test
  void hashKeyPolicy_storesLongAndNonAsciiKeysUnderADigestAndKeepsValidKeys() {
    try (SustainableCache<String> cache = builder().keyPolicy(KeyPolicy.HASH).build()) {
      String longKey = "x".repeat(400);
      cache.get(longKey, key -> "long");
      cache.get("사용자 42", key -> "korean");
      cache.get("plain", key -> "plain");

      assertThat(cache.get(longKey, key -> "reloaded")).isEqualTo("long");
      assertThat(cache.get("사용자 42", key -> "reloaded")).isEqualTo("korean");
      assertThat(cache.get("x".repeat(401), key -> "other")).isEqualTo("other");
      assertThat(store.gets("f:plain").join()).isPresent();
      // Independently computed: base64url(sha256(utf16be("사용자 42"))) without padding.
      assertThat(store.gets("f:____42#zxT3hVaGcxSffjHQc7XLRRVc3-WbqDGFSFokXxiLOuU").join())
          .as("'사용자 42' hashed: sanitized prefix, '#', base64url SHA-256").isPresent();
    }
  }

  @Test
  void rejectKeyPolicy_namesTheRuleAndTheAlternative() {
    try (SustainableCache<String> cache = builder().build()) {
      assertThatThrownBy(() -> cache.get("x".repeat(300), key -> "v"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("too long").hasMessageContaining("KeyPolicy.HASH");
      assertThatThrownBy(() -> cache.get("tab\there", key -> "v"))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("U+0009");
    }
  }

  // ----------------------------------------------------------------------------------------------
  // Bad input: values

  @Test
  void oversizedLoadedValueIsReturnedButNotCached() {
    try (SustainableCache<String> cache = builder().maxValueSize(1_000).build()) {
      String big = "b".repeat(2_000);

      assertThat(cache.get("k", key -> big)).isEqualTo(big);

      assertThat(store.gets("f:k").join()).isEmpty();
      assertThat(cache.stats().count("skipped_write")).isEqualTo(1);
      assertThat(cache.stats().storeErrorCount()).isZero();
      assertThatThrownBy(() -> cache.put("k", big)).isInstanceOf(IllegalArgumentException.class)
          // 2,000 bytes, the header with the namespace's generation (24) and the checksum (4)
          .hasMessageContaining("2028 bytes").hasMessageContaining("maxValueSize 1000");
    }
  }

  @Test
  void valueTheCodecCannotEncodeIsReturnedButNotCached() {
    ValueCodec<String> refusing = new ValueCodec<>() {
      @Override
      public byte[] encode(String value) {
        throw new IllegalStateException("cannot encode");
      }

      @Override
      public String decode(byte[] bytes, int offset, int length) {
        return "";
      }
    };
    try (SustainableCache<String> cache = SustainableCache.builder(store).ttl(TTL)
        .codec(refusing).refreshExecutor(executor).clock(clock).ticker(clock.ticker()).build()) {
      assertThat(cache.get("k", key -> "v")).isEqualTo("v");
      assertThat(store.gets("k").join()).isEmpty();
      assertThat(cache.stats().count("skipped_write")).isEqualTo(1);
    }
  }

  // ----------------------------------------------------------------------------------------------
  // Bad input: stored bytes

  @Test
  void truncatedEnvelopeAndFutureFormatVersionAreMissesThatTheNextLoadOverwrites() {
    try (SustainableCache<String> cache = builder().build()) {
      long now = clock.millis();
      byte[] valid = Envelope.encode(now, now + 10_000, 1, "ok".getBytes(StandardCharsets.UTF_8));
      byte[] truncated = java.util.Arrays.copyOf(valid, 9);
      byte[] nextVersion = valid.clone();
      nextVersion[1] = 2;
      store.set("f:truncated", truncated, 60).join();
      store.set("f:next", nextVersion, 60).join();

      assertThat(cache.get("truncated", key -> "loaded")).isEqualTo("loaded");
      assertThat(cache.get("next", key -> "loaded")).isEqualTo("loaded");

      assertThat(cache.stats().count("corrupt_entry")).isEqualTo(2);
      assertThat(Envelope.isValid(store.gets("f:truncated").join().orElseThrow().value())).isTrue();
      assertThat(Envelope.isValid(store.gets("f:next").join().orElseThrow().value())).isTrue();
    }
  }

  // ----------------------------------------------------------------------------------------------
  // TTLs

  @Test
  void subSecondTtlWorksAndTheItemOutlivesItOnTheServer() {
    try (SustainableCache<String> shortLived = SustainableCache.builder(store).namespace("s")
        .ttl(Duration.ofMillis(300)).codec(ValueCodec.utf8()).refreshExecutor(executor)
        .clock(clock).ticker(clock.ticker()).random(RefreshPolicyTest.fixed(0.0)).build()) {
      shortLived.get("k", key -> "v1");
      clock.advanceMillis(400); // past the 300 ms TTL: stale, refreshed in the background
      assertThat(shortLived.get("k", key -> "v2")).isEqualTo("v1");
      assertThat(executor.runAll()).isEqualTo(1);
      assertThat(shortLived.get("k", key -> "v3")).isEqualTo("v2");
      assertThat(shortLived.stats().missCount()).isEqualTo(1);
    }
  }

  @Test
  void ttlBeyondThirtyDaysBecomesAnAbsoluteExptimeTheServerHonours() {
    try (SustainableCache<String> cache = SustainableCache.builder(store).ttl(Duration.ofDays(40))
        .grace(Duration.ZERO).codec(ValueCodec.utf8()).refreshExecutor(executor).clock(clock)
        .ticker(clock.ticker())
        .build()) {
      cache.get("k", key -> "v");
      clock.advance(Duration.ofDays(39));
      assertThat(store.gets("k").join()).isPresent();
      clock.advance(Duration.ofDays(2));
      assertThat(store.gets("k").join()).isEmpty();
    }
  }

  // ----------------------------------------------------------------------------------------------
  // Clock skew

  @Test
  void entryFromTooFarInTheFutureIsNotTrusted() {
    try (SustainableCache<String> cache = builder().maxClockSkew(Duration.ofSeconds(30))
        .build()) {
      long future = clock.millis() + 60_000; // a writer whose clock runs a minute ahead
      store.set("f:k", Envelope.encode(future, future + TTL.toMillis(), 5, generationOf(cache),
          "from the future".getBytes(StandardCharsets.UTF_8)), 60).join();

      assertThat(cache.get("k", key -> "fresh")).isEqualTo("from the future"); // stale hit
      assertThat(executor.runAll()).isEqualTo(1);
      assertThat(cache.get("k", key -> "again")).isEqualTo("fresh");
    }
  }

  @Test
  void entryWithinTheSkewBoundIsTrusted() {
    try (SustainableCache<String> cache = builder().build()) {
      long ahead = clock.millis() + 5_000;
      store.set("f:k", Envelope.encode(ahead, ahead + TTL.toMillis(), 5, generationOf(cache),
          "slightly ahead".getBytes(StandardCharsets.UTF_8)), 60).join();

      assertThat(cache.get("k", key -> "fresh")).isEqualTo("slightly ahead");
      assertThat(executor.queued()).isZero();
    }
  }

  // ----------------------------------------------------------------------------------------------
  // Java serialization behind an allow-list

  record Dto(String name, long id) implements Serializable {}

  /** Stands for a gadget class: deserializing it would run code. */
  static final class Gadget implements Serializable {
    static final AtomicBoolean RAN = new AtomicBoolean();
    private static final long serialVersionUID = 1L;

    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
      RAN.set(true);
      in.defaultReadObject();
    }
  }

  @Test
  void javaSerialization_roundTripsAllowedClasses() {
    ValueCodec<Dto> codec = ValueCodec.javaSerialization(Dto.class,
        Dto.class.getName() + ";java.lang.String");
    try (SustainableCache<Dto> cache = SustainableCache.builder(store).ttl(TTL).codec(codec)
        .refreshExecutor(executor).clock(clock).ticker(clock.ticker()).build()) {
      cache.get("d", key -> new Dto("kim", 42));
      assertThat(cache.get("d", key -> new Dto("other", 0))).isEqualTo(new Dto("kim", 42));
    }
  }

  @Test
  void javaSerialization_rejectsClassesOutsideTheAllowList_beforeTheyRun() {
    ValueCodec<Dto> codec = ValueCodec.javaSerialization(Dto.class,
        Dto.class.getName() + ";java.lang.String");
    ValueCodec<Gadget> attacker = ValueCodec.javaSerialization(Gadget.class, "*");
    Gadget.RAN.set(false);
    long now = clock.millis();
    store.set("d", Envelope.encode(now, now + 10_000, 1, attacker.encode(new Gadget())), 60).join();
    try (SustainableCache<Dto> cache = SustainableCache.builder(store).ttl(TTL).codec(codec)
        .refreshExecutor(executor).clock(clock).ticker(clock.ticker()).build()) {

      assertThat(cache.get("d", key -> new Dto("safe", 1))).isEqualTo(new Dto("safe", 1));

      assertThat(Gadget.RAN).isFalse();
      assertThat(cache.stats().count("corrupt_entry")).isEqualTo(1);
    }
  }

  @Test
  void javaSerialization_rejectsABlankAllowList() {
    assertThatThrownBy(() -> ValueCodec.javaSerialization(Dto.class, " "))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("allowList");
  }

  @Test
  void builderValidatesTheFailureSettings() {
    assertThatThrownBy(() -> builder().maxValueSize(16))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(": 16");
    assertThatThrownBy(() -> builder().failureBackoff(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT-0.001S");
    assertThatThrownBy(() -> builder().maxClockSkew(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT-1S");
    assertThatThrownBy(() -> builder().serveStaleOnError(true).serveStaleOnError(false))
        .isInstanceOf(IllegalStateException.class);
  }
}
