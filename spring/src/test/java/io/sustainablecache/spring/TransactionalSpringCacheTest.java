package io.sustainablecache.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.CacheSettings;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ScriptedStore;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.cache.Cache;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Issue 21: the Spring cache's writes inside transactions of a real {@code
 * DataSourceTransactionManager} over H2, over the in-memory store: programmatic writes, several
 * changes of one key, {@code clear}, {@code REQUIRES_NEW}, nested (savepoint) transactions,
 * read-only transactions, and a fence the store refuses. The races and the rollback are in
 * {@link SpringCacheContract}, which also runs against a real memcached.
 */
final class TransactionalSpringCacheTest {

  private final InMemoryStore store = InMemoryStore.create();
  private final BookTable table = new BookTable();
  private final SustainableCacheManager manager = manager(store, true);
  private final Cache titles = manager.getCache("titles");

  @AfterEach
  void close() {
    manager.close();
    table.close();
  }

  private static SustainableCacheManager manager(CacheStore store, boolean transactionAware) {
    return manager(store, transactionAware, "ttl=1m");
  }

  /** A manager whose caches fail a change that cannot reach the store (as before issue 31). */
  private static SustainableCacheManager failingClosed(CacheStore store) {
    return manager(store, true, "ttl=1m, fail-writes-when-store-down=true");
  }

  private static SustainableCacheManager manager(CacheStore store, boolean transactionAware,
      String settings) {
    return SustainableCacheManager.builder(store)
        .defaults(CacheSpec.builder()
            .settings(CacheSettings.parse(settings))
            .codec(ValueCodec.utf8(), String.class).build())
        .transactionAware(transactionAware)
        .build();
  }

  private String cached(long key) {
    Cache.ValueWrapper found = titles.get(key);
    return found == null ? null : (String) found.get();
  }

  /** A peek from another thread, as another request's. */
  private String cachedElsewhere(long key) {
    return table.readElsewhere(() -> cached(key));
  }

  @Test
  void transactionAwareness_isOnByDefault_andCanBeTurnedOff() {
    assertThat(manager.isTransactionAware()).isTrue();
    try (SustainableCacheManager off = manager(store, false)) {
      assertThat(off.isTransactionAware()).isFalse();
    }
  }

  @Test
  void aPutInsideATransaction_isNotSeenBeforeTheCommit_andCachedAfterIt() {
    titles.put(1L, "old");
    table.template().executeWithoutResult(status -> {
      titles.put(1L, "new");
      assertThat(cached(1)).as("the writer, before the commit: its own change").isNull();
      assertThat(cachedElsewhere(1)).as("another request, before the commit: the committed one")
          .isEqualTo("old");
    });
    assertThat(cached(1)).isEqualTo("new");
  }

  /**
   * Issue 30: until the commit another request is answered with the value the fence replaced,
   * without a load, while the transaction reads its own change: its peeks miss the key it
   * changed, and its {@code sync} read calls the loader without the cache.
   */
  @Test
  void theWritingTransactionReadsItsOwnChange_whileOthersGetTheCommittedValueWithoutALoad() {
    titles.put(1L, "committed");
    java.util.concurrent.atomic.AtomicInteger loads = new java.util.concurrent.atomic.AtomicInteger();
    table.template().executeWithoutResult(status -> {
      titles.evict(1L);
      assertThat(titles.get(1L, () -> "the transaction's own " + loads.incrementAndGet()))
          .isEqualTo("the transaction's own 1");
      assertThat(titles.get(1L, String.class)).isNull();
      assertThat(titles.retrieve(1L).join()).isNull();
      assertThat(titles.retrieve(1L, () -> CompletableFuture.completedFuture("async own")).join())
          .isEqualTo("async own");
      assertThat(table.readElsewhere(() -> titles.get(1L, () -> "loaded elsewhere")))
          .as("another request: the committed value, no load").isEqualTo("committed");
      assertThat(((SustainableSpringCache) titles).getNativeCache().stats().count("fenced_hit"))
          .isEqualTo(1);
    });
    assertThat(cached(1)).as("evicted at the commit").isNull();
    assertThat(titles.get(1L, () -> "reloaded")).isEqualTo("reloaded");
  }

  /**
   * Issue 30: from right before the commit until the fence's release (the commit window), another
   * request is still answered with the value the fence replaced, without a load (it is concurrent
   * with the write), while the writing transaction's thread, here after the database commit (an
   * {@code afterCommit} callback, before the release), still reads its own change. The cache's
   * clock stands still, so the window does not end.
   */
  @Test
  void inTheCommitWindow_othersGetTheReplacedValue_andTheWriterStillReadsItsOwnChange() {
    io.sustainablecache.testing.FakeClock clock =
        io.sustainablecache.testing.FakeClock.atRoundSecond();
    try (SustainableCacheManager still = SustainableCacheManager.builder(
        InMemoryStore.create(clock)).defaults(CacheSpec.builder()
            .settings(CacheSettings.parse("ttl=1m")).codec(ValueCodec.utf8(), String.class)
            .customizer(builder -> builder.clock(clock).ticker(clock.ticker())).build())
        .build()) {
      Cache cache = still.getCache("titles");
      cache.put(1L, "committed");
      AtomicReference<String> own = new AtomicReference<>();
      AtomicReference<String> elsewhere = new AtomicReference<>();
      table.template().executeWithoutResult(status -> {
        cache.evict(1L);
        org.springframework.transaction.support.TransactionSynchronizationManager
            .registerSynchronization(
                new org.springframework.transaction.support.TransactionSynchronization() {
                  @Override
                  public void afterCommit() {
                    own.set(cache.get(1L, () -> "the writer's own load"));
                    elsewhere.set(table.readElsewhere(
                        () -> cache.get(1L, () -> "loaded elsewhere")));
                  }
                });
      });
      assertThat(own).as("the writer, in the commit window").hasValue("the writer's own load");
      assertThat(elsewhere).as("another request, in the commit window").hasValue("committed");
      assertThat(((SustainableSpringCache) cache).getNativeCache().stats().count("fenced_hit"))
          .isEqualTo(1);
      assertThat(cache.get(1L)).as("evicted at the release").isNull();
    }
  }

  /**
   * Issue 30: a fence that cannot drop the value it replaced before the commit fails the commit
   * (Spring's {@code beforeCommit}), since other instances could answer with that value after it:
   * the transaction rolls back and the fence is removed.
   */
  @Test
  void aFenceThatCannotDropItsPriorBeforeTheCommit_failingClosed_rollsTheTransactionBack() {
    InMemoryStore server = InMemoryStore.create();
    ScriptedStore scripted = ScriptedStore.over(server);
    // No namespace generation: its poll (a gets every half second on the scheduler's thread)
    // would take the one scripted failure if it fell between the script and beforeCommit's read
    // (it did once in a full build: the commit went through)
    try (SustainableCacheManager failing = manager(scripted, true,
        "ttl=1m, fail-writes-when-store-down=true, invalidate-all-bound=0")) {
      Cache cache = failing.getCache("titles");
      cache.put(1L, "committed");
      assertThatThrownBy(() -> table.template().executeWithoutResult(status -> {
        cache.evict(1L);
        table.insert(7, "rolled back");
        scripted.fail(ScriptedStore.Op.GETS, 1); // beforeCommit's read
      })).isInstanceOf(StoreException.class);
      assertThatThrownBy(() -> table.title(7)).as("not committed")
          .isInstanceOf(org.springframework.dao.EmptyResultDataAccessException.class);
      assertThat(cache.get(1L, () -> "reloaded")).as("the fence removed").isEqualTo("reloaded");
    }
  }

  /** {@code putIfAbsent} is conditional: inside a transaction too it acts at once. */
  @Test
  void putIfAbsentInsideATransaction_actsAtOnce() {
    table.template().executeWithoutResult(status -> {
      assertThat(titles.putIfAbsent(1L, "added")).isNull();
      assertThat(titles.putIfAbsent(2L, null)).isNull();
      assertThat(cachedElsewhere(1)).isEqualTo("added");
      assertThat(table.readElsewhere(() -> titles.get(2L))).as("a cached null")
          .isNotNull().extracting(Cache.ValueWrapper::get).isNull();
    });
    assertThat(((SustainableSpringCache) titles).getNativeCache().stats().count("fence")).isZero();
  }

  @Test
  void severalChangesOfOneKey_fenceItOnce_andTheLastOneDecides() {
    table.template().executeWithoutResult(status -> {
      titles.put(1L, "first");
      titles.evict(1L);
      titles.put(1L, "last");
      titles.put(2L, "put");
      assertThat(titles.evictIfPresent(2L)).isFalse();
      titles.put(3L, "a value");
      titles.put(3L, null);
    });
    assertThat(cached(1)).isEqualTo("last");
    assertThat(cached(2)).as("evicted last").isNull();
    assertThat(titles.get(3L)).as("put(key, null) last: invalidated, not cached").isNull();
    assertThat(((SustainableSpringCache) titles).getNativeCache().stats().count("fence"))
        .isEqualTo(3);
  }

  /**
   * {@code clear} in a transaction clears at once and again after the commit: a value loaded
   * during the transaction is gone too, and every key the transaction changed is invalidated
   * (a value put after the clear included: a store's clear may remove fences too).
   */
  @Test
  void aClearInsideATransaction_clearsAtOnceAndAgainAfterTheCommit() {
    titles.put(1L, "before the transaction");
    table.template().executeWithoutResult(status -> {
      titles.put(2L, "put before the clear");
      titles.clear();
      assertThat(cached(1)).as("cleared at once").isNull();
      assertThat(table.readElsewhere(() -> titles.get(4L, () -> "loaded during it")))
          .isEqualTo("loaded during it");
      titles.put(3L, "put after the clear");
    });
    assertThat(cached(1)).isNull();
    assertThat(cached(2)).as("put before the clear").isNull();
    assertThat(cached(3)).as("put after the clear").isNull();
    assertThat(cached(4)).as("loaded during the transaction").isNull();
  }

  /**
   * {@code REQUIRES_NEW}: its changes complete at its own commit, while the outer transaction's
   * stay fenced until the outer one ends (here, a rollback).
   */
  @Test
  void requiresNew_completesItsOwnChangesAtItsCommit_theOuterOnesAtTheOuterEnd() {
    titles.put(1L, "outer, before");
    TransactionTemplate inner = table.template(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
    table.template().executeWithoutResult(outer -> {
      titles.put(1L, "outer, rolled back");
      inner.executeWithoutResult(status -> titles.put(2L, "inner, committed"));
      assertThat(cachedElsewhere(2)).as("after the inner commit").isEqualTo("inner, committed");
      assertThat(cachedElsewhere(1)).as("the outer change, not committed: the value it replaced")
          .isEqualTo("outer, before");
      titles.put(3L, "outer, after the inner");
      outer.setRollbackOnly();
    });
    assertThat(cached(1)).isNull();
    assertThat(cached(2)).isEqualTo("inner, committed");
    assertThat(cached(3)).isNull();
  }

  /**
   * Nested (savepoint) transactions complete with the outer one: a released savepoint's value
   * is cached after the outer commit; a change rolled back to its savepoint is invalidated, not
   * cached, even when the outer transaction commits.
   */
  @Test
  void nested_completesWithTheOuterTransaction_andARolledBackSavepointCachesNoValue() {
    TransactionTemplate nested = table.template(TransactionDefinition.PROPAGATION_NESTED);
    table.template().executeWithoutResult(outer -> {
      titles.put(1L, "outer");
      nested.executeWithoutResult(status -> titles.put(2L, "nested, released"));
      assertThat(cachedElsewhere(2)).as("completes with the outer transaction").isNull();
      nested.executeWithoutResult(status -> {
        titles.put(1L, "nested, rolled back");
        titles.put(3L, "nested, rolled back");
        status.setRollbackOnly();
      });
      titles.put(4L, "outer, after the savepoints");
    });
    assertThat(cached(1)).as("changed again after the savepoint, rolled back").isNull();
    assertThat(cached(2)).isEqualTo("nested, released");
    assertThat(cached(3)).isNull();
    assertThat(cached(4)).isEqualTo("outer, after the savepoints");
  }

  /** A service with cached reads in transactions; each records what another request saw. */
  static class Reads {
    private final BookTable table;
    private final Cache cache;
    private final AtomicReference<String> seen = new AtomicReference<>("nothing yet");

    Reads(BookTable table, Cache cache) {
      this.table = table;
      this.cache = cache;
    }

    /** What another request's peek saw just before the last transaction's commit. */
    public String seenBeforeTheCommit() {
      return seen.get();
    }

    @Transactional(readOnly = true)
    @Cacheable(cacheNames = "titles")
    public String readOnly(long id) {
      return read(id);
    }

    @Transactional
    @Cacheable(cacheNames = "titles")
    public String writable(long id) {
      return read(id);
    }

    private String read(long id) {
      BookTable.beforeCommit(() -> seen.set(table.readElsewhere(() -> {
        Cache.ValueWrapper found = cache.get(id);
        return found == null ? null : (String) found.get();
      })));
      return table.title(id);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableTransactionManagement(order = 0)
  @EnableCaching(order = 1)
  static class ReadsApp {
    @Bean
    Reads reads(BookTable table, SustainableCacheManager cacheManager) {
      return new Reads(table, cacheManager.getCache("titles"));
    }

    @Bean
    PlatformTransactionManager transactionManager(BookTable table) {
      return table.transactionManager();
    }
  }

  private AnnotationConfigApplicationContext context() {
    AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
    context.registerBean("cacheManager", SustainableCacheManager.class, () -> manager);
    context.registerBean(BookTable.class, () -> table);
    context.register(ReadsApp.class);
    context.refresh();
    return context;
  }

  /** A plain {@code @Cacheable}'s put in a read-only transaction is immediate. */
  @Test
  void aCacheablePutInAReadOnlyTransaction_isImmediate() {
    table.insert(1, "one");
    try (AnnotationConfigApplicationContext context = context()) {
      Reads reads = context.getBean(Reads.class);
      assertThat(reads.readOnly(1)).isEqualTo("one");
      assertThat(reads.seenBeforeTheCommit()).isEqualTo("one");
    }
  }

  /**
   * A plain {@code @Cacheable}'s put in a writable transaction waits for its commit: the value it
   * read may be the transaction's own, uncommitted change.
   */
  @Test
  void aCacheablePutInAWritableTransaction_isCachedAfterTheCommit() {
    table.insert(1, "one");
    try (AnnotationConfigApplicationContext context = context()) {
      Reads reads = context.getBean(Reads.class);
      assertThat(reads.writable(1)).isEqualTo("one");
      assertThat(reads.seenBeforeTheCommit()).isNull();
      assertThat(cached(1)).isEqualTo("one");
    }
  }

  /**
   * A fence that cannot be placed is thrown from the cache's method (to Spring's {@code
   * CacheErrorHandler}): the key is not protected. Outside a transaction, the same put on a
   * store that is down is counted, not thrown.
   */
  @Test
  void byDefault_aTransactionCommits_whenItsFencesCannotReachTheStore_andTheKeysAreOwed() {
    InMemoryStore server = InMemoryStore.create();
    ScriptedStore scripted = ScriptedStore.over(server);
    try (SustainableCacheManager owing = manager(scripted, true)) {
      Cache cache = owing.getCache("titles");
      cache.put(1L, "committed");
      cache.put(2L, "old");
      table.template().executeWithoutResult(status -> {
        cache.evict(1L);
        table.insert(7, "committed with the store down");
        for (ScriptedStore.Op op : ScriptedStore.Op.values()) {
          scripted.fail(op, Integer.MAX_VALUE);
        }
        cache.evict(2L); // its fence cannot be placed: no exception
      });
      assertThat(table.title(7)).as("committed").isEqualTo("committed with the store down");
      assertThat(((SustainableSpringCache) cache).getNativeCache().stats()
          .keysAwaitingInvalidation()).isEqualTo(2);
      scripted.heal();
      assertThat(cache.get(1L, () -> "reloaded")).as("paid, then loaded").isEqualTo("reloaded");
      assertThat(cache.get(2L, () -> "reloaded")).isEqualTo("reloaded");
    }
  }

  @Test
  void failingClosed_aFenceThatCannotBePlaced_isThrown_fromPutAndEvict() {
    ScriptedStore failing = ScriptedStore.over(InMemoryStore.create());
    for (ScriptedStore.Op op : ScriptedStore.Op.values()) {
      failing.fail(op, Integer.MAX_VALUE);
    }
    try (SustainableCacheManager down = failingClosed(failing)) {
      Cache cache = down.getCache("titles");
      cache.put(1L, "outside: counted, not thrown");
      table.template().executeWithoutResult(status -> {
        assertThatThrownBy(() -> cache.put(1L, "inside")).isInstanceOf(StoreException.class);
        assertThatThrownBy(() -> cache.evict(1L)).isInstanceOf(StoreException.class);
      });
    }
  }
}
