package io.sustainablecache.hibernate;

import static io.sustainablecache.hibernate.Hibernates.find;
import static io.sustainablecache.hibernate.Hibernates.inTransaction;
import static io.sustainablecache.hibernate.Hibernates.statements;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.testing.InMemoryStore;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hibernate.cache.CacheException;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.junit.jupiter.api.Test;

/**
 * Issue 31, part 5: {@value SustainableCacheRegionFactory#ENTRY_KEYS}, the keys that sign every
 * region's entries, read by the core's rules when the session factory starts; no message shows a
 * key.
 */
final class EntryKeysPropertyTest {

  private static final InMemoryStore STORE = InMemoryStore.create();

  private static String base64(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void keysSeparatedByCommasOrWhiteSpace_theSigningKeyFirst() {
    List<byte[]> keys = SustainableCacheRegionFactory.entryKeys(
        " " + base64("a".repeat(16)) + ",  " + base64("b".repeat(20)) + "\n" + base64(
            "c".repeat(32)) + " ", STORE);
    assertThat(keys).extracting(k -> new String(k, StandardCharsets.UTF_8))
        .containsExactly("a".repeat(16), "b".repeat(20), "c".repeat(32));
  }

  /**
   * Over one in-memory store and one database: an entity cached by a factory with a key is a hit
   * for a factory that still accepts that key as a previous one, and a miss (a statement) for a
   * factory without one.
   */
  @Test
  void regionsSignTheirEntries_andAcceptAPreviousKey() {
    String key = base64("k".repeat(32));
    String prefix = "ek" + System.nanoTime() + "-";
    HookedDataSource database = new HookedDataSource("jdbc:h2:mem:" + prefix
        + ";DB_CLOSE_DELAY=-1");
    InMemoryStore store = InMemoryStore.create();
    Map<String, Object> settings = Map.of(SustainableCacheRegionFactory.SETTINGS,
        "ttl=10m, max-clock-skew=0s");
    try (SessionFactoryImplementor signing = Hibernates.sessionFactory(database, "create", store,
        prefix, with(settings, key), ReadOnlyCoupon.class)) {
      inTransaction(signing, s -> s.persist(new ReadOnlyCoupon(1, "A")));
      assertThat(find(signing, ReadOnlyCoupon.class, 1).code()).isEqualTo("A");
      long before = statements(signing);
      assertThat(find(signing, ReadOnlyCoupon.class, 1).code()).isEqualTo("A");
      assertThat(statements(signing)).as("cached, signed").isEqualTo(before);
    }
    try (SessionFactoryImplementor rotated = Hibernates.sessionFactory(database, "none", store,
        prefix, with(settings, base64("n".repeat(32)) + "," + key), ReadOnlyCoupon.class)) {
      assertThat(find(rotated, ReadOnlyCoupon.class, 1).code()).isEqualTo("A");
      assertThat(statements(rotated)).as("the previous key still reads it").isZero();
    }
    try (SessionFactoryImplementor unkeyed = Hibernates.sessionFactory(database, "none", store,
        prefix, settings, ReadOnlyCoupon.class)) {
      assertThat(find(unkeyed, ReadOnlyCoupon.class, 1).code()).isEqualTo("A");
      assertThat(statements(unkeyed)).as("a signed entry is a miss without the key (its load then writes over it)")
          .isEqualTo(1);
    }
  }

  private static Map<String, Object> with(Map<String, Object> settings, String keys) {
    Map<String, Object> all = new HashMap<>(settings);
    all.put(SustainableCacheRegionFactory.ENTRY_KEYS, keys);
    return all;
  }

  @Test
  void noneSet_isNoKey() {
    assertThat(SustainableCacheRegionFactory.entryKeys(null, STORE)).isEmpty();
    assertThat(SustainableCacheRegionFactory.entryKeys("  ", STORE)).isEmpty();
  }

  @Test
  void aKeyThatIsNotBase64_failsWithoutShowingIt() {
    assertThatThrownBy(() -> SustainableCacheRegionFactory.entryKeys(
        base64("a".repeat(16)) + ",my-secret!", STORE))
        .isInstanceOf(CacheException.class)
        .hasMessage(SustainableCacheRegionFactory.ENTRY_KEYS + ": key 2 is not base64 (the value"
            + " is a secret and is not shown)")
        .hasNoCause();
  }

  @Test
  void aShortKey_failsByTheCoresRule() {
    assertThatThrownBy(() -> SustainableCacheRegionFactory.entryKeys(base64("short"), STORE))
        .isInstanceOf(CacheException.class)
        .hasMessageStartingWith(SustainableCacheRegionFactory.ENTRY_KEYS
            + ": entryKey must be at least 16 bytes");
  }
}
