package io.sustainablecache.lab;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testing.InMemoryStore;
import java.io.IOException;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.random.RandomGenerator;

/**
 * Executes one {@link RunConfig}: builds the instances, issues requests open-loop at the
 * configured rate, waits for them, and turns what happened into a {@link RunResult}.
 *
 * <p>A run can also be one member of a fleet of processes ({@link #member}): it then hosts one
 * instance, issues only its share of the requests (every {@code members}-th, from its index on)
 * and writes what it saw to a {@link Part} file, which the parent merges with the other members'
 * ({@link #merge}).
 */
final class LabRun {

  /** Epoch start of virtual runs: a fixed instant, offset inside the second by the seed. */
  private static final long VIRTUAL_EPOCH = 1_790_000_000_000L;

  static final byte HIT = 1;
  static final byte MISS = 2;
  static final byte REFRESH = 3;
  static final byte ERROR = 4;

  /** The prefix of ids that have no row in the database (the absent scenario). */
  static final String ABSENT_PREFIX = "absent-";

  private final RunConfig config;
  private final Timeline timeline;
  private final CountingStore store;
  private final SimulatedDatabase db;
  private final List<LabPolicy> instances = new ArrayList<>();
  private final long start;
  private final long measureFrom;
  private final int member;
  private final int members;
  private final String[] keys;
  private final long[] arrivals;
  private final long[] latencies;
  private final byte[] outcomes;
  private final boolean[] firstFill;
  private final CountDownLatch done;

  private LabRun(RunConfig config, Timeline timeline, IntFunction<CacheStore> backing,
      long start, String namespace, int member, int members) {
    this.config = config;
    this.timeline = timeline;
    this.start = start;
    this.member = member;
    this.members = members;
    this.measureFrom = start + config.tweaks().warmupPeriods() * config.ttlSeconds() * 1000L;
    this.keys = keySequence(config);
    // The charts follow the hottest key.
    this.store = new CountingStore(backing.apply(members > 1 ? member : 0), timeline,
        namespace + ":" + (config.keys() == 1 ? "hot" : "k0"));
    this.db = new SimulatedDatabase(timeline, config.dbMillis(), config.dbSlowdown());
    db.absentIds(key -> key.startsWith(ABSENT_PREFIX));
    if (config.tweaks().failFromMillis() >= 0) {
      db.failDuring(start + config.tweaks().failFromMillis(),
          start + config.tweaks().failToMillis());
    }
    store.measureFrom(measureFrom);
    int hosted = members > 1 ? 1 : config.instances();
    for (int n = 0; n < hosted; n++) {
      int i = members > 1 ? member : n;
      SimExecutor sim = timeline instanceof VirtualTimeline virtual
          ? new SimExecutor(virtual, config.refreshThreads(), config.refreshQueue())
          : null;
      RandomGenerator random = timeline.isVirtual()
          ? new SplittableRandom(config.seed() * 31 + i)
          : new java.util.Random();
      CountingStore instanceStore = n == 0 ? store : store.on(backing.apply(i));
      instances.add(LabPolicy.create(config.policy(), new LabPolicy.Context(timeline,
          instanceStore, db, namespace, config.ttl(), random, sim, config.refreshThreads(),
          config.refreshQueue(), config.lease(), config.tweaks())));
    }
    int n = config.requests();
    this.arrivals = new long[n];
    this.latencies = new long[n];
    this.outcomes = new byte[n];
    this.firstFill = new boolean[n];
    int own = 0;
    for (int i = 0; i < n; i++) {
      arrivals[i] = start + (i * 1000L) / config.tps();
      own += owns(i) ? 1 : 0;
    }
    this.done = new CountDownLatch(own);
  }

  private boolean owns(int request) {
    return members <= 1 || request % members == member;
  }

  private static String namespace() {
    return "lab-" + Long.toHexString(new SplittableRandom(System.nanoTime()).nextLong()
        & 0xFFFFFFFFL);
  }

  /** Runs in virtual time over the in-memory memcached model; exactly repeatable. */
  static RunResult virtual(RunConfig config) {
    long wallStart = System.nanoTime();
    VirtualTimeline timeline = new VirtualTimeline(VIRTUAL_EPOCH + Math.floorMod(config.seed()
        * 7919, 1000));
    InMemoryStore memory = InMemoryStore.create(timeline);
    LabRun run = new LabRun(config, timeline, i -> memory, timeline.millis(), namespace(), 0, 1);
    run.preload();
    for (int i = 0; i < run.arrivals.length; i++) {
      int request = i;
      timeline.schedule(run.arrivals[i], () -> run.issue(request));
    }
    long drain = Math.max(60_000, config.dbMillis() * 100L);
    timeline.runUntil(run.start + config.durationMillis() + drain);
    Part part = run.part();
    run.close();
    return merge(config, List.of(part), System.nanoTime() - wallStart);
  }

  /** Runs in real time; instance {@code i} uses {@code stores.apply(i)} (its own client). */
  static RunResult real(RunConfig config, IntFunction<CacheStore> stores) {
    long wallStart = System.nanoTime();
    Part part = realPart(config, stores, System.currentTimeMillis() + 200, namespace(), 0, 1);
    return merge(config, List.of(part), System.nanoTime() - wallStart);
  }

  /**
   * Runs one member of a fleet of {@code members} processes in real time from {@code startAt}
   * (epoch ms, shared by the members) in {@code namespace}, and returns what it saw.
   */
  static Part member(RunConfig config, CacheStore store, long startAt, String namespace,
      int member, int members) {
    return realPart(config, i -> store, startAt, namespace, member, members);
  }

  private static Part realPart(RunConfig config, IntFunction<CacheStore> stores, long startAt,
      String namespace, int member, int members) {
    try (RealTimeline timeline = new RealTimeline()) {
      LabRun run = new LabRun(config, timeline, stores, startAt, namespace, member, members);
      timeline.sleepUntil(startAt);
      run.preload();
      for (int i = 0; i < run.arrivals.length; i++) {
        if (!run.owns(i)) {
          continue;
        }
        int request = i;
        timeline.sleepUntil(run.arrivals[i]);
        timeline.workers().execute(() -> run.issue(request));
      }
      try {
        if (!run.done.await(60, TimeUnit.SECONDS)) {
          System.err.println("  warning: " + run.done.getCount() + " requests did not finish");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      run.close(); // waits for running refreshes
      return run.part();
    }
  }

  private void preload() {
    if (!config.tweaks().preload()) {
      return;
    }
    Set<String> all = new LinkedHashSet<>();
    for (int k = 0; k < config.keys(); k++) {
      all.add(config.keys() == 1 ? "hot" : "k" + k);
    }
    CompletableFuture<?> loaded = instances.get(0).preload(all);
    if (!timeline.isVirtual()) {
      loaded.join();
    }
  }

  private void issue(int i) {
    String key = keys[i];
    firstFill[i] = !db.filled(key);
    long arrival = arrivals[i];
    CompletableFuture<LabPolicy.Outcome> outcome;
    try {
      outcome = instances.get(members > 1 ? 0 : i % instances.size()).get(key);
    } catch (RuntimeException e) {
      outcome = CompletableFuture.failedFuture(e);
    }
    outcome.whenComplete((o, error) -> {
      latencies[i] = timeline.millis() - arrival;
      outcomes[i] = error != null ? ERROR : switch (o) {
        case HIT -> HIT;
        case MISS -> MISS;
        case REFRESH -> REFRESH;
      };
      done.countDown();
    });
  }

  private void close() {
    instances.forEach(LabPolicy::close);
  }

  /** What this run (or this member of a fleet) saw, times relative to the start. */
  private Part part() {
    double heap = -1;
    if (config.tweaks().measureHeap()) {
      heap = usedHeapAfterGc();
    }
    RunResult.Totals totals = RunResult.Totals.ZERO;
    long rejected = 0;
    for (LabPolicy instance : instances) {
      totals = totals.plus(instance.stats());
      rejected += instance.rejected();
    }
    long end = start + config.durationMillis();
    List<SimulatedDatabase.Query> queries = db.queries().stream()
        .map(q -> q.shifted(start)).toList();
    long[] relArrivals = new long[arrivals.length];
    for (int i = 0; i < arrivals.length; i++) {
      relArrivals[i] = arrivals[i] - start;
    }
    return new Part(relArrivals, keys, latencies, outcomes, firstFill, queries,
        store.expiries().stream().map(t -> t - start).toList(), store.measuredWrites(),
        store.refreshWrites(), store.wastedRefreshes(end), rejected, heap, totals);
  }

  static double usedHeapAfterGc() {
    long best = Long.MAX_VALUE;
    for (int i = 0; i < 3; i++) {
      System.gc();
      best = Math.min(best, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
    }
    return best / (1024.0 * 1024.0);
  }

  /**
   * What one process saw of a run; arrays indexed by request, with outcome 0 for requests
   * another member issued. Times are milliseconds from the run's start.
   */
  record Part(long[] arrivals, String[] keys, long[] latencies, byte[] outcomes,
      boolean[] firstFill, List<SimulatedDatabase.Query> queries, List<Long> expiries,
      long writes, long refreshWrites, long wastedRefreshes, long rejected, double heapMiB,
      RunResult.Totals totals) {

    /** Writes the member's own data; the parent re-creates arrivals and keys from the config. */
    void write(Path file) throws IOException {
      try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
        w.write("counters " + writes + " " + refreshWrites + " " + wastedRefreshes + " "
            + rejected + " " + heapMiB + " " + totals.staleHits() + " " + totals.absentHits()
            + " " + totals.leaseWon() + " " + totals.leaseLost() + " "
            + totals.failureRemembered() + " " + totals.refreshBackoff() + " "
            + totals.bulkLoads() + "\n");
        for (int i = 0; i < outcomes.length; i++) {
          if (outcomes[i] != 0) {
            w.write("R " + i + " " + latencies[i] + " " + outcomes[i] + " "
                + (firstFill[i] ? 1 : 0) + "\n");
          }
        }
        for (SimulatedDatabase.Query q : queries) {
          w.write("Q " + q.start() + " " + q.end() + " " + q.keys() + " " + (q.failed() ? 1 : 0)
              + " " + (q.refresh() ? 1 : 0) + " " + q.key() + "\n");
        }
        for (long expiry : expiries) {
          w.write("E " + expiry + "\n");
        }
      }
    }

    static Part read(RunConfig config, Path file) throws IOException {
      int n = config.requests();
      long[] arrivals = new long[n];
      for (int i = 0; i < n; i++) {
        arrivals[i] = (i * 1000L) / config.tps();
      }
      long[] latencies = new long[n];
      byte[] outcomes = new byte[n];
      boolean[] firstFill = new boolean[n];
      List<SimulatedDatabase.Query> queries = new ArrayList<>();
      List<Long> expiries = new ArrayList<>();
      long[] c = new long[12];
      double heap = -1;
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        String[] f = line.split(" ");
        switch (f[0]) {
          case "counters" -> {
            for (int k = 0; k < c.length; k++) {
              c[k] = k == 4 ? 0 : Long.parseLong(f[k + 1]);
            }
            heap = Double.parseDouble(f[5]);
          }
          case "R" -> {
            int i = Integer.parseInt(f[1]);
            latencies[i] = Long.parseLong(f[2]);
            outcomes[i] = Byte.parseByte(f[3]);
            firstFill[i] = "1".equals(f[4]);
          }
          case "Q" -> queries.add(new SimulatedDatabase.Query(Long.parseLong(f[1]),
              Long.parseLong(f[2]), f[6], Integer.parseInt(f[3]), "1".equals(f[4]),
              "1".equals(f[5])));
          case "E" -> expiries.add(Long.parseLong(f[1]));
          default -> throw new IOException("unexpected line in " + file + ": " + line);
        }
      }
      return new Part(arrivals, keySequence(config), latencies, outcomes, firstFill, queries,
          expiries, c[0], c[1], c[2], c[3], heap,
          new RunResult.Totals(c[5], c[6], c[7], c[8], c[9], c[10], c[11]));
    }
  }

  /**
   * Turns the parts of a run (one, or one per process of a fleet) into its result. With several
   * parts a request counts as a key's first fill if it arrived before any member's query for the
   * key returned.
   */
  static RunResult merge(RunConfig config, List<Part> parts, long wallNanos) {
    Part first = parts.get(0);
    int n = first.outcomes().length;
    long[] arrivals = first.arrivals();
    String[] keys = first.keys();
    long[] latencies = new long[n];
    byte[] outcomes = new byte[n];
    boolean[] firstFill = new boolean[n];
    List<SimulatedDatabase.Query> queries = new ArrayList<>();
    List<Long> expiries = new ArrayList<>();
    long writes = 0;
    long refreshWrites = 0;
    long wasted = 0;
    long rejected = 0;
    double heap = -1;
    RunResult.Totals totals = RunResult.Totals.ZERO;
    for (Part part : parts) {
      for (int i = 0; i < n; i++) {
        if (part.outcomes()[i] != 0) {
          latencies[i] = part.latencies()[i];
          outcomes[i] = part.outcomes()[i];
          firstFill[i] = part.firstFill()[i];
        }
      }
      queries.addAll(part.queries());
      expiries.addAll(part.expiries());
      writes += part.writes();
      refreshWrites += part.refreshWrites();
      wasted += part.wastedRefreshes();
      rejected += part.rejected();
      heap = Math.max(heap, part.heapMiB());
      totals = totals.plus(part.totals());
    }
    if (parts.size() > 1) {
      Map<String, Long> filledAt = new HashMap<>();
      for (SimulatedDatabase.Query q : queries) {
        if (!q.failed()) {
          filledAt.merge(q.key(), q.end(), Math::min);
        }
      }
      for (int i = 0; i < n; i++) {
        firstFill[i] = arrivals[i] < filledAt.getOrDefault(keys[i], Long.MAX_VALUE);
      }
      queries.sort(Comparator.comparingLong(SimulatedDatabase.Query::end));
      expiries.sort(null);
    }
    long measureFrom = config.tweaks().warmupPeriods() * config.ttlSeconds() * 1000L;
    long end = config.durationMillis();

    long requests = 0;
    long misses = 0;
    long refreshWaits = 0;
    long errors = 0;
    long[] measured = new long[n];
    long[] hits = new long[n];
    int m = 0;
    int h = 0;
    Set<String> keysTouched = new HashSet<>();
    for (int i = 0; i < n; i++) {
      if (arrivals[i] < measureFrom || outcomes[i] == 0) {
        continue;
      }
      requests++;
      keysTouched.add(keys[i]);
      measured[m++] = latencies[i];
      switch (outcomes[i]) {
        case HIT -> hits[h++] = latencies[i];
        case MISS -> misses += firstFill[i] ? 0 : 1;
        case REFRESH -> refreshWaits++;
        default -> errors++;
      }
    }
    measured = Arrays.copyOf(measured, m);
    hits = Arrays.copyOf(hits, h);
    Arrays.sort(measured);
    Arrays.sort(hits);
    long periods = config.measuredPeriods();
    long loads = 0;
    for (SimulatedDatabase.Query q : queries) {
      if (q.start() >= measureFrom && q.start() < end) {
        loads += q.keys();
      }
    }
    double loadsPerPeriod = keysTouched.isEmpty() ? 0
        : (double) loads / (periods * keysTouched.size());
    RunResult.Series series = new RunResult.Series(arrivals, latencies, outcomes,
        List.copyOf(queries),
        List.copyOf(expiries), end, measureFrom);
    return new RunResult(config, requests, misses, refreshWaits, loads, periods, loadsPerPeriod,
        percentile(measured, 0.50), percentile(measured, 0.99), percentile(measured, 1.0),
        percentile(hits, 0.99), maxConcurrency(queries, measureFrom), rejected, writes, errors,
        wallNanos / 1_000_000, series, refreshWrites, wasted, heap, totals);
  }

  /** The most queries running at once, looked at when a query starts after {@code from}. */
  static int maxConcurrency(List<SimulatedDatabase.Query> queries, long from) {
    int k = queries.size();
    long[] events = new long[2 * k];
    for (int i = 0; i < k; i++) {
      SimulatedDatabase.Query q = queries.get(i);
      // ends sort before starts at the same instant: a query ending as another starts is over
      events[2 * i] = q.start() * 4 + 2 + (q.start() >= from ? 1 : 0);
      events[2 * i + 1] = q.end() * 4;
    }
    Arrays.sort(events);
    int running = 0;
    int max = 0;
    for (long e : events) {
      long kind = Math.floorMod(e, 4);
      if (kind == 0) {
        running--;
      } else {
        running++;
        if (kind == 3) {
          max = Math.max(max, running);
        }
      }
    }
    return max;
  }

  static double percentile(long[] sorted, double q) {
    if (sorted.length == 0) {
      return 0;
    }
    int index = (int) Math.ceil(q * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  /**
   * The key of every request, from the seed: one hot key, or Zipf-distributed keys (uniform with
   * exponent 0); with an absent share, that share of requests asks for ids without a row.
   */
  static String[] keySequence(RunConfig config) {
    String[] sequence = new String[config.requests()];
    if (config.keys() == 1) {
      Arrays.fill(sequence, "hot");
    } else {
      double[] cumulative = new double[config.keys()];
      double total = 0;
      for (int k = 0; k < config.keys(); k++) {
        total += 1.0 / Math.pow(k + 1, config.zipf());
        cumulative[k] = total;
      }
      SplittableRandom random = new SplittableRandom(config.seed());
      for (int i = 0; i < sequence.length; i++) {
        int k = Arrays.binarySearch(cumulative, random.nextDouble() * total);
        sequence[i] = "k" + (k >= 0 ? k : -k - 1);
      }
    }
    RunConfig.Tweaks tweaks = config.tweaks();
    if (tweaks.absentShare() > 0) {
      SplittableRandom random = new SplittableRandom(config.seed() ^ 0x5DEECE66DL);
      for (int i = 0; i < sequence.length; i++) {
        if (random.nextDouble() < tweaks.absentShare()) {
          sequence[i] = ABSENT_PREFIX + random.nextInt(tweaks.absentIds());
        }
      }
    }
    return sequence;
  }
}
