package io.sustainablecache.lab;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testing.InMemoryStore;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;

/**
 * Executes one {@link RunConfig}: builds the instances, issues requests open-loop at the
 * configured rate, waits for them, and turns what happened into a {@link RunResult}.
 */
final class LabRun {

  /** Epoch start of virtual runs: a fixed instant, offset inside the second by the seed. */
  private static final long VIRTUAL_EPOCH = 1_790_000_000_000L;

  private static final byte HIT = 1;
  private static final byte MISS = 2;
  private static final byte REFRESH = 3;
  private static final byte ERROR = 4;

  private final RunConfig config;
  private final Timeline timeline;
  private final CountingStore store;
  private final SimulatedDatabase db;
  private final List<LabPolicy> instances = new ArrayList<>();
  private final long start;
  private final long measureFrom;
  private final String[] keys;
  private final long[] arrivals;
  private final long[] latencies;
  private final byte[] outcomes;
  private final boolean[] firstFill;
  private final CountDownLatch done;

  private LabRun(RunConfig config, Timeline timeline, CacheStore backing, long start) {
    this.config = config;
    this.timeline = timeline;
    this.start = start;
    this.measureFrom = start + config.ttlSeconds() * 1000L;
    String namespace = "lab-" + Long.toHexString(new SplittableRandom(System.nanoTime())
        .nextLong() & 0xFFFFFFFFL);
    this.keys = keySequence(config);
    // The charts follow the hottest key.
    this.store = new CountingStore(backing, timeline,
        namespace + ":" + (config.keys() == 1 ? "hot" : "k0"));
    this.db = new SimulatedDatabase(timeline, config.dbMillis(), config.dbSlowdown());
    store.measureFrom(measureFrom);
    db.measureFrom(measureFrom);
    for (int i = 0; i < config.instances(); i++) {
      SimExecutor sim = timeline instanceof VirtualTimeline virtual
          ? new SimExecutor(virtual, config.refreshThreads(), config.refreshQueue())
          : null;
      RandomGenerator random = timeline.isVirtual()
          ? new SplittableRandom(config.seed() * 31 + i)
          : new java.util.Random();
      instances.add(LabPolicy.create(config.policy(), new LabPolicy.Context(timeline, store, db,
          namespace, config.ttl(), random, sim, config.refreshThreads(), config.refreshQueue(),
          config.lease())));
    }
    int n = config.requests();
    this.arrivals = new long[n];
    this.latencies = new long[n];
    this.outcomes = new byte[n];
    this.firstFill = new boolean[n];
    this.done = new CountDownLatch(n);
    for (int i = 0; i < n; i++) {
      arrivals[i] = start + (i * 1000L) / config.tps();
    }
  }

  /** Runs in virtual time over the in-memory memcached model; exactly repeatable. */
  static RunResult virtual(RunConfig config) {
    long wallStart = System.nanoTime();
    VirtualTimeline timeline = new VirtualTimeline(VIRTUAL_EPOCH + Math.floorMod(config.seed()
        * 7919, 1000));
    LabRun run = new LabRun(config, timeline, InMemoryStore.create(timeline), timeline.millis());
    for (int i = 0; i < run.arrivals.length; i++) {
      int request = i;
      timeline.schedule(run.arrivals[i], () -> run.issue(request));
    }
    long drain = Math.max(60_000, config.dbMillis() * 100L);
    timeline.runUntil(run.start + config.durationMillis() + drain);
    run.close();
    return run.result(System.nanoTime() - wallStart);
  }

  /** Runs in real time against a real store (memcached or ARCUS). */
  static RunResult real(RunConfig config, CacheStore store) {
    long wallStart = System.nanoTime();
    try (RealTimeline timeline = new RealTimeline()) {
      LabRun run = new LabRun(config, timeline, store, System.currentTimeMillis() + 200);
      for (int i = 0; i < run.arrivals.length; i++) {
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
      run.close();
      return run.result(System.nanoTime() - wallStart);
    }
  }

  private void issue(int i) {
    String key = keys[i];
    firstFill[i] = !db.filled(key);
    long arrival = arrivals[i];
    CompletableFuture<LabPolicy.Outcome> outcome;
    try {
      outcome = instances.get(i % instances.size()).get(key);
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

  private RunResult result(long wallNanos) {
    long requests = 0;
    long misses = 0;
    long refreshWaits = 0;
    long errors = 0;
    long[] measured = new long[arrivals.length];
    long[] hits = new long[arrivals.length];
    int m = 0;
    int h = 0;
    Set<String> keysTouched = new HashSet<>();
    for (int i = 0; i < arrivals.length; i++) {
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
    long periods = config.periods() - 1L;
    long loads = db.measuredQueries();
    double loadsPerPeriod = keysTouched.isEmpty() ? 0
        : (double) loads / (periods * keysTouched.size());
    long rejected = instances.stream().mapToLong(LabPolicy::rejected).sum();
    long[] relArrivals = new long[arrivals.length];
    for (int i = 0; i < arrivals.length; i++) {
      relArrivals[i] = arrivals[i] - start;
    }
    RunResult.Series series = new RunResult.Series(relArrivals, latencies.clone(),
        db.queryStarts().stream().map(t -> t - start).toList(),
        store.expiries().stream().map(t -> t - start).toList(), config.durationMillis());
    return new RunResult(config, requests, misses, refreshWaits, loads, periods, loadsPerPeriod,
        percentile(measured, 0.50), percentile(measured, 0.99), percentile(measured, 1.0),
        percentile(hits, 0.99), db.maxConcurrentMeasured(), rejected, store.measuredWrites(),
        errors, wallNanos / 1_000_000, series);
  }

  static double percentile(long[] sorted, double q) {
    if (sorted.length == 0) {
      return 0;
    }
    int index = (int) Math.ceil(q * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  /** The key of every request, from the seed: one hot key, or Zipf-distributed keys. */
  static String[] keySequence(RunConfig config) {
    String[] sequence = new String[config.requests()];
    if (config.keys() == 1) {
      Arrays.fill(sequence, "hot");
      return sequence;
    }
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
    return sequence;
  }
}
