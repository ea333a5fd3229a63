package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.CacheLoadException;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One rule for how a loader's {@link Error} reaches callers ({@link Failures}), the same for
 * {@code get}, {@code getAll} and their asynchronous forms (issue 23: they differed): the callers
 * of the failed load get the {@code Error} as it is; a caller within the key's back-off, whose
 * call loaded nothing, gets a {@link CacheLoadException} whose cause is that {@code Error}.
 */
final class LoaderErrorTest {

  /** An {@link Error} a loader throws. */
  private static final class DatabaseDriverError extends Error {
    DatabaseDriverError() {
      super("driver crashed");
    }
  }

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore server = InMemoryStore.create(clock);
  private final SustainableCache<String> cache = SustainableCache.builder(server).namespace("e")
      .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
      .scheduler(ManualScheduler.on(clock.ticker())).refreshExecutor(new ManualExecutor())
      .random(FixedRandom.neverEarly()).build();

  @AfterEach
  void close() {
    cache.close();
  }

  @Test
  void get_aLoaderError_isRethrownAsItIs_thenWithinTheBackoff_aCacheLoadException() {
    assertThatThrownBy(() -> cache.get("k", key -> {
      throw new DatabaseDriverError();
    })).isInstanceOf(DatabaseDriverError.class);

    assertThatThrownBy(() -> cache.get("k", key -> "never called"))
        .isInstanceOf(CacheLoadException.class)
        .hasCauseInstanceOf(DatabaseDriverError.class);
  }

  @Test
  void getAll_aLoaderError_isRethrownAsItIs_thenWithinTheBackoff_aCacheLoadException() {
    assertThatThrownBy(() -> cache.getAll(List.of("k"), keys -> {
      throw new DatabaseDriverError();
    })).isInstanceOf(DatabaseDriverError.class);

    assertThatThrownBy(() -> cache.getAll(List.of("k"), keys -> java.util.Map.of()))
        .isInstanceOf(CacheLoadException.class)
        .hasCauseInstanceOf(DatabaseDriverError.class);
  }

  @Test
  void getAsyncAndGetAllAsync_failWithTheLoadersErrorAsItIs() {
    assertThat(cache.getAsync("a", key -> {
      throw new DatabaseDriverError();
    })).failsWithin(Duration.ZERO).withThrowableOfType(java.util.concurrent.ExecutionException.class)
        .withCauseInstanceOf(DatabaseDriverError.class);

    assertThatThrownBy(() -> cache.getAllAsync(List.of("b"), keys -> {
      throw new DatabaseDriverError();
    }).join()).isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(DatabaseDriverError.class);
  }
}
