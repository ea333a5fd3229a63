package io.sustainablecache.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.CacheSettings;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.testing.ForwardingStore;
import io.sustainablecache.testkit.ClientThreads;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.cache.Cache;
import org.springframework.cache.annotation.CacheEvict;
import org.springframework.cache.annotation.CachePut;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.cache.interceptor.KeyGenerator;
import org.springframework.cache.interceptor.SimpleKey;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Spring's {@link Cache} contract and its annotation semantics over a real store: get, put,
 * putIfAbsent, evict, evictIfPresent, clear, invalidate and retrieve; {@code @Cacheable} with and
 * without {@code sync}, {@code condition} and {@code unless}, {@code @CachePut}, {@code
 * @CacheEvict} (one key and all entries), SpEL keys, {@code SimpleKey}s and a key generator; and
 * two application instances over two clients of one server.
 *
 * <p>Each adapter's Spring Boot starter runs it against a real memcached; this module runs it
 * over the in-memory store. Subclasses open stores ({@link #openStore()}, one client each) and
 * say whether the store can clear a namespace.
 */
public abstract class SpringCacheContract {

  private static final Duration TTL = Duration.ofMinutes(1);
  /** The core's default {@code invalidate-all-bound}, which the caches here keep. */
  private static final Duration DEFAULT_INVALIDATE_ALL_BOUND = Duration.ofSeconds(1);

  private final List<AutoCloseable> closeables = new ArrayList<>();
  private String prefix;
  private SustainableCacheManager manager;

  /** Creates the contract; subclasses are instantiated by JUnit. */
  protected SpringCacheContract() {}

  /**
   * Opens a store with a client of its own, connected: each call is another application
   * instance's connection to the same server.
   *
   * @return a store; {@link #closeStore} closes it after the test
   * @throws Exception if it cannot be opened
   */
  protected abstract CacheStore openStore() throws Exception;

  /**
   * Closes a store from {@link #openStore()}.
   *
   * @param store the store
   * @throws Exception if closing fails
   */
  protected abstract void closeStore(CacheStore store) throws Exception;

  /**
   * Opens a store whose every operation fails (its server is down), for the failure semantics.
   * Called once per test class: the tests that need such a store share it.
   *
   * @return a store; {@link #closeStore} closes it after the class's tests
   * @throws Exception if it cannot be opened
   */
  protected abstract CacheStore openFailingStore() throws Exception;

  /**
   * Whether the store's futures complete on client threads of their own (the real adapters): then
   * the calls "on the store's thread" run on the client's I/O thread; otherwise (the in-memory
   * store, which answers on the calling thread) on the shared scheduler's thread.
   *
   * @return {@code false} unless overridden
   */
  protected boolean completesOnClientThreads() {
    return false;
  }

  /**
   * The store whose server is down, shared by the class's tests that need one (JUnit runs a
   * class's tests one after the other): opening it takes an adapter's whole connect patience
   * (2 s), and it keeps nothing a test could leave behind for the next, as its every operation
   * fails. Opened by the first test that needs it, closed after the class.
   */
  private static CacheStore failingStore;

  private static AutoCloseable closeFailingStore;

  private CacheStore failingStore() throws Exception {
    if (failingStore == null) {
      CacheStore store = openFailingStore();
      failingStore = store;
      closeFailingStore = () -> closeStore(store);
    }
    return failingStore;
  }

  @AfterAll
  static void closeTheFailingStore() throws Exception {
    AutoCloseable closing = closeFailingStore;
    failingStore = null;
    closeFailingStore = null;
    if (closing != null) {
      closing.close();
    }
  }

  @BeforeEach
  final void createManager() throws Exception {
    prefix = "sc" + UUID.randomUUID().toString().substring(0, 8) + ".";
    manager = manager(store());
  }

  @AfterEach
  final void closeEverything() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
  }

  private CacheStore store() throws Exception {
    CacheStore store = openStore();
    closeables.add(() -> closeStore(store));
    return store;
  }

  private SustainableCacheManager manager(CacheStore store) {
    return manager(store, true);
  }

  private SustainableCacheManager manager(CacheStore store, boolean transactionAware) {
    SustainableCacheManager built = SustainableCacheManager.builder(store)
        .defaults(CacheSpec.builder().settings(CacheSettings.parse("ttl=" + TTL)).codec(ValueCodec.utf8(), String.class).build())
        .namespacePrefix(prefix)
        .transactionAware(transactionAware)
        .build();
    closeables.add(built);
    return built;
  }

  private AnnotationConfigApplicationContext application(SustainableCacheManager cacheManager) {
    AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
    context.registerBean("cacheManager", SustainableCacheManager.class, () -> cacheManager);
    context.register(App.class);
    context.refresh();
    closeables.add(context);
    return context;
  }

  // -- the Cache interface ------------------------------------------------------------------------

  @Test
  void aMissIsNullForEveryRead() throws Exception {
    Cache cache = manager.getCache("books");
    assertThat(cache.get("k")).isNull();
    assertThat(cache.get("k", String.class)).isNull();
    CompletableFuture<?> retrieved = cache.retrieve("k");
    assertThat(retrieved == null ? null : retrieved.get(5, TimeUnit.SECONDS)).isNull();
  }

  @Test
  void putThenEveryReadSeesTheValue() throws Exception {
    Cache cache = manager.getCache("books");
    cache.put("k", "v");
    assertThat(cache.get("k")).extracting(Cache.ValueWrapper::get).isEqualTo("v");
    assertThat(cache.get("k", String.class)).isEqualTo("v");
    assertThat(unwrap(cache.retrieve("k").get(5, TimeUnit.SECONDS))).isEqualTo("v");
    assertThat(cache.get("k", () -> "loaded")).isEqualTo("v");
    assertThatThrownBy(() -> cache.get("k", Integer.class))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aCachedNullIsAWrapperHoldingNull() throws Exception {
    Cache cache = manager.getCache("books");
    cache.put("k", "old");
    cache.put("k", null);
    assertThat(cache.get("k")).isNotNull().extracting(Cache.ValueWrapper::get).isNull();
    assertThat(cache.get("k", String.class)).isNull();
    assertThat(cache.retrieve("k").get(5, TimeUnit.SECONDS))
        .isInstanceOfSatisfying(Cache.ValueWrapper.class, w -> assertThat(w.get()).isNull());
    assertThat(cache.get("k", () -> "loaded")).isNull();
  }

  @Test
  void putIfAbsentKeepsTheFirstValue() {
    Cache cache = manager.getCache("books");
    assertThat(cache.putIfAbsent("k", "first")).isNull();
    assertThat(cache.putIfAbsent("k", "second")).extracting(Cache.ValueWrapper::get)
        .isEqualTo("first");
    assertThat(cache.get("k", String.class)).isEqualTo("first");
  }

  @Test
  void evictAndEvictIfPresentRemoveTheKeyOnly() {
    Cache cache = manager.getCache("books");
    cache.put("a", "1");
    cache.put("b", "2");
    cache.evict("a");
    assertThat(cache.get("a")).isNull();
    assertThat(cache.evictIfPresent("b")).isFalse(); // presence is not determined
    assertThat(cache.get("b")).isNull();
    cache.evict("never written");
  }

  /**
   * {@code clear()} and {@code invalidate()} work on every store, plain memcached included (issue
   * 21: a new generation of the namespace, the core's default {@code invalidate-all-bound}).
   */
  @Test
  void clearAndInvalidateRemoveTheCache_onEveryStore() {
    Cache books = manager.getCache("books");
    Cache authors = manager.getCache("authors");
    books.put("k", "book");
    authors.put("k", "author");
    books.clear();
    assertThat(books.get("k")).isNull();
    books.put("k", "again");
    assertThat(books.invalidate()).isFalse();
    assertThat(books.get("k")).isNull();
    assertThat(authors.get("k", String.class)).as("another cache").isEqualTo("author");
    authors.put("k2", "still works");
    assertThat(authors.get("k2", String.class)).isEqualTo("still works");
  }

  @Test
  void getWithACallableLoadsOnceAndWrapsItsFailure() {
    Cache cache = manager.getCache("books");
    AtomicInteger calls = new AtomicInteger();
    assertThat(cache.get("k", () -> "v" + calls.incrementAndGet())).isEqualTo("v1");
    assertThat(cache.get("k", () -> "v" + calls.incrementAndGet())).isEqualTo("v1");
    assertThat(calls).hasValue(1);
    IOException failure = new IOException("db down");
    assertThatThrownBy(() -> cache.get("bad", () -> {
      throw failure;
    })).isInstanceOf(Cache.ValueRetrievalException.class).hasCause(failure);
  }

  @Test
  void retrieveWithASupplierLoadsOnceAndFailsWithTheLoadersException() throws Exception {
    Cache cache = manager.getCache("books");
    AtomicInteger calls = new AtomicInteger();
    assertThat(cache.retrieve("k", () -> CompletableFuture.completedFuture(
        "v" + calls.incrementAndGet())).get(5, TimeUnit.SECONDS)).isEqualTo("v1");
    assertThat(cache.retrieve("k", () -> CompletableFuture.completedFuture(
        "v" + calls.incrementAndGet())).get(5, TimeUnit.SECONDS)).isEqualTo("v1");
    assertThat(calls).hasValue(1);
    IOException failure = new IOException("db down");
    assertThatThrownBy(() -> cache.retrieve("bad", () -> CompletableFuture.failedFuture(failure))
        .get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class).hasCause(failure);
  }

  // -- the annotations --------------------------------------------------------------------------

  /** The annotated service; read counters through the proxy's methods. */
  public static class Books {
    private final AtomicInteger queries = new AtomicInteger();

    public int queries() {
      return queries.get();
    }

    @Cacheable(cacheNames = "books", sync = true)
    public String title(long id) {
      queries.incrementAndGet();
      return id == 0 ? null : "title " + id;
    }

    @Cacheable(cacheNames = "plain", condition = "#p0 > 0", unless = "#result.startsWith('x')")
    public String plain(long id) {
      queries.incrementAndGet();
      return (id == 7 ? "x" : "plain ") + id;
    }

    @Cacheable(cacheNames = "plain")
    public String nullable(String id) {
      queries.incrementAndGet();
      return null;
    }

    @Cacheable(cacheNames = "pairs", key = "#p0 + '/' + #p1")
    public String byAuthor(String author, int year) {
      queries.incrementAndGet();
      return author + " " + year;
    }

    @Cacheable(cacheNames = "pairs")
    public String pair(String a, String b) {
      queries.incrementAndGet();
      return a + "+" + b;
    }

    @Cacheable(cacheNames = "generated", keyGenerator = "firstArgument")
    public String generated(String first, String ignored) {
      queries.incrementAndGet();
      return "generated " + first;
    }

    @CachePut(cacheNames = "books", key = "#p0")
    public String rename(long id, String title) {
      return title;
    }

    @CacheEvict(cacheNames = "books")
    public void delete(long id) {}

    @CacheEvict(cacheNames = "books", allEntries = true)
    public void deleteAll() {}
  }

  @Configuration(proxyBeanMethods = false)
  @EnableCaching
  static class App {
    @Bean
    Books books() {
      return new Books();
    }

    @Bean
    KeyGenerator firstArgument() {
      return (Object target, Method method, Object... params) -> params[0];
    }
  }

  @Test
  void syncCacheableLoadsOncePerKey_nullIncluded() {
    Books books = application(manager).getBean(Books.class);
    assertThat(books.title(1)).isEqualTo("title 1");
    assertThat(books.title(1)).isEqualTo("title 1");
    assertThat(books.title(0)).isNull();
    assertThat(books.title(0)).isNull();
    assertThat(books.queries()).isEqualTo(2);
  }

  @Test
  void plainCacheableHonoursConditionUnlessAndCachesNull() {
    Books books = application(manager).getBean(Books.class);
    books.plain(1);
    books.plain(1);
    assertThat(books.queries()).as("cached").isEqualTo(1);
    books.plain(-1);
    books.plain(-1);
    assertThat(books.queries()).as("condition false: not cached").isEqualTo(3);
    books.plain(7);
    books.plain(7);
    assertThat(books.queries()).as("unless true: not cached").isEqualTo(5);
    assertThat(books.nullable("n")).isNull();
    assertThat(books.nullable("n")).isNull();
    assertThat(books.queries()).as("a null result is cached").isEqualTo(6);
  }

  @Test
  void spelKeysSimpleKeysAndKeyGeneratorsNameTheEntries() {
    Books books = application(manager).getBean(Books.class);
    books.byAuthor("ann", 2001);
    books.byAuthor("ann", 2001);
    books.pair("a", "b");
    books.pair("a", "b");
    books.generated("g", "one");
    books.generated("g", "two");
    assertThat(books.queries()).isEqualTo(3);
    Cache pairs = manager.getCache("pairs");
    assertThat(pairs.get("ann/2001", String.class)).isEqualTo("ann 2001");
    assertThat(pairs.get(new SimpleKey("a", "b"), String.class)).isEqualTo("a+b");
    assertThat(manager.getCache("generated").get("g", String.class)).isEqualTo("generated g");
  }

  @Test
  void cachePutAndCacheEvictChangeWhatTheNextCallSees() {
    Books books = application(manager).getBean(Books.class);
    assertThat(books.title(1)).isEqualTo("title 1");
    books.rename(1, "renamed");
    assertThat(books.title(1)).isEqualTo("renamed");
    books.delete(1);
    assertThat(books.title(1)).isEqualTo("title 1");
    assertThat(books.queries()).isEqualTo(2);
    books.deleteAll(); // @CacheEvict(allEntries = true)
    assertThat(books.title(1)).isEqualTo("title 1");
    assertThat(books.queries()).isEqualTo(3);
  }

  @Test
  void anEvictOnOneInstanceIsSeenByTheOther() throws Exception {
    SustainableCacheManager other = manager(store());
    Books first = application(manager).getBean(Books.class);
    Books second = application(other).getBean(Books.class);
    assertThat(first.title(1)).isEqualTo("title 1");
    second.rename(1, "renamed elsewhere");
    assertThat(first.title(1)).isEqualTo("renamed elsewhere");
    second.delete(1);
    assertThat(first.title(1)).isEqualTo("title 1");
    assertThat(first.queries()).isEqualTo(2);
  }

  /**
   * Issue 15: with the store down, a plain {@code @Cacheable} method still answers (Spring's put
   * after it must not throw), a {@code sync} one too (a failed read is a miss), and an evict
   * fails: the caller must learn that the old value may still be served.
   */
  @Test
  void aStoreThatIsDown_failsNoReadNorPut_butAnEvict() throws Exception {
    CacheStore failing = failingStore();
    Books books = application(manager(failing)).getBean(Books.class);
    assertThat(books.plain(1)).isEqualTo("plain 1");
    assertThat(books.plain(1)).isEqualTo("plain 1");
    assertThat(books.title(2)).isEqualTo("title 2");
    assertThat(books.nullable("n")).isNull();
    assertThat(books.queries()).as("nothing could be cached").isEqualTo(4);
    assertThatThrownBy(() -> books.delete(2))
        .isInstanceOf(io.sustainablecache.spi.StoreException.class);
  }

  // -- issue 24: calls on the store's threads, reactive caching, failed near-log records -------

  /**
   * The adapters' default operation timeout, 700 ms: a call that waited on the store's own thread
   * for an answer that thread must deliver waits all of it (and then fails), so a call parked for
   * less than it did not wait. The reactive calls below are timed whole (they block the test's own
   * thread on their answer, which is no fault); 300 ms was not enough room for them beside other
   * builds (464 ms once at load 12).
   */
  private static final long PROMPT_MILLIS = 700;

  private void onStoresThread(Runnable task) {
    if (completesOnClientThreads()) {
      ClientThreads.onCompletionThread(manager.store(), () -> {
        task.run();
        return null;
      });
    } else {
      ClientThreads.onSchedulerThread(task);
    }
  }

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /**
   * Runs {@code action} and records how long the calling thread was parked in it
   * (milliseconds in {@code WAITING} or {@code TIMED_WAITING}, by the JVM's thread contention
   * monitoring): a call that waits on its own thread for an answer that thread must deliver is
   * parked for the whole operation timeout, while a thread that a busy machine deschedules is not
   * parked at all, so this tells a wait from a slow machine where the call's duration cannot
   * (761 ms for a prompt {@code get(Callable)} once at load 20 to 35). Falls back to the call's
   * duration where the JVM does not monitor it.
   */
  private static void parked(Map<String, Long> took, String call, Callable<?> action) {
    if (!THREADS.isThreadContentionMonitoringSupported()) {
      time(took, call, action);
      return;
    }
    THREADS.setThreadContentionMonitoringEnabled(true);
    long id = Thread.currentThread().getId();
    long before = THREADS.getThreadInfo(id).getWaitedTime();
    try {
      action.call();
    } catch (Exception e) {
      throw new AssertionError(call + " failed", e);
    }
    took.put(call, THREADS.getThreadInfo(id).getWaitedTime() - before);
  }

  private static void time(Map<String, Long> took, String call, Callable<?> action) {
    long start = System.nanoTime();
    try {
      action.call();
    } catch (Exception e) {
      throw new AssertionError(call + " failed", e);
    }
    took.put(call, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
  }

  /**
   * Issue 24, defect 1: every method of the Spring cache and of the manager returns promptly on
   * the client's I/O thread (where Spring's reactive caching calls them), and a write issued there
   * is visible afterwards.
   */
  @Test
  void everyMethodOfTheCacheAndTheManager_returnsPromptly_onTheStoresThread() {
    everyMethodReturnsPromptly(this::onStoresThread);
  }

  /** Issue 24, defect 1: the same on the shared scheduler's thread. */
  @Test
  void everyMethodOfTheCacheAndTheManager_returnsPromptly_onTheSchedulersThread() {
    everyMethodReturnsPromptly(ClientThreads::onSchedulerThread);
  }

  private void everyMethodReturnsPromptly(Consumer<Runnable> there) {
    Cache cache = manager.getCache("books");
    cache.put("hit", "cached");
    Map<String, Long> took = new LinkedHashMap<>();
    there.accept(() -> {
      parked(took, "get", () -> cache.get("hit"));
      parked(took, "get(Class)", () -> cache.get("hit", String.class));
      parked(took, "get(Callable)", () -> cache.get("miss", () -> "loaded"));
      parked(took, "retrieve", () -> cache.retrieve("hit"));
      parked(took, "retrieve(Supplier)", () -> cache.retrieve("miss2",
          () -> CompletableFuture.completedFuture("loaded")));
      parked(took, "put", () -> {
        cache.put("put", "written there");
        return null;
      });
      parked(took, "putIfAbsent", () -> cache.putIfAbsent("added", "added there"));
      parked(took, "evict", () -> {
        cache.evict("hit");
        return null;
      });
      parked(took, "evictIfPresent", () -> cache.evictIfPresent("nothing"));
      parked(took, "getCache(created there)", () -> manager.getCache("created-there"));
      parked(took, "getCacheNames", manager::getCacheNames);
    });
    assertThat(took).allSatisfy((call, millis) ->
        assertThat(millis).as(call).isLessThan(PROMPT_MILLIS));
    await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
      assertThat(cache.get("put", String.class)).isEqualTo("written there");
      assertThat(cache.get("added", String.class)).isEqualTo("added there");
      assertThat(cache.get("hit")).as("evicted there").isNull();
    });
    there.accept(() -> {
      parked(took, "clear", () -> {
        cache.clear();
        return null;
      });
      parked(took, "invalidate", cache::invalidate);
    });
    assertThat(took).allSatisfy((call, millis) ->
        assertThat(millis).as(call).isLessThan(PROMPT_MILLIS));
  }

  /** Methods whose results Spring caches itself, without {@code sync}. */
  public static class Reactive {
    private final AtomicInteger calls = new AtomicInteger();

    public int calls() {
      return calls.get();
    }

    @Cacheable("futures")
    public CompletableFuture<String> future(long id) {
      calls.incrementAndGet();
      return CompletableFuture.completedFuture("future " + id);
    }

    @Cacheable("monos")
    public Mono<String> mono(long id) {
      calls.incrementAndGet();
      return Mono.just("mono " + id);
    }

    @Cacheable("fluxes")
    public Flux<String> flux(long id) {
      calls.incrementAndGet();
      return Flux.just("flux " + id, "and more");
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableCaching
  static class ReactiveApp {
    @Bean
    Reactive reactive() {
      return new Reactive();
    }
  }

  /**
   * Issue 24, defect 1, as users hit it: a {@code @Cacheable} method returning a {@code
   * CompletableFuture}, {@code Mono} or {@code Flux}, without {@code sync} (Spring's reactive
   * caching calls {@code retrieve}, then {@code put} where the method's result completes: on the
   * client's I/O thread). The second call is a hit, and no call waits for the operation timeout.
   */
  @Test
  void reactiveAndFutureCacheableWithoutSync_theSecondCallIsAHit_andNoCallWaits() {
    SustainableCacheManager withLists = SustainableCacheManager.builder(manager.store())
        .defaults(CacheSpec.builder().settings(CacheSettings.parse("ttl=" + TTL))
            .codec(ValueCodec.utf8(), String.class).build())
        .cache("fluxes", CacheSpec.builder().codec(ValueCodec.javaSerialization(ArrayList.class,
            "java.util.ArrayList;java.lang.String"), ArrayList.class).build())
        .namespacePrefix(prefix)
        .build();
    closeables.add(withLists);
    AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
    context.registerBean("cacheManager", SustainableCacheManager.class, () -> withLists);
    context.register(ReactiveApp.class);
    context.refresh();
    closeables.add(context);
    Reactive reactive = context.getBean(Reactive.class);
    // warm-up, not timed: classes loaded, caches created (a miss of another key each)
    assertThat(reactive.future(0).join()).isEqualTo("future 0");
    assertThat(reactive.mono(0).block(Duration.ofSeconds(10))).isEqualTo("mono 0");
    assertThat(reactive.flux(0).collectList().block(Duration.ofSeconds(10))).hasSize(2);
    int warmUpCalls = reactive.calls();
    Map<String, Long> took = new LinkedHashMap<>();
    for (int call = 1; call <= 2; call++) { // a miss, then a hit
      int n = call;
      time(took, "future, call " + n, () -> assertThat(reactive.future(1).get(10,
          TimeUnit.SECONDS)).isEqualTo("future 1"));
      time(took, "mono, call " + n, () -> assertThat(reactive.mono(1)
          .block(Duration.ofSeconds(10))).isEqualTo("mono 1"));
      time(took, "flux, call " + n, () -> assertThat(reactive.flux(1).collectList()
          .block(Duration.ofSeconds(10))).containsExactly("flux 1", "and more"));
    }
    assertThat(reactive.calls() - warmUpCalls)
        .as("each method ran once for key 1: its second call was a hit").isEqualTo(3);
    assertThat(took).allSatisfy((call, millis) ->
        assertThat(millis).as(call).isLessThan(PROMPT_MILLIS));
  }

  /**
   * Issue 24, defect 2: with a near cache, a put whose value landed but whose record in the near
   * cache's invalidation log failed (only the log's {@code incr} fails here) is thrown, so that
   * Spring's {@code CacheErrorHandler} sees it (the default one rethrows), and counted.
   */
  @Test
  void withANearCache_aPutWhoseNearLogRecordFailed_isOwed_andCounted() throws Exception {
    AtomicBoolean failIncr = new AtomicBoolean();
    CacheStore failingIncr = new ForwardingStore(store()) {
      @Override
      public CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
        return failIncr.get()
            ? CompletableFuture.failedFuture(new StoreException("incr failed (test)"))
            : super.incr(key, delta, initial, exptime);
      }
    };
    SustainableCacheManager near = SustainableCacheManager.builder(failingIncr)
        .defaults(CacheSpec.builder().settings(CacheSettings.parse("ttl=" + TTL + ", near-cache=1000:1s"))
            .codec(ValueCodec.utf8(), String.class).build())
        .namespacePrefix(prefix + "near.")
        .build();
    closeables.add(near);
    SustainableSpringCache cache = (SustainableSpringCache) near.getCache("books");
    cache.put("k", "before");
    failIncr.set(true);

    cache.put("k", "replaced"); // issue 31: owed (a tombstone, recorded, once the log answers)
    assertThatThrownBy(() -> cache.putIfAbsent("new", "added"))
        .isInstanceOf(StoreException.class).hasMessageContaining("near cache's log");
    Books books = application(near).getBean(Books.class);
    books.rename(1, "renamed"); // @CachePut: owed too, the request not failed
    // the three writes' records, and any payment of the owed keys tried while incr still fails
    assertThat(cache.getNativeCache().stats().count("near_record_failure"))
        .isGreaterThanOrEqualTo(3);
    assertThat(cache.getNativeCache().stats().count("unprotected_write")).isEqualTo(2);
  }

  /**
   * Without a near cache nothing is bound: a failed put is counted, not thrown (issue 15).
   */
  @Test
  void withoutANearCache_aFailedPutIsCountedNotThrown() throws Exception {
    CacheStore failing = failingStore();
    Cache cache = manager(failing).getCache("books");
    cache.put("k", "v");
    assertThat(cache.putIfAbsent("k", "v")).isNull();
    assertThat(((SustainableSpringCache) cache).getNativeCache().stats().storeErrorCount())
        .isGreaterThanOrEqualTo(2);
  }

  // -- issue 21: writes inside database transactions (H2, DataSourceTransactionManager) ---------

  /** Rounds of each race: every round is one write racing one read. */
  private static final int ROUNDS = 6;

  private BookTable bookTable() {
    BookTable table = new BookTable();
    closeables.add(table);
    return table;
  }

  /**
   * Issue 21, as users hit it: a transaction updates a row and evicts its key, and another
   * instance reads the key (through the cache, loading the row) between the evict and the
   * commit. The read sees the committed, old row; after the commit both instances read the new
   * one, in every round. Without transaction awareness the read caches the old row on the
   * evict's tombstone, as the issue measured (6 of 6).
   */
  @Test
  void anEvictInsideATransaction_raceAReadOnAnotherInstance_noRoundIsStaleAfterTheCommit()
      throws Exception {
    BookTable table = bookTable();
    assertThat(staleRoundsOfAnEvictRacingARead(manager, manager(store()), table)).isZero();
  }

  /** The same race with {@code transactionAware(false)}: every round is stale. */
  @Test
  void withoutTransactionAwareness_everyRoundOfTheSameRaceIsStale() throws Exception {
    BookTable table = bookTable();
    assertThat(staleRoundsOfAnEvictRacingARead(manager(store(), false), manager(store(), false),
        table)).isEqualTo(ROUNDS);
  }

  private static int staleRoundsOfAnEvictRacingARead(SustainableCacheManager writer,
      SustainableCacheManager reader, BookTable table) {
    Cache writes = writer.getCache("titles");
    Cache reads = reader.getCache("titles");
    int stale = 0;
    for (long id = 1; id <= ROUNDS; id++) {
      long key = id;
      table.insert(key, "old " + key);
      assertThat(reads.get(key, () -> table.title(key))).isEqualTo("old " + key);
      String during = table.template().execute(status -> {
        table.update(key, "new " + key);
        writes.evict(key);
        return table.readElsewhere(() -> reads.get(key, () -> table.title(key)));
      });
      assertThat(during).as("the racing read, before the commit").isEqualTo("old " + key);
      String afterOnReader = reads.get(key, () -> table.title(key));
      String afterOnWriter = writes.get(key, () -> table.title(key));
      if (!("new " + key).equals(afterOnReader) || !("new " + key).equals(afterOnWriter)) {
        stale++;
      }
    }
    return stale;
  }

  /**
   * The same race with a near cache on both instances (1 s bound), the reader's instance never
   * having held the key: the writer's instance reads the new row at once after the commit, the
   * reader's within the bound (not after the 1 min TTL).
   */
  @Test
  void withNearCaches_anEvictInsideATransaction_isSeenAtOnceByTheWriter_andWithinTheBoundElsewhere()
      throws Exception {
    BookTable table = bookTable();
    Cache writes = nearManager(store(), "near.").getCache("titles");
    Cache reads = nearManager(store(), "near.").getCache("titles");
    for (long id = 1; id <= ROUNDS; id++) {
      long key = id;
      table.insert(key, "old " + key);
      assertThat(writes.get(key, () -> table.title(key))).isEqualTo("old " + key);
      String during = table.template().execute(status -> {
        table.update(key, "new " + key);
        writes.evict(key);
        return table.readElsewhere(() -> reads.get(key, () -> table.title(key)));
      });
      assertThat(during).as("the racing read, before the commit").isEqualTo("old " + key);
      assertThat(writes.get(key, () -> table.title(key))).as("the writer's instance, at once")
          .isEqualTo("new " + key);
      await().atMost(5, TimeUnit.SECONDS).untilAsserted(() ->
          assertThat(reads.get(key, () -> table.title(key))).as("the reader's instance")
              .isEqualTo("new " + key));
    }
  }

  private SustainableCacheManager nearManager(CacheStore store, String namespace) {
    SustainableCacheManager near = SustainableCacheManager.builder(store)
        .defaults(CacheSpec.builder().settings(CacheSettings.parse("ttl=" + TTL + ", near-cache=1000:1s"))
            .codec(ValueCodec.utf8(), String.class).build())
        .namespacePrefix(prefix + namespace)
        .build();
    closeables.add(near);
    return near;
  }

  /**
   * {@code clear} inside a transaction, on every store: at once and again after the commit (a
   * value loaded during the transaction is gone).
   */
  @Test
  void aClearInsideATransaction_clearsAtOnceAndAfterTheCommit() {
    BookTable table = bookTable();
    Cache titles = manager.getCache("titles");
    titles.put(1L, "before");
    table.template().executeWithoutResult(status -> {
      titles.clear();
      assertThat(titles.get(1L)).as("cleared at once").isNull();
      assertThat(table.readElsewhere(() -> titles.get(2L, () -> "loaded during it")))
          .isEqualTo("loaded during it");
    });
    assertThat(titles.get(1L)).isNull();
    assertThat(titles.get(2L)).as("loaded during the transaction").isNull();
  }

  /**
   * {@code clear()} on one application instance (its own client) reaches another within the
   * core's default bound (1 s); every read of the other instance checked until then.
   */
  @Test
  void aClearOnOneInstance_reachesAnotherWithinTheBound() throws Exception {
    SustainableCacheManager other = manager(store());
    Cache here = manager.getCache("books");
    Cache there = other.getCache("books");
    here.put("k", "old");
    assertThat(there.get("k", String.class)).isEqualTo("old");

    here.clear();
    long cleared = System.nanoTime();
    assertThat(here.get("k")).as("here, at once").isNull();
    await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20)).untilAsserted(() -> {
      // when the read began, not when it returned: the bound is on reads that begin later
      long after = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cleared);
      String seen = there.get("k", String.class);
      if (seen != null) {
        assertThat(after).as("the other instance served the old value to a read begun %d ms"
            + " after", after).isLessThanOrEqualTo(DEFAULT_INVALIDATE_ALL_BOUND.toMillis());
      }
      assertThat(seen).isNull();
    });
  }

  /** A service whose writes are {@code @Transactional} and whose reads are cached. */
  static class Library {
    private final BookTable table;
    private volatile Runnable beforeCommit = () -> {};

    Library(BookTable table) {
      this.table = table;
    }

    /** What each write's transaction runs just before its commit, after the cache's write. */
    public void beforeCommit(Runnable action) {
      beforeCommit = action;
    }

    @Cacheable(cacheNames = "titles", sync = true)
    public String title(long id) {
      return table.title(id);
    }

    @Transactional
    @CacheEvict(cacheNames = "titles", key = "#p0")
    public void rename(long id, String title) {
      table.update(id, title);
      BookTable.beforeCommit(beforeCommit);
    }

    @Transactional
    @CachePut(cacheNames = "titles", key = "#p0")
    public String retitle(long id, String title) {
      table.update(id, title);
      BookTable.beforeCommit(beforeCommit);
      return title;
    }
  }

  /** The transaction around the caching advice, so that the cache's writes run inside it. */
  @Configuration(proxyBeanMethods = false)
  @EnableTransactionManagement(order = 0)
  @EnableCaching(order = 1)
  static class LibraryApp {
    @Bean
    Library library(BookTable table) {
      return new Library(table);
    }

    @Bean
    PlatformTransactionManager transactionManager(BookTable table) {
      return table.transactionManager();
    }
  }

  private Library library(SustainableCacheManager cacheManager, BookTable table) {
    AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
    context.registerBean("cacheManager", SustainableCacheManager.class, () -> cacheManager);
    context.registerBean(BookTable.class, () -> table);
    context.register(LibraryApp.class);
    context.refresh();
    closeables.add(context);
    return context.getBean(Library.class);
  }

  /**
   * {@code @CacheEvict} on a {@code @Transactional} method (the cache's advice inside the
   * transaction's): a {@code @Cacheable(sync = true)} read between the evict and the commit
   * reads the old row and leaves nothing cached; after the commit the new row is read.
   */
  @Test
  void cacheEvictInsideTransactional_aSyncCacheableReadBeforeTheCommit_doesNotOutliveIt() {
    BookTable table = bookTable();
    Library library = library(manager, table);
    table.insert(1, "old");
    assertThat(library.title(1)).isEqualTo("old");
    AtomicReference<String> during = new AtomicReference<>();
    library.beforeCommit(() -> during.set(table.readElsewhere(() -> library.title(1))));
    library.rename(1, "new");
    assertThat(during).hasValue("old");
    assertThat(library.title(1)).isEqualTo("new");
  }

  /**
   * {@code @CachePut} on a {@code @Transactional} method: a read before the commit does not see
   * the uncommitted value (it loads the committed row and caches nothing); after the commit the
   * value put is cached, with no query.
   */
  @Test
  void cachePutInsideTransactional_theValueIsCachedAfterTheCommit_notBefore() {
    BookTable table = bookTable();
    Library library = library(manager, table);
    table.insert(1, "old");
    assertThat(library.title(1)).isEqualTo("old");
    AtomicReference<String> during = new AtomicReference<>();
    library.beforeCommit(() -> during.set(table.readElsewhere(() -> library.title(1))));
    assertThat(library.retitle(1, "new")).isEqualTo("new");
    assertThat(during).as("not the uncommitted value").hasValue("old");
    int queries = table.queries();
    assertThat(library.title(1)).isEqualTo("new");
    assertThat(table.queries()).as("the value put is cached").isEqualTo(queries);
  }

  /**
   * A transaction that puts and evicts, then rolls back: afterwards the unchanged row is read and
   * cached again (the next read does not query).
   */
  @Test
  void aTransactionThatRollsBack_leavesTheUnchangedValue_cachedAgain() {
    BookTable table = bookTable();
    Cache titles = manager.getCache("titles");
    table.insert(1, "one");
    table.insert(2, "two");
    assertThat(titles.get(1L, () -> table.title(1))).isEqualTo("one");
    assertThat(titles.get(2L, () -> table.title(2))).isEqualTo("two");
    table.template().executeWithoutResult(status -> {
      table.update(1, "uncommitted one");
      titles.put(1L, "uncommitted one");
      table.update(2, "uncommitted two");
      titles.evict(2L);
      status.setRollbackOnly();
    });
    assertThat(titles.get(1L, () -> table.title(1))).isEqualTo("one");
    assertThat(titles.get(2L, () -> table.title(2))).isEqualTo("two");
    int queries = table.queries();
    assertThat(titles.get(1L, () -> table.title(1))).isEqualTo("one");
    assertThat(titles.get(2L, () -> table.title(2))).isEqualTo("two");
    assertThat(table.queries()).as("cached again").isEqualTo(queries);
  }

  private static Object unwrap(Object retrieved) {
    return retrieved instanceof Cache.ValueWrapper wrapper ? wrapper.get() : retrieved;
  }
}
