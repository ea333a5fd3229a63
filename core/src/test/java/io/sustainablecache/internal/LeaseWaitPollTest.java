package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.AsyncLoader;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.ForwardingStore;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * Issue 30: a miss that lost the fleet lease sees the holder's write soon after it lands, even on
 * an instance that never loaded (whose expected load time is a guess of 1 s). Before, such a wait
 * polled every quarter of the guess, 250 ms, and a 10 ms load's peers waited 250 ms for it: in the
 * lab's 3-JVM hot-key runs, the reader JVMs that lost the lease after each write gave a p99 of 225
 * to 280 ms. The polls now start at 5 ms and grow with the time waited; a holder that released
 * the lease without writing is not waited for.
 */
final class LeaseWaitPollTest {

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final InMemoryStore store = InMemoryStore.create(clock);
  private final ManualScheduler schedulerOfB = ManualScheduler.on(clock.ticker());

  private SustainableCache<String> instance(ManualScheduler scheduler) {
    return SustainableCache.builder(store).namespace("n").ttl(Duration.ofMinutes(1))
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(new ManualExecutor()).build();
  }

  @Test
  void aLoserOnAnInstanceThatNeverLoaded_seesTheHoldersWriteWithinTheTimeItWaited() {
    SustainableCache<String> a = instance(ManualScheduler.on(clock.ticker()));
    SustainableCache<String> b = instance(schedulerOfB);
    CompletableFuture<String> rowOfA = new CompletableFuture<>();
    CompletableFuture<String> readOfA = a.getAsync("k", key -> rowOfA); // holds the lease
    CompletableFuture<String> readOfB = b.getAsync("k", key -> {
      throw new AssertionError("B loaded: it lost the lease and should wait for A's write");
    });
    assertThat(readOfB).as("B lost the lease: it waits").isNotDone();

    schedulerOfB.pass(clock, 20, 1); // A's load takes 20 ms; B polls meanwhile
    assertThat(readOfB).isNotDone();
    rowOfA.complete("a"); // A's value, written at once
    assertThat(readOfA).isCompletedWithValue("a");

    long waited = 0;
    while (!readOfB.isDone() && waited < 1_000) {
      schedulerOfB.pass(clock, 1, 1);
      waited++;
    }
    assertThat(readOfB).isCompletedWithValue("a");
    assertThat(waited).as("ms from A's write to B's answer, after B had waited 20 ms")
        .isLessThanOrEqualTo(21);
  }

  /**
   * A holder that releases the lease without writing (its write kept out: the key was invalidated
   * by another instance during its load, which also deleted the lease) is not waited for until
   * the deadline: the next poll of its peers finds neither a value nor a lease, and one of them
   * takes the lease and loads, then the other (see below why each loads). Found after a
   * memcached hang in the lab's {@code --outage}: every reader thread of both reader JVMs waited
   * 235 to 250 ms at once, two or three times in the seconds after the resume (the lease loser's
   * deadline, twice its expected load plus 200 ms), and then each JVM loaded anyway.
   */
  @Test
  void aHolderThatReleasedWithoutWriting_isNotWaitedFor_itsPeersTakeTheLeaseInTurn() {
    ManualScheduler schedulerOfC = ManualScheduler.on(clock.ticker());
    SustainableCache<String> a = instance(ManualScheduler.on(clock.ticker()));
    SustainableCache<String> b = instance(schedulerOfB);
    SustainableCache<String> c = instance(schedulerOfC);
    SustainableCache<String> writer = instance(ManualScheduler.on(clock.ticker()));
    CompletableFuture<String> rowOfA = new CompletableFuture<>();
    CompletableFuture<String> readOfA = a.getAsync("k", key -> rowOfA); // holds the lease
    CompletableFuture<String> readOfB = b.getAsync("k", peerLoader("b"));
    CompletableFuture<String> readOfC = c.getAsync("k", peerLoader("c"));
    passBoth(schedulerOfC, 20, () -> false); // A's lease stands: B and C wait, and do not load
    assertThat(readOfB).isNotDone();
    assertThat(readOfC).isNotDone();
    assertThat(loadsOfPeers).hasValue(0);

    writer.invalidate("k"); // a change: a tombstone, and the lease deleted
    rowOfA.complete("a"); // A's load answers its callers; its write is kept out
    assertThat(readOfA).isCompletedWithValue("a");

    long waited = passBoth(schedulerOfC, 5_000, () -> readOfB.isDone() && readOfC.isDone());
    // each peer's read began before the change, so neither may cache what it loads: the first
    // to take the lease loads and releases it without writing too, and the other takes it then.
    // One load each, as at their deadlines, one after the other, never together
    assertThat(readOfB.join()).startsWith("b");
    assertThat(readOfC.join()).startsWith("c");
    assertThat(loadsOfPeers).as("loads of B and C together").hasValue(2);
    // a poll comes at most as long after the one before as its peer had waited (20 ms), so each
    // takeover comes within a poll or two (the deadline, for an instance that never loaded:
    // 2 x 1 s + 200 ms)
    assertThat(waited).as("ms from the release without a write to both peers' answers, after"
        + " they had waited 20 ms").isLessThanOrEqualTo(60);
  }

  /**
   * A holder whose write failed on the store releases the lease with nothing written and nothing
   * changed: one of its peers takes the lease at its next poll and loads, and its write answers
   * the other, which does not load.
   */
  @Test
  void aHolderWhoseWriteFailed_oneWaitingPeerLoads_andItsWriteAnswersTheOther() {
    ManualScheduler schedulerOfC = ManualScheduler.on(clock.ticker());
    CacheStore failingItemWrites = new ForwardingStore(store) {
      @Override
      public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
        return key.equals("n:k") ? CompletableFuture.failedFuture(new StoreException("lost"))
            : super.add(key, value, exptime);
      }
    };
    SustainableCache<String> a = SustainableCache.builder(failingItemWrites).namespace("n")
        .ttl(Duration.ofMinutes(1)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .scheduler(ManualScheduler.on(clock.ticker())).refreshExecutor(new ManualExecutor())
        .build();
    SustainableCache<String> b = instance(schedulerOfB);
    SustainableCache<String> c = instance(schedulerOfC);
    CompletableFuture<String> rowOfA = new CompletableFuture<>();
    CompletableFuture<String> readOfA = a.getAsync("k", key -> rowOfA); // holds the lease
    CompletableFuture<String> readOfB = b.getAsync("k", peerLoader("b"));
    CompletableFuture<String> readOfC = c.getAsync("k", peerLoader("c"));
    passBoth(schedulerOfC, 20, () -> false);
    rowOfA.complete("a"); // answers A's callers; its write fails, and it releases the lease
    assertThat(readOfA).isCompletedWithValue("a");

    long waited = passBoth(schedulerOfC, 5_000, () -> readOfB.isDone() && readOfC.isDone());
    assertThat(loadsOfPeers).as("loads of B and C together").hasValue(1);
    String loaded = readOfB.join().startsWith("b") ? readOfB.join() : readOfC.join();
    assertThat(readOfB).isCompletedWithValue(loaded);
    assertThat(readOfC).isCompletedWithValue(loaded);
    assertThat(waited).as("ms from the release to both peers' answers").isLessThanOrEqualTo(60);
  }

  /**
   * A takeover whose {@code add} is answered after the wait ended (its deadline passed meanwhile,
   * and the miss loaded without the lease) releases the lease it took: otherwise it would stand
   * with nobody to release it, and every other instance's miss would wait out its deadline.
   */
  @Test
  void aTakeoverAnsweredAfterItsWaitEnded_releasesTheLeaseItTook() {
    AtomicInteger heldAdds = new AtomicInteger();
    List<Runnable> answerAdds = new CopyOnWriteArrayList<>();
    AtomicBoolean hold = new AtomicBoolean();
    CacheStore slowLeaseAdds = new ForwardingStore(store) {
      @Override
      public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
        if (!hold.get() || key.equals("n:k")) {
          return super.add(key, value, exptime);
        }
        heldAdds.incrementAndGet();
        CompletableFuture<Boolean> later = new CompletableFuture<>();
        answerAdds.add(() -> super.add(key, value, exptime).whenComplete((added, failure) -> {
          if (failure != null) {
            later.completeExceptionally(failure);
          } else {
            later.complete(added);
          }
        }));
        return later;
      }
    };
    SustainableCache<String> a = instance(ManualScheduler.on(clock.ticker()));
    SustainableCache<String> b = SustainableCache.builder(slowLeaseAdds).namespace("n")
        .ttl(Duration.ofMinutes(1)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
        .scheduler(schedulerOfB).refreshExecutor(new ManualExecutor()).build();
    SustainableCache<String> writer = instance(ManualScheduler.on(clock.ticker()));
    CompletableFuture<String> rowOfA = new CompletableFuture<>();
    a.getAsync("k", key -> rowOfA); // holds the lease
    CompletableFuture<String> readOfB = b.getAsync("k", peerLoader("b"));
    schedulerOfB.pass(clock, 20, 1);
    hold.set(true); // B's next lease add (its takeover) is answered only when the test says
    writer.invalidate("k"); // the lease deleted, a tombstone
    rowOfA.complete("a"); // A's write is kept out

    long waited = 0;
    while (!readOfB.isDone() && waited < 5_000) { // the takeover's add stays unanswered
      schedulerOfB.pass(clock, 1, 1);
      waited++;
    }
    assertThat(heldAdds).as("B's takeover was sent").hasValue(1);
    assertThat(readOfB.join()).as("B loaded at its deadline, without the lease").startsWith("b");

    answerAdds.forEach(Runnable::run); // the add lands now: B holds a lease for a wait that ended
    assertThat(store.gets("n:k" + Keys.INTERNAL_MARK + "lease").join())
        .as("the lease B took, released").isEmpty();
  }

  private final AtomicInteger loadsOfPeers = new AtomicInteger();

  /** A peer's loader: its name and the peers' load count so far. */
  private AsyncLoader<String> peerLoader(String peer) {
    return key -> CompletableFuture.completedFuture(peer + loadsOfPeers.incrementAndGet());
  }

  /**
   * Passes up to {@code millis} ms, one at a time, running what is due on B's scheduler and on
   * {@code schedulerOfC}, until {@code done}; returns the ms passed.
   */
  private long passBoth(ManualScheduler schedulerOfC, long millis, BooleanSupplier done) {
    long passed = 0;
    while (!done.getAsBoolean() && passed < millis) {
      schedulerOfB.pass(clock, 1, 1);
      schedulerOfC.runDue();
      passed++;
    }
    return passed;
  }
}
