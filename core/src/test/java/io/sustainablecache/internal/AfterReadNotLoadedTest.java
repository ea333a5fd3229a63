package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.CacheLoadException;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.InMemoryStore;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link AfterRead#afterNotLoaded}: the one rule for a key whose joined load ended without a
 * value, which {@code get}, {@code getAsync} and {@code getAll} all follow (a single read threw
 * at the bound, {@code getAll} served the stale entry there; review of 2026-11-29, problem 3).
 * The reads again themselves: {@code SustainableCacheAsyncTest} ({@code getAsync}) and {@code
 * WriteFenceTest} ({@code getAll}).
 */
final class AfterReadNotLoadedTest {

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);
  private DefaultSustainableCache<String> cache;

  @AfterEach
  void close() {
    cache.close();
  }

  private AfterRead<String> rule(boolean serveStaleOnError) {
    cache = (DefaultSustainableCache<String>) SustainableCache.builder(store).namespace("n")
        .ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .serveStaleOnError(serveStaleOnError).build();
    return cache.reads().afterRead();
  }

  /** The request of a read that found {@code stale} ({@code null}: nothing). */
  private LoadRequest<String> readFound(Entry<String> stale) {
    return LoadRequest.of("k", "n:k", stale, LoadRequest.READ_OK);
  }

  private Entry<String> expired() {
    long now = clock.millis();
    return new Entry<>(Entry.Kind.VALUE, "stale", now - 20_000, now - 10_000, 5, 7);
  }

  @Test
  void belowTheBound_theKeyIsReadAgain() {
    AfterRead<String> rule = rule(true);
    for (int rereads = 0; rereads < AfterRead.MAX_REREADS; rereads++) {
      assertThat(rule.afterNotLoaded(readFound(expired()), rereads))
          .as("after %d reads again", rereads).isNull();
    }
    assertThat(cache.stats().count("stale_on_error")).isZero();
  }

  @Test
  void atTheBound_aStaleEntryAnswers_underStaleOnError_asForAFailedLoad() {
    AfterRead<String> rule = rule(true);

    Answer<String> answer = rule.afterNotLoaded(readFound(expired()), AfterRead.MAX_REREADS);

    assertThat(answer).isEqualTo(new Answer.Value<>("stale"));
    assertThat(cache.stats().count("stale_on_error")).isEqualTo(1);
  }

  @Test
  void atTheBound_withoutStaleOnError_orWithoutAStaleEntry_theKeyFails() {
    AfterRead<String> noStaleOnError = rule(false);
    Answer<String> failed = noStaleOnError.afterNotLoaded(readFound(expired()),
        AfterRead.MAX_REREADS);
    cache.close();
    Answer<String> nothingRead = rule(true).afterNotLoaded(readFound(null), AfterRead.MAX_REREADS);

    for (Answer<String> answer : java.util.List.of(failed, nothingRead)) {
      assertThat(answer).isInstanceOf(Answer.Failed.class);
      assertThat(((Answer.Failed<String>) answer).cause())
          .isInstanceOf(CacheLoadException.class)
          .hasMessageContaining("ended without a value " + (AfterRead.MAX_REREADS + 1) + " times");
    }
    assertThat(cache.stats().count("stale_on_error")).isZero();
  }
}
