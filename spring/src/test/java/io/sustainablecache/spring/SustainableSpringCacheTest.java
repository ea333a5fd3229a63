package io.sustainablecache.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.CacheSettings;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.ForwardingStore;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ScriptedStore;
import io.sustainablecache.spi.StoreException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.cache.Cache;
import org.springframework.cache.interceptor.SimpleKey;

/** The Spring {@code Cache} operations mapped onto a SustainableCache over the in-memory store. */
final class SustainableSpringCacheTest {

  private static final Duration TTL = Duration.ofSeconds(10);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);
  private final ManualExecutor refreshes = new ManualExecutor();
  private final AtomicInteger loads = new AtomicInteger();
  private SustainableCacheManager manager;

  private Cache cache(CacheStore over, FixedRandom random) {
    manager = SustainableCacheManager.builder(over)
        .defaults(CacheSpec.builder()
            .settings(CacheSettings.parse("ttl=" + TTL + ", refresh-policy=sustainable:1.0:1.0"))
            .codec(ValueCodec.utf8(), String.class)
            .customizer(b -> b.clock(clock).ticker(clock.ticker()).random(random)
            .refreshExecutor(refreshes))
            .build())
        .build();
    return manager.getCache("books");
  }

  private Cache cache() {
    return cache(store, FixedRandom.neverEarly());
  }

  @AfterEach
  void close() {
    if (manager != null) {
      manager.close();
    }
  }

  private String load() {
    return "v" + loads.incrementAndGet();
  }

  @Test
  void syncGetLoadsOnceThenHits() {
    Cache cache = cache();
    assertThat(cache.get("k", this::load)).isEqualTo("v1");
    assertThat(cache.get("k", this::load)).isEqualTo("v1");
    assertThat(loads).hasValue(1);
    assertThat(cache.get("k")).extracting(Cache.ValueWrapper::get).isEqualTo("v1");
  }

  @Test
  void theCallableIsTheLoaderSoTheCacheRefreshesAhead() {
    Cache cache = cache(store, FixedRandom.alwaysEarly()); // every hit is in the refresh window
    assertThat(cache.get("k", this::load)).isEqualTo("v1");
    clock.advance(Duration.ofSeconds(5));
    // the caller gets the cached value at once; the method runs again in the background
    assertThat(cache.get("k", this::load)).isEqualTo("v1");
    assertThat(loads).hasValue(1);
    assertThat(refreshes.runAll()).isEqualTo(1);
    assertThat(loads).hasValue(2);
    assertThat(cache.get("k", this::load)).isEqualTo("v2");
    assertThat(((io.sustainablecache.SustainableCache<?>) cache.getNativeCache()).stats()
        .refreshSuccessCount()).isEqualTo(1);
  }

  @Test
  void aNullResultIsCachedAsNoValueAndReturnedAsNull() {
    Cache cache = cache();
    AtomicInteger calls = new AtomicInteger();
    assertThat(cache.<String>get("missing", () -> {
      calls.incrementAndGet();
      return null;
    })).isNull();
    assertThat(cache.<String>get("missing", () -> {
      calls.incrementAndGet();
      return null;
    })).isNull();
    assertThat(calls).hasValue(1); // negative caching: the second call did not reach the "DB"
    // a peek sees the cached null, as Spring's allowNullValues caches answer
    assertThat(cache.get("missing")).isNotNull().extracting(Cache.ValueWrapper::get).isNull();
    assertThat(cache.get("never")).isNull();
  }

  @Test
  void loaderExceptionsBecomeValueRetrievalExceptionsCarryingTheLoadersException() {
    Cache cache = cache();
    IOException failure = new IOException("db down");
    assertThatThrownBy(() -> cache.get("k", () -> {
      throw failure;
    }))
        .isInstanceOf(Cache.ValueRetrievalException.class)
        .hasCause(failure);
    RuntimeException runtime = new IllegalStateException("bug");
    assertThatThrownBy(() -> cache.get("other", () -> {
      throw runtime;
    }))
        .isInstanceOf(Cache.ValueRetrievalException.class)
        .hasCause(runtime);
  }

  @Test
  void retrieveWithASupplierIsFindAsync() throws Exception {
    Cache cache = cache();
    CompletableFuture<String> first =
        cache.retrieve("k", () -> CompletableFuture.completedFuture(load()));
    assertThat(first.get()).isEqualTo("v1");
    CompletableFuture<String> second =
        cache.retrieve("k", () -> CompletableFuture.completedFuture(load()));
    assertThat(second.get()).isEqualTo("v1");
    assertThat(loads).hasValue(1);
    assertThat(cache.retrieve("none", () -> CompletableFuture.<String>completedFuture(null)).get())
        .isNull();
    IOException failure = new IOException("db down");
    CompletableFuture<String> failed = cache.retrieve("bad", () -> CompletableFuture.failedFuture(failure));
    assertThatThrownBy(failed::get).isInstanceOf(ExecutionException.class).hasCause(failure);
  }

  @Test
  void retrieveWithoutASupplierPeeks() throws Exception {
    Cache cache = cache();
    assertThat(cache.retrieve("k").get()).isNull();
    cache.put("k", "v");
    assertThat(cache.retrieve("k").get()).isInstanceOfSatisfying(Cache.ValueWrapper.class,
        wrapper -> assertThat(wrapper.get()).isEqualTo("v"));
    cache.put("k", null);
    assertThat(cache.retrieve("k").get()).isInstanceOfSatisfying(Cache.ValueWrapper.class,
        wrapper -> assertThat(wrapper.get()).isNull());
    assertThat(loads).hasValue(0);
  }

  @Test
  void putAndPeek() {
    Cache cache = cache();
    cache.put("k", "v");
    assertThat(cache.get("k", String.class)).isEqualTo("v");
    assertThat(cache.get("k", this::load)).isEqualTo("v");
    assertThat(loads).hasValue(0);
    assertThatThrownBy(() -> cache.get("k", Integer.class))
        .isInstanceOf(IllegalStateException.class);
  }

  /**
   * Issue 24: the native cache does not encode keys, so Spring's key {@code k} is the native key
   * {@code encodeKey(k)}, as getNativeCache's javadoc says: the native key {@code "s1:1"} is
   * Spring's string key {@code "1"}, both ways; a native key that is no encoding is apart.
   */
  @Test
  void theNativeCacheAddressesSpringsEntryUnderItsEncodedKey() {
    SustainableSpringCache cache = (SustainableSpringCache) cache();
    assertThat(cache.encodeKey("1")).isEqualTo("s1:1");
    cache.put("1", "spring's");
    assertThat(cache.getNativeCache().getIfPresent("s1:1")).contains("spring's");
    cache.getNativeCache().put("s1:1", "native");
    assertThat(cache.get("1", String.class)).isEqualTo("native");
    cache.getNativeCache().put("1", "plain native key");
    assertThat(cache.get("1", String.class)).isEqualTo("native");
  }

  /**
   * Issue 15: Spring's allowNullValues convention. A plain {@code @Cacheable} method returning
   * null is put as null, and must not run again until the no-value TTL has passed.
   */
  @Test
  void putOfNullCachesNoValue_andReplacesTheOldValue() {
    Cache cache = cache();
    cache.put("k", "old");
    cache.put("k", null);
    assertThat(cache.get("k")).isNotNull().extracting(Cache.ValueWrapper::get).isNull();
    assertThat(cache.get("k", String.class)).isNull();
    assertThat(cache.get("k", this::load)).isNull();
    assertThat(loads).hasValue(0);
    clock.advance(TTL.plusSeconds(3)); // the no-value TTL is the TTL here; past its grace too
    assertThat(cache.get("k")).isNull();
    assertThat(cache.get("k", this::load)).isEqualTo("v1");
  }

  @Test
  void withoutNullValues_nullsAreRefusedAsSpringsOwnCachesRefuseThem() throws Exception {
    manager = SustainableCacheManager.builder(store).allowNullValues(false)
        .defaults(CacheSpec.builder().settings(CacheSettings.parse("ttl=" + TTL)).codec(ValueCodec.utf8(), String.class)
            .customizer(b -> b.clock(clock).ticker(clock.ticker()).refreshExecutor(refreshes))
            .build())
        .build();
    Cache cache = manager.getCache("strict");
    assertThatThrownBy(() -> cache.put("k", null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not allow null values");
    assertThatThrownBy(() -> cache.get("k", () -> null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> cache.retrieve("j", () -> CompletableFuture.completedFuture(null))
        .join()).hasCauseInstanceOf(IllegalArgumentException.class);
    assertThat(cache.get("k")).as("the loaded null reads as a miss").isNull();
    cache.put("k", "v");
    assertThat(cache.retrieve("k").get()).isEqualTo("v");
  }

  @Test
  void putOfAValueOfAnotherTypeFailsAtTheCall() {
    Cache cache = cache();
    assertThatThrownBy(() -> cache.put("k", 42))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("java.lang.String")
        .hasMessageContaining("java.lang.Integer");
  }

  @Test
  void putIfAbsentIsAnAdd() {
    Cache cache = cache();
    assertThat(cache.putIfAbsent("k", "first")).isNull();
    assertThat(cache.putIfAbsent("k", "second")).extracting(Cache.ValueWrapper::get)
        .isEqualTo("first");
    assertThat(cache.get("k", String.class)).isEqualTo("first");
    assertThat(cache.putIfAbsent("k", null)).extracting(Cache.ValueWrapper::get)
        .isEqualTo("first");
    assertThat(cache.putIfAbsent("empty", null)).isNull();
    assertThat(cache.get("empty")).extracting(Cache.ValueWrapper::get).isNull();
    // a cached null is no value to putIfAbsent (as to the core's: memcached add replaces it)
    assertThat(cache.putIfAbsent("empty", "late")).isNull();
    assertThat(cache.get("empty", String.class)).isEqualTo("late");
  }

  @Test
  void evictInvalidates() {
    Cache cache = cache();
    cache.put("k", "v");
    cache.evict("k");
    assertThat(cache.get("k")).isNull();
    cache.put("k", "v");
    assertThat(cache.evictIfPresent("k")).isFalse();
    assertThat(cache.get("k")).isNull();
  }

  @Test
  void clearRemovesTheNamespaceWhereTheStoreCan() {
    Cache cache = cache();
    cache.put("a", "1");
    cache.put(new SimpleKey("b", 2), "2");
    Cache other = manager.getCache("authors");
    other.put("a", "kept");
    cache.clear();
    assertThat(cache.get("a")).isNull();
    assertThat(cache.get(new SimpleKey("b", 2))).isNull();
    assertThat(other.get("a")).extracting(Cache.ValueWrapper::get).isEqualTo("kept");
    cache.put("a", "1");
    assertThat(cache.invalidate()).isFalse();
    assertThat(cache.get("a")).isNull();
  }

  /**
   * Issue 21: on plain memcached (no prefix flush) {@code clear()} works too: the cache keeps the
   * core's default {@code invalidate-all-bound}, and the clear is a new generation of the
   * namespace.
   */
  @Test
  void clearOnPlainMemcached_isANewGenerationOfTheNamespace() {
    ScriptedStore plain = ScriptedStore.over(ForwardingStore.withoutFlushPrefix(store));
    Cache cache = cache(plain, FixedRandom.neverEarly());
    cache.put("a", "1");
    cache.clear();
    assertThat(cache.get("a")).isNull();
    cache.put("a", "2");
    assertThat(cache.invalidate()).isFalse();
    assertThat(cache.get("a")).isNull();
    assertThat(plain.count(ScriptedStore.Op.FLUSH_PREFIX)).isZero();
  }

  /** The opt-out: a spec with {@code invalidate-all-bound=0} has no generation to clear with. */
  @Test
  void clearOnPlainMemcached_withTheGenerationTurnedOff_refusesNamingTheSetting() {
    ScriptedStore plain = ScriptedStore.over(ForwardingStore.withoutFlushPrefix(store));
    manager = SustainableCacheManager.builder(plain)
        .defaults(CacheSpec.builder()
            .settings(CacheSettings.parse("ttl=" + TTL + ", invalidate-all-bound=0s"))
            .codec(ValueCodec.utf8(), String.class)
            .build())
        .build();
    Cache cache = manager.getCache("books");
    cache.put("a", "1");
    assertThatThrownBy(cache::clear).isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("cache 'books' cannot be cleared")
        .hasMessageContaining("invalidate-all-bound");
    assertThat(cache.get("a", String.class)).as("nothing was cleared").isEqualTo("1");
  }

  @Test
  void keysOfDifferentTypesAreDifferentEntries() {
    Cache cache = cache();
    cache.put("1", "string");
    cache.put(1, "int");
    cache.put(1L, "long");
    cache.put(new SimpleKey("a,b"), "one param");
    cache.put(new SimpleKey("a", "b"), "two params");
    assertThat(cache.get("1", String.class)).isEqualTo("string");
    assertThat(cache.get(1, String.class)).isEqualTo("int");
    assertThat(cache.get(1L, String.class)).isEqualTo("long");
    assertThat(cache.get(new SimpleKey("a,b"), String.class)).isEqualTo("one param");
    assertThat(cache.get(new SimpleKey("a", "b"), String.class)).isEqualTo("two params");
  }

  @Test
  void longAndNonAsciiKeysAreHashedNotRejected() {
    Cache cache = cache();
    String longKey = "x".repeat(1000);
    cache.put(longKey, "long");
    cache.put("제목 with spaces", "unicode");
    cache.put(longKey + "y", "longer");
    assertThat(cache.get(longKey, String.class)).isEqualTo("long");
    assertThat(cache.get(longKey + "y", String.class)).isEqualTo("longer");
    assertThat(cache.get("제목 with spaces", String.class)).isEqualTo("unicode");
  }

  /**
   * Issue 15: with a plain {@code @Cacheable} Spring runs the method itself and then puts the
   * result; a store failure of that put must not fail the request the database already answered.
   * An evict that cannot reach the store is owed (issue 31): written once the store answers.
   */
  @Test
  void aFailingStore_failsNoPutAndNoEvict_theEvictIsOwed() {
    ScriptedStore failing = ScriptedStore.over(store);
    Cache cache = cache(failing, FixedRandom.neverEarly());
    failing.fail(ScriptedStore.Op.SET, 100).fail(ScriptedStore.Op.ADD, 100)
        .fail(ScriptedStore.Op.GETS, 100);
    cache.put("k", "v");
    assertThat(cache.putIfAbsent("k", "v")).isNull();
    assertThat(((SustainableSpringCache) cache).getNativeCache().stats().storeErrorCount())
        .isGreaterThanOrEqualTo(2);
    cache.evict("k"); // issue 31: owed, not thrown (fail-writes-when-store-down=true throws)
    assertThat(((SustainableSpringCache) cache).getNativeCache().stats()
        .keysAwaitingInvalidation()).isEqualTo(1);
    failing.heal();
    // the store failed operations in a row, so it is out until a probe answers (issue 31): the
    // first operation after the probe interval fails at once and sends the cache's own probe,
    // which the healed store answers
    assertThat(((SustainableSpringCache) cache).getNativeCache().storeNodeStates())
        .containsEntry("store", true);
    clock.advance(Duration.ofMillis(500));
    assertThat(cache.get("k", String.class)).isNull(); // not sent: the probe went instead
    assertThat(((SustainableSpringCache) cache).getNativeCache().storeNodeStates())
        .containsEntry("store", false);
    cache.put("k", "v"); // a change that landed after the debt settles it
    assertThat(cache.get("k", String.class)).isEqualTo("v");
  }

  @Test
  void nativeCacheAndName() {
    Cache cache = cache();
    assertThat(cache.getName()).isEqualTo("books");
    assertThat(cache.getNativeCache()).isInstanceOf(io.sustainablecache.SustainableCache.class);
    assertThat(((SustainableSpringCache) cache).encodeKey(7)).isEqualTo("i7;");
  }
}
