package io.sustainablecache.lab;

import io.sustainablecache.AsyncBulkLoader;
import io.sustainablecache.AsyncLoader;
import io.sustainablecache.BulkLoader;
import io.sustainablecache.Loader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testing.InMemoryStore;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code --scenario getall}: a service that reads pages of 100 keys.
 * <ul>
 *   <li><b>Real time</b> (with {@code --memcached}/{@code --arcus}): {@code getAll} of a page
 *       against 100 sequential {@code get}s, side by side in one run, one thread: store round
 *       trips ({@code gets} and {@code getsAll} calls), loader calls and latency for cold pages,
 *       then pages per second with a warm cache (5 alternating rounds of 2 s per variant; the
 *       median). Goal: one round trip and at most one loader call per page, and at least 10x the
 *       throughput of 100 gets.</li>
 *   <li><b>Virtual time</b>: 10 pages read at 20 pages/s (each key twice a second), TTL 10 s, DB
 *       20 ms: how the background refreshes of pages found in their refresh window are coalesced
 *       into bulk loader calls ({@code coalesce}: 100 keys per call, the default; 10 keys; and,
 *       for comparison, 100 single-key reads per page).</li>
 * </ul>
 */
final class BulkScenario implements Scenarios.Scenario {

  static final int PAGE = 100;

  static final String CSV_HEADER = "part,variant,pages,page_misses,store_reads_per_page,"
      + "loader_calls_per_page,keys_per_loader_call,refresh_loader_calls,"
      + "refresh_calls_per_page_per_period,loads_per_key_per_period,pages_per_s,p50_ms,p99_ms";

  /**
   * One variant's figures.
   *
   * @param part {@code virtual}, {@code cold} or {@code warm}
   * @param variant how pages are read
   * @param pages pages read (after warm-up)
   * @param pageMisses pages with at least one key that waited for a load (first fills excluded)
   * @param readsPerPage store round trips ({@code gets}, {@code getsAll}) per page
   * @param loaderCallsPerPage loader calls per page (bulk or single, misses and refreshes)
   * @param keysPerCall keys per loader call
   * @param refreshCalls loader calls made by background refreshes
   * @param refreshCallsPerPagePeriod refresh loader calls per page per TTL period
   * @param loadsPerKeyPeriod loads per key per TTL period
   * @param pagesPerSecond throughput (warm, real time), or -1
   * @param p50Ms page latency median
   * @param p99Ms page latency p99
   */
  record Figures(String part, String variant, long pages, long pageMisses, double readsPerPage,
      double loaderCallsPerPage, double keysPerCall, long refreshCalls,
      double refreshCallsPerPagePeriod, double loadsPerKeyPeriod, double pagesPerSecond,
      double p50Ms, double p99Ms) {

    String csvRow() {
      return Scenarios.csv(part, variant, pages, pageMisses, readsPerPage, loaderCallsPerPage,
          keysPerCall, refreshCalls, refreshCallsPerPagePeriod, loadsPerKeyPeriod,
          pagesPerSecond < 0 ? "" : pagesPerSecond, p50Ms, p99Ms);
    }
  }

  enum Variant {
    GET_ALL("getAll"), GET_ALL_SMALL("getAll, coalesce 10"), GETS("100 gets");

    final String label;

    Variant(String label) {
      this.label = label;
    }
  }

  @Override
  public Scenarios.Report run(Scenarios.Context context) throws IOException {
    List<Figures> figures = new ArrayList<>();
    List<Charts.DbSeries> db = new ArrayList<>();
    List<Charts.LatencySeries> latency = new ArrayList<>();
    long seed = context.options().seed();
    for (Variant variant : Variant.values()) {
      context.out().printf("[getall] virtual: %s ...%n", variant.label);
      Virtual run = virtual(variant, 10, 20, 10, 20, 6, seed);
      figures.add(run.figures());
      db.add(new Charts.DbSeries(variant.label, run.queries()));
      latency.add(new Charts.LatencySeries(variant.label, run.latencies()));
    }
    if (context.charts()) {
      Charts.save(Charts.dbComparison("getAll: 10 pages of 100 keys @20 pages/s, TTL 10 s, DB"
          + " 20 ms: database loads per second (keys)", db, 60_000, 1000, true),
          context.chartDir().resolve("getall-db.png"));
      Charts.save(Charts.latencyComparison("getAll vs gets, virtual time: page latency after"
          + " warm-up", latency), context.chartDir().resolve("getall-latency.png"));
    }
    if (context.realTime()) {
      figures.addAll(real(context));
    } else {
      context.out().println("[getall] the throughput comparison needs a real server"
          + " (--memcached auto)");
    }
    List<List<String>> rows = new ArrayList<>();
    for (Figures f : figures) {
      rows.add(Scenarios.row(f.part(), f.variant(), f.pages(), f.pageMisses(), f.readsPerPage(),
          f.loaderCallsPerPage(), f.keysPerCall(), f.refreshCalls(),
          f.refreshCallsPerPagePeriod(), f.loadsPerKeyPeriod(),
          f.pagesPerSecond() < 0 ? "-" : String.format("%.0f", f.pagesPerSecond()), f.p50Ms(),
          f.p99Ms()));
    }
    StringBuilder table = new StringBuilder(Scenarios.table(List.of("part", "variant", "pages",
        "page_misses", "reads/page", "loader_calls/page", "keys/call", "refresh_calls",
        "refresh_calls/page/period", "loads/key/period", "pages/s", "p50_ms", "p99_ms"), rows));
    table.append("""
        reads/page: the caller's store round trips (gets + getsAll calls) per page (virtual: after
        warm-up, not counting the refreshes' own lease checks);
        cold: first read of a page (5 pages per variant, 5 ms per loader call); warm: every key
        cached, one thread, 5 alternating rounds of 2 s per variant (median).
        """);
    Figures warmAll = find(figures, "warm", Variant.GET_ALL.label);
    Figures warmGets = find(figures, "warm", Variant.GETS.label);
    Figures coldAll = find(figures, "cold", Variant.GET_ALL.label);
    if (warmAll != null && warmGets != null && coldAll != null) {
      double ratio = warmAll.pagesPerSecond() / warmGets.pagesPerSecond();
      table.append(String.format("""
          goals: 1 round trip per page (cold %.2f, warm %.2f): %s; <= 1 loader call per page \
          (cold %.2f): %s; >= 10x the throughput of 100 gets (%.1fx): %s
          """, coldAll.readsPerPage(), warmAll.readsPerPage(),
          Scenarios.yesNo(coldAll.readsPerPage() <= 1 && warmAll.readsPerPage() <= 1),
          coldAll.loaderCallsPerPage(), Scenarios.yesNo(coldAll.loaderCallsPerPage() <= 1),
          ratio, Scenarios.yesNo(ratio >= 10)));
    }
    return new Scenarios.Report("getall", CSV_HEADER,
        figures.stream().map(Figures::csvRow).toList(), table.toString());
  }

  private static Figures find(List<Figures> figures, String part, String variant) {
    return figures.stream().filter(f -> f.part().equals(part) && f.variant().equals(variant))
        .findFirst().orElse(null);
  }

  /** A virtual run's figures and raw data. */
  record Virtual(Figures figures, List<SimulatedDatabase.Query> queries, long[] latencies) {}

  static List<String> page(int p) {
    List<String> keys = new ArrayList<>(PAGE);
    for (int k = 0; k < PAGE; k++) {
      keys.add("p" + p + "-k" + k);
    }
    return keys;
  }

  /**
   * Pages read at {@code pageRate} pages/s (uniformly random, from the seed) for {@code periods}
   * TTL periods, the first one warm-up.
   */
  static Virtual virtual(Variant variant, int pages, int pageRate, int ttlSeconds, int dbMillis,
      int periods, long seed) {
    VirtualTimeline timeline = new VirtualTimeline(1_790_000_000_000L + Math.floorMod(seed, 1000));
    CountingStore store = new CountingStore(InMemoryStore.create(timeline), timeline, "");
    SimulatedDatabase db = new SimulatedDatabase(timeline, dbMillis, 0);
    SimExecutor sim = new SimExecutor(timeline, 4, 1024);
    SustainableCacheBuilder<String> builder = SustainableCache.builder(store).namespace("bulk")
        .ttl(Duration.ofSeconds(ttlSeconds)).codec(ValueCodec.utf8()).clock(timeline)
        .ticker(timeline.ticker())
        .random(new SplittableRandom(seed)).scheduler(timeline.scheduler())
        .refreshExecutor(sim);
    if (variant == Variant.GET_ALL_SMALL) {
      builder.coalesce(10);
    }
    SustainableCache<String> cache = builder.build();
    AsyncBulkLoader<String> bulkLoader = keys -> sim.track(db.queryAll(keys, sim.inTask()));
    AsyncLoader<String> loader = key -> sim.track(db.query(key, sim.inTask()));
    long start = timeline.millis();
    long measureFrom = start + ttlSeconds * 1000L;
    long end = start + periods * ttlSeconds * 1000L;
    SplittableRandom random = new SplittableRandom(seed ^ 0xB01CL);
    int requests = (int) ((end - start) / 1000 * pageRate);
    long[] latencies = new long[requests];
    boolean[] missed = new boolean[requests];
    boolean[] measured = new boolean[requests];
    long[] readsAtMeasure = new long[1];
    Set<Integer> filled = new HashSet<>();
    for (int i = 0; i < requests; i++) {
      int request = i;
      long at = start + i * 1000L / pageRate;
      int p = random.nextInt(pages);
      timeline.schedule(at, () -> {
        if (at >= measureFrom && readsAtMeasure[0] == 0) {
          readsAtMeasure[0] = store.callerReads();
        }
        measured[request] = at >= measureFrom && filled.contains(p);
        List<String> keys = page(p);
        CompletableFuture<Boolean> hit;
        if (variant == Variant.GETS) {
          List<CompletableFuture<Boolean>> each = new ArrayList<>();
          for (String key : keys) {
            try (CountingStore.Request r = CountingStore.request()) {
              each.add(cache.findAsync(key, loader).thenApply(r::answeredFromRead));
            }
          }
          hit = CompletableFuture.allOf(each.toArray(new CompletableFuture<?>[0]))
              .thenApply(v -> each.stream().allMatch(CompletableFuture::join));
        } else {
          try (CountingStore.Request r = CountingStore.request()) {
            hit = cache.getAllAsync(keys, bulkLoader)
                .thenApply(map -> r.answeredFromBulkRead(map, keys, "bulk:"));
          }
        }
        hit.whenComplete((h, e) -> {
          latencies[request] = timeline.millis() - at;
          missed[request] = e != null || !h;
          filled.add(p);
        });
      });
    }
    timeline.runUntil(end + 60_000);
    long totalReads = store.callerReads() - readsAtMeasure[0];
    cache.close();
    long pagesMeasured = 0;
    long pageMisses = 0;
    List<Long> measuredLatencies = new ArrayList<>();
    for (int i = 0; i < requests; i++) {
      if (measured[i]) {
        pagesMeasured++;
        pageMisses += missed[i] ? 1 : 0;
        measuredLatencies.add(latencies[i]);
      }
    }
    long[] lat = measuredLatencies.stream().mapToLong(Long::longValue).toArray();
    Arrays.sort(lat);
    List<SimulatedDatabase.Query> queries = db.queries().stream().map(q -> q.shifted(start))
        .toList();
    long calls = 0;
    long keysLoaded = 0;
    long refreshCalls = 0;
    for (SimulatedDatabase.Query q : queries) {
      if (q.start() >= measureFrom - start && q.start() < end - start) {
        calls++;
        keysLoaded += q.keys();
        refreshCalls += q.refresh() ? 1 : 0;
      }
    }
    int measuredPeriods = periods - 1;
    Figures figures = new Figures("virtual", variant.label, pagesMeasured, pageMisses,
        (double) totalReads / Math.max(1, pagesMeasured), (double) calls / Math.max(1,
        pagesMeasured), (double) keysLoaded / Math.max(1, calls), refreshCalls,
        (double) refreshCalls / (pages * measuredPeriods),
        (double) keysLoaded / ((long) pages * PAGE * measuredPeriods), -1,
        LabRun.percentile(lat, 0.5), LabRun.percentile(lat, 0.99));
    return new Virtual(figures, queries, lat);
  }

  // -- real time ---------------------------------------------------------------------------------

  private static final int REAL_PAGES = 20;
  private static final int COLD_PAGES = 5;
  private static final int ROUNDS = 5;
  private static final long ROUND_NANOS = 2_000_000_000L;
  private static final long LOADER_MILLIS = 5;

  static List<Figures> real(Scenarios.Context context) {
    CacheStore backing = context.handle().store(0);
    RealTimeline timeline = new RealTimeline();
    CountingStore store = new CountingStore(backing, timeline, "");
    String namespace = "bulk-" + Long.toHexString(System.nanoTime() & 0xFFFFFFFL);
    LongAdder calls = new LongAdder();
    BulkLoader<String> bulkLoader = keys -> {
      calls.increment();
      Thread.sleep(LOADER_MILLIS);
      Map<String, String> values = new HashMap<>();
      keys.forEach(k -> values.put(k, "value of " + k));
      return values;
    };
    Loader<String> loader = key -> {
      calls.increment();
      Thread.sleep(LOADER_MILLIS);
      return "value of " + key;
    };
    List<Figures> out = new ArrayList<>();
    try (SustainableCache<String> cache = SustainableCache.builder(store).namespace(namespace)
        .ttl(Duration.ofSeconds(120)).codec(ValueCodec.utf8()).build()) {
      // Cold pages: COLD_PAGES read with getAll, COLD_PAGES others with 100 gets.
      for (Variant variant : List.of(Variant.GET_ALL, Variant.GETS)) {
        long reads0 = store.reads() + store.bulkReads();
        long calls0 = calls.sum();
        long[] lat = new long[COLD_PAGES];
        for (int i = 0; i < COLD_PAGES; i++) {
          List<String> keys = page(1000 + i + (variant == Variant.GETS ? COLD_PAGES : 0));
          long t0 = System.nanoTime();
          readPage(cache, variant, keys, bulkLoader, loader);
          lat[i] = (System.nanoTime() - t0) / 1_000_000;
        }
        Arrays.sort(lat);
        out.add(new Figures("cold", variant.label, COLD_PAGES, COLD_PAGES,
            (store.reads() + store.bulkReads() - reads0) / (double) COLD_PAGES,
            (calls.sum() - calls0) / (double) COLD_PAGES,
            PAGE * COLD_PAGES / (double) Math.max(1, calls.sum() - calls0), 0, 0, 0, -1,
            LabRun.percentile(lat, 0.5), LabRun.percentile(lat, 0.99)));
        context.out().printf("[getall] cold pages, %s: %.1f round trips, %.1f loader calls"
            + " per page%n", variant.label, out.get(out.size() - 1).readsPerPage(),
            out.get(out.size() - 1).loaderCallsPerPage());
      }
      // Warm: every page cached, then alternating timed rounds.
      for (int p = 0; p < REAL_PAGES; p++) {
        cache.getAll(page(p), bulkLoader);
      }
      List<List<String>> pages = new ArrayList<>();
      for (int p = 0; p < REAL_PAGES; p++) {
        pages.add(page(p));
      }
      for (Variant variant : List.of(Variant.GET_ALL, Variant.GETS)) { // JIT warm-up
        loop(cache, variant, pages, bulkLoader, loader, ROUND_NANOS / 2, null);
      }
      Map<Variant, List<Double>> rates = new HashMap<>();
      Map<Variant, long[]> totals = new HashMap<>(); // pages, reads, calls
      Map<Variant, List<Long>> latencies = new HashMap<>();
      for (int round = 0; round < ROUNDS; round++) {
        for (Variant variant : List.of(Variant.GET_ALL, Variant.GETS)) {
          long reads0 = store.reads() + store.bulkReads();
          long calls0 = calls.sum();
          List<Long> lat = latencies.computeIfAbsent(variant, v -> new ArrayList<>());
          long t0 = System.nanoTime();
          long n = loop(cache, variant, pages, bulkLoader, loader, ROUND_NANOS, lat);
          double seconds = (System.nanoTime() - t0) / 1e9;
          rates.computeIfAbsent(variant, v -> new ArrayList<>()).add(n / seconds);
          long[] t = totals.computeIfAbsent(variant, v -> new long[3]);
          t[0] += n;
          t[1] += store.reads() + store.bulkReads() - reads0;
          t[2] += calls.sum() - calls0;
        }
      }
      for (Variant variant : List.of(Variant.GET_ALL, Variant.GETS)) {
        long[] t = totals.get(variant);
        double rate = Repeats.median(rates.get(variant).stream().mapToDouble(d -> d).toArray());
        long[] lat = latencies.get(variant).stream().mapToLong(Long::longValue).sorted()
            .toArray();
        out.add(new Figures("warm", variant.label, t[0], 0, t[1] / (double) t[0],
            t[2] / (double) t[0], 0, 0, 0, 0, rate, lat[lat.length / 2] / 1000.0,
            LabRun.percentile(lat, 0.99) / 1000.0));
        context.out().printf("[getall] warm, %s: %.0f pages/s (rounds %s)%n", variant.label,
            rate, rates.get(variant).stream().map(r -> String.format("%.0f", r)).toList());
      }
    } finally {
      timeline.close();
    }
    return out;
  }

  private static void readPage(SustainableCache<String> cache, Variant variant,
      List<String> keys, BulkLoader<String> bulkLoader, Loader<String> loader) {
    if (variant == Variant.GETS) {
      for (String key : keys) {
        cache.get(key, loader);
      }
    } else {
      Map<String, String> values = cache.getAll(keys, bulkLoader);
      if (values.size() != keys.size()) {
        throw new IllegalStateException("a page came back incomplete: " + values.size());
      }
    }
  }

  /** Reads pages in turn for {@code nanos}; returns how many; page latencies in microseconds. */
  private static long loop(SustainableCache<String> cache, Variant variant,
      List<List<String>> pages, BulkLoader<String> bulkLoader, Loader<String> loader,
      long nanos, List<Long> latencies) {
    long end = System.nanoTime() + nanos;
    long n = 0;
    while (true) {
      long t0 = System.nanoTime();
      if (t0 >= end) {
        return n;
      }
      readPage(cache, variant, pages.get((int) (n % pages.size())), bulkLoader, loader);
      if (latencies != null) {
        latencies.add((System.nanoTime() - t0) / 1_000);
      }
      n++;
    }
  }
}
