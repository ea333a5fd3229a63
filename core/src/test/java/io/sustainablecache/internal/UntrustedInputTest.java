package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.KeyPolicy;
import io.sustainablecache.RefreshPolicy;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What anyone who can write to the cache server can plant under a key (issue 7, scenarios 9, 10
 * and 11): Java-serialized values built to exhaust memory or CPU, envelopes claiming lifetimes
 * the cache never gave, keys built to collide with other keys.
 */
final class UntrustedInputTest {

  private static final Duration TTL = Duration.ofSeconds(10);
  private static final String ALLOW_LIST =
      "java.util.ArrayList;java.util.HashMap;java.lang.String;java.lang.Long;java.lang.Number";

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);

  private static byte[] serialize(Object value) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(value);
    }
    return bytes.toByteArray();
  }

  // ---------------------------------------------------------------------------------------------
  // Scenario 9: Java serialization bounded by the payload

  @Test
  void theDocumentedAllowList_roundTripsNonEmptyArrayListsAndHashMaps() {
    ValueCodec<ArrayList> lists = ValueCodec.javaSerialization(ArrayList.class, ALLOW_LIST);
    ArrayList<Object> list = new ArrayList<>(List.of("a", 1L, "c"));
    byte[] encoded = lists.encode(list);
    assertThat(lists.decode(encoded, 0, encoded.length)).isEqualTo(list);

    ValueCodec<HashMap> maps = ValueCodec.javaSerialization(HashMap.class, ALLOW_LIST);
    HashMap<String, Object> map = new HashMap<>(Map.of("x", 1L, "y", "two"));
    for (int i = 0; i < 100; i++) {
      map.put("k" + i, (long) i);
    }
    byte[] encodedMap = maps.encode(map);
    assertThat(maps.decode(encodedMap, 0, encodedMap.length)).isEqualTo(map);
  }

  @Test
  void theAllowListWorksThroughTheCache_hitsAreHits() {
    try (SustainableCache<ArrayList> cache = SustainableCache.builder(store).ttl(TTL)
        .codec(ValueCodec.javaSerialization(ArrayList.class, ALLOW_LIST)).clock(clock)
        .ticker(clock.ticker())
        .refreshExecutor(new ManualExecutor()).random(FixedRandom.neverEarly()).build()) {
      cache.get("k", key -> new ArrayList<>(List.of("a", "b")));
      assertThat(cache.get("k", key -> new ArrayList<>())).containsExactly("a", "b");
      assertThat(cache.stats().hitCount()).isEqualTo(1);
      assertThat(cache.stats().count("corrupt_entry")).isZero();
    }
  }

  @Test
  void aTinyPayloadClaimingAHugeArray_isRejectedBeforeAllocating() throws IOException {
    byte[] bytes = serialize(new int[] {7});
    // The stream ends with the array's length (4 bytes) and its one element (4 bytes).
    int lengthAt = bytes.length - 8;
    assertThat(bytes[lengthAt + 3]).isEqualTo((byte) 1);
    bytes[lengthAt] = 0x7F;
    bytes[lengthAt + 1] = (byte) 0xFF;
    bytes[lengthAt + 2] = (byte) 0xFF;
    bytes[lengthAt + 3] = (byte) 0xFF; // 2^31 - 1 ints: 8 GiB
    assertThat(bytes.length).isLessThan(100);

    ValueCodec<ArrayList> codec = ValueCodec.javaSerialization(ArrayList.class, ALLOW_LIST);
    assertThatThrownBy(() -> codec.decode(bytes, 0, bytes.length))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("REJECTED");
  }

  @Test
  void anArrayListClaimingAHugeCapacity_isRejectedBeforeAllocating() throws IOException {
    byte[] bytes = serialize(new ArrayList<>(List.of("a")));
    // ArrayList writes its size field, then the size again as the capacity, then the elements;
    // on read it allocates an Object[size] after asking the filter.
    byte[] sizeAndCapacity = {0, 0, 0, 1, 0x77, 0x04, 0, 0, 0, 1};
    int at = indexOf(bytes, sizeAndCapacity);
    assertThat(at).isPositive();
    bytes[at] = 0x7F;
    bytes[at + 1] = (byte) 0xFF;
    bytes[at + 2] = (byte) 0xFF;
    bytes[at + 3] = (byte) 0xFF;

    ValueCodec<ArrayList> codec = ValueCodec.javaSerialization(ArrayList.class, ALLOW_LIST);
    assertThatThrownBy(() -> codec.decode(bytes, 0, bytes.length))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("REJECTED");
  }

  @Test
  void deeplyNestedHashSets_areRejectedByTheDepthBound() throws IOException {
    // "SerialDOS": 100 levels of two sets sharing their children; hashing the root on read
    // would take 2^100 steps.
    Set<Object> root = new HashSet<>();
    Set<Object> s1 = root;
    Set<Object> s2 = new HashSet<>();
    for (int i = 0; i < 100; i++) {
      Set<Object> t1 = new HashSet<>();
      Set<Object> t2 = new HashSet<>();
      t1.add("foo");
      s1.add(t1);
      s1.add(t2);
      s2.add(t1);
      s2.add(t2);
      s1 = t1;
      s2 = t2;
    }
    byte[] bytes = serialize(root);

    ValueCodec<HashSet> codec =
        ValueCodec.javaSerialization(HashSet.class, "java.util.HashSet;java.lang.String");
    assertThatThrownBy(() -> codec.decode(bytes, 0, bytes.length))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("REJECTED");
  }

  @Test
  void aPlantedValueOutsideTheAllowList_isAMissCountedAsCorrupt() throws IOException {
    try (SustainableCache<ArrayList> cache = SustainableCache.builder(store).ttl(TTL)
        .codec(ValueCodec.javaSerialization(ArrayList.class, ALLOW_LIST)).clock(clock)
        .ticker(clock.ticker()).build()) {
      long now = clock.millis();
      store.set("k", Envelope.encode(now, now + 1_000, 1, serialize(new Planted())), 60).join();

      assertThat(cache.get("k", key -> new ArrayList<>(List.of("loaded")))).containsExactly(
          "loaded");
      assertThat(cache.stats().count("corrupt_entry")).isEqualTo(1);
      assertThat(Planted.instantiated).isFalse();
    }
  }

  static final class Planted implements Serializable {
    private static final long serialVersionUID = 1L;
    static volatile boolean instantiated;

    private void readObject(java.io.ObjectInputStream in) {
      instantiated = true;
    }
  }

  private static int indexOf(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i <= haystack.length - needle.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  // ---------------------------------------------------------------------------------------------
  // Issue 31, part 5: an entry that was changed is a miss

  /**
   * Measured from outside before the checksum: a cached entity with its last byte flipped was
   * served ({@code ver=85} instead of 0) until its TTL. Every byte, every bit: a miss, counted,
   * and the next load overwrites it.
   */
  @Test
  void anEntryWithAnyByteChanged_isAMissCountedAsCorrupt_andTheNextLoadReplacesIt() {
    try (SustainableCache<String> cache = SustainableCache.builder(store).ttl(TTL)
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .random(FixedRandom.neverEarly()).build()) {
      cache.get("k", key -> "{\"ver\":0}");
      byte[] stored = store.gets("k").join().orElseThrow().value();
      int misses = 0;
      for (int i = 0; i < stored.length; i++) {
        byte[] changed = stored.clone();
        changed[i] ^= (byte) (i == stored.length - 1 ? 0x55 : 0x01);
        store.set("k", changed, 60).join();
        assertThat(cache.getIfPresent("k")).as("byte %d changed", i).isEmpty();
        misses++;
      }
      assertThat(cache.stats().count("corrupt_entry")).isEqualTo(misses);
      assertThat(cache.get("k", key -> "{\"ver\":1}")).isEqualTo("{\"ver\":1}");
      assertThat(cache.getIfPresent("k")).contains("{\"ver\":1}");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Scenario 10: an envelope cannot claim a lifetime the cache did not give it

  @Test
  void anEnvelopeClaimingAnExpiryInTheYear10889_expiresAfterThisCachesTtl() {
    ManualExecutor executor = new ManualExecutor();
    try (SustainableCache<String> cache = SustainableCache.builder(store).ttl(TTL)
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).refreshExecutor(executor)
        .random(FixedRandom.neverEarly()).build()) {
      long now = clock.millis();
      store.set("k", Envelope.encode(now, Envelope.MAX_TIMESTAMP, 1,
          ValueCodec.utf8().encode("planted")), 3600).join();
      assertThat(cache.get("k", key -> "loaded")).isEqualTo("planted");

      clock.advance(TTL); // this cache's TTL has passed: SUS serves it stale and refreshes it
      assertThat(cache.get("k", key -> "loaded")).isEqualTo("planted");
      assertThat(cache.stats().count("stale_hit")).isEqualTo(1);
      executor.runAll();
      assertThat(cache.get("k", key -> "unused")).isEqualTo("loaded");
    }
  }

  @Test
  void anAbsenceClaimingALongLifetime_expiresAfterTheAbsentTtl() {
    try (SustainableCache<String> cache = SustainableCache.builder(store).ttl(TTL)
        .noValueTtl(Duration.ofSeconds(1)).refreshPolicy(RefreshPolicy.none())
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).build()) {
      long now = clock.millis();
      store.set("k", Envelope.encodeAbsent(now, Envelope.MAX_TIMESTAMP, 1), 3600).join();
      assertThat(cache.find("k", key -> "exists")).isEmpty();

      clock.advance(Duration.ofSeconds(1));
      assertThat(cache.find("k", key -> "exists")).contains("exists");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Scenario 11: KeyPolicy.HASH is injective

  @Test
  void aKeyThatLooksHashed_cannotPoisonTheKeyItImitates() {
    Keys keys = new Keys("ns", 250, KeyPolicy.HASH);
    String hashed = keys.storeKey("josé");
    String imitation = hashed.substring("ns:".length());

    assertThat(imitation).contains("#");
    assertThat(keys.storeKey(imitation)).isNotEqualTo(hashed);
  }

  @Test
  void keysThatDifferOnlyInLoneSurrogates_getDifferentStoreKeys() {
    Keys keys = new Keys("", 250, KeyPolicy.HASH);
    assertThat(keys.storeKey("a\uD800")).isNotEqualTo(keys.storeKey("a\uDBFF"))
        .isNotEqualTo(keys.storeKey("a?"));
  }

  @Test
  void underHash_plainKeysWithoutHashMarkStayReadable_andKeysWithOneAreDerived() {
    Keys keys = new Keys("ns", 250, KeyPolicy.HASH);
    assertThat(keys.storeKey("user-42")).isEqualTo("ns:user-42");
    assertThat(keys.storeKey("user#42")).startsWith("ns:user_42#").hasSize(3 + 7 + 1 + 43);
  }

  @Test
  void throughTheCache_theImitationAndTheOriginalAreTwoEntries() {
    try (SustainableCache<String> cache = SustainableCache.builder(store).namespace("ns")
        .ttl(TTL).keyPolicy(KeyPolicy.HASH).codec(ValueCodec.utf8()).clock(clock)
        .ticker(clock.ticker()).build()) {
      cache.put("josé", "real");
      String imitation = new Keys("ns", 250, KeyPolicy.HASH).storeKey("josé").substring(3);
      cache.put(imitation, "poison");

      assertThat(cache.get("josé", key -> "reloaded")).isEqualTo("real");
    }
  }

  @Test
  void leaseKeysCanNeverBeACallersKey() {
    Keys keys = new Keys("ns", 250, KeyPolicy.HASH);
    String lease = keys.leaseKey(keys.storeKey("k"));
    assertThat(lease).isEqualTo("ns:k\u007Flease");
    assertThatThrownBy(() -> new Keys("ns", 250, KeyPolicy.REJECT).storeKey("k\u007Flease"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(keys.storeKey("k\u007Flease")).doesNotContain("\u007F");
    String longKey = keys.storeKey("x".repeat(246));
    assertThat(keys.leaseKey(longKey)).startsWith("ns:\u007Flease#").hasSizeLessThan(250);
  }
}
