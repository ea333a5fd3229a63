package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.KeyPolicy;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.StoreNodes;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Reads right after the store's node list changed ({@link Generation#current}): until the new
 * layout has read a node's generation, a key of a node the previous layout had read is judged by
 * that reading, but only while the poll that read it started at most the bound ago; so a read that
 * begins more than the bound after an {@code invalidateAll} returned never sees an entry from
 * before it. A cache with the namespace's generation alone ({@code invalidateAllBound}, no near
 * cache) over {@link ClusterStore} (three in-memory nodes), in virtual time: the polls run on a
 * manual scheduler at 0, 500, 1,000, ... ms, and the test holds node 0's generation reads ({@link
 * ClusterStore#holdLogReads}) so that the new layout's first poll of it does not complete.
 *
 * <p>In each test node 0's last poll in the old layout starts at 1,000 ms; the list changes at
 * 1,100 ms and the cache takes it at its next poll, 1,500 ms.
 */
final class GenerationFallbackTest {

  private static final long BOUND_MILLIS = 1_000;
  private static final Duration BOUND = Duration.ofMillis(BOUND_MILLIS);
  private static final String NS = "gf";
  /** The start of node 0's last poll in the first layout, ms from the start. */
  private static final long LAST_READING = 1_000;

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final long start = clock.ticker().read();
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final ManualExecutor refreshes = new ManualExecutor();
  private final ClusterStore cluster = new ClusterStore(clock, 3);
  private final SustainableCache<String> cache = SustainableCache.builder(cluster).namespace(NS)
      .ttl(Duration.ofMinutes(10)).codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker())
      .scheduler(scheduler).refreshExecutor(refreshes)
      .random(FixedRandom.neverEarly(new SplittableRandom(7))).invalidateAllBound(BOUND).build();
  private final AtomicInteger loads = new AtomicInteger();
  /** A key on node 0 in every list of these tests (removing node 2, then adding node 3). */
  private final String onNodeZero = cluster.keyOn(0, NS, "k");
  private String cached;

  @BeforeEach
  void cacheAKeyOfNodeZero() {
    scheduler.runDue();
    cached = cache.get(onNodeZero, this::load);
    assertThat(cache.get(onNodeZero, this::load)).as("cached").isEqualTo(cached);
    assertThat(loads).hasValue(1);
  }

  @AfterEach
  void close() {
    cache.close();
  }

  private String load(String key) {
    return key + "@" + clock.millis() + "#" + loads.incrementAndGet();
  }

  /** Lets time pass up to {@code millis} from the start, running the polls that fall due. */
  private void at(long millis) {
    long now = TimeUnit.NANOSECONDS.toMillis(clock.ticker().read() - start);
    assertThat(millis).as("time only moves on").isGreaterThanOrEqualTo(now);
    scheduler.pass(clock, millis - now, 10);
  }

  /** Node 2 leaves the list at 1,100 ms with node 0's generation reads held; taken at 1,500. */
  private Runnable changeTheListWithNodeZerosPollHeld() {
    at(1_100);
    Runnable release = cluster.holdLogReads(0);
    cluster.removeNode(2);
    at(1_500);
    return release;
  }

  @Test
  void aSurvivingNodesKey_isAHit_untilItsNodesLastReadingIsTheBoundOld_thenAMiss() {
    Runnable release = changeTheListWithNodeZerosPollHeld();

    assertThat(cache.get(onNodeZero, this::load)).as("just after the change").isEqualTo(cached);
    at(LAST_READING + BOUND_MILLIS);
    assertThat(cache.get(onNodeZero, this::load)).as("the reading exactly the bound old")
        .isEqualTo(cached);
    assertThat(loads).as("no load while the fallback is young enough").hasValue(1);

    at(LAST_READING + BOUND_MILLIS + 1);
    assertThat(cache.get(onNodeZero, this::load)).as("the reading older than the bound")
        .isNotEqualTo(cached);
    assertThat(cache.get(onNodeZero, this::load)).isNotEqualTo(cached);
    assertThat(loads).as("two misses: a load writes nothing in no known generation").hasValue(3);

    release.run();
    scheduler.runDue();
    assertThat(cache.get(onNodeZero, this::load)).as("the new layout read the same generation")
        .isEqualTo(cached);
    assertThat(loads).hasValue(3);
  }

  @Test
  void anInvalidateAllElsewhere_duringTheChange_isSeenByEveryReadBegunTheBoundAfterItReturned() {
    Runnable release = changeTheListWithNodeZerosPollHeld();
    long returned = 1_600;
    at(returned);
    invalidateAllElsewhere();

    at(1_700);
    assertThat(cache.get(onNodeZero, this::load))
        .as("within the bound of the return, the fallback read before it may still serve")
        .isEqualTo(cached);

    at(LAST_READING + BOUND_MILLIS + 1);
    assertThat(cache.get(onNodeZero, this::load)).as("the fallback too old").isNotEqualTo(cached);

    at(returned + BOUND_MILLIS + 1);
    assertThat(cache.get(onNodeZero, this::load))
        .as("a read begun more than the bound after invalidateAll returned, node 0 still unread")
        .isNotEqualTo(cached);

    release.run();
    scheduler.runDue();
    int before = loads.get();
    String fresh = cache.get(onNodeZero, this::load);
    assertThat(fresh).as("node 0 read: the new generation, the old entry a miss")
        .isNotEqualTo(cached);
    assertThat(cache.get(onNodeZero, this::load)).as("cached in the new generation")
        .isEqualTo(fresh);
    assertThat(loads.get() - before).isEqualTo(1);
  }

  /**
   * A surviving node whose position in the list changes (node 2 is second once node 1 left: the
   * adapters' ids carry the position) keeps its fallback: it is found by where the key is routed.
   */
  @Test
  void aSurvivingNodeWhosePositionInTheListChanges_keepsItsFallback() {
    String onNodeTwo = cluster.keyOn(2, NS, "k");
    String value = cache.get(onNodeTwo, this::load);
    at(1_100);
    Runnable release = cluster.holdLogReads(2);
    cluster.removeNode(1);
    at(1_500);
    assertThat(cluster.nodeOf(NS + ":" + onNodeTwo)).as("node 2, second in the list").isEqualTo(1);

    assertThat(cache.get(onNodeTwo, this::load)).as("just after the change").isEqualTo(value);
    at(LAST_READING + BOUND_MILLIS + 1);
    assertThat(cache.get(onNodeTwo, this::load)).as("the fallback too old").isNotEqualTo(value);
    release.run();
  }

  @Test
  void twoChangesInARow_keepTheFallbacksFirstReadingTime() {
    Runnable release = changeTheListWithNodeZerosPollHeld();
    at(1_600);
    cluster.addNode(); // taken at node 1's next poll, 2,000 ms; node 0 still unread
    at(LAST_READING + BOUND_MILLIS);
    assertThat(cluster.nodes().orElseThrow().ids()).containsExactly("node0", "node1", "node3");
    assertThat(cache.get(onNodeZero, this::load))
        .as("after the second change, the reading of the first layout, exactly the bound old")
        .isEqualTo(cached);

    at(LAST_READING + BOUND_MILLIS + 1);
    assertThat(cache.get(onNodeZero, this::load)).as("older than the bound: not made younger"
        + " by passing through the second layout").isNotEqualTo(cached);
    release.run();
  }

  /**
   * A dead node dropped from the list and added back, restarted, before the cache's next poll
   * (ARCUS: its znode deleted, then the restarted server's created, within one poll interval) has
   * its old id but is another connection of the client: the cache takes the new snapshot as a new
   * layout and reads that node's log through the new connection. Kept on ids, the layout read it
   * through the dropped connection for ever: every poll of it failed, and each, due exactly when
   * the node's breaker (open since the node died) let its next probe through, took the probe, so
   * the breaker never closed and the node's keys were never cached again; {@code invalidateAll},
   * which records in every node's log, threw.
   */
  @Test
  void aDeadNodeDroppedAndAddedBackBetweenTwoPolls_isReadThroughItsNewConnection() {
    String onNodeOne = cluster.keyOn(1, NS, "k");
    cache.get(onNodeOne, this::load);
    cluster.kill(1);
    at(1_100);
    assertThat(cache.storeNodeStates()).as("its polls at 500 and 1,000 ms failed")
        .containsEntry("node1", true);
    cluster.replaceNode(1);
    for (long t = 1_130; t <= 3_000; t += 130) {
      at(t);
      cache.get(onNodeOne, this::load);
    }
    long failures = cache.stats().count("near_poll_failure");
    at(3_500);
    assertThat(cache.stats().count("near_poll_failure") - failures)
        .as("polls failed a while after the node came back").isZero();
    assertThat(cache.storeNodeStates()).as("its breaker closed").containsEntry("node1", false);
    String value = cache.get(onNodeOne, this::load);
    assertThat(cache.getIfPresent(onNodeOne)).as("cached on the node again").contains(value);

    cache.invalidateAll();
    String fresh = cache.get(onNodeOne, this::load);
    assertThat(fresh).isNotEqualTo(value);
    assertThat(cache.getIfPresent(onNodeOne)).contains(fresh);
  }

  /** {@code invalidateAll} on another instance: a new generation on every node of the list. */
  private void invalidateAllElsewhere() {
    StoreNodes nodes = cluster.nodes().orElseThrow();
    Keys keys = new Keys(NS, 250, KeyPolicy.REJECT);
    for (int i = 0; i < nodes.ids().size(); i++) {
      NearLog.generationOnly(nodes.on(i), keys, NearLog.PER_NODE, new SplittableRandom(100 + i))
          .recordAll().join();
    }
  }
}
