package io.sustainablecache.internal;

import static io.sustainablecache.internal.LincheckScenarios.scenario;

import java.util.List;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.junit.jupiter.api.Test;

/**
 * The model check of {@link PerKeyStateModelCheckingTest.AsyncModel}, in a class of its own so
 * that the build's two test JVMs run it beside the synchronous model's check instead of after
 * it (each takes a minute or more). Everything else, the models and what they check, is in
 * {@link PerKeyStateModelCheckingTest}.
 */
final class PerKeyStateAsyncModelCheckingTest {

  @Test
  void asyncLoadsCompletedLater_racingInvalidatePutRefreshesAndTimeouts_keepEveryInvariant() {
    ModelCheckingOptions options = PerKeyStateModelCheckingTest.options(3);
    // a read joining a load that fails later, racing a timeout and an invalidate
    options.addCustomScenario(scenario(PerKeyStateModelCheckingTest.AsyncModel.class, List.of(),
        List.of(List.of("getAsyncCompletedLater", "failTheOldestPendingLoad"),
            List.of("getAsyncLoadingAValue", "invalidate"),
            List.of("advanceTheClockPastTheLoadTimeout"))));
    // a miss during an invalidate that released a load holding the fleet lease: the miss may
    // lose the lease and poll for it
    options.addCustomScenario(scenario(PerKeyStateModelCheckingTest.AsyncModel.class, List.of(),
        List.of(List.of("getAsyncCompletedLater", "completeTheOldestPendingLoad"),
            List.of("invalidate"), List.of("getAsyncLoadingAValue",
                "advanceTheClockPastTheLoadTimeout"))));
    // a stale entry: a refresh is queued, an invalidate and the refresh race
    options.addCustomScenario(scenario(PerKeyStateModelCheckingTest.AsyncModel.class,
        List.of("getAsyncLoadingAValue", "advanceTheClockPastTheLoadTimeout",
            "advanceTheClockPastTheLoadTimeout"),
        List.of(List.of("getAsyncCompletedLater", "runQueuedRefreshesAndWrites"),
            List.of("invalidate", "getAsyncLoadingAValue"),
            List.of("completeTheOldestPendingLoad", "put"))));
    // failed reads sharing a load completed later, racing an invalidate and a put
    options.addCustomScenario(scenario(PerKeyStateModelCheckingTest.AsyncModel.class, List.of(),
        List.of(List.of("getAsyncWithTheStoreDownCompletedLater", "completeTheOldestPendingLoad"),
            List.of("invalidate", "getAsyncWithTheStoreDown"),
            List.of("getAsyncWithTheStoreDown", "put"))));
    options.check(PerKeyStateModelCheckingTest.AsyncModel.class);
  }
}
