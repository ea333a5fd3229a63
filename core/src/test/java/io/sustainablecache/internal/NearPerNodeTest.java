package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.KeyPolicy;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 24, defect 5: over a store that offers its nodes ({@link ClusterStore}: three nodes, a
 * dead node's operations failing at once, as {@code FailureMode.Cancel}), the near cache keeps a
 * log per node, so that a dead node costs the keys it holds and nothing else. Two instances, A
 * and B, in virtual time, through the public API.
 */
final class NearPerNodeTest {

  private static final long DELTA_MILLIS = 1_000;
  private static final Duration DELTA = Duration.ofMillis(DELTA_MILLIS);
  private static final String NS = "pn";

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final ManualExecutor refreshes = new ManualExecutor();
  private final ClusterStore cluster = new ClusterStore(clock, 3);
  /**
   * The random bases of the instances' logs: a log's sequence and generation lost with a node are
   * created again at another random base, as in production (a fixed base would make the same).
   */
  private final SplittableRandom bases = new SplittableRandom(24);
  private final SustainableCache<String> a = cache();
  private final SustainableCache<String> b = cache();
  private final AtomicInteger loads = new AtomicInteger();
  /** A key on each node: {@code onNode[i]} is on node i. */
  private final String[] onNode = new String[3];

  private SustainableCache<String> cache() {
    return SustainableCache.builder(cluster).namespace(NS).ttl(Duration.ofMinutes(10))
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(refreshes).random(FixedRandom.neverEarly(bases))
        .nearCache(1_000, DELTA, 0).build();
  }

  @BeforeEach
  void readEveryKeyOnBothInstances() {
    scheduler.runDue();
    for (int i = 0; i < 3; i++) {
      onNode[i] = cluster.keyOn(i, NS, "k");
      a.get(onNode[i], this::load);
    }
    pass(DELTA_MILLIS); // B's polls apply A's records of its loads
    for (String key : onNode) {
      b.get(key, this::load);
      b.get(key, this::load);
    }
    assertThat(b.stats().count("near_hit")).as("B holds every key near").isEqualTo(3);
  }

  @AfterEach
  void close() {
    a.close();
    b.close();
  }

  private String load(String key) {
    loads.incrementAndGet();
    return key + "@" + clock.millis();
  }

  /** Lets virtual time pass in steps of 100 ms, running the polls that fall due. */
  private void pass(long millis) {
    scheduler.pass(clock, millis, 100);
  }

  /** Whether a read of the key on B is a near hit. */
  private boolean nearHitOnB(String key) {
    long before = b.stats().count("near_hit");
    b.get(key, this::load);
    return b.stats().count("near_hit") == before + 1;
  }

  @Test
  void aDeadNode_stopsTheNearHitsOfItsKeysOnly_andTheOthersGoOnPastTheBound() {
    cluster.kill(1);
    pass(3 * DELTA_MILLIS);

    assertThat(nearHitOnB(onNode[0])).as("a key of a live node, 3 Δ later").isTrue();
    assertThat(nearHitOnB(onNode[2])).as("a key of a live node, 3 Δ later").isTrue();
    assertThat(nearHitOnB(onNode[1])).as("a key of the dead node, 3 Δ later").isFalse();
    assertThat(b.stats().count("near_poll_failure")).as("the dead node's polls fail").isPositive();
  }

  @Test
  void whileANodeIsDead_changesOfTheOtherNodesKeysSucceed_andReachTheOtherInstanceWithinTheBound() {
    cluster.kill(1);
    pass(2 * DELTA_MILLIS);

    a.put(onNode[0], "new0");
    a.invalidate(onNode[2]);
    a.put(onNode[1], "new1"); // the dead node's own key: its invalidation owed (issue 31)
    assertThat(a.stats().keysAwaitingInvalidation()).as("the dead node's key, owed").isEqualTo(1);
    pass(DELTA_MILLIS);

    assertThat(b.get(onNode[0], this::load)).isEqualTo("new0");
    assertThat(b.get(onNode[2], this::load)).as("invalidated: loaded again")
        .startsWith(onNode[2] + "@" + clock.millis());
    assertThat(a.stats().count("near_record_failure")).isZero();
  }

  @Test
  void aNodeThatComesBackEmpty_resetsOnlyItsKeys() {
    cluster.kill(1);
    pass(2 * DELTA_MILLIS);
    long resets = b.stats().count("near_reset");
    cluster.restart(1);
    pass(DELTA_MILLIS);

    assertThat(b.stats().count("near_reset")).as("one reset: node 1's log was lost")
        .isGreaterThan(resets);
    assertThat(nearHitOnB(onNode[0])).as("node 0's key stays near").isTrue();
    assertThat(nearHitOnB(onNode[2])).as("node 2's key stays near").isTrue();
    assertThat(nearHitOnB(onNode[1])).as("node 1's key was dropped").isFalse();
    assertThat(nearHitOnB(onNode[1])).as("then held near again").isTrue();
  }

  @Test
  void aChangeOfTheNodeList_dropsEverything_andEveryNodesLogIsReadAgain() {
    pass(DELTA_MILLIS);
    long resets = b.stats().count("near_reset");
    cluster.addNode();
    pass(DELTA_MILLIS);

    assertThat(b.stats().count("near_reset")).isGreaterThan(resets);
    for (String key : onNode) {
      assertThat(nearHitOnB(key)).as("%s after the list changed", key).isFalse();
    }
    a.put(onNode[0], "after");
    pass(DELTA_MILLIS);
    assertThat(b.get(onNode[0], this::load)).as("changes recorded in the new list's logs reach B")
        .isEqualTo("after");
    for (int node = 0; node < 4; node++) {
      String key = cluster.keyOn(node, NS, "m");
      b.get(key, this::load);
      assertThat(nearHitOnB(key)).as("a key of node %d, read once", node).isTrue();
    }
  }

  /**
   * Issue 31 (ArcusClusterFailoverIT: "changes that threw, node dropped from the membership",
   * every change of a surviving node's keys for a while): when the membership drops a dead node,
   * each instance takes the new node list at its next poll and reads every node's log again; a
   * node's generation was unknown until then, and every change of its keys threw ("the cache has
   * not read the namespace's generation yet"). Here node 0's first poll in the new list does not
   * complete: changes of its keys, of the keys that moved, and of node 2's go on, and reach B.
   */
  @Test
  void aDeadNodeDroppedFromTheList_changesOfEveryKeyGoOn_beforeTheNewListsLogsAreRead() {
    cluster.kill(1);
    pass(2 * DELTA_MILLIS);
    Runnable release = cluster.holdBulkReads(0);
    long resets = a.stats().count("near_reset");
    cluster.removeNode(1);
    pass(DELTA_MILLIS);
    assertThat(a.stats().count("near_reset")).as("A took the new list").isGreaterThan(resets);

    a.put(onNode[0], "new0");
    a.put(onNode[1], "new1");
    a.invalidate(onNode[2]);
    assertThat(a.stats().count("near_record_failure")).isZero();

    release.run();
    pass(DELTA_MILLIS);
    assertThat(b.get(onNode[0], this::load)).isEqualTo("new0");
    assertThat(b.get(onNode[1], this::load)).as("the dead node's key, moved").isEqualTo("new1");
    assertThat(b.get(onNode[2], this::load)).as("invalidated: loaded again")
        .startsWith(onNode[2] + "@" + clock.millis());
  }

  /** A node that joins has no generation to fall back on: its keys' changes wait for its poll. */
  @Test
  void aNodeThatJoins_itsKeysChangesFailUntilItsLogIsRead_theOthersGoOn() {
    pass(DELTA_MILLIS);
    cluster.addNode();
    Runnable release = cluster.holdBulkReads(3);
    pass(DELTA_MILLIS);
    String onTheNewNode = cluster.keyOn(3, NS, "j");
    String onAnOldNode = cluster.keyOn(0, NS, "j");

    a.put(onAnOldNode, "old-node");
    assertThatThrownBy(() -> a.put(onTheNewNode, "new-node"))
        .as("a key of the node that joined, its log not read yet")
        .hasMessageContaining("has not read the namespace's generation yet");
    release.run();
    pass(DELTA_MILLIS);
    a.put(onTheNewNode, "new-node");
    assertThat(b.get(onTheNewNode, this::load)).isEqualTo("new-node");
  }

  @Test
  void invalidateAll_dropsEveryNodesKeys_everywhere_andFailsWhileANodeIsDead() {
    a.invalidateAll();
    pass(DELTA_MILLIS + 100);
    int before = loads.get();
    for (String key : onNode) {
      assertThat(b.get(key, this::load)).as("a new generation: loaded again")
          .startsWith(key + "@");
    }
    assertThat(loads.get() - before).as("each key loaded again once").isEqualTo(3);

    cluster.kill(2);
    assertThatThrownBy(a::invalidateAll).isInstanceOf(RuntimeException.class);
  }

  @Test
  void aStoreOfOneNode_keepsTheNamespacesSingleLog() {
    ClusterStore single = new ClusterStore(clock, 1);
    try (SustainableCache<String> one = SustainableCache.builder(single).namespace("one")
        .ttl(Duration.ofMinutes(10)).codec(ValueCodec.utf8()).clock(clock)
        .ticker(clock.ticker()).scheduler(scheduler).nearCache(1_000, DELTA, 0).build()) {
      one.put("k", "v");
      assertThat(single.nodes().orElseThrow().on(0).gets("one:\u007Fnear:seq").join())
          .as("the single log's sequence").isPresent();
      assertThat(single.nodes().orElseThrow().on(0).gets("one:\u007Fnearn:seq").join())
          .as("no log per node").isEmpty();
    }
    assertThat(cluster.nodes().orElseThrow().on(0).gets(NS + ":\u007Fnearn:seq").join())
        .as("three nodes: a log per node").isPresent();
  }

  @Test
  void aWriterOnTheOtherLayout_isToldOfByThePollsOfEither() {
    Keys keys = new Keys(NS, 250, KeyPolicy.REJECT);
    io.sustainablecache.spi.StoreNodes nodes = cluster.nodes().orElseThrow();
    AtomicInteger perNodeWarnings = new AtomicInteger();
    AtomicInteger singleWarnings = new AtomicInteger();
    List<NearLog> perNode = new java.util.ArrayList<>();
    for (int i = 0; i < 3; i++) {
      perNode.add(new NearLog(nodes.on(i), keys, NearLog.PER_NODE, new SplittableRandom(i),
          perNodeWarnings::incrementAndGet));
    }
    NearLog single = new NearLog(cluster, keys, NearLog.SINGLE, new SplittableRandom(9),
        singleWarnings::incrementAndGet);
    perNode.forEach(log -> log.poll().join());
    single.poll().join(); // creates the single log's sequence: an instance on that layout polls
    perNode.forEach(log -> log.poll().join());
    single.poll().join();
    assertThat(perNodeWarnings).as("the single log's sequence created, seen by the poll of the"
        + " node it is on").hasValue(1);
    assertThat(singleWarnings).as("the logs per node unchanged since its first poll").hasValue(0);
    perNode.forEach(log -> log.poll().join());
    assertThat(perNodeWarnings).as("nothing changed: no warning").hasValue(1);

    single.record(NS + ":" + onNode[0]).join();
    perNode.forEach(log -> log.poll().join());
    assertThat(perNodeWarnings).as("a record in the single log").hasValue(2);
    int readBySingle = cluster.nodeOf(NS + ":\u007Fnearn:seq");
    perNode.get(readBySingle).record(NS + ":" + onNode[readBySingle]).join();
    single.poll().join();
    assertThat(singleWarnings).as("a record in the log of the node the single log reads")
        .hasValue(1);
  }

  @Test
  void aNodeThatComesBackEmpty_costsNoStoreEntryOfTheOtherNodes() {
    cluster.kill(1);
    pass(2 * DELTA_MILLIS);
    cluster.restart(1);
    pass(DELTA_MILLIS); // every instance polls node 1 again: its log and generation are new
    int before = loads.get();
    try (SustainableCache<String> c = cache()) {
      assertThat(c.get(onNode[0], this::load)).as("a new instance reads node 0's entry")
          .startsWith(onNode[0] + "@");
      assertThat(c.get(onNode[2], this::load)).startsWith(onNode[2] + "@");
      assertThat(loads.get() - before).as("loads: the other nodes' entries are still valid")
          .isZero();
      c.get(onNode[1], this::load);
      assertThat(loads.get() - before).as("node 1's entry was lost with it").isEqualTo(1);
    }
  }

  @Test
  void anInstanceStartedWhileANodeIsDead_servesAndWritesTheOtherNodesKeys() {
    cluster.kill(1);
    pass(DELTA_MILLIS);
    try (SustainableCache<String> c = cache()) {
      scheduler.runDue();
      int before = loads.get();
      c.get(onNode[0], this::load);
      c.get(onNode[0], this::load);
      assertThat(loads.get() - before).as("node 0's entry, read from the store").isZero();
      assertThat(c.stats().count("near_hit")).as("then held near").isEqualTo(1);
      c.put(onNode[2], "from-c");
      pass(DELTA_MILLIS);
      assertThat(b.get(onNode[2], this::load)).isEqualTo("from-c");
      assertThatThrownBy(() -> c.put(onNode[1], "x")).as("the dead node's key")
          .isInstanceOf(RuntimeException.class);
    }
  }
}
