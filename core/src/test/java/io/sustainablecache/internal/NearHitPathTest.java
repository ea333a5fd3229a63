package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.KeyPolicy;
import io.sustainablecache.Loader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.Ticker;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a near hit costs (issue 23, part 4), in virtual time: it reads the ticker once and the
 * clock at most once per millisecond of the ticker, allocates nothing, and still judges its entry
 * by the clock (a step of the clock reaches near hits within a millisecond of the ticker).
 */
final class NearHitPathTest {

  private static final Duration TTL = Duration.ofMinutes(10);

  private final FakeClock time = FakeClock.atRoundSecond();
  private final AtomicLong clockReads = new AtomicLong();
  private final AtomicLong tickerReads = new AtomicLong();
  /** The fake clock, counting its reads. */
  private final InstantSource clock = new InstantSource() {
    @Override
    public Instant instant() {
      clockReads.incrementAndGet();
      return time.instant();
    }

    @Override
    public long millis() {
      clockReads.incrementAndGet();
      return time.millis();
    }
  };
  /** The fake ticker, counting its reads. */
  private final Ticker ticker = () -> {
    tickerReads.incrementAndGet();
    return time.ticker().read();
  };
  private final ManualScheduler scheduler = ManualScheduler.on(time.ticker());
  private final ManualExecutor refreshes = new ManualExecutor();
  private final InMemoryStore memory = InMemoryStore.create(time);
  private final SustainableCache<String> writer = cache();
  private final SustainableCache<String> cache = cache();

  private SustainableCache<String> cache() {
    return SustainableCache.builder(memory).namespace("path").ttl(TTL)
        .codec(ValueCodec.utf8()).clock(clock).ticker(ticker).scheduler(scheduler)
        .refreshExecutor(refreshes).random(FixedRandom.neverEarly())
        .nearCache(1_000, Duration.ofSeconds(1), 0).build();
  }

  @AfterEach
  void close() {
    cache.close();
    writer.close();
  }

  private String load(String key) {
    throw new AssertionError("a near hit must not load");
  }

  /** Puts the key through the other instance, then reads it here once: held near, with a token. */
  private String heldNear(String key) {
    scheduler.runDue();
    writer.put(key, "v-" + key);
    assertThat(cache.get(key, this::load)).isEqualTo("v-" + key); // read from the store
    assertThat(cache.stats().count("near_miss")).isEqualTo(1);
    return "v-" + key;
  }

  @Test
  void aNearHitReadsTheTickerOnce_andTheClockOncePerMillisecondOfTheTicker() {
    String value = heldNear("k");
    long ticks = tickerReads.get();
    long clocks = clockReads.get();

    for (int i = 0; i < 100; i++) {
      assertThat(cache.get("k", this::load)).isEqualTo(value);
    }

    assertThat(cache.stats().count("near_hit")).isEqualTo(100);
    assertThat(tickerReads.get() - ticks).as("ticker reads of 100 near hits").isEqualTo(100);
    assertThat(clockReads.get() - clocks).as("clock reads of 100 near hits in one ms")
        .isLessThanOrEqualTo(1);

    time.advanceMillis(1);
    clocks = clockReads.get();
    cache.get("k", this::load);
    cache.get("k", this::load);
    assertThat(clockReads.get() - clocks).as("a millisecond later: read once").isEqualTo(1);
  }

  @Test
  void aStepOfTheClockReachesNearHits_withinAMillisecondOfTheTicker() {
    String value = heldNear("k");
    cache.get("k", this::load);
    assertThat(cache.stats().count("stale_hit")).isZero();

    time.setMillis(time.millis() + TTL.toMillis() + 1); // the clock alone: past the entry's expiry
    assertThat(cache.get("k", this::load)).isEqualTo(value);
    long stale = cache.stats().count("stale_hit");
    time.advanceMillis(1);

    assertThat(cache.get("k", this::load)).as("served stale, refreshed").isEqualTo(value);
    assertThat(cache.stats().count("stale_hit")).as("judged by the stepped clock").isEqualTo(
        stale + 1);
    assertThat(cache.stats().count("near_hit")).isEqualTo(3);
    assertThat(cache.stats().hitCount()).as("every near hit is a hit, counted once").isEqualTo(4);
  }

  @Test
  void aNearHitAllocatesNothing() {
    heldNear("k");

    assertThat(allocatedBy10000NearHits(cache)).as("bytes allocated by 10,000 near hits")
        .isLessThan(10_000);
    assertThat(cache.stats().count("near_hit")).isEqualTo(11_000);
  }

  /** With a {@link io.sustainablecache.CacheObserver} (tracing), a near hit is no different. */
  @Test
  void aNearHitAllocatesNothing_andBeginsNoStep_withAnObserver() {
    AtomicInteger steps = new AtomicInteger();
    try (SustainableCache<String> observed = SustainableCache.builder(memory).namespace("path")
        .ttl(TTL).codec(ValueCodec.utf8()).clock(clock).ticker(ticker).scheduler(scheduler)
        .refreshExecutor(refreshes).random(FixedRandom.neverEarly())
        .nearCache(1_000, Duration.ofSeconds(1), 0)
        .observer(step -> {
          steps.incrementAndGet();
          return outcome -> { };
        }).build()) {
      scheduler.runDue();
      writer.put("k", "v-k");
      observed.get("k", this::load); // from the store, then held near

      assertThat(allocatedBy10000NearHits(observed)).as("bytes allocated by 10,000 near hits")
          .isLessThan(10_000);
      assertThat(observed.stats().count("near_hit")).isEqualTo(11_000);
      assertThat(steps).as("steps begun").hasValue(0);
    }
  }

  /** Bytes this thread allocated for 10,000 near hits of {@code k}, after 1,000 to warm up. */
  private long allocatedBy10000NearHits(SustainableCache<String> near) {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long thread = Thread.currentThread().getId();
    Loader<String> loader = this::load;
    for (int i = 0; i < 1_000; i++) {
      near.get("k", loader);
    }
    long before = threads.getThreadAllocatedBytes(thread);
    for (int i = 0; i < 10_000; i++) {
      near.get("k", loader);
    }
    return threads.getThreadAllocatedBytes(thread) - before;
  }

  /**
   * A near hit of a plain key skips the key's check (the key was checked when its entry entered),
   * but a key the store cannot take is refused as without a near cache, and a caller's key that
   * equals a hashed key's store key (the near key of that key's entry) is not answered with that
   * entry.
   */
  @Test
  void aNearHitSkipsTheKeyCheck_butNoKeyIsAnsweredWithAnotherKeysEntry_norAnInvalidKeyServed() {
    heldNear("k");
    assertThatThrownBy(() -> cache.get("a b", this::load))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> cache.get(null, this::load)).isInstanceOf(NullPointerException.class);

    SustainableCache<String> hashing = SustainableCache.builder(memory).namespace("hashing")
        .ttl(TTL).codec(ValueCodec.utf8()).clock(clock).ticker(ticker).scheduler(scheduler)
        .refreshExecutor(refreshes).random(FixedRandom.neverEarly()).keyPolicy(KeyPolicy.HASH)
        .nearCache(1_000, Duration.ofSeconds(1), 0).build();
    try (hashing) {
      scheduler.runDue();
      String hashed = "a key with spaces #1";
      Loader<String> loader = key -> "loaded " + key;
      hashing.get(hashed, loader); // loaded, and held near under its store key
      assertThat(hashing.get(hashed, loader)).isEqualTo("loaded " + hashed);
      assertThat(hashing.stats().count("near_hit")).isEqualTo(1);
      String storeKey = new Keys("hashing", memory.maxKeyLength(), KeyPolicy.HASH)
          .storeKey(hashed);

      assertThat(hashing.get(storeKey, loader)).as("a caller key equal to a hashed key's store key")
          .isEqualTo("loaded " + storeKey);
      assertThat(hashing.stats().count("near_hit")).isEqualTo(1);
      assertThat(hashing.get(hashed, loader)).isEqualTo("loaded " + hashed);
      assertThat(hashing.stats().count("near_hit")).isEqualTo(2);
    }
  }
}
