package io.sustainablecache.internal;

import static io.sustainablecache.internal.LincheckScenarios.scenario;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.junit.jupiter.api.Test;

/**
 * Model-checks {@link KeyRegistry} with Lincheck: every interleaving Lincheck explores of
 * {@code begin} (a miss or a refresh), {@code finish} (success or failure), {@code abandon},
 * {@code detach} and the lease's {@code leaseLost}/{@code leaseWon} on two keys from three
 * threads must be <em>linearizable</em> against {@link
 * Spec}, a plain single-threaded model of the registry's state machine (its class javadoc's
 * transition table) written independently of the implementation.
 *
 * <p>Why it matters: every guarantee of the cache about one key (one load at a time, joins,
 * back-off after failures, invalidation releasing a load) is a consequence of that state machine;
 * the registry claims it is changed only by atomic {@code compute}s, so each operation must take
 * effect at a single instant. A transition split into a read and a later write (a check-then-act
 * race), a {@code finish} of a flight that was already replaced clearing its successor, or a
 * {@code detach} that misses a flight registered concurrently all show up here as a history that
 * no sequential order of the same operations explains. The deterministic tests
 * ({@code PerKeyStateTest}) pin single scenarios; this test searches the interleavings: of
 * random scenarios, and of two hand-written ones that a stale {@code finish} or {@code abandon}
 * would break (a run without the registered-flight check in {@code finish} fails on the
 * second).
 *
 * <p>The model: time stands still (a fake clock that no operation moves, a failure back-off of one
 * minute), so a failure record keeps the key backing off until a success or a {@code detach}
 * forgets it, and no timeout fires (timeouts are covered by {@link PerKeyStateModelCheckingTest}).
 * A thread finishes or abandons the newest flight it started itself, as the cache's loader
 * threads do; the flight is named by a token unique to the thread and its operation count (passed
 * as the flight's CAS token, which the registry only stores), so a joined flight's name is the
 * same in the concurrent run and in the sequential model.
 *
 * <p>{@link KeyRegistry#size()} is deliberately not an operation: it is {@code
 * ConcurrentHashMap.size()}, an estimate while other threads change the map (Lincheck finds a
 * {@code size()} of 0 next to a registered flight at once), so it is only meaningful at
 * quiescence, which is where the tests use it ({@code registeredKeyCount()}).
 */
@Param(name = "key", gen = IntGen.class, conf = "0:1")
@Param(name = "cas", gen = IntGen.class, conf = "1:2")
public final class KeyRegistryLinearizabilityTest {

  private static final String[] KEYS = {"a", "b"};
  private static final String[] STORE_KEYS = {"r:a", "r:b"};
  /** How long a lease loss is remembered: longer than any run, the clock standing still. */
  private static final long LEASE_LOSS_MILLIS = 60_000;
  /** Lincheck's threads: 0 runs the init part, 1..3 the parallel part, 4 the post part. */
  private static final int LINCHECK_THREADS = 5;

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final KeyRegistry registry;
  private final long now = clock.millis();
  /** The flights each Lincheck thread started and has not ended, newest last. */
  private final Deque<Flight<?>>[] own = newDeques();
  private final int[] begun = new int[LINCHECK_THREADS];

  public KeyRegistryLinearizabilityTest() {
    DefaultSustainableCache<?> cache = (DefaultSustainableCache<?>) SustainableCache
        .builder(InMemoryStore.create(clock)).namespace("r").ttl(Duration.ofSeconds(10))
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .scheduler(ManualScheduler.on(clock.ticker()))
        .refreshExecutor(new ManualExecutor()).random(FixedRandom.neverEarly())
        .failureBackoff(Duration.ofMinutes(1)).loadTimeout(Duration.ofSeconds(5)).build();
    registry = cache.registry();
  }

  @Operation
  public String beginMiss(@Param(gen = ThreadIdGen.class) int thread,
      @Param(name = "key") int key) {
    return begin(thread, key, Flight.Origin.MISS);
  }

  @Operation
  public String beginRefresh(@Param(gen = ThreadIdGen.class) int thread,
      @Param(name = "key") int key) {
    return begin(thread, key, Flight.Origin.REFRESH);
  }

  @Operation
  public String finishOwnLoaded(@Param(gen = ThreadIdGen.class) int thread) {
    Flight<?> flight = own[thread].pollLast();
    if (flight == null) {
      return "none";
    }
    registry.end(flight, Ending.SUCCEEDED);
    return "finished #" + flight.casToken;
  }

  @Operation
  public String finishOwnFailed(@Param(gen = ThreadIdGen.class) int thread) {
    Flight<?> flight = own[thread].pollLast();
    if (flight == null) {
      return "none";
    }
    registry.end(flight, new Ending.Failed(new IllegalStateException("db down")));
    return "failed #" + flight.casToken;
  }

  @Operation
  public String abandonOwn(@Param(gen = ThreadIdGen.class) int thread) {
    Flight<?> flight = own[thread].pollLast();
    if (flight == null) {
      return "none";
    }
    registry.end(flight, Ending.NOT_LOADED);
    return "abandoned #" + flight.casToken;
  }

  @Operation
  public void detach(@Param(name = "key") int key) {
    registry.detach(STORE_KEYS[key]);
  }

  /** The lease's step lost the key's lease while the item had {@code cas}; never forgotten here. */
  @Operation
  public void leaseLost(@Param(name = "key") int key, @Param(name = "cas") int cas) {
    registry.leaseLost(STORE_KEYS[key], cas, LEASE_LOSS_MILLIS);
  }

  /** A load that read {@code cas} won the key's lease: a takeover if it lost it at that token. */
  @Operation
  public boolean leaseWon(@Param(name = "key") int key, @Param(name = "cas") int cas) {
    return registry.leaseWon(STORE_KEYS[key], cas);
  }

  @Operation
  public String flightOf(@Param(name = "key") int key) {
    Flight<?> flight = registry.flightOf(STORE_KEYS[key]);
    return flight == null ? "none" : "#" + flight.casToken;
  }

  private String begin(int thread, int key, Flight.Origin origin) {
    long token = flightToken(thread, ++begun[thread]);
    KeyRegistry.Begin begin = registry.begin(new LoadRequest<>(KEYS[key], STORE_KEYS[key], token, -1, -1,
        null, LoadRequest.READ_OK, false), origin, now);
    if (begin instanceof KeyRegistry.Started<?> started) {
      own[thread].addLast(started.flight());
      return "started #" + token;
    }
    if (begin instanceof KeyRegistry.Joined<?> joined) {
      return "joined #" + joined.flight().casToken;
    }
    if (begin instanceof KeyRegistry.Remembered remembered) {
      return "remembered " + remembered.failure().count();
    }
    if (begin instanceof KeyRegistry.Busy busy) {
      return busy.backingOff() ? "backing off" : "busy";
    }
    return "recursive";
  }

  static long flightToken(int thread, int count) {
    return thread * 1_000L + count;
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static <T> Deque<T>[] newDeques() {
    Deque<T>[] deques = new Deque[LINCHECK_THREADS];
    for (int i = 0; i < deques.length; i++) {
      deques[i] = new ArrayDeque<>();
    }
    return deques;
  }

  @Test
  void everyInterleavingOfBeginFinishAbandonAndDetach_isLinearizableToTheStateMachine() {
    int scale = LincheckScenarios.SCALE;
    LincheckScenarios.modelChecking()
        .threads(3)
        .actorsPerThread(3)
        .actorsBefore(2)
        .actorsAfter(2)
        // two random scenarios (of 13 operations each) besides the hand-written ones (of 6);
        // scale 3 explores six, deeper
        .iterations(2 * scale)
        .invocationsPerIteration(150 * scale)
        .sequentialSpecification(Spec.class)
        // a stale finish (of a flight a detach replaced) racing the flight that replaced it
        .addCustomScenario(scenario(KeyRegistryLinearizabilityTest.class, List.of(), List.of(
            List.of("beginMiss(1, 0)", "finishOwnFailed(1)"),
            List.of("detach(0)", "beginRefresh(2, 0)"),
            List.of("flightOf(0)", "beginMiss(3, 0)"))))
        // an abandoned refresh and a finished miss racing a detach and a new miss
        .addCustomScenario(scenario(KeyRegistryLinearizabilityTest.class, List.of(), List.of(
            List.of("beginRefresh(1, 0)", "abandonOwn(1)"),
            List.of("beginMiss(2, 0)", "finishOwnLoaded(2)"),
            List.of("detach(0)", "beginMiss(3, 0)"))))
        // the lease knowledge of the key's memory racing a failed load, a detach and a win
        .addCustomScenario(scenario(KeyRegistryLinearizabilityTest.class, List.of(), List.of(
            List.of("beginMiss(1, 0)", "finishOwnFailed(1)"),
            List.of("leaseLost(0, 1)", "leaseWon(0, 1)"),
            List.of("detach(0)", "leaseWon(0, 2)"))))
        .check(KeyRegistryLinearizabilityTest.class);
  }

  /**
   * The registry's state machine, sequentially, for a clock that stands still: per key, its two
   * records as the registry's transition table has them, the flight in flight (by token) and, of
   * its memory, the count of failures that keep it backing off and the token at which the lease
   * was lost (no read fails on the store here, and no failure marker is sighted: the memory's
   * other parts stay empty).
   */
  public static final class Spec {
    private final Map<Integer, Long> flights = new HashMap<>();
    private final Map<Integer, Integer> failures = new HashMap<>();
    /** Per key, the item token at which this instance lost the lease, if it did. */
    private final Map<Integer, Integer> losses = new HashMap<>();
    private final Deque<long[]>[] own = newDeques(); // {token, key}
    private final int[] begun = new int[LINCHECK_THREADS];

    public String beginMiss(int thread, int key) {
      return begin(thread, key, true);
    }

    public String beginRefresh(int thread, int key) {
      return begin(thread, key, false);
    }

    private String begin(int thread, int key, boolean miss) {
      long token = flightToken(thread, ++begun[thread]);
      Long flight = flights.get(key);
      if (flight != null) {
        return miss ? "joined #" + flight : "busy";
      }
      Integer failed = failures.get(key);
      if (failed != null) { // the clock stands still: still within the back-off
        return miss ? "remembered " + failed : "backing off";
      }
      flights.put(key, token);
      own[thread].addLast(new long[] {token, key});
      return "started #" + token;
    }

    public String finishOwnLoaded(int thread) {
      long[] flight = own[thread].pollLast();
      if (flight == null) {
        return "none";
      }
      int key = (int) flight[1];
      if (isRegistered(flight)) {
        flights.remove(key);
        failures.remove(key);
      }
      return "finished #" + flight[0];
    }

    public String finishOwnFailed(int thread) {
      long[] flight = own[thread].pollLast();
      if (flight == null) {
        return "none";
      }
      int key = (int) flight[1];
      if (isRegistered(flight)) {
        flights.remove(key);
        failures.merge(key, 1, Integer::sum);
      }
      return "failed #" + flight[0];
    }

    public String abandonOwn(int thread) {
      long[] flight = own[thread].pollLast();
      if (flight == null) {
        return "none";
      }
      if (isRegistered(flight)) {
        flights.remove((int) flight[1]);
      }
      return "abandoned #" + flight[0];
    }

    public void detach(int key) {
      flights.remove(key);
      failures.remove(key);
      losses.remove(key);
    }

    public void leaseLost(int key, int cas) {
      losses.put(key, cas);
    }

    public boolean leaseWon(int key, int cas) {
      Integer lost = losses.remove(key);
      return lost != null && lost == cas;
    }

    public String flightOf(int key) {
      Long flight = flights.get(key);
      return flight == null ? "none" : "#" + flight;
    }

    private boolean isRegistered(long[] flight) {
      Long current = flights.get((int) flight[1]);
      return current != null && current == flight[0];
    }

    // Lincheck compares the sequential states it reaches: equal states must compare equal.
    @Override
    public boolean equals(Object o) {
      if (!(o instanceof Spec that)) {
        return false;
      }
      if (!flights.equals(that.flights) || !failures.equals(that.failures)
          || !losses.equals(that.losses) || !java.util.Arrays.equals(begun, that.begun)) {
        return false;
      }
      for (int t = 0; t < LINCHECK_THREADS; t++) {
        if (!sameFlights(own[t], that.own[t])) {
          return false;
        }
      }
      return true;
    }

    @Override
    public int hashCode() {
      return flights.hashCode() * 31 + failures.hashCode() * 17 + losses.hashCode() * 13
          + java.util.Arrays.hashCode(begun);
    }

    private static boolean sameFlights(Deque<long[]> a, Deque<long[]> b) {
      if (a.size() != b.size()) {
        return false;
      }
      var i = a.iterator();
      var j = b.iterator();
      while (i.hasNext()) {
        if (!java.util.Arrays.equals(i.next(), j.next())) {
          return false;
        }
      }
      return true;
    }
  }
}
