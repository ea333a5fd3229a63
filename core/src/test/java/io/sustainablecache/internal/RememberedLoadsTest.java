package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The loads {@link KeyRegistry} remembers for reads that failed on the store: each kept for
 * {@code loadTimeout + 1 s} from its load's start, for at most {@link
 * KeyRegistry#MAX_REMEMBERED_LOADS} keys, in a forget queue of their own (review finding 4: in the
 * queue shared with failure records and marker sightings, which live up to about a minute, one
 * failed load anywhere kept every remembered load behind it, with its value, and the slots ran
 * out during the store trouble the feature is for).
 */
final class RememberedLoadsTest {

  private static final Duration LOAD_TIMEOUT = Duration.ofSeconds(5);
  /** Past every remembered load's window: {@code loadTimeout + 1 s} after its load started. */
  private static final Duration PAST_THE_WINDOW = LOAD_TIMEOUT.plusSeconds(2);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final KeyRegistry registry = ((DefaultSustainableCache<?>) SustainableCache
      .builder(InMemoryStore.create(clock)).namespace("r").ttl(Duration.ofMinutes(10))
      .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
      .refreshExecutor(new ManualExecutor()).random(FixedRandom.neverEarly())
      .failureBackoff(Duration.ofSeconds(1), Duration.ofSeconds(30))
      .loadTimeout(LOAD_TIMEOUT).outageReuse(Duration.ZERO).build()).registry();

  /** A miss of {@code key} whose store read failed after taking {@code mark}. */
  private KeyRegistry.Begin failedRead(String key, long mark) {
    return registry.begin(new LoadRequest<String>(key, "r:" + key, Entry.NO_CAS, -1, -1,
        null, mark, false), Flight.Origin.MISS, clock.millis());
  }

  /** Runs the flight {@code begin} started to a value: a load a failed read awaited. */
  @SuppressWarnings("unchecked")
  private void load(KeyRegistry.Begin begin) {
    Flight<String> flight = ((KeyRegistry.Started<String>) begin).flight();
    flight.deliver(new Loaded<>("value of " + flight.key, clock.millis(), 1, 0));
    registry.end(flight, Ending.SUCCEEDED);
  }

  /** Remembers a load of {@code key}: a failed read starts it, and it loads. */
  private void remember(String key) {
    load(failedRead(key, registry.readMark()));
  }

  @Test
  void aFailedLoadOfAnotherKey_doesNotHoldRememberedLoadsPastTheirWindow() {
    KeyRegistry.Begin bad = registry.begin("bad", "r:bad", Flight.Origin.MISS, 0, clock.millis(),
        -1);
    registry.end(((KeyRegistry.Started<?>) bad).flight(),
        new Ending.Failed(new IllegalStateException("db"))); // its failure record is kept for up to a minute
    for (int i = 0; i < KeyRegistry.MAX_REMEMBERED_LOADS; i++) {
      remember("k" + i);
    }
    clock.advance(PAST_THE_WINDOW);
    scheduler.runDue();

    long mark = registry.readMark(); // a read begins, its store read hangs, then fails
    remember("late"); // meanwhile an earlier failed read of "late" loads it
    KeyRegistry.Begin second = failedRead("late", mark);

    assertThat(second).as("the read begun before the load shares it")
        .isInstanceOf(KeyRegistry.Joined.class);
    assertThat(registry.size()).as("bad's failure record and late's load").isEqualTo(2);
    assertThat(registry.rememberedCount()).isEqualTo(1);
  }

  @Test
  void rememberedLoads_areForgottenAfterTheirWindow_andFreeTheirSlots() {
    for (int i = 0; i < KeyRegistry.MAX_REMEMBERED_LOADS; i++) {
      remember("k" + i);
    }
    assertThat(registry.rememberedCount()).isEqualTo(KeyRegistry.MAX_REMEMBERED_LOADS);

    clock.advance(PAST_THE_WINDOW);
    scheduler.runDue();

    assertThat(registry.rememberedCount()).isZero();
    assertThat(registry.size()).isZero();
    long mark = registry.readMark();
    remember("late");
    assertThat(failedRead("late", mark)).isInstanceOf(KeyRegistry.Joined.class);
  }

  @Test
  void atMostMaxKeysAreRemembered_andReloadingOrInvalidatingOneKeepsTheCountExact() {
    for (int i = 0; i < KeyRegistry.MAX_REMEMBERED_LOADS; i++) {
      remember("k" + i);
    }
    long mark = registry.readMark();
    remember("one too many");
    assertThat(failedRead("one too many", mark)).as("not remembered: loads again")
        .isInstanceOf(KeyRegistry.Started.class);
    registry.detach("r:one too many");

    for (int i = 0; i < 100; i++) {
      clock.advanceMillis(10);
      remember("k0"); // each load replaces the key's last one, in the same slot
    }
    assertThat(registry.rememberedCount()).isEqualTo(KeyRegistry.MAX_REMEMBERED_LOADS);

    registry.detach("r:k1"); // invalidate: forgotten, its slot free
    assertThat(registry.rememberedCount()).isEqualTo(KeyRegistry.MAX_REMEMBERED_LOADS - 1);
    mark = registry.readMark();
    remember("next");
    assertThat(failedRead("next", mark)).isInstanceOf(KeyRegistry.Joined.class);

    clock.advance(PAST_THE_WINDOW); // past the window of every load, k0's last one included
    scheduler.runDue();
    assertThat(registry.rememberedCount()).isZero();
    assertThat(registry.size()).isZero();
  }

  @Test
  void aReloadedKey_keepsItsLastLoadForThatLoadsWholeWindow() {
    remember("k");
    clock.advance(LOAD_TIMEOUT); // the first load's window ends 1 s from now
    long mark = registry.readMark();
    remember("k"); // a newer load replaces it
    clock.advance(Duration.ofMillis(1_500)); // past the first load's window, not the second's
    scheduler.runDue();

    assertThat(failedRead("k", mark)).isInstanceOf(KeyRegistry.Joined.class);
    assertThat(registry.rememberedCount()).isEqualTo(1);
  }
}
