package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.CacheLoadException;
import io.sustainablecache.LoadingSustainableCache;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 30, part 3: a loading cache's waiters are bounded by {@code loadTimeout}, as a plain
 * cache's are, when its bulk loader hangs. Measured before the fix, with a 1 s timeout: waiters
 * gave up after 2.0 s (the synchronous API's backstop, {@code loadTimeout + 1 s}: a caller whose
 * key was in a call running on another thread was exempt from its timeout, an exemption meant for
 * the caller whose own thread runs the loader), asynchronous ones waited for the loader, and the
 * caller that opened a batch while a call ran was taken to run that batch's call when it started,
 * so it hung with the loader (6 to 7 s).
 *
 * <p>The bulk loader is synchronous and never returns (until the test ends), callers are real
 * threads; every duration is on a {@link FakeClock} (its ticker drives the load timeouts, through
 * a {@link ManualScheduler} run on the test's thread), so each waiter's answer is asserted at an
 * exact time on that clock: {@code loadTimeout} after its key's load was registered, which is no
 * later than {@code loadTimeout} after the waiter called. Real time only bounds how long the test
 * waits for a thread it expects to have answered already (a failing run's wait); the synchronous
 * API's own real-time backstop, {@code loadTimeout + 1 s} = 31 s, is beyond any step of the test.
 */
final class CoalescedWaitBoundTest {

  private static final long TIMEOUT_MILLIS = 30_000;
  /** How long the test waits, in real time, for a thread that has its answer to return. */
  private static final Duration ANSWERED = Duration.ofSeconds(20);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final long start = clock.ticker().read();
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final CountDownLatch hang = new CountDownLatch(1);
  /** Every loader call: its keys and the thread it ran on. */
  private final List<Call> calls = new CopyOnWriteArrayList<>();
  private final List<Thread> callers = new CopyOnWriteArrayList<>();
  private LoadingSustainableCache<String> cache;

  private record Call(Set<String> keys, Thread thread) {}

  /** What a caller got, and when on the fake clock (ms since the test began). */
  private record Outcome(Throwable failure, long atMillis) {}

  @AfterEach
  void close() throws InterruptedException {
    hang.countDown();
    for (Thread caller : callers) {
      caller.join(ANSWERED.toMillis());
    }
    if (cache != null) {
      cache.close();
    }
  }

  @ParameterizedTest(name = "fleetLease={0}")
  @ValueSource(booleans = {false, true})
  @Timeout(120) // a call taken by the test's own thread would hang it: fail instead
  void withAHungBulkLoader_everyWaiterFailsLoadTimeoutAfterItsKeyWasRegistered(boolean lease)
      throws Exception {
    cache = SustainableCache.builder(InMemoryStore.create(clock)).namespace("c")
        .ttl(Duration.ofMinutes(10)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .scheduler(scheduler).random(FixedRandom.neverEarly()).fleetLease(lease)
        .loadTimeout(Duration.ofMillis(TIMEOUT_MILLIS)).refreshThreads(4)
        .build(keys -> {
          calls.add(new Call(Set.copyOf(keys), Thread.currentThread()));
          hang.await(); // the database never answers (until the test ends)
          return Map.of();
        });

    // t=0: an idle cache: a's call starts at once, on its caller's thread, and hangs
    Thread loaderCaller = thread(() -> cache.get("a")).thread;
    soon().until(() -> calls.size() == 1);
    assertThat(calls.get(0).thread()).isSameAs(loaderCaller);

    // t=1 s to 3 s: a batch forms while the hung call runs: several waiters, one of them late
    advanceTo(1_000);
    Waiter b = thread(() -> cache.get("b"));
    awaitRegistered("b");
    advanceTo(2_000);
    Waiter c = async(() -> cache.getAsync("c"));
    Waiter d = thread(() -> cache.getAll(List.of("d1", "d2")));
    awaitRegistered("d1", "d2");
    advanceTo(3_000);
    Waiter lateJoiner = join("b"); // joins b's load, 2 s after it began
    assertThat(calls).as("the batch waits for the running call").hasSize(1);

    // t=30 s: a's load times out, its call is over: the open batch starts, on a refresh thread
    // (not on b's, whose caller waits), and hangs as well
    advanceTo(TIMEOUT_MILLIS);
    soon().until(() -> calls.size() == 2);
    assertThat(calls.get(1).keys()).containsExactlyInAnyOrder("b", "c", "d1", "d2");
    assertThat(calls.get(1).thread()).isNotIn(callers).isNotSameAs(Thread.currentThread());

    // t=30.5 s: a waiter joins c's hung load late; another batch forms while that call hangs
    advanceTo(30_500);
    Waiter joinsHungCall = join("c");
    Waiter g = thread(() -> cache.get("g"));
    awaitRegistered("g");

    advanceTo(1_000 + TIMEOUT_MILLIS - 1);
    assertThat(flight("b").completed()).as("b's bound has not passed").isFalse();
    advanceTo(1_000 + TIMEOUT_MILLIS); // b was registered at 1 s
    assertTimedOutAt(b, 1_000 + TIMEOUT_MILLIS);
    assertTimedOutAt(lateJoiner, 1_000 + TIMEOUT_MILLIS); // waited 28 s
    assertThat(flight("c").completed()).as("c's bound has not passed").isFalse();

    advanceTo(2_000 + TIMEOUT_MILLIS); // c, d1 and d2 were registered at 2 s
    assertTimedOutAt(c, 2_000 + TIMEOUT_MILLIS);
    assertTimedOutAt(d, 2_000 + TIMEOUT_MILLIS);
    assertTimedOutAt(joinsHungCall, 2_000 + TIMEOUT_MILLIS); // waited 1.5 s

    // the second call is over: g's batch starts, on a refresh thread, and hangs too
    soon().until(() -> calls.size() == 3);
    assertThat(calls.get(2).keys()).containsExactly("g");
    assertThat(calls.get(2).thread()).isNotIn(callers).isNotSameAs(Thread.currentThread());
    advanceTo(30_500 + TIMEOUT_MILLIS);
    assertTimedOutAt(g, 30_500 + TIMEOUT_MILLIS);

    assertThat(loaderCaller.isAlive()).as("a's caller runs its own loader, as in a plain cache")
        .isTrue();
    assertThat(cache.stats().count("load_timeout")).isEqualTo(6); // a, b, c, d1, d2, g
  }

  /** A caller: its thread (none for an asynchronous one) and what it got. */
  private record Waiter(Thread thread, CompletableFuture<Outcome> outcome) {}

  /** Calls {@code call} on a thread of its own, as a request thread would. */
  private Waiter thread(Runnable call) {
    CompletableFuture<Outcome> outcome = new CompletableFuture<>();
    Thread thread = new Thread(() -> {
      Throwable failure = null;
      try {
        call.run();
      } catch (Throwable t) {
        failure = t;
      }
      outcome.complete(new Outcome(failure, millis()));
    }, "caller-" + callers.size());
    thread.setDaemon(true);
    callers.add(thread);
    thread.start();
    return new Waiter(thread, outcome);
  }

  /** Calls an asynchronous method on the test's thread; its answer comes when it comes. */
  private Waiter async(Supplier<CompletableFuture<?>> call) {
    CompletableFuture<Outcome> outcome = new CompletableFuture<>();
    call.get().whenComplete((value, failure) -> outcome.complete(new Outcome(failure, millis())));
    return new Waiter(null, outcome);
  }

  private void assertTimedOutAt(Waiter waiter, long atMillis) throws Exception {
    Outcome outcome = waiter.outcome().get(ANSWERED.toMillis(), TimeUnit.MILLISECONDS);
    Throwable failure = outcome.failure();
    while (failure != null && !(failure instanceof CacheLoadException)) {
      failure = failure.getCause(); // an asynchronous caller's CompletionException
    }
    assertThat(failure).as("the load timeout's failure, not a later backstop's")
        .isInstanceOf(CacheLoadException.class).hasMessageContaining("loadTimeout");
    assertThat(outcome.atMillis()).as("answered at, ms on the fake clock").isEqualTo(atMillis);
  }

  /** A caller of {@code key} on a thread of its own, once it has joined the key's load. */
  private Waiter join(String key) {
    Flight<?> flight = flight(key);
    int before = flight.waiting();
    Waiter joiner = thread(() -> cache.get(key));
    soon().until(() -> flight.waiting() > before);
    return joiner;
  }

  /** Polls often: what it waits for happens within milliseconds in a passing run. */
  private static ConditionFactory soon() {
    return await().atMost(ANSWERED).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1));
  }

  private Flight<?> flight(String key) {
    return ((DefaultSustainableCache<?>) cache).registry().flightOf("c:" + key);
  }

  private void awaitRegistered(String... keys) {
    soon().until(() -> List.of(keys).stream().allMatch(k -> flight(k) != null));
  }

  /** Moves the fake clock to {@code millis} after the test began and runs what fell due. */
  private void advanceTo(long millis) {
    clock.advanceMillis(millis - millis());
    scheduler.runDue();
  }

  private long millis() {
    return TimeUnit.NANOSECONDS.toMillis(clock.ticker().read() - start);
  }
}
