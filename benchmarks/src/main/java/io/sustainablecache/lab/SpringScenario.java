package io.sustainablecache.lab;

import io.sustainablecache.CacheSettings;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.arcus.ArcusStore;
import io.sustainablecache.spring.BulkCacheLoader;
import io.sustainablecache.spring.CacheSpec;
import io.sustainablecache.spring.SustainableCacheManager;
import io.sustainablecache.spring.SustainableSpringCache;
import io.sustainablecache.testkit.memcached.MemcachedCluster;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import net.spy.memcached.ArcusClient;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code --spring} (issue 33): {@code @Cacheable(sync = true)} methods through a Spring proxy and
 * a {@link SustainableCacheManager} over one real memcached the lab starts, the database
 * simulated as in {@code --coalesce} (a query takes {@code --query-ms} + 0.05 ms per id). Side
 * by side in one run, per round on fresh ids:
 * <ol>
 *   <li><b>burst</b>: 200 threads each call the method for a different cold id at one instant;
 *       the cache with a registered bulk loader ({@code coalesced}) against the same cache where
 *       the method is the loader ({@code per-call}): database calls, callers' p50;</li>
 *   <li><b>idle</b>: one cold call at a time: its latency, coalesced and per-call (the coalesced
 *       cache has a 50 ms maximum batch wait that an idle miss must not wait for);</li>
 *   <li><b>page</b>: a page of 100 ids, 90 of them cached by single-id calls: {@code getAll} with
 *       a bulk loader against 100 {@code @Cacheable} calls, time and database calls.</li>
 * </ol>
 * Medians over the rounds.
 *
 * <pre>
 * java -jar benchmarks/target/stampede-lab.jar --spring [--rounds 5] [--threads 200]
 *     [--idle 10] [--query-ms 5]
 * </pre>
 */
final class SpringScenario {

  private static final String USAGE = """
      stampede-lab --spring: @Cacheable through Spring, coalesced and multi-key (issue 33)
        --rounds R      rounds, each on fresh ids (default 5)
        --threads N     burst: threads, each a different cold id at once (default 200)
        --idle N        idle: cold calls one after another, per round (default 10)
        --query-ms Q    a query's fixed time, ms (default 5; then 0.05 ms per id)
      Goals: burst <= 10 database calls (coalesced); idle: coalesced p50 within 5 ms of
      per-call; page: one database call. Exit status 1 if missed.
      """;

  /** The database: {@link CoalesceScenario.Database}, by numeric id. */
  static final class Books {
    final CoalesceScenario.Database db;

    Books(int queryMillis) {
      this.db = new CoalesceScenario.Database(queryMillis);
    }

    Map<Long, String> findAll(Set<Long> ids) {
      Map<String, String> found = db.query(ids.stream().map(String::valueOf)
          .collect(Collectors.toSet()));
      Map<Long, String> byId = new HashMap<>();
      found.forEach((k, v) -> byId.put(Long.valueOf(k), v));
      return byId;
    }

    String find(long id) {
      return db.query(Set.of(String.valueOf(id))).get(String.valueOf(id));
    }
  }

  /** The service: the same method over the coalesced cache and the per-call one. */
  public static class BookService {
    private final Books books;

    public BookService(Books books) {
      this.books = books;
    }

    /** Coalesced: the registered bulk loader answers. */
    @Cacheable(cacheNames = "coalesced", sync = true)
    public String coalesced(long id) {
      return books.find(id);
    }

    /** Per call: the method is the loader. */
    @Cacheable(cacheNames = "perCall", sync = true)
    public String perCall(long id) {
      return books.find(id);
    }

    /** Through the proxy: a call from inside the service would bypass the cache. */
    static String call(BookService proxy, boolean coalesced, long id) {
      return coalesced ? proxy.coalesced(id) : proxy.perCall(id);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableCaching
  static class App {
    static ArcusStore store;
    static Books books;
    static String prefix;

    @Bean
    SustainableCacheManager cacheManager() {
      return SustainableCacheManager.builder(store).namespacePrefix(prefix)
          .defaults(CacheSpec.builder()
              .settings(CacheSettings.parse("ttl=10m, load-timeout=5s, coalesce=100:50ms"))
              .codec(ValueCodec.utf8(), String.class).build())
          .bulkLoader("coalesced", Long.class, books::findAll)
          .cacheNames(List.of("perCall"))
          .build();
    }

    @Bean
    BookService bookService() {
      return new BookService(books);
    }
  }

  record Options(int rounds, int threads, int idle, int queryMillis) {}

  private SpringScenario() {}

  static boolean requested(String[] args) {
    return Arrays.asList(args).contains("--spring");
  }

  static int run(String[] args, PrintStream out) {
    if (ScenarioStart.help(args, USAGE, out)) {
      return 0;
    }
    ScenarioStart.prepare("net.spy.memcached", "error", "io.sustainablecache", "error",
        "io.sustainablecache.testkit", "warn", "org.springframework", "warn");
    Options o = parse(args);
    try {
      return run(o, out);
    } catch (Exception e) {
      throw new IllegalStateException("the spring scenario failed: " + e, e);
    }
  }

  static Options parse(String[] args) {
    int rounds = 5;
    int threads = 200;
    int idle = 10;
    int query = 5;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--spring" -> { }
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--threads" -> threads = Integer.parseInt(args[++i]);
        case "--idle" -> idle = Integer.parseInt(args[++i]);
        case "--query-ms" -> query = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("--spring: unknown option " + args[i]
            + " (see --spring --help)");
      }
    }
    if (rounds < 1 || threads < 2 || idle < 1 || query < 0) {
      throw new IllegalArgumentException("--spring needs positive rounds and idle calls, 2 or"
          + " more threads, a query time of 0 or more");
    }
    return new Options(rounds, threads, idle, query);
  }

  private static int run(Options o, PrintStream out) throws Exception {
    out.printf(Locale.ROOT, "stampede-lab --spring: %d rounds; burst of %d threads; %d idle"
        + " calls; a page of 100 ids, 90 cached; query %d ms + 0.05 ms per id%n", o.rounds(),
        o.threads(), o.idle(), o.queryMillis());
    List<double[]> burst = new ArrayList<>(); // calls c, calls u, p50 c, p50 u
    List<double[]> idle = new ArrayList<>(); // p50 c, p50 u
    List<double[]> page = new ArrayList<>(); // ms getAll, ms 100 calls, calls getAll, calls 100
    try (MemcachedCluster memcached = MemcachedCluster.start(1)) {
      ArcusClient client = TxScenario.client(memcached.address(0));
      App.store = ArcusStore.of(client);
      App.books = new Books(o.queryMillis());
      App.prefix = "spr" + Long.toHexString(System.nanoTime() & 0xFFFFFFL) + ".";
      try (AnnotationConfigApplicationContext context =
          new AnnotationConfigApplicationContext(App.class)) {
        BookService service = context.getBean(BookService.class);
        SustainableSpringCache perCall = (SustainableSpringCache) context
            .getBean(SustainableCacheManager.class).getCache("perCall");
        Books books = App.books;
        service.coalesced(-1); // the connection, the JIT
        service.perCall(-1);
        long next = 1_000_000;
        for (int round = 0; round < o.rounds(); round++) {
          double[] b = new double[4];
          for (int i = 0; i < 2; i++) {
            boolean coalesced = i == 0;
            books.db.reset();
            b[2 + i] = burst(service, coalesced, next, o.threads());
            b[i] = books.db.calls.get();
            next += o.threads();
          }
          burst.add(b);
          double[] d = new double[2];
          for (int i = 0; i < 2; i++) {
            long[] nanos = new long[o.idle()];
            for (int k = 0; k < o.idle(); k++) {
              long start = System.nanoTime();
              BookService.call(service, i == 0, next++);
              nanos[k] = System.nanoTime() - start;
            }
            Arrays.sort(nanos);
            d[i] = LabRun.percentile(nanos, 0.5) / 1e6;
          }
          idle.add(d);
          double[] p = new double[4];
          for (int i = 0; i < 2; i++) {
            List<Long> ids = new ArrayList<>();
            for (int k = 0; k < 100; k++) {
              ids.add(next++);
            }
            for (long id : ids.subList(0, 90)) {
              service.perCall(id);
            }
            books.db.reset();
            long start = System.nanoTime();
            if (i == 0) {
              BulkCacheLoader<Long, String> loader = books::findAll;
              if (perCall.getAll(ids, loader).size() != 100) {
                throw new IllegalStateException("the page lost ids");
              }
            } else {
              for (long id : ids) {
                service.perCall(id);
              }
            }
            p[i] = (System.nanoTime() - start) / 1e6;
            p[2 + i] = books.db.calls.get();
          }
          page.add(p);
          out.printf(Locale.ROOT, "round %d: burst calls %.0f coalesced / %.0f per-call, p50 %.1f"
              + " / %.1f ms; idle p50 %.2f / %.2f ms; page %.2f ms getAll (%.0f call) / %.2f ms"
              + " 100 calls (%.0f calls)%n", round + 1, b[0], b[1], b[2], b[3], d[0], d[1],
              p[0], p[2], p[1], p[3]);
        }
      } finally {
        client.shutdown();
      }
    }
    double[] mb = medians(burst);
    double[] mi = medians(idle);
    double[] mp = medians(page);
    out.printf(Locale.ROOT, "%nmedians of %d rounds:%n", o.rounds());
    out.printf(Locale.ROOT, "  burst of %d cold ids: %.0f database calls coalesced, %.0f per"
        + " call; callers' p50 %.1f ms coalesced, %.1f ms per call%n", o.threads(), mb[0],
        mb[1], mb[2], mb[3]);
    out.printf(Locale.ROOT, "  idle cold call p50: %.2f ms coalesced, %.2f ms per call (added"
        + " %.2f ms)%n", mi[0], mi[1], mi[0] - mi[1]);
    out.printf(Locale.ROOT, "  page of 100 ids, 90 cached: getAll %.2f ms (%.0f database call),"
        + " 100 @Cacheable calls %.2f ms (%.0f calls): %.1fx%n", mp[0], mp[2], mp[1], mp[3],
        mp[1] / mp[0]);
    List<String> missed = new ArrayList<>();
    if (mb[0] > CoalesceScenario.MAX_CALLS) {
      missed.add("burst: " + mb[0] + " database calls > " + CoalesceScenario.MAX_CALLS);
    }
    if (mi[0] - mi[1] > CoalesceScenario.MAX_IDLE_EXTRA_MS) {
      missed.add("idle: a coalesced miss added " + (mi[0] - mi[1]) + " ms");
    }
    if (mp[2] != 1) {
      missed.add("page: " + mp[2] + " database calls, not 1");
    }
    missed.forEach(m -> out.println("FAILED: " + m));
    return missed.isEmpty() ? 0 : 1;
  }

  /** The threads' p50, ms: each calls the method for its own cold id at one instant. */
  private static double burst(BookService service, boolean coalesced, long first, int threads)
      throws Exception {
    CyclicBarrier start = new CyclicBarrier(threads);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Long>> nanos = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        long id = first + t;
        nanos.add(pool.submit(() -> {
          start.await();
          long begin = System.nanoTime();
          BookService.call(service, coalesced, id);
          return System.nanoTime() - begin;
        }));
      }
      long[] sorted = new long[threads];
      for (int t = 0; t < threads; t++) {
        sorted[t] = nanos.get(t).get(60, TimeUnit.SECONDS);
      }
      Arrays.sort(sorted);
      return LabRun.percentile(sorted, 0.5) / 1e6;
    } finally {
      pool.shutdownNow();
    }
  }

  private static double[] medians(List<double[]> rows) {
    double[] m = new double[rows.get(0).length];
    for (int c = 0; c < m.length; c++) {
      double[] column = new double[rows.size()];
      for (int r = 0; r < rows.size(); r++) {
        column[r] = rows.get(r)[c];
      }
      Arrays.sort(column);
      m[c] = Repeats.median(column);
    }
    return m;
  }
}
