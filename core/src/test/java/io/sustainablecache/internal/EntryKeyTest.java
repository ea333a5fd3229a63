package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.WriteFence;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code entryKey}: entries signed with a secret key (issue 31, part 5). Whoever can write to
 * memcached without the key cannot make an entry a keyed cache reads, a forged "no value"
 * included; rotation accepts the previous key on reads; a keyed and an unkeyed cache do not
 * read each other's entries.
 */
final class EntryKeyTest {

  private static final Duration TTL = Duration.ofSeconds(30);
  private static final byte[] KEY = bytes("0123456789abcdef0123456789abcdef");
  private static final byte[] OTHER_KEY = bytes("fedcba9876543210fedcba9876543210");

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.US_ASCII);
  }

  private SustainableCacheBuilder<byte[]> builder() {
    return SustainableCache.builder(store).namespace("keyed").ttl(TTL).clock(clock)
        .ticker(clock.ticker()).refreshExecutor(new ManualExecutor())
        .random(FixedRandom.neverEarly()).fleetLease(false);
  }

  private SustainableCache<String> cache(byte[] key, byte[]... previous) {
    return builder().entryKey(key, previous).codec(ValueCodec.utf8()).build();
  }

  private SustainableCache<String> unkeyed() {
    return builder().codec(ValueCodec.utf8()).build();
  }

  /** Reads {@code key}; the loader answers "loaded" and counts its calls. */
  private static String read(SustainableCache<String> cache, String key, AtomicInteger loads) {
    return cache.get(key, k -> {
      loads.incrementAndGet();
      return "loaded";
    });
  }

  private String storeKey(String key) {
    return "keyed:" + key;
  }

  /** The bytes stored under {@code key}'s store key. */
  private byte[] stored(String storeKey) {
    return store.gets(storeKey).join().orElseThrow().value();
  }

  @Test
  void aKeyedCache_readsWhatItAndAnotherInstanceWithTheKeyWrote() {
    try (SustainableCache<String> writer = cache(KEY);
        SustainableCache<String> reader = cache(KEY)) {
      writer.put("k", "v");
      AtomicInteger loads = new AtomicInteger();

      assertThat(read(reader, "k", loads)).isEqualTo("v");
      assertThat(loads).hasValue(0);
      byte[] stored = stored(storeKey("k"));
      assertThat(stored[1] & 0x0F).as("format version, with the namespace's generation (on by default)")
          .isEqualTo(Envelope.KEYED_GENERATION_VERSION);
      assertThat(Envelope.isValid(stored)).as("read as keyed only").isFalse();
    }
  }

  @Test
  void anEntryForgedWithoutTheKey_valueOrAbsence_isAMissCountedAsCorrupt() {
    long now = clock.millis();
    try (SustainableCache<String> cache = cache(KEY)) {
      // A writer who knows the format and computes the checksum, but not the key.
      store.set(storeKey("value"),
          Envelope.encode(now, now + 30_000, 5, "forged".getBytes(StandardCharsets.UTF_8)), 60)
          .join();
      store.set(storeKey("absent"), Envelope.encodeAbsent(now, now + 30_000, 5), 60).join();
      AtomicInteger loads = new AtomicInteger();

      assertThat(read(cache, "value", loads)).isEqualTo("loaded");
      assertThat(read(cache, "absent", loads)).as("a forged 'no value' is no answer")
          .isEqualTo("loaded");
      assertThat(loads).hasValue(2);
      assertThat(cache.stats().count("corrupt_entry")).isEqualTo(2);
      assertThat(read(cache, "value", loads)).as("the load replaced the forgery")
          .isEqualTo("loaded");
      assertThat(loads).hasValue(2);
    }
  }

  @Test
  void anEntryOfAnotherKey_isAMiss_andAChangedTagOrPayloadToo_evenWithTheChecksumRedone() {
    try (SustainableCache<String> other = cache(OTHER_KEY);
        SustainableCache<String> cache = cache(KEY)) {
      other.put("other", "theirs");
      cache.put("tag", "v");
      cache.put("payload", "v");
      byte[] tag = stored(storeKey("tag"));
      tag[tag.length - Envelope.CHECKSUM_SIZE - 1] ^= 1;
      store.set(storeKey("tag"), Envelope.resealed(tag), 60).join();
      byte[] payload = stored(storeKey("payload"));
      payload[Envelope.payloadOffset(payload)] ^= 1;
      store.set(storeKey("payload"), Envelope.resealed(payload), 60).join();
      AtomicInteger loads = new AtomicInteger();

      assertThat(read(cache, "other", loads)).isEqualTo("loaded");
      assertThat(read(cache, "tag", loads)).isEqualTo("loaded");
      assertThat(read(cache, "payload", loads)).isEqualTo("loaded");
      assertThat(loads).hasValue(3);
      assertThat(cache.stats().count("corrupt_entry")).isEqualTo(3);
    }
  }

  @Test
  void rotation_thePreviousKeyIsAcceptedOnReads_andNewWritesUseTheCurrentOne() {
    try (SustainableCache<String> old = cache(KEY);
        SustainableCache<String> rotated = cache(OTHER_KEY, KEY);
        SustainableCache<String> newOnly = cache(OTHER_KEY)) {
      old.put("k", "written under the old key");
      AtomicInteger loads = new AtomicInteger();

      assertThat(read(rotated, "k", loads)).isEqualTo("written under the old key");
      assertThat(read(newOnly, "k", loads)).as("the old key no longer accepted")
          .isEqualTo("loaded");
      assertThat(loads).hasValue(1);

      rotated.put("k2", "written under the new key");
      assertThat(read(newOnly, "k2", loads)).isEqualTo("written under the new key");
      assertThat(read(old, "k2", loads)).as("an instance left on the old key").isEqualTo("loaded");
      assertThat(loads).hasValue(2);
    }
  }

  @Test
  void keyedAndUnkeyedCaches_readEachOthersEntriesAsMisses() {
    try (SustainableCache<String> keyed = cache(KEY);
        SustainableCache<String> plain = unkeyed()) {
      keyed.put("a", "keyed");
      plain.put("b", "plain");
      AtomicInteger loads = new AtomicInteger();

      assertThat(read(plain, "a", loads)).isEqualTo("loaded");
      assertThat(read(keyed, "b", loads)).isEqualTo("loaded");
      assertThat(loads).hasValue(2);
    }
  }

  @Test
  void aFenceAndItsPrior_areKeyed_andAnsweredOnAnotherInstanceWithTheKey() {
    try (SustainableCache<String> writer = cache(KEY);
        SustainableCache<String> reader = cache(KEY)) {
      writer.put("k", "committed row");
      WriteFence<String> fence = writer.fence("k");
      AtomicInteger loads = new AtomicInteger();

      assertThat(read(reader, "k", loads)).as("the prior").isEqualTo("committed row");
      assertThat(loads).hasValue(0);
      assertThat(reader.stats().count("fenced_hit")).isEqualTo(1);
      assertThat(stored(storeKey("k"))[1] & 0x0F).isEqualTo(Envelope.KEYED_GENERATION_VERSION);
      fence.rolledBack();
    }
  }

  @Test
  void theBuilderChecksTheKeys_andCopiesThem() {
    assertThatThrownBy(() -> builder().entryKey(new byte[15]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("entryKey must be at least 16 bytes (128 bits) of a secret: 15 bytes given");
    assertThatThrownBy(() -> builder().entryKey(KEY, new byte[3]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("a previous entry key must be at least 16 bytes");
    assertThatThrownBy(() -> builder().entryKey(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> builder().entryKey(KEY, (byte[][]) null))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> builder().entryKey(KEY).entryKey(KEY))
        .isInstanceOf(IllegalStateException.class).hasMessage("entryKey was already set");

    byte[] mine = KEY.clone();
    try (SustainableCache<String> writer = cache(mine)) {
      Arrays.fill(mine, (byte) 0); // the caller wipes its copy
      writer.put("k", "v");
      AtomicInteger loads = new AtomicInteger();
      try (SustainableCache<String> reader = cache(KEY)) {
        assertThat(read(reader, "k", loads)).isEqualTo("v");
      }
      assertThat(loads).hasValue(0);
    }
  }
}
