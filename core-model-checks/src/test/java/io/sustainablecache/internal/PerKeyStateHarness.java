package io.sustainablecache.internal;

import io.sustainablecache.AsyncLoader;
import io.sustainablecache.CacheLoadException;
import io.sustainablecache.Loader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One cache instance and a few keys over the in-memory fixtures (fake clock, manual scheduler,
 * manual refresh executor), a "database" and loaders that record what they did, and the
 * invariants of the per-key state, checked at quiescence. Shared by {@link
 * PerKeyStateModelCheckingTest} (Lincheck drives it, on one key) and {@link
 * PerKeyStateStressTest} (threads drive it). Thread-safe.
 *
 * <p>Each key's database row has a version that every {@link #invalidate} and {@link #put} of the
 * key bumps before it calls the cache, as an application updates its database and then
 * invalidates. A loader reads the version when it is called (when its load <em>begins</em>) and
 * loads {@code "<key>=v<version>#<load id>"}; {@code put} stores {@code "<key>=v<version>#put"}.
 * What the checks prove, per key:
 * <ol>
 *   <li><b>One load at a time:</b> a loader is never called while another loader of the key is
 *       running, unless a release (invalidate, put, or a clock step that times loads out) started
 *       or ended since the earlier of the two calls that asked for them began, or was under way
 *       then: only those may release a key whose load is still running. The one exception is a
 *       flight superseded by a reader that read a tombstone before the flight started and
 *       stalled (see {@link KeyRegistry#begin}: conservative with a flight that read nothing);
 *       the registry counts those, and a second load after one is not a violation.</li>
 *   <li><b>No key is stuck:</b> once every pending load has completed and the executor and the
 *       scheduler have run everything (the clock moved past every timeout, back-off and
 *       remembered lease), the registry holds nothing and nothing is queued.</li>
 *   <li><b>Invalidation:</b> a read that starts after {@code invalidate} or {@code put} returned
 *       never gets a loaded value whose load began before it (its version is at least the one
 *       that invalidate set). The protocol fences such loads for a bounded time: the tombstone
 *       (and the entries written after it) outlive {@code loadTimeout + 10 s} after the load
 *       began. A write that reaches the store later than that is beyond the fence by design; it
 *       happens here when a thread is descheduled between its last check and its write while
 *       other threads move the fake clock. A store wrapper records when each loaded value was
 *       written, and reads of such late writes are counted ({@link
 *       #lateWritesBeyondTheFence()}), not failed. Entries live {@code ttl + grace = 14 s}, at
 *       least as long as the fence: with entries that expire sooner the fence has a known hole,
 *       pinned by {@link InvalidationFenceTest}, which checks that it is closed.</li>
 *   <li><b>Failures:</b> every caller completes; a failure a caller gets is a {@link
 *       CacheLoadException} whose cause is the exception of a loader call that really failed (or
 *       no cause: a timeout, or a key without a value), or a loader's {@link Error} rethrown as
 *       it is; no caller gets a value no successful load produced; and a caller whose own loader
 *       ran (the leader) gets exactly that load's outcome, or a timeout.</li>
 *   <li><b>Flight states:</b> every flight the registry registered ended exactly once, in a legal
 *       sequence of states: at quiescence each is {@code ENDED} and its gate ({@link
 *       Flight#transition}) refused no transition (a second end, or any pair not in
 *       {@link Flight}'s table, is refused and counted).</li>
 * </ol>
 */
final class PerKeyStateHarness {

  /** With the default 2 s grace, entries live 14 s: at least the fence (3 s + 10 s). */
  static final Duration TTL = Duration.ofSeconds(12);
  static final Duration LOAD_TIMEOUT = Duration.ofSeconds(3);
  /** How long after its load began a write is still fenced: EntryWriter's tombstone margin. */
  private static final long FENCED_FOR_MILLIS = LOAD_TIMEOUT.toMillis() + 10_000;
  /** How far {@link #tick} moves the clock: past the load timeout; two ticks pass the TTL. */
  static final Duration TICK = LOAD_TIMEOUT.multipliedBy(2);
  /** How far {@link #quiesce} moves the clock per round: past every timeout and back-off. */
  private static final Duration QUIESCE_STEP = Duration.ofMinutes(1);

  /** What a loader does. */
  enum LoadKind {
    /** Returns (completes with) a value at once. */
    VALUE,
    /** Finds no value: returns {@code null}. */
    ABSENT,
    /** Throws (an asynchronous one: fails its stage with) an exception. */
    FAILURE,
    /** Throws an {@link AssertionError}, even an asynchronous one, from {@code load} itself. */
    ERROR,
    /** Asynchronous only: returns a stage that {@link #completeLater} completes. */
    LATER
  }

  /**
   * The outage reuse the cache runs with: on, as by default, so that the reads whose store read
   * fails ({@link #readWithTheStoreDown}) may share loads, and the invalidation check covers it.
   */
  static final Duration OUTAGE_REUSE = Duration.ofMillis(50);
  /** Set while this thread's read is to fail on the store ({@link #readWithTheStoreDown}). */
  private static final ThreadLocal<Boolean> FAILING_READ = ThreadLocal.withInitial(() -> false);

  final FakeClock clock = FakeClock.atRoundSecond();
  final InMemoryStore store = InMemoryStore.create(clock);
  final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  final ManualExecutor executor = new ManualExecutor();
  final DefaultSustainableCache<String> cache;

  private final int keys;
  private final AtomicLong[] versions;
  private final AtomicInteger loadIds = new AtomicInteger();
  private final Object lock = new Object();
  /** Per key, starts and ends of releases so far; guarded by {@link #lock}. */
  private final long[] releaseEvents;
  /** Per key, releases under way; guarded by {@link #lock}. */
  private final int[] activeReleases;
  /** Per key, the version of the newest invalidate or put that returned; guarded by lock. */
  private final long[] floors;
  /** Loader calls that have not completed; guarded by {@link #lock}. */
  private final List<Load> running = new ArrayList<>();
  private final Queue<Load> later = new ConcurrentLinkedQueue<>();
  private final Set<String> loadedValues = ConcurrentHashMap.newKeySet();
  /** The exceptions and errors loaders failed with (identity). */
  private final Set<Throwable> failures = ConcurrentHashMap.newKeySet();
  private final AtomicLong[] newestAbsentVersions;
  /** When each loaded value was written to the store, on the fake clock. */
  private final Map<String, Long> landedAt = new ConcurrentHashMap<>();
  /** When each load began, by the value it loads (or would load), on the fake clock. */
  private final Map<String, Long> beganAt = new ConcurrentHashMap<>();
  /** The store keys an absence was written to beyond the fence (its load ended long before). */
  private final Set<String> lateAbsences = ConcurrentHashMap.newKeySet();
  private final AtomicInteger lateWrites = new AtomicInteger();
  private final Queue<Call> calls = new ConcurrentLinkedQueue<>();
  private final Queue<String> violations = new ConcurrentLinkedQueue<>();
  /** Every flight the registry registered, for the check of their states. */
  private final Queue<Flight<?>> begun = new ConcurrentLinkedQueue<>();

  /**
   * @param keys how many keys the operations use ({@code key} arguments are below it)
   * @param fleetLease whether the cache takes the fleet lease before it loads
   */
  PerKeyStateHarness(int keys, boolean fleetLease) {
    this.keys = keys;
    versions = new AtomicLong[keys];
    newestAbsentVersions = new AtomicLong[keys];
    for (int key = 0; key < keys; key++) {
      versions[key] = new AtomicLong();
      newestAbsentVersions[key] = new AtomicLong(-1);
    }
    releaseEvents = new long[keys];
    activeReleases = new int[keys];
    floors = new long[keys];
    cache = (DefaultSustainableCache<String>) SustainableCache
        .builder(new LandingRecorder(store, clock, landedAt, lateAbsences)).namespace("m")
        .ttl(TTL).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(executor).random(FixedRandom.neverEarly()).loadTimeout(LOAD_TIMEOUT)
        .fleetLease(fleetLease).outageReuse(OUTAGE_REUSE).storeProbeInterval(Duration.ZERO)
        .build();
    cache.registry().onBegun(begun::add);
  }

  // ---------------------------------------------------------------------------------------------
  // Operations

  static String key(int key) {
    return "k" + key;
  }

  /** {@code get} ({@code find} if {@code optional}) with a synchronous loader. */
  void read(int key, LoadKind kind, boolean optional) {
    if (kind == LoadKind.LATER) {
      throw new IllegalArgumentException("a synchronous loader cannot complete later");
    }
    Call call = newCall(key, optional ? "find" : "get", kind);
    Loader<String> loader = k -> {
      Load load = started(call, kind);
      switch (kind) {
        case VALUE -> {
          ended(load, load.value(), null);
          return load.value();
        }
        case ABSENT -> {
          ended(load, null, null);
          return null;
        }
        case FAILURE -> {
          IOException failure = new IOException("database down (load #" + load.id + ")");
          ended(load, null, failure);
          throw failure;
        }
        default -> {
          AssertionError error = new AssertionError("loader bug (load #" + load.id + ")");
          ended(load, null, error);
          throw error;
        }
      }
    };
    try {
      call.value = optional ? cache.find(key(key), loader) : cache.get(key(key), loader);
    } catch (Throwable t) {
      call.error = t;
    } finally {
      call.inside = false;
    }
  }

  /**
   * {@link #read} ({@code async}: {@link #readAsync}) whose store read fails, as while the key's
   * node is down: the read is a miss that may share this instance's load of the key (outage
   * reuse) and loads without writing back.
   */
  void readWithTheStoreDown(int key, LoadKind kind, boolean optional, boolean async) {
    FAILING_READ.set(true);
    try {
      if (async) {
        readAsync(key, kind, optional);
      } else {
        read(key, kind, optional);
      }
    } finally {
      FAILING_READ.set(false);
    }
  }

  /** {@code getAsync} ({@code findAsync} if {@code optional}). */
  void readAsync(int key, LoadKind kind, boolean optional) {
    Call call = newCall(key, optional ? "findAsync" : "getAsync", kind);
    AsyncLoader<String> loader = k -> {
      Load load = started(call, kind);
      switch (kind) {
        case VALUE -> {
          ended(load, load.value(), null);
          return CompletableFuture.completedFuture(load.value());
        }
        case ABSENT -> {
          ended(load, null, null);
          return CompletableFuture.completedFuture(null);
        }
        case FAILURE -> {
          IllegalStateException failure =
              new IllegalStateException("database down (load #" + load.id + ")");
          ended(load, null, failure);
          return CompletableFuture.failedFuture(failure);
        }
        case ERROR -> {
          AssertionError error = new AssertionError("loader bug (load #" + load.id + ")");
          ended(load, null, error);
          throw error;
        }
        default -> {
          later.add(load);
          return load.stage;
        }
      }
    };
    try {
      call.future = optional ? cache.findAsync(key(key), loader)
          : cache.getAsync(key(key), loader);
    } catch (Throwable t) {
      call.error = t;
    } finally {
      call.inside = false;
    }
  }

  /** Completes the oldest stage a {@link LoadKind#LATER} loader returned, if any. */
  boolean completeLater(boolean fail) {
    Load load = later.poll();
    if (load == null) {
      return false;
    }
    if (fail) {
      IllegalStateException failure =
          new IllegalStateException("database down (load #" + load.id + ", completed later)");
      ended(load, null, failure);
      load.stage.completeExceptionally(failure);
    } else {
      ended(load, load.value(), null);
      load.stage.complete(load.value());
    }
    return true;
  }

  /** The database changes, then the cache is told. */
  void invalidate(int key) {
    releaseStarts(key);
    try {
      long changed = versions[key].incrementAndGet();
      cache.invalidate(key(key));
      raiseFloor(key, changed);
    } finally {
      releaseEnds(key);
    }
  }

  /** The database changes, and the new value is written through the cache. */
  void put(int key) {
    releaseStarts(key);
    try {
      long changed = versions[key].incrementAndGet();
      cache.put(key(key), key(key) + "=v" + changed + "#put");
      raiseFloor(key, changed);
    } finally {
      releaseEnds(key);
    }
  }

  /** Runs the queued refreshes and handed-off writes. */
  void runRefreshes() {
    executor.runAll();
  }

  /** Moves the clock past the load timeout and runs what is due (timeouts, lease polls). */
  void tick() {
    releaseStarts(-1);
    try {
      clock.advance(TICK);
      scheduler.runDue();
    } finally {
      releaseEnds(-1);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Quiescence and the checks

  /**
   * From a single thread, once every operation has returned: completes every pending load, runs
   * the executor and, moving the clock a minute at a time, the scheduler, until nothing is left.
   */
  void quiesce() {
    releaseStarts(-1);
    try {
      for (int round = 0; round < 100; round++) {
        boolean progress = false;
        while (completeLater(false)) {
          progress = true;
        }
        if (executor.runAll() > 0) {
          progress = true;
        }
        if (scheduler.pending() > 0) {
          clock.advance(QUIESCE_STEP);
          scheduler.runDue();
          progress = true;
        }
        if (!progress) {
          return;
        }
      }
      violation("no quiescence after 100 rounds: " + later.size() + " pending loads, "
          + executor.queued() + " queued tasks, " + scheduler.pending() + " scheduled tasks");
    } finally {
      releaseEnds(-1);
    }
  }

  /** Every invariant violated so far and at quiescence; empty if none. Call after quiesce. */
  List<String> violations() {
    if (cache.registeredKeyCount() != 0) {
      List<String> flights = new ArrayList<>();
      for (int key = 0; key < keys; key++) {
        Flight<?> flight = cache.registry().flightOf("m:" + key(key));
        if (flight != null) {
          flights.add(key(key) + ": " + flight);
        }
      }
      violation("a key is stuck: " + cache.registeredKeyCount() + " key(s) still registered at"
          + " quiescence" + (flights.isEmpty() ? " (no flight: failure or lease records)"
          : ", flights " + flights));
    }
    if (executor.queued() != 0 || !later.isEmpty()) {
      violation("not quiescent: " + executor.queued() + " queued tasks, " + later.size()
          + " pending loads");
    }
    for (Call call : calls) {
      check(call);
    }
    for (Flight<?> flight : begun) {
      if (flight.state() != Flight.State.ENDED || flight.refusedTransitions() != 0) {
        violation("a flight did not end exactly once in a legal sequence of states: " + flight
            + ", " + flight.refusedTransitions() + " transition(s) refused");
      }
    }
    return List.copyOf(violations);
  }

  /**
   * How many reads got an old value that a write stored later than the fence lasts (see the
   * class javadoc); not violations.
   */
  int lateWritesBeyondTheFence() {
    return lateWrites.get();
  }

  private boolean landedBeyondTheFence(String value) {
    Long landed = landedAt.get(value);
    Long began = beganAt.get(value);
    return landed != null && began != null && landed - began > FENCED_FOR_MILLIS;
  }

  /** Throws an {@link AssertionError} listing every violation, if any. */
  void assertInvariants(String context) {
    List<String> found = violations();
    if (!found.isEmpty()) {
      throw new AssertionError(context + ": " + found.size() + " invariant violation(s):\n  "
          + String.join("\n  ", found));
    }
  }

  private void check(Call call) {
    Object value = call.value;
    Throwable error = call.error;
    if (call.future != null) {
      if (!call.future.isDone()) {
        violation(call + " never completed: its caller hangs");
        return;
      }
      try {
        value = call.future.join();
      } catch (CompletionException | CancellationException e) {
        error = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
      }
    }
    if (error != null) {
      checkFailure(call, error);
    } else {
      checkValue(call, value);
    }
  }

  private void checkValue(Call call, Object answer) {
    String value;
    if (answer instanceof Optional<?> optional) {
      if (optional.isEmpty()) {
        if (newestAbsentVersions[call.key].get() < call.floor
            && lateAbsences.contains("m:" + key(call.key))) {
          lateWrites.incrementAndGet();
        } else if (newestAbsentVersions[call.key].get() < call.floor) {
          violation(call + " returned empty, but no load found the key absent since the"
              + " invalidate of version " + call.floor + " that returned before it started");
        }
        expectLeaderOutcome(call, null, true);
        return;
      }
      value = (String) optional.get();
    } else if (answer instanceof String string) {
      value = string;
    } else {
      violation(call + " returned " + answer);
      return;
    }
    String prefix = key(call.key) + "=v";
    if (!value.startsWith(prefix)) {
      violation(call + " returned " + value + ", a value of another key");
      return;
    }
    if (!value.endsWith("#put")) {
      if (!loadedValues.contains(value)) {
        violation(call + " returned " + value + ", which no successful load produced");
      }
      long loadedAt = Long.parseLong(value.substring(prefix.length(), value.indexOf('#')));
      if (loadedAt < call.floor && landedBeyondTheFence(value)) {
        lateWrites.incrementAndGet();
      } else if (loadedAt < call.floor) {
        violation(call + " started after the invalidate of version " + call.floor + " returned,"
            + " yet got " + value + ", loaded from version " + loadedAt + " before it");
      }
    }
    expectLeaderOutcome(call, value, false);
  }

  private void checkFailure(Call call, Throwable error) {
    if (error instanceof CacheLoadException failure) {
      Throwable cause = failure.getCause();
      String message = String.valueOf(failure.getMessage());
      if (cause == null) {
        if (!(message.contains("loadTimeout") || message.contains("gave up waiting")
            || message.contains("has no value") || message.contains("without a value"))) {
          violation(call + " failed with " + error + " without a cause");
        }
      } else if (!failures.contains(cause)) {
        violation(call + " failed with " + error + " caused by " + cause
            + ", which is not what a loader failed with");
      }
    } else if (!(error instanceof Error && failures.contains(error))) {
      violation(call + " failed with " + error + ": neither a CacheLoadException nor a loader's"
          + " Error");
    }
    expectLeaderOutcome(call, error, false);
  }

  /** A leader gets its own load's outcome (a value, its failure, or no value), or a timeout. */
  private void expectLeaderOutcome(Call call, Object outcome, boolean empty) {
    Load led = call.led;
    if (led == null) {
      return;
    }
    if (outcome instanceof CacheLoadException timeout && timeout.getCause() == null
        && String.valueOf(timeout.getMessage()).contains("loadTimeout")) {
      return;
    }
    boolean ok;
    if (led.failure != null) {
      ok = outcome == led.failure
          || outcome instanceof CacheLoadException e && e.getCause() == led.failure;
    } else if (led.value == null) { // the loader found no value
      ok = empty || outcome instanceof CacheLoadException e && e.getCause() == null;
    } else {
      ok = led.value.equals(outcome);
    }
    if (!ok) {
      violation(call + " ran load #" + led.id + " itself (" + led.describe() + ") but got "
          + (empty ? "empty" : outcome));
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Bookkeeping

  private Call newCall(int key, String method, LoadKind kind) {
    Call call;
    synchronized (lock) {
      call = new Call(key, FAILING_READ.get() ? method + " (store down)" : method, kind,
          floors[key], activeReleases[key] == 0 ? releaseEvents[key] : -1,
          cache.registry().supersededCount());
    }
    calls.add(call);
    return call;
  }

  private Load started(Call call, LoadKind kind) {
    Load load = new Load(loadIds.incrementAndGet(), versions[call.key].get(), call, kind);
    beganAt.put(load.value(), clock.millis());
    if (Thread.currentThread() == call.thread && call.inside) {
      call.led = load;
    }
    synchronized (lock) {
      for (Load other : running) {
        if (other.call.key == call.key && call.mark >= 0 && other.call.mark == call.mark
            && releaseEvents[call.key] == call.mark
            // a flight superseded since the earlier of the two calls began, up to now (not up
            // to this load's start: a failed read's flight can be superseded between its
            // loader's start and this check, found by CI once), may be loading beside its
            // successor
            && cache.registry().supersededCount()
                == Math.min(call.superseded, other.call.superseded)) {
          violation("load #" + load.id + " (for " + call + ") started while load #" + other.id
              + " (for " + other.call + ") was running, with no invalidate, put or timeout in"
              + " between: two loader calls for one key at once");
        }
      }
      running.add(load);
    }
    return load;
  }

  private void ended(Load load, String value, Throwable failure) {
    load.value = value;
    load.failure = failure;
    if (failure != null) {
      failures.add(failure);
    } else if (value != null) {
      loadedValues.add(value);
    } else {
      newestAbsentVersions[load.call.key].accumulateAndGet(load.version, Math::max);
    }
    synchronized (lock) {
      running.remove(load);
    }
  }

  /** A release of one key, or of every key ({@code -1}: the clock moves). */
  private void releaseStarts(int key) {
    synchronized (lock) {
      for (int k = 0; k < keys; k++) {
        if (key < 0 || k == key) {
          releaseEvents[k]++;
          activeReleases[k]++;
        }
      }
    }
  }

  private void releaseEnds(int key) {
    synchronized (lock) {
      for (int k = 0; k < keys; k++) {
        if (key < 0 || k == key) {
          releaseEvents[k]++;
          activeReleases[k]--;
        }
      }
    }
  }

  private void raiseFloor(int key, long changed) {
    synchronized (lock) {
      floors[key] = Math.max(floors[key], changed);
    }
  }

  private void violation(String message) {
    violations.add(message);
  }

  /** Records when each value envelope is stored, on the fake clock. */
  private static final class LandingRecorder implements CacheStore {
    private final CacheStore store;
    private final FakeClock clock;
    private final Map<String, Long> landedAt;
    private final Set<String> lateAbsences;

    LandingRecorder(CacheStore store, FakeClock clock, Map<String, Long> landedAt,
        Set<String> lateAbsences) {
      this.store = store;
      this.clock = clock;
      this.landedAt = landedAt;
      this.lateAbsences = lateAbsences;
    }

    @Override
    public CompletableFuture<Optional<StoreItem>> gets(String key) {
      if (FAILING_READ.get()) {
        return CompletableFuture.failedFuture(
            new io.sustainablecache.spi.StoreException("the store is down for this read"));
      }
      return store.gets(key);
    }

    @Override
    public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
      return store.add(key, value, exptime).thenApply(stored -> {
        if (stored) {
          landed(key, value);
        }
        return stored;
      });
    }

    @Override
    public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
      return store.set(key, value, exptime).thenApply(done -> {
        landed(key, value);
        return done;
      });
    }

    @Override
    public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
        int exptime) {
      return store.cas(key, casToken, value, exptime).thenApply(outcome -> {
        if (outcome == CasOutcome.STORED) {
          landed(key, value);
        }
        return outcome;
      });
    }

    @Override
    public CompletableFuture<Boolean> delete(String key) {
      return store.delete(key);
    }

    private void landed(String key, byte[] bytes) {
      if (!Envelope.isValid(bytes)) {
        return;
      }
      if (Envelope.kind(bytes) == Envelope.KIND_VALUE) {
        String value = new String(bytes, Envelope.HEADER_SIZE, Envelope.payloadLength(bytes),
            StandardCharsets.UTF_8);
        landedAt.put(value, clock.millis());
      } else if (Envelope.kind(bytes) == Envelope.KIND_ABSENT
          && clock.millis() - Envelope.fetchedAt(bytes) > FENCED_FOR_MILLIS) {
        lateAbsences.add(key);
      }
    }
  }

  /** One read of the key: what it saw when it started, and what it got. */
  private static final class Call {
    final int key;
    final String method;
    final LoadKind kind;
    final long floor;
    /** The key's {@link #releaseEvents} when it started, or -1 if a release was under way. */
    final long mark;
    final Thread thread = Thread.currentThread();
    volatile boolean inside = true;
    /** The load this call's loader ran on this call's thread while the call was running. */
    volatile Load led;
    volatile Object value;
    volatile Throwable error;
    volatile CompletableFuture<?> future;

    /**
     * The cache's superseded flights when the call started: a flight superseded since may be
     * loading beside the one that superseded it (a flight registered before the call's loader
     * started, so counted from the call's start, as releases are).
     */
    final long superseded;

    Call(int key, String method, LoadKind kind, long floor, long mark, long superseded) {
      this.superseded = superseded;
      this.key = key;
      this.method = method;
      this.kind = kind;
      this.floor = floor;
      this.mark = mark;
    }

    @Override
    public String toString() {
      return method + "(" + key(key) + ", " + kind + ") on " + thread.getName();
    }
  }

  /** One loader call. */
  private static final class Load {
    final int id;
    final long version;
    final Call call;
    final LoadKind kind;
    final CompletableFuture<String> stage = new CompletableFuture<>();
    volatile String value;
    volatile Throwable failure;

    Load(int id, long version, Call call, LoadKind kind) {
      this.id = id;
      this.version = version;
      this.call = call;
      this.kind = kind;
    }

    String value() {
      return key(call.key) + "=v" + version + "#" + id;
    }

    String describe() {
      return failure != null ? "failed with " + failure : value == null ? "no value" : value;
    }
  }
}
