package io.sustainablecache.internal;

import static io.sustainablecache.internal.LincheckScenarios.scenario;

import io.sustainablecache.CacheLoadException;
import io.sustainablecache.internal.PerKeyStateHarness.LoadKind;
import java.util.List;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.jetbrains.lincheck.datastructures.verifier.EpsilonVerifier;
import org.junit.jupiter.api.Test;

/**
 * Model-checks the per-key state through the public cache API with Lincheck: Lincheck generates
 * small concurrent scenarios of cache operations on one key and, in model-checking mode, runs
 * each one under many thread interleavings (switching threads at the shared-memory accesses of
 * the cache, the registry's {@code ConcurrentHashMap}, the futures and the fixtures), and after
 * each run drives the cache to quiescence and checks the invariants of {@link
 * PerKeyStateHarness}: at most one loader call of the key at a time unless a release (invalidate,
 * put, timeout) came in between, no key left registered, no read that starts after an invalidate
 * returned getting a value loaded before it, and every caller completing with its own load's
 * outcome, a value some load produced, or a {@link CacheLoadException} (or the loader's Error)
 * carrying a real loader failure.
 *
 * <p>Why it matters: these are the guarantees the cache sells (no stampede, invalidation that
 * holds, failures that reach every waiting caller and no one else) and they rest on races that
 * the deterministic tests can only pin one at a time: a join landing just as a flight is
 * deregistered, an invalidate between a read and the {@code begin} it decides, a timeout firing
 * while a load completes, a lease released while a miss polls for it. The results are not
 * compared with a sequential specification (a cache's answers depend on timing by design, e.g.
 * whether a read joins a load or hits its write), so the verifier accepts every result and the
 * invariants are checked by the {@code @Validate} function instead; the registry's own
 * linearizability is checked by {@link KeyRegistryLinearizabilityTest}.
 *
 * <p>Two models, because a synchronous {@code get} blocks until the load it joined completes:
 * <ul>
 *   <li>{@link SyncModel}: {@code get}/{@code find} with synchronous loaders that return a value,
 *       find none, throw an exception or throw an {@link Error}, racing {@code invalidate} and
 *       {@code put}, and {@code get}s whose store read fails (which may share a load under the
 *       outage reuse, on as by default). Every load completes on its own thread, so no
 *       interleaving blocks forever.
 *       Without the fleet lease and without clock steps: a miss that loses a lease, or joins a
 *       queued refresh, would wait for an operation that may not come.</li>
 *   <li>{@link AsyncModel}: {@code getAsync}/{@code findAsync} with loaders that complete at
 *       once, fail, throw an {@link Error} from {@code load}, or return a stage that another
 *       operation completes (or fails) later, some of them after a store read that failed;
 *       {@code invalidate}, {@code put}, running the
 *       queued refreshes and handed-off writes, and steps of the clock past the load timeout
 *       that run the due timeouts and lease polls. With the fleet lease (the default), so a
 *       miss can lose the lease to a load that an invalidate released, and poll.</li>
 * </ul>
 * The real-thread counterpart, mixing everything on one cache, is {@link PerKeyStateStressTest}.
 */
public final class PerKeyStateModelCheckingTest {

  /**
   * Random scenarios per model, besides the hand-written ones; each scenario is explored under
   * {@link #INTERLEAVINGS_PER_SCENARIO} interleavings. Sized for the build: most of a model
   * check's CPU is Lincheck instrumenting and first running each code path, not the
   * interleavings (the synchronous model's Maven run alone: 23 s of CPU with one interleaving per
   * scenario, 43 s with 8, 45 to 48 s with 12; 2026-11-30), and 41 % of its samples are
   * Lincheck's object tracker, whose lookups scan the objects an interleaving created. The build
   * explores the hand-written races and one random scenario per model (Lincheck draws them from a
   * fixed seed, so every build the same one); {@code -Dsustainablecache.test.scale=3} (see {@link
   * LincheckScenarios#SCALE}) explores three, each under three times the interleavings.
   */
  private static final int RANDOM_SCENARIOS = 1 * LincheckScenarios.SCALE;
  private static final int INTERLEAVINGS_PER_SCENARIO = 12 * LincheckScenarios.SCALE;

  @Test
  void syncGetAndFind_racingInvalidateAndPut_keepEveryPerKeyInvariant() {
    ModelCheckingOptions options = options(2);
    // an invalidate, and a read after it, while a load of the key is running
    options.addCustomScenario(scenario(SyncModel.class, List.of(),
        List.of(List.of("getLoadingAValue"), List.of("invalidate", "getLoadingAValue"))));
    // misses joining loads that fail with an exception and with an Error
    options.addCustomScenario(scenario(SyncModel.class, List.of(),
        List.of(List.of("getWhoseLoaderThrows"), List.of("getLoadingAValue"),
            List.of("getWhoseLoaderThrowsAnError", "findLoadingAValue"))));
    // a put and an absence racing loads and an invalidate
    options.addCustomScenario(scenario(SyncModel.class, List.of(),
        List.of(List.of("findWhoseLoaderFindsNothing", "put"),
            List.of("getLoadingAValue", "invalidate"), List.of("findLoadingAValue"))));
    // a read whose store read failed shares a load (outage reuse), racing an invalidate and a
    // failed read after it, which must not get the value loaded before the invalidate
    options.addCustomScenario(scenario(SyncModel.class, List.of(),
        List.of(List.of("getWithTheStoreDown"), List.of("invalidate", "getWithTheStoreDown"),
            List.of("getLoadingAValue"))));
    options.check(SyncModel.class);
  }

  static ModelCheckingOptions options(int actorsPerThread) {
    return LincheckScenarios.modelChecking()
        .threads(3)
        .actorsPerThread(actorsPerThread)
        .actorsBefore(1)
        .actorsAfter(1)
        .iterations(RANDOM_SCENARIOS)
        .invocationsPerIteration(INTERLEAVINGS_PER_SCENARIO)
        .verifier(EpsilonVerifier.class);
  }

  /** Synchronous reads, invalidations and puts; see the class javadoc. */
  public static final class SyncModel {
    private final PerKeyStateHarness harness = new PerKeyStateHarness(1, false);

    @Operation
    public void getLoadingAValue() {
      harness.read(0, LoadKind.VALUE, false);
    }

    @Operation
    public void getWhoseLoaderThrows() {
      harness.read(0, LoadKind.FAILURE, false);
    }

    @Operation
    public void getWhoseLoaderThrowsAnError() {
      harness.read(0, LoadKind.ERROR, false);
    }

    @Operation
    public void findLoadingAValue() {
      harness.read(0, LoadKind.VALUE, true);
    }

    @Operation
    public void findWhoseLoaderFindsNothing() {
      harness.read(0, LoadKind.ABSENT, true);
    }

    @Operation
    public void getWithTheStoreDown() {
      harness.readWithTheStoreDown(0, LoadKind.VALUE, false, false);
    }

    @Operation
    public void invalidate() {
      harness.invalidate(0);
    }

    @Operation
    public void put() {
      harness.put(0);
    }

    @Validate
    public void atQuiescence_everyInvariantHolds() {
      harness.quiesce();
      harness.assertInvariants("sync model");
    }
  }

  /** Asynchronous reads with loads completed by other operations; see the class javadoc. */
  public static final class AsyncModel {
    private final PerKeyStateHarness harness = new PerKeyStateHarness(1, true);

    @Operation
    public void getAsyncLoadingAValue() {
      harness.readAsync(0, LoadKind.VALUE, false);
    }

    @Operation
    public void getAsyncWhoseStageFails() {
      harness.readAsync(0, LoadKind.FAILURE, false);
    }

    @Operation
    public void getAsyncWhoseLoaderThrowsAnError() {
      harness.readAsync(0, LoadKind.ERROR, false);
    }

    @Operation
    public void getAsyncCompletedLater() {
      harness.readAsync(0, LoadKind.LATER, false);
    }

    @Operation
    public void findAsyncCompletedLater() {
      harness.readAsync(0, LoadKind.LATER, true);
    }

    @Operation
    public void getAsyncWithTheStoreDown() {
      harness.readWithTheStoreDown(0, LoadKind.VALUE, false, true);
    }

    @Operation
    public void getAsyncWithTheStoreDownCompletedLater() {
      harness.readWithTheStoreDown(0, LoadKind.LATER, false, true);
    }

    @Operation
    public void completeTheOldestPendingLoad() {
      harness.completeLater(false);
    }

    @Operation
    public void failTheOldestPendingLoad() {
      harness.completeLater(true);
    }

    @Operation
    public void invalidate() {
      harness.invalidate(0);
    }

    @Operation
    public void put() {
      harness.put(0);
    }

    @Operation
    public void runQueuedRefreshesAndWrites() {
      harness.runRefreshes();
    }

    @Operation
    public void advanceTheClockPastTheLoadTimeout() {
      harness.tick();
    }

    @Validate
    public void atQuiescence_everyInvariantHolds() {
      harness.quiesce();
      harness.assertInvariants("async model");
    }
  }
}
