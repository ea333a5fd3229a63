package io.sustainablecache.spring.boot.starter.memcached;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.CacheStats;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spring.SustainableCacheManager;
import io.sustainablecache.spring.SustainableSpringCache;
import io.sustainablecache.spring.boot.autoconfigure.SustainableCacheManagerCustomizer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cache.CacheManager;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/**
 * Issue 33 against a real memcached, through the starter: {@code @Cacheable(sync = true)}
 * methods of a cache with a registered bulk loader are coalesced (part 1), a page of ids is read
 * with one store round trip and one loader call for its misses, over the same entries (part 2),
 * and methods returning {@code CompletableFuture} or {@code Mono} never block a thread, nor run
 * on the store's I/O thread (part 4).
 */
final class CoalescedCacheableIT {

  /** The "database": counts calls and ids, records the threads the calls ran on. */
  static final class BookTable {
    final AtomicInteger bulkCalls = new AtomicInteger();
    final AtomicInteger singleCalls = new AtomicInteger();
    final ConcurrentLinkedQueue<Set<Long>> batches = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<Thread> bulkThreads = new ConcurrentLinkedQueue<>();

    /**
     * Set by the burst: every call waits (at most 30 s) until it is true, as a query would that
     * takes as long as a loaded machine takes to start 200 threads. What the burst checks is
     * that misses arriving while calls run are merged into few calls; how many calls 200
     * threads make when a call is shorter than their start depends on the machine (the lab's
     * {@code --spring} measures that). Holding only the first call was not enough: the full
     * batch that formed meanwhile started, ran at once, and each batch's end started the few
     * misses that had arrived by then (13 and 14 calls in CI, on a machine slow to start them).
     */
    volatile BooleanSupplier callsWaitFor;

    Map<Long, String> findAll(Set<Long> ids) throws InterruptedException {
      BooleanSupplier gate = callsWaitFor;
      if (gate != null) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5))
            .until(gate::getAsBoolean);
      }
      bulkCalls.incrementAndGet();
      batches.add(Set.copyOf(ids));
      bulkThreads.add(Thread.currentThread());
      return ids.stream().filter(id -> id % 1000 != 999) // ...999: no such book
          .collect(Collectors.toMap(id -> id, CoalescedCacheableIT::title));
    }

    String find(long id) {
      singleCalls.incrementAndGet();
      return id % 1000 == 999 ? null : title(id);
    }
  }

  static String title(long id) {
    return "title " + id;
  }

  static class BookService {
    private final BookTable table;

    BookService(BookTable table) {
      this.table = table;
    }

    /** Coalesced: the cache's bulk loader answers; the body is the single-id query. */
    @Cacheable(cacheNames = "books", sync = true)
    public String book(long id) {
      return table.find(id);
    }

    /** The same cache, read by a reactive caller. */
    @Cacheable(cacheNames = "books", sync = true)
    public CompletableFuture<String> bookAsync(long id) {
      return CompletableFuture.completedFuture(table.find(id));
    }
  }

  /** What the price methods did; a bean of its own, since the services are proxies. */
  static final class PriceLoads {
    final ConcurrentLinkedQueue<Thread> bodyThreads = new ConcurrentLinkedQueue<>();
    final AtomicInteger calls = new AtomicInteger();
    /** Completed by the test: the loader's answer arrives when the test says so. */
    final CompletableFuture<String> pending = new CompletableFuture<>();

    CompletableFuture<String> called() {
      bodyThreads.add(Thread.currentThread());
      calls.incrementAndGet();
      return pending;
    }
  }

  /** A cache without a bulk loader: the method is the loader. */
  static class PriceService {
    private final PriceLoads loads;

    PriceService(PriceLoads loads) {
      this.loads = loads;
    }

    @Cacheable(cacheNames = "prices", sync = true)
    public CompletableFuture<String> price(long id) {
      return loads.called();
    }

    @Cacheable(cacheNames = "prices", sync = true)
    public Mono<String> priceMono(String id) {
      return Mono.fromFuture(loads.called());
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableCaching
  static class App {
    @Bean
    BookTable bookTable() {
      return new BookTable();
    }

    @Bean
    BookService bookService(BookTable table) {
      return new BookService(table);
    }

    @Bean
    PriceLoads priceLoads() {
      return new PriceLoads();
    }

    @Bean
    PriceService priceService(PriceLoads loads) {
      return new PriceService(loads);
    }

    /** Part 1's registration: one bulk loader per cache name, by id. */
    @Bean
    SustainableCacheManagerCustomizer bookLoader(BookTable table) {
      return manager -> manager.bulkLoader("books", Long.class, table::findAll);
    }
  }

  private static ApplicationContextRunner runner() {
    return MemcachedStarterIT.starter(App.class)
        .withPropertyValues(
            "sustainable-cache.settings.ttl=10m",
            "sustainable-cache.value-type=java.lang.String",
            // a batch forming while a call runs waits for it, or at most 50 ms
            "sustainable-cache.caches.books.settings.coalesce=100:50ms");
  }

  /**
   * 200 concurrent cold calls: the first call, the batch that fills to 100 while it runs (both
   * held until all have missed), and the rest when one of them is over, with at most a few
   * misses counted but not yet offered then (no maximum wait: a batch waits for a running call
   * or a full batch, so the count does not depend on the machine's speed).
   */
  @Test
  void twoHundredConcurrentColdCacheableCallsMakeAtMostTenBulkCalls() {
    runner().withPropertyValues("sustainable-cache.caches.books.settings.coalesce=100")
        .run(context -> {
      BookService service = context.getBean(BookService.class);
      BookTable table = context.getBean(BookTable.class);
      CacheStats before = ((SustainableSpringCache) context.getBean(CacheManager.class)
          .getCache("books")).getNativeCache().stats();
      int threads = 200;
      // a call runs until every caller has missed: the others wait for it, as they would for
      // a query that takes as long as a loaded machine takes to start 200 threads
      table.callsWaitFor = () -> ((SustainableSpringCache) context.getBean(
          CacheManager.class).getCache("books")).getNativeCache().stats().minus(before)
          .missCount() >= threads;
      CyclicBarrier start = new CyclicBarrier(threads);
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        List<Future<String>> answers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
          long id = 1_000_000 + i;
          answers.add(pool.submit(() -> {
            start.await();
            return service.book(id);
          }));
        }
        for (int i = 0; i < threads; i++) {
          assertThat(answers.get(i).get(60, TimeUnit.SECONDS)).isEqualTo(title(1_000_000 + i));
        }
      } finally {
        pool.shutdownNow();
      }
      System.out.println("bulk calls for 200 cold ids, batch sizes: "
          + table.batches.stream().map(Set::size).toList());
      assertThat(table.bulkCalls.get()).as("bulk calls for 200 cold ids, batch sizes %s",
          table.batches.stream().map(Set::size).toList()).isBetween(1, 10);
      assertThat(table.batches.stream().mapToInt(Set::size).sum()).as("ids loaded")
          .isEqualTo(threads);
      assertThat(table.singleCalls.get()).as("calls of the method body").isZero();
      // and they are cached: the same 200 calls again load nothing
      for (int i = 0; i < threads; i++) {
        assertThat(service.book(1_000_000 + i)).isEqualTo(title(1_000_000 + i));
      }
      assertThat(table.bulkCalls.get()).as("bulk calls after the hits").isLessThanOrEqualTo(10);
    });
  }

  /**
   * An idle miss does not wait for a batch: the bulk loader runs on the caller's own thread,
   * at once, with the caller's id alone (the cache's 50 ms maximum wait is not waited).
   */
  @Test
  void anIdleMissCallsTheBulkLoaderAtOnceOnTheCallersThread() {
    runner().run(context -> {
      BookService service = context.getBean(BookService.class);
      BookTable table = context.getBean(BookTable.class);
      assertThat(service.book(2_000_001)).isEqualTo(title(2_000_001));
      assertThat(table.batches).containsExactly(Set.of(2_000_001L));
      assertThat(table.bulkThreads).containsExactly(Thread.currentThread());
      // an id the loader leaves out is a cached null, as the method's null would be
      assertThat(service.book(2_000_999)).isNull();
      assertThat(service.book(2_000_999)).isNull();
      assertThat(table.bulkCalls.get()).isEqualTo(2);
    });
  }

  /**
   * Part 2: a page of 100 ids, 90 of them cached by single-key {@code @Cacheable} calls, costs
   * one loader call of the 10 others; then the single-key calls hit what the page loaded.
   */
  @Test
  void aPageOfOneHundredIdsNinetyCachedLoadsTheTenOthersInOneCallOverTheSameEntries() {
    runner().run(context -> {
      BookService service = context.getBean(BookService.class);
      BookTable table = context.getBean(BookTable.class);
      SustainableSpringCache books = (SustainableSpringCache) context.getBean(CacheManager.class)
          .getCache("books");
      List<Long> page = LongStream.range(3_000_000, 3_000_100).boxed().toList();
      for (long id : page.subList(0, 90)) {
        service.book(id);
      }
      int callsBefore = table.bulkCalls.get();
      table.batches.clear();

      Map<Long, String> explicit = books.getAll(page, table::findAll);

      assertThat(table.bulkCalls.get() - callsBefore).as("loader calls for the page").isOne();
      assertThat(table.batches).containsExactly(Set.copyOf(page.subList(90, 100)));
      assertThat(explicit.keySet()).containsExactlyElementsOf(page);
      page.forEach(id -> assertThat(explicit.get(id)).isEqualTo(title(id)));
      // the registered loader's form: everything is cached now, nothing loads
      Map<Long, String> registered = books.getAll(page);
      assertThat(registered).isEqualTo(explicit);
      for (long id : page.subList(90, 100)) {
        assertThat(service.book(id)).isEqualTo(title(id));
      }
      assertThat(table.bulkCalls.get() - callsBefore).as("loader calls after all hits").isOne();
      assertThat(table.singleCalls.get()).isZero();
    });
  }

  /** Part 2 with the registered loader, over cold ids: one call, and no-value ids left out. */
  @Test
  void aColdPageThroughTheRegisteredLoaderIsOneCallAndLeavesOutIdsWithoutValue() {
    runner().run(context -> {
      BookTable table = context.getBean(BookTable.class);
      SustainableSpringCache books = (SustainableSpringCache) context.getBean(CacheManager.class)
          .getCache("books");
      List<Long> page = LongStream.range(4_000_950, 4_001_000).boxed().toList();
      Map<Long, String> found = books.getAll(page);
      assertThat(table.bulkCalls.get()).isOne();
      assertThat(found).hasSize(49).doesNotContainKey(4_000_999L);
      assertThatThrownBy(() -> books.getAll(List.of("4000950")))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("java.lang.Long");
    });
  }

  /**
   * Part 4: a {@code CompletableFuture} method with {@code sync = true} goes through {@code
   * retrieve}: the call returns before its loader's answer exists, the method body never runs on
   * a memcached I/O thread, and the value, once the loader answers, is cached.
   */
  @Test
  void aCompletableFutureMethodReturnsBeforeItsLoaderCompletesAndNeverRunsOnTheIoThread() {
    runner().run(context -> {
      PriceService service = context.getBean(PriceService.class);
      PriceLoads loads = context.getBean(PriceLoads.class);
      CacheStore store = context.getBean(CacheStore.class);
      CompletableFuture<String> loader = loads.pending;

      CompletableFuture<String> first = service.price(7);
      CompletableFuture<String> second = service.price(7);

      assertThat(first).as("returned before the loader completed").isNotDone();
      assertThat(second).isNotDone();
      await().atMost(Duration.ofSeconds(30)).until(() -> loads.calls.get() == 1);
      loader.complete("price 7");
      assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("price 7");
      assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo("price 7");
      assertThat(service.price(7).get(10, TimeUnit.SECONDS)).isEqualTo("price 7");
      assertThat(loads.calls.get()).as("one load for three calls").isOne();
      assertThat(loads.bodyThreads).noneMatch(store::isCompletionThread);
    });
  }

  /** Part 4 with Reactor: the same through a {@code Mono} method. */
  @Test
  void aMonoMethodSubscribesWithoutBlockingAndNeverRunsOnTheIoThread() {
    runner().run(context -> {
      PriceService service = context.getBean(PriceService.class);
      PriceLoads loads = context.getBean(PriceLoads.class);
      CacheStore store = context.getBean(CacheStore.class);
      CompletableFuture<String> loader = loads.pending;

      CompletableFuture<String> first = service.priceMono("m8").toFuture();

      assertThat(first).as("subscribed, not blocked on the loader").isNotDone();
      await().atMost(Duration.ofSeconds(30)).until(() -> loads.calls.get() == 1);
      loader.complete("price m8");
      assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("price m8");
      assertThat(service.priceMono("m8").toFuture().get(10, TimeUnit.SECONDS))
          .isEqualTo("price m8");
      assertThat(loads.calls.get()).isOne();
      assertThat(loads.bodyThreads).noneMatch(store::isCompletionThread);
    });
  }

  /**
   * Part 4 over a coalesced cache: an asynchronous caller's bulk load runs on the caller's thread
   * or a refresh thread, never on the store's I/O thread.
   */
  @Test
  void anAsyncMethodOfACoalescedCacheNeverLoadsOnTheIoThread() {
    runner().run(context -> {
      BookService service = context.getBean(BookService.class);
      BookTable table = context.getBean(BookTable.class);
      CacheStore store = context.getBean(CacheStore.class);
      Map<Long, CompletableFuture<String>> answers = new HashMap<>();
      for (long id = 5_000_000; id < 5_000_050; id++) {
        answers.put(id, service.bookAsync(id));
      }
      for (Map.Entry<Long, CompletableFuture<String>> e : answers.entrySet()) {
        assertThat(e.getValue().get(30, TimeUnit.SECONDS)).isEqualTo(title(e.getKey()));
      }
      assertThat(table.singleCalls.get()).isZero();
      assertThat(table.bulkThreads).isNotEmpty().noneMatch(store::isCompletionThread);
    });
  }
}
