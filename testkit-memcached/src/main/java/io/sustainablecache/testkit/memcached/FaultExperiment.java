package io.sustainablecache.testkit.memcached;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.CacheStats;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.stream.IntStream;

/**
 * The fault experiment, written once: steady load against caches over a real memcached behind a
 * {@link FaultProxy}, through one {@link Fault}, and what the callers and the caches saw before,
 * during and after it. The adapters' {@code FaultToleranceContract} (sustainable-cache-testkit)
 * runs it on a short preset and asserts on its {@link Result}; the stampede lab's fault suite
 * ({@code --faults}) runs it on a longer one and reports it.
 *
 * <p>A run connects {@linkplain #instances(int) instances} stores through one proxy, builds a
 * cache over each (one namespace: application instances sharing the store; the sustainable
 * policy, a UTF-8 codec), and drives them with {@linkplain #load(int, int, int) threads}, each
 * issuing a number of {@code get}s per second round robin over the keys, with a {@link
 * CountingLoader} as the database. It waits until the caches serve hits without loading (the
 * warm-up) and until the healthy time ({@link #phases}) has passed since the load started;
 * injects the fault for its time;
 * ends it and measures the recovery: the time until, within one 20 ms polling interval, the
 * caches served hits and called the loader not at all (after a failing loader, also once a load
 * succeeded). It keeps the load on until the time after the fault has passed since it ended, then
 * closes the caches, the stores and the proxy. Nothing here asserts.
 *
 * <p>Settings are changed in place ({@code experiment.phases(...)}); not thread-safe: a run
 * belongs to the thread that called {@link #run}.
 */
public final class FaultExperiment {

  /** What goes wrong during the fault. */
  public enum Fault {
    /** The proxy refuses new connections and drops the open ones. */
    SERVER_DOWN,
    /** The proxy forwards every chunk, in both directions, {@linkplain FaultExperiment#slowDelay late}. */
    SLOW_SERVER,
    /** The proxy accepts connections and requests and forwards nothing. */
    HANGING_SERVER,
    /** The server answers; every loader call fails (a database outage). */
    LOADER_FAILING
  }

  /**
   * What the callers saw in one phase of the load.
   *
   * @param requests requests started in the phase
   * @param callerErrors requests that threw anything
   * @param wrongValues requests that returned something other than the loader's value
   * @param maxLatencyNanos the longest request
   * @param maxWaitBeforeLoadNanos the longest time from a request's start to the moment it called
   *     the loader on its own thread (a miss it led), or 0 if none did
   * @param firstError the first exception a caller saw, or {@code null}
   * @param maxLatenessNanos how late, at most, a thread that parks for 5 ms woke up in the phase:
   *     the machine's scheduling delay, for bounds derived from it
   */
  public record Phase(long requests, long callerErrors, long wrongValues, long maxLatencyNanos,
      long maxWaitBeforeLoadNanos, Throwable firstError, long maxLatenessNanos) {

    /**
     * The longest request, in milliseconds.
     *
     * @return {@link #maxLatencyNanos} in whole milliseconds
     */
    public long maxLatencyMillis() {
      return TimeUnit.NANOSECONDS.toMillis(maxLatencyNanos);
    }

    /**
     * The longest wait before a load, in milliseconds.
     *
     * @return {@link #maxWaitBeforeLoadNanos} in whole milliseconds
     */
    public long maxWaitBeforeLoadMillis() {
      return TimeUnit.NANOSECONDS.toMillis(maxWaitBeforeLoadNanos);
    }
  }

  /**
   * What one run saw.
   *
   * @param fault the fault injected
   * @param instances the caches (application instances) driven
   * @param healthy the load from its start until the fault
   * @param faulty the load during the fault
   * @param recovering the load from the fault's end until the recovery or, if later, the time
   *     after the fault ({@link FaultExperiment#phases}) has passed
   * @param duringFault the caches' counters during the fault, summed over the instances
   * @param whole the caches' counters over the whole run, summed over the instances
   * @param loadsDuringFault loader calls started during the fault
   * @param loads loader calls over the whole run
   * @param recoveryMillis from the fault's end until caching resumed, or -1 if it did not within
   *     20 s
   * @param reconnectMillis from the recovery until the clients held as many connections to the
   *     proxy as before the fault, or -1 if they did not within 20 s
   * @param connectionsLeftOpen connections through the proxy still open once the caches, the
   *     stores and the proxy were closed
   * @param maxConcurrentLoadsOfOneKey the most loader calls of one key that ran at the same time
   * @param firstOverlap the first such overlap, or {@code "none"}
   * @param nodeOutBeforeFault whether a cache counted a store node out after the warm-up
   * @param nodeOutDuringFault whether a cache counted a store node out at the fault's end
   * @param nodeOutAfterRecovery whether a cache counted a store node out after the recovery
   * @param firstFailureMillis when each key's first failed loader call started (epoch ms)
   * @param faultEndMillis when the fault ended (epoch ms)
   */
  public record Result(Fault fault, int instances, Phase healthy, Phase faulty,
      Phase recovering, CacheStats duringFault, CacheStats whole, long loadsDuringFault,
      long loads, long recoveryMillis, long reconnectMillis, int connectionsLeftOpen,
      int maxConcurrentLoadsOfOneKey, String firstOverlap, boolean nodeOutBeforeFault,
      boolean nodeOutDuringFault, boolean nodeOutAfterRecovery, List<Long> firstFailureMillis,
      long faultEndMillis) {

    /**
     * The phases in order.
     *
     * @return healthy, faulty, recovering
     */
    public List<Phase> phases() {
      return List.of(healthy, faulty, recovering);
    }
  }

  private static final Duration POLL = Duration.ofMillis(20);

  private final BiFunction<InetSocketAddress, Duration, CacheStore> connect;
  private final Consumer<CacheStore> close;
  private final InetSocketAddress server;
  private final String namespace;

  private Duration ttl = Duration.ofSeconds(2);
  private Duration operationTimeout = Duration.ofMillis(300);
  private Duration loadTime = Duration.ofMillis(5);
  private int keys = 3;
  private int threads = 4;
  private int requestsPerSecondPerThread = 25;
  private int instances = 1;
  private Duration healthyFor = Duration.ZERO;
  private Duration faultFor = Duration.ofSeconds(3);
  private Duration afterFor = Duration.ZERO;
  private Duration slowDelay = Duration.ofSeconds(3);
  private Duration warmUpPatience = Duration.ofSeconds(10);
  private Duration recoveryPatience = Duration.ofSeconds(20);

  private FaultExperiment(BiFunction<InetSocketAddress, Duration, CacheStore> connect,
      Consumer<CacheStore> close, InetSocketAddress server, String namespace) {
    this.connect = requireNonNull(connect, "connect");
    this.close = requireNonNull(close, "close");
    this.server = requireNonNull(server, "server");
    this.namespace = requireNonNull(namespace, "namespace");
  }

  /**
   * An experiment with the contract's settings (TTL 2 s, operation timeout 300 ms, a 5 ms load,
   * 3 keys, 4 threads of 25 requests per second, one instance, no healthy time beyond the
   * warm-up, a 3 s fault, a slow server 3 s late, warm-up within 10 s, recovery measured up to
   * 20 s); change them with the setters.
   *
   * @param connect connects a new client and a store over it to an address, with an operation
   *     timeout, as the adapter recommends (an adapter's {@code StoreConnector::connect})
   * @param close shuts down the client behind a store {@code connect} returned
   * @param server a real memcached, behind which each run starts a proxy of its own
   * @param namespace the caches' namespace
   * @return a new experiment; never {@code null}
   */
  public static FaultExperiment through(BiFunction<InetSocketAddress, Duration, CacheStore> connect,
      Consumer<CacheStore> close, InetSocketAddress server, String namespace) {
    return new FaultExperiment(connect, close, server, namespace);
  }

  /**
   * Sets the caches' TTL.
   *
   * @param ttl positive
   * @return this experiment
   */
  public FaultExperiment ttl(Duration ttl) {
    this.ttl = positive(ttl, "ttl");
    return this;
  }

  /**
   * Sets the stores' and the clients' operation timeout.
   *
   * @param operationTimeout positive
   * @return this experiment
   */
  public FaultExperiment operationTimeout(Duration operationTimeout) {
    this.operationTimeout = positive(operationTimeout, "operationTimeout");
    return this;
  }

  /**
   * Sets how long each loader call takes.
   *
   * @param loadTime positive
   * @return this experiment
   */
  public FaultExperiment loadTime(Duration loadTime) {
    this.loadTime = positive(loadTime, "loadTime");
    return this;
  }

  /**
   * Sets the load: how many keys, threads and requests per second per thread.
   *
   * @param keys the number of keys, positive
   * @param threads the number of threads, positive
   * @param requestsPerSecondPerThread each thread's rate, positive
   * @return this experiment
   */
  public FaultExperiment load(int keys, int threads, int requestsPerSecondPerThread) {
    if (keys < 1 || threads < 1 || requestsPerSecondPerThread < 1) {
      throw new IllegalArgumentException("keys, threads and rate must be positive, were " + keys
          + ", " + threads + ", " + requestsPerSecondPerThread);
    }
    this.keys = keys;
    this.threads = threads;
    this.requestsPerSecondPerThread = requestsPerSecondPerThread;
    return this;
  }

  /**
   * Sets how many caches, each over its own client and store, share the namespace.
   *
   * @param instances positive
   * @return this experiment
   */
  public FaultExperiment instances(int instances) {
    if (instances < 1) {
      throw new IllegalArgumentException("instances must be positive, was " + instances);
    }
    this.instances = instances;
    return this;
  }

  /**
   * Sets the phases' lengths: the least time from the load's start to the fault (the warm-up may
   * take longer), the fault's, and the least time from the fault's end to the end of the run
   * (the recovery may take longer).
   *
   * @param healthyFor zero or positive
   * @param faultFor positive
   * @param afterFor zero or positive
   * @return this experiment
   */
  public FaultExperiment phases(Duration healthyFor, Duration faultFor, Duration afterFor) {
    this.healthyFor = notNegative(healthyFor, "healthyFor");
    this.faultFor = positive(faultFor, "faultFor");
    this.afterFor = notNegative(afterFor, "afterFor");
    return this;
  }

  /**
   * Sets how late a {@link Fault#SLOW_SERVER slow server} forwards each chunk.
   *
   * @param slowDelay positive
   * @return this experiment
   */
  public FaultExperiment slowDelay(Duration slowDelay) {
    this.slowDelay = positive(slowDelay, "slowDelay");
    return this;
  }

  /**
   * Runs the experiment once: a new proxy, clients, stores and caches, all closed on return.
   *
   * @param fault the fault to inject
   * @return what the run saw
   * @throws IllegalStateException if the caches did not warm up within 10 s, or the load's
   *     requests did not return within 10 s of a phase's end
   * @throws RuntimeException what connecting a store throws (for example a
   *     {@code StoreException} on a loaded machine)
   */
  public Result run(Fault fault) {
    requireNonNull(fault, "fault");
    CountingLoader loader = new CountingLoader(loadTime);
    List<String> keyNames = IntStream.range(0, keys).mapToObj(i -> "key-" + i).toList();
    List<CacheStore> stores = new ArrayList<>();
    List<SustainableCache<String>> caches = new ArrayList<>();
    try (FaultProxy proxy = FaultProxy.start(server)) {
      try {
        for (int i = 0; i < instances; i++) {
          stores.add(connect.apply(proxy.address(), operationTimeout));
          caches.add(SustainableCache.builder(stores.get(i)).namespace(namespace).ttl(ttl)
              .codec(ValueCodec.utf8()).build());
        }
        long started = System.nanoTime();
        Phase healthy;
        Phase faulty;
        Phase recovering;
        CacheStats duringFault;
        long loadsDuringFault;
        long recovery;
        long reconnect;
        boolean outBefore;
        boolean outDuring;
        boolean outAfter;
        long faultEndMillis;
        try (SteadyLoad load = SteadyLoad.start(caches, keyNames, loader, threads,
            requestsPerSecondPerThread, "steady-load")) {
          if (awaitCaching(caches, warmUpPatience, false) < 0) {
            throw new IllegalStateException("the caches did not serve hits without loading"
                + " within " + warmUpPatience.toSeconds() + " s of the load's start");
          }
          sleepUntil(started + healthyFor.toNanos());
          int connectionsWhenHealthy = proxy.openConnections();
          outBefore = anyNodeOut(caches);

          inject(fault, proxy, loader);
          // Ends the healthy phase once its requests have returned: what follows started after
          // the fault, so no request of the next phase was answered by a healthy server.
          healthy = load.nextPhase();
          long loadsBefore = loader.loads();
          CacheStats before = stats(caches);
          sleepUntil(System.nanoTime() + faultFor.toNanos());
          faulty = load.nextPhase();
          duringFault = stats(caches).minus(before);
          loadsDuringFault = loader.loads() - loadsBefore;
          outDuring = anyNodeOut(caches);

          if (fault == Fault.LOADER_FAILING) {
            loader.failing(false);
          } else {
            proxy.passThrough();
          }
          faultEndMillis = System.currentTimeMillis();
          long faultEnd = System.nanoTime();
          recovery = awaitCaching(caches, recoveryPatience, fault == Fault.LOADER_FAILING);
          reconnect = recovery < 0 ? -1 : awaitConnections(proxy, connectionsWhenHealthy);
          outAfter = anyNodeOut(caches);
          sleepUntil(faultEnd + afterFor.toNanos());
          recovering = load.nextPhase();
        }
        CacheStats whole = stats(caches);
        closeAll(caches, stores);
        proxy.close();
        return new Result(fault, instances, healthy, faulty, recovering, duringFault, whole,
            loadsDuringFault, loader.loads(), recovery, reconnect, proxy.openConnections(),
            loader.maxConcurrentLoadsOfOneKey(), loader.firstOverlap(), outBefore, outDuring,
            outAfter, loader.firstFailureMillis(), faultEndMillis);
      } finally {
        closeAll(caches, stores);
      }
    }
  }

  private void inject(Fault fault, FaultProxy proxy, CountingLoader loader) {
    switch (fault) {
      case SERVER_DOWN -> {
        proxy.refuse();
        proxy.dropConnections();
      }
      case SLOW_SERVER -> proxy.delay(slowDelay);
      case HANGING_SERVER -> proxy.blackhole();
      case LOADER_FAILING -> loader.failing(true);
      default -> throw new AssertionError(fault);
    }
  }

  /** Closes the caches, then the stores' clients, once: the lists are emptied. */
  private void closeAll(List<SustainableCache<String>> caches, List<CacheStore> stores) {
    caches.forEach(SustainableCache::close);
    caches.clear();
    stores.forEach(close);
    stores.clear();
  }

  /**
   * Waits until, within one {@link #POLL} interval, the caches' hit count grew and their load
   * count did not (and, if {@code aLoadMustSucceed}, a load succeeded since the wait began).
   *
   * @return how long it took in milliseconds, or -1 if it did not happen within {@code atMost}
   */
  private static long awaitCaching(List<SustainableCache<String>> caches, Duration atMost,
      boolean aLoadMustSucceed) {
    long started = System.nanoTime();
    CacheStats first = stats(caches);
    CacheStats previous = first;
    while (System.nanoTime() - started <= atMost.toNanos()) {
      CacheStats now = stats(caches);
      CacheStats interval = now.minus(previous);
      previous = now;
      if (interval.hitCount() > 0 && interval.loadCount() == 0
          && (!aLoadMustSucceed || now.loadSuccessCount() > first.loadSuccessCount())) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      }
      LockSupport.parkNanos(POLL.toNanos()); // the polling interval: real time must pass
    }
    return -1;
  }

  /** Milliseconds until the proxy holds {@code connections} again, or -1 after the patience. */
  private long awaitConnections(FaultProxy proxy, int connections) {
    long started = System.nanoTime();
    while (proxy.openConnections() != connections) {
      if (System.nanoTime() - started > recoveryPatience.toNanos()) {
        return -1;
      }
      LockSupport.parkNanos(POLL.toNanos());
    }
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
  }

  /** The caches' counters, summed. */
  private static CacheStats stats(List<SustainableCache<String>> caches) {
    Map<String, Long> sum = new LinkedHashMap<>();
    for (SustainableCache<String> cache : caches) {
      CacheStats stats = cache.stats();
      for (String name : CacheStats.counterNames()) {
        sum.merge(name, stats.count(name), Long::sum);
      }
    }
    return CacheStats.of(sum);
  }

  private static boolean anyNodeOut(List<SustainableCache<String>> caches) {
    return caches.stream().anyMatch(cache -> cache.storeNodeStates().containsValue(true));
  }

  /**
   * Real time must pass for a phase to last: this is the phase's length, not a wait for a
   * condition.
   */
  private static void sleepUntil(long nanoTime) {
    long wait;
    while ((wait = nanoTime - System.nanoTime()) > 0) {
      LockSupport.parkNanos(wait);
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted during the experiment");
      }
    }
  }

  private static Duration positive(Duration d, String name) {
    requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, was " + d);
    }
    return d;
  }

  private static Duration notNegative(Duration d, String name) {
    requireNonNull(d, name);
    if (d.isNegative()) {
      throw new IllegalArgumentException(name + " must not be negative, was " + d);
    }
    return d;
  }
}
