package io.sustainablecache.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.CacheLoadException;
import io.sustainablecache.CacheSettings;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.InMemoryStore;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.DayOfWeek;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.cache.Cache;

/**
 * Issue 33: a bulk loader registered per cache name, the inverse of the key encoding it needs,
 * and the multi-key read of {@link SustainableSpringCache}, over an in-memory store (the real
 * memcached runs are {@code CoalescedCacheableIT} in the memcached starter).
 */
final class BulkLoaderRegistrationTest {

  private final InMemoryStore store = InMemoryStore.create();
  private final KeyEncoder keys = KeyEncoder.typeTagged();
  private final List<Set<Long>> calls = new CopyOnWriteArrayList<>();
  private SustainableCacheManager manager;

  @AfterEach
  void close() {
    if (manager != null) {
      manager.close();
    }
  }

  private Map<Long, String> table(Set<Long> ids) {
    calls.add(Set.copyOf(ids));
    Map<Long, String> found = new HashMap<>();
    for (long id : ids) {
      if (id >= 0) {
        found.put(id, "book " + id);
      }
    }
    found.put(-1_000L, "never asked for");
    return found;
  }

  private SustainableSpringCache books(boolean registered) {
    SustainableCacheManager.Builder b = SustainableCacheManager.builder(store)
        .defaults(CacheSpec.builder().settings(CacheSettings.parse("ttl=1m"))
            .codec(ValueCodec.utf8(), String.class).build());
    if (registered) {
      b.bulkLoader("books", Long.class, this::table);
    }
    manager = b.build();
    return (SustainableSpringCache) manager.getCache("books");
  }

  @Test
  void theTypeTaggedEncoderDecodesEveryScalarTypeItEncodes() {
    List<Object> ids = List.of("", "a:b;c", "s3:abc", 0L, -42L, Long.MIN_VALUE, 7, (short) -3,
        (byte) 9, new BigInteger("-123456789012345678901234567890"), new BigDecimal("1.50"),
        UUID.fromString("123e4567-e89b-12d3-a456-426614174000"), true, false, 'x', ';',
        DayOfWeek.MONDAY);
    for (Object id : ids) {
      assertThat(keys.decode(keys.encode(id), id.getClass())).as("%s", id).isEqualTo(id);
    }
  }

  @Test
  void decodingRefusesEncodingsOfOtherTypesAndNonCanonicalText() {
    assertThatThrownBy(() -> keys.decode(keys.encode(42), Long.class))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("java.lang.Long");
    assertThatThrownBy(() -> keys.decode("l042;", Long.class))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> keys.decode("s5:ab", String.class))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> keys.decode("l1", Long.class))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> keys.decode("es19:java.time.DayOfWeeks4:NOPE", DayOfWeek.class))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> keys.decode(keys.encode(LocalDate.EPOCH), LocalDate.class))
        .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("key = ");
  }

  @Test
  void aLoaderForIdsTheEncoderCannotDecodeFailsTheManagersBuild() {
    assertThatThrownBy(() -> SustainableCacheManager.builder(store)
        .defaults(CacheSpec.builder().settings(CacheSettings.parse("ttl=1m"))
            .codec(ValueCodec.utf8(), String.class).build())
        .bulkLoader("books", LocalDate.class, ids -> Map.of())
        .build())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("cache 'books'")
        .hasMessageContaining("java.time.LocalDate");
    assertThatThrownBy(() -> SustainableCacheManager.builder(store)
        .defaults(CacheSpec.builder().settings(CacheSettings.parse("ttl=1m"))
            .codec(ValueCodec.utf8(), String.class).build())
        .keyEncoder(Object::toString)
        .bulkLoader("books", Long.class, ids -> Map.of())
        .build())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("KeyEncoder.decode");
  }

  @Test
  void aRegisteredLoaderAnswersSyncReadsInsteadOfTheMethodAndCachesWhatItLeavesOutAsNull() {
    SustainableSpringCache books = books(true);
    assertThat(books.get(1L, () -> "the method")).isEqualTo("book 1");
    assertThat(books.get(-5L, () -> "the method")).isNull();
    assertThat(books.get(-5L, () -> "the method")).isNull();
    assertThat(calls).containsExactly(Set.of(1L), Set.of(-5L));
    // a key of another type is the method's to load
    assertThat(books.get("1", () -> "the method")).isEqualTo("the method");
    assertThat(calls).hasSize(2);
  }

  @Test
  void aLoaderFailureReachesTheCallerAsItself() {
    SustainableCacheManager.Builder b = SustainableCacheManager.builder(store)
        .defaults(CacheSpec.builder().settings(CacheSettings.parse("ttl=1m"))
            .codec(ValueCodec.utf8(), String.class).build())
        .bulkLoader("books", Long.class, ids -> {
          throw new java.io.IOException("database down");
        });
    manager = b.build();
    Cache books = manager.getCache("books");
    assertThatThrownBy(() -> books.get(1L, () -> "the method"))
        .isInstanceOf(Cache.ValueRetrievalException.class)
        .hasRootCauseInstanceOf(java.io.IOException.class);
  }

  @Test
  void getAllReadsSingleKeyEntriesAndLoadsOnlyTheMissesInOneCall() {
    SustainableSpringCache books = books(false);
    books.put(1L, "cached 1");
    books.put(2L, null); // "no value", as a @Cacheable method's null
    Map<Long, String> page = books.getAll(List.of(3L, 1L, 2L, 4L, 3L), this::table);
    assertThat(new ArrayList<>(page.keySet())).containsExactly(3L, 1L, 4L);
    assertThat(page).containsEntry(1L, "cached 1").containsEntry(3L, "book 3");
    assertThat(calls).containsExactly(Set.of(3L, 4L));
    assertThat(books.get(4L).get()).isEqualTo("book 4");
    assertThat(books.get(-1_000L)).as("an id the loader was not asked for").isNull();
  }

  /**
   * Inside a transaction that changed an id, that id is read from the database (the method for a
   * single read, the loader for a page), not from the cache; the others still from the cache.
   */
  @Test
  void insideATransactionTheIdsItChangedAreLoadedWithoutTheCache() {
    SustainableSpringCache books = books(true);
    try (BookTable db = new BookTable()) {
      books.put(1L, "cached 1");
      books.put(2L, "cached 2");
      db.template().executeWithoutResult(status -> {
        books.evict(1L);
        assertThat(books.get(1L, () -> "the transaction's row")).isEqualTo("the transaction's row");
        calls.clear();
        Map<Long, String> page = books.getAll(List.of(1L, 2L));
        assertThat(page).containsEntry(1L, "book 1").containsEntry(2L, "cached 2");
        assertThat(calls).as("only the changed id, without the cache").containsExactly(Set.of(1L));
      });
    }
  }

  @Test
  void getAllWithoutARegisteredLoaderSaysHowToGetOne() {
    SustainableSpringCache books = books(false);
    assertThatThrownBy(() -> books.getAll(List.of(1L)))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("bulkLoader");
  }

  @Test
  void getAllFailsWithTheLoadersExceptionAsCause() {
    SustainableSpringCache books = books(false);
    assertThatThrownBy(() -> books.getAll(List.of(1L), ids -> {
      throw new java.io.IOException("database down");
    })).isInstanceOf(CacheLoadException.class).hasRootCauseInstanceOf(java.io.IOException.class);
  }
}
