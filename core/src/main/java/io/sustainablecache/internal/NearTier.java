package io.sustainablecache.internal;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.Scheduler;
import io.sustainablecache.spi.StoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;
import java.util.function.UnaryOperator;

/**
 * The near tier of one cache: entries of hot keys held in this JVM and served without a store
 * round trip only while the invalidation log of their key's node ({@link NearLog}) confirms them
 * ({@code docs/near-cache.md} states the bound and argues it). The logs are one per node of the
 * store when it offers its nodes ({@link io.sustainablecache.spi.StoreNodes}: a change of a key
 * is recorded on the key's own node), or the namespace's single log, the one-node case of the
 * same code ({@link Layout}). It owns the three rules of that argument:
 * <ul>
 *   <li><b>Confirmation, per node.</b> Each node's log is polled on its own schedule; a poll
 *       applies what it found (dropping the keys it names, or that node's keys) and then sets
 *       that node's {@code confirmedAt} to the time the poll <em>started</em>. A poll that ended
 *       at a record counted but not yet written ({@link NearLog.Poll.Partial}) applied every
 *       record the previous poll counted, no more: it sets {@code confirmedAt} to the time the
 *       <em>previous</em> successful poll started. The log lets at most one poll in a row stop
 *       short of what the poll before it counted (the next resets if it finds such a record
 *       still missing), so a writer that always has a record in flight delays confirmation by
 *       one poll and cannot keep the node unconfirmed. {@link #get} answers an entry only while
 *       {@code now - confirmedAt <= Δ} for the node of its key (checked through the oldest
 *       confirmation of all nodes first, so a near hit costs nothing more while every node is
 *       confirmed); otherwise the caller reads the store. A dead node's polls fail: its keys stop
 *       being served, the others' do not.</li>
 *   <li><b>Insertion fence.</b> An entry read from the store enters only if no drop of its key
 *       (nor of its node's keys, nor of everything) happened after its read began ({@link
 *       #ticket} at the start, {@link #offer} at the end), and only if the read began less than
 *       the fence window ago. A drop racing an insertion wins: the drop is recorded before it
 *       removes, the insertion checks again after it puts. The fence remembers drops in a fixed
 *       number of stripes ({@link #fenceStripes}), each holding the last version of a drop of
 *       any key hashed to it, and one version per node: its memory is a constant, whatever the
 *       number of keys dropped, and a collision only refuses an insertion (a near miss), never
 *       lets one in.</li>
 *   <li><b>Local changes</b> ({@link #drop}, {@link #dropAll}) go through the same fence, so a
 *       read of this JVM that began before its own {@code invalidate} cannot put the old value
 *       back either.</li>
 * </ul>
 * It also keeps the namespace's {@link Generation}, one per node: a poll that found another
 * generation of its node sets it and then drops that node's keys (in that order, so that a read
 * that began after the drop judges that node's entries by the new generation, and one that began
 * before is refused by the fence). When the store's node list changes, the tier drops
 * everything, forgets every generation (keeping the readings of the replaced layout as {@link
 * Generation}'s fallbacks, bounded by their age) and reads every node's log afresh.
 *
 * <p>Time is a monotonic ticker in nanoseconds (no cross-host clock is involved). Thread-safe.
 *
 * <p>Why this class is over 700 lines: a third of it is documentation, and the three rules above
 * share one lock, one layout and one fence, each of which guards the others' races (a poll
 * applied while a layout changes, a drop racing an insertion); split into classes, each would
 * need the others' internals. {@code NearFenceModelCheckingTest} checks them together.
 *
 * @param <E> the entries (decoded values with their envelope's times)
 */
final class NearTier<E> {

  /** The bounded map that holds the entries; Caffeine in production. Thread-safe. */
  interface EntryMap<E> {
    E get(String key);

    void put(String key, E entry);

    /** Removes the key's entry if it is {@code entry}. */
    void remove(String key, E entry);

    void remove(String key);

    /** Removes the entries {@code filter} accepts. */
    void removeIf(Predicate<E> filter);

    void clear();
  }

  /** What the tier tells its cache of, for its counters. Called on the polling threads. */
  interface Events {
    /** A scheduled poll failed. */
    void pollFailed(Throwable failure);

    /** A poll dropped keys the log named. */
    default void invalidated(int keys) {}

    /** A poll dropped everything (it could not confirm every change, or a new generation). */
    default void reset() {}

    /** A poll found another generation; called after it was set and the tier dropped. */
    default void newGeneration() {}
  }

  /** The version and start time of a store read, taken when it begins. */
  record Ticket(long version, long startedNanos) {}

  /**
   * The logs a tier polls: the namespace's single log, or one log per node of the store ({@link
   * io.sustainablecache.spi.StoreNodes}), and the node a store key is on. A tier re-derives
   * everything when its source returns another layout (the store's node list changed).
   *
   * @param ids the nodes' ids (one for the single log)
   * @param logs the log of each node, in the order of {@code ids}
   * @param nodeOf the index of a store key's node in {@code ids}, or {@code -1} if the store no
   *     longer routes it to one of them
   */
  record Layout(List<String> ids, List<NearLog> logs, ToIntFunction<String> nodeOf) {

    /** The ids of the single log's layout. */
    static final List<String> SINGLE = List.of("the store");

    /** The layout of the namespace's single log: one node, holding every key. */
    static Layout single(NearLog log) {
      return new Layout(SINGLE, List.of(log), key -> 0);
    }
  }

  /** The fewest and the most stripes of the insertion fence ({@link #fenceStripes}). */
  static final int MIN_FENCE_STRIPES = 1 << 10;

  static final int MAX_FENCE_STRIPES = 1 << 16;

  private static final long NEVER = Long.MIN_VALUE;

  /**
   * The records a poll aims to find: the next poll comes after the time this many take at the
   * rate the last one found, when that is sooner than half the bound, so that a storm of changes
   * is read in polls of about this many records ({@link #delayAfter}), well within the log's
   * slots.
   */
  static final int CATCH_UP_RECORDS = NearLog.SLOTS / 8;

  private final Supplier<Layout> layouts;
  private final EntryMap<E> entries;
  private final ToIntFunction<E> nodeOfEntry;
  private final long stalenessNanos;
  private final long fenceWindowNanos;
  private final LongSupplier ticker;
  private final Events events;
  private final UnaryOperator<String> tierKeyOf;
  private final Generation generation;

  private final AtomicLong version = new AtomicLong();
  /** Per stripe, the highest version of a drop of a key hashed to it (0: none). */
  private final AtomicLongArray droppedVersions;
  private final int stripeShift;
  /** The highest version of a drop of everything (0: none). */
  private final AtomicLong allDroppedVersion = new AtomicLong();

  /** The current layout's nodes; replaced (under {@link #lock}) when the layout changes. */
  private volatile Nodes nodes;
  /**
   * The oldest confirmation of the current layout's nodes: while it is within the bound, a near
   * hit checks nothing else. Only ever lower than the truth (written under {@link #lock}).
   */
  private volatile long confirmedAt = NEVER;
  /** Guards applying polls, confirmations and layout changes. */
  private final Object lock = new Object();

  /** Guards the polling schedule. */
  private final Object schedule = new Object();
  private Scheduler scheduler;
  private boolean closed;

  /**
   * A tier over the namespace's single log: every entry is of its one node.
   *
   * @param log the namespace's log
   * @param entries the map
   * @param staleness {@code Δ}, the bound
   * @param fenceWindow at least the longest a store read and load may take (the load timeout):
   *     an entry whose read began longer ago is not inserted
   * @param ticker monotonic time in nanoseconds ({@code System::nanoTime})
   * @param tierKeyOf the key this tier holds a store key's entry under (the log records store
   *     keys)
   * @param generation the namespace's generation, which this tier's polls set
   * @param maximumSize the map's bound (entries, or bytes), from which the fence's number of
   *     stripes is derived ({@link #fenceStripes})
   * @param events told of failed polls and of what polls dropped
   */
  NearTier(NearLog log, EntryMap<E> entries, Duration staleness, Duration fenceWindow,
      LongSupplier ticker, UnaryOperator<String> tierKeyOf, Generation generation,
      long maximumSize, Events events) {
    this(() -> null, Layout.single(log), entries, entry -> 0, staleness, fenceWindow, ticker,
        tierKeyOf, generation, maximumSize, events);
  }

  /**
   * A tier over the logs of {@code layouts}: one per node of the store, or the single log.
   *
   * @param layouts the current layout, asked before each poll; {@code null} or the same object:
   *     unchanged
   * @param initial the layout to start with
   * @param nodeOfEntry the node an entry's key was on when it was read ({@link #nodeOf} then)
   * @param others as for the single log's constructor
   */
  NearTier(Supplier<Layout> layouts, Layout initial, EntryMap<E> entries,
      ToIntFunction<E> nodeOfEntry, Duration staleness, Duration fenceWindow,
      LongSupplier ticker, UnaryOperator<String> tierKeyOf, Generation generation,
      long maximumSize, Events events) {
    this.layouts = requireNonNull(layouts, "layouts");
    this.generation = requireNonNull(generation, "generation");
    this.tierKeyOf = requireNonNull(tierKeyOf, "tierKeyOf");
    this.events = requireNonNull(events, "events");
    this.entries = requireNonNull(entries, "entries");
    this.nodeOfEntry = requireNonNull(nodeOfEntry, "nodeOfEntry");
    this.stalenessNanos = staleness.toNanos();
    this.fenceWindowNanos = fenceWindow.toNanos();
    this.ticker = requireNonNull(ticker, "ticker");
    int stripes = fenceStripes(maximumSize);
    this.droppedVersions = new AtomicLongArray(stripes);
    this.stripeShift = Integer.SIZE - Integer.numberOfTrailingZeros(stripes);
    this.nodes = new Nodes(requireNonNull(initial, "initial"));
    generation.reset(initial.nodeOf(), initial.logs().size(), false);
  }

  /**
   * The insertion fence's stripes for a map bounded by {@code maximumSize}: that rounded up to a
   * power of two, at least {@link #MIN_FENCE_STRIPES} and at most {@link #MAX_FENCE_STRIPES} (8
   * bytes each: 512 KiB at most). More stripes make a collision (a drop of another key that
   * refuses an insertion begun before it) rarer; the chance for one insertion is about the
   * drops during its read divided by the stripes.
   */
  static int fenceStripes(long maximumSize) {
    long size = Math.max(MIN_FENCE_STRIPES, Math.min(MAX_FENCE_STRIPES, maximumSize));
    return Integer.highestOneBit((int) size - 1) << 1;
  }

  /** The key's stripe: the top bits of its hash times 2<sup>32</sup>/φ (visible for tests). */
  int stripe(String key) {
    return (key.hashCode() * 0x9E3779B9) >>> stripeShift;
  }

  // ---------------------------------------------------------------------------------------------
  // Reads

  /**
   * The entry of a key if the tier holds one and its node is confirmed now; else {@code null}.
   * While every node is confirmed it checks nothing else (one volatile read, as with a single
   * log); otherwise it reads the entry's node's confirmation.
   */
  E get(String key) {
    return get(key, ticker.getAsLong());
  }

  /**
   * {@link #get} at {@code now}, a reading of this tier's ticker taken by the caller just before
   * (a near hit reads the ticker once, see {@link NearCache#millis}).
   */
  E get(String key, long now) {
    long at = confirmedAt;
    if (at != NEVER && now - at <= stalenessNanos) {
      return entries.get(key);
    }
    return getWhileANodeIsUnconfirmed(key, now);
  }

  /** {@link #get} when some node's confirmation is older than the bound: the entry's node's. */
  private E getWhileANodeIsUnconfirmed(String key, long now) {
    Nodes current = nodes;
    if (current.nodes.length == 1) {
      return null;
    }
    E entry = entries.get(key);
    return entry != null && current.confirmed(nodeOfEntry.applyAsInt(entry), now) ? entry : null;
  }

  /** Whether every node's last applied poll started within {@code Δ}: the serving rule. */
  boolean confirmed() {
    long at = confirmedAt;
    return at != NEVER && ticker.getAsLong() - at <= stalenessNanos;
  }

  /** Whether node {@code node}'s last applied poll started within {@code Δ}. */
  boolean confirmed(int node) {
    return nodes.confirmed(node, ticker.getAsLong());
  }

  /**
   * The node of a store key in the current layout (0 for the single log), or {@code -1} if the
   * store no longer routes it to one of the layout's nodes: such a key is neither held nor
   * recorded until the tier has the new layout.
   */
  int nodeOf(String storeKey) {
    return nodes.layout.nodeOf().applyAsInt(storeKey);
  }

  /** The number of nodes of the current layout (1 for the single log). */
  int nodeCount() {
    return nodes.nodes.length;
  }

  /**
   * The generation of a store key's node as this tier last set it ({@link Generation#UNKNOWN}
   * before).
   */
  long generation(String storeKey) {
    return generation.current(storeKey);
  }

  /** Taken when a store read (or load) whose result may enter the tier begins. */
  Ticket ticket() {
    return new Ticket(version.get(), ticker.getAsLong());
  }

  /**
   * Puts an entry read (or loaded) since {@code ticket}, unless the fence refuses it.
   *
   * @return whether it entered
   */
  boolean offer(String key, E entry, Ticket ticket) {
    if (!admits(key, entry, ticket)) {
      return false;
    }
    entries.put(key, entry);
    if (!admits(key, entry, ticket)) { // a drop recorded meanwhile; it may have run before the put
      entries.remove(key, entry);
      return false;
    }
    return true;
  }

  private boolean admits(String key, E entry, Ticket ticket) {
    if (ticker.getAsLong() - ticket.startedNanos() > fenceWindowNanos
        || allDroppedVersion.get() > ticket.version()) {
      return false;
    }
    return droppedVersions.get(stripe(key)) <= ticket.version()
        && nodes.droppedVersion(nodeOfEntry.applyAsInt(entry)) <= ticket.version();
  }

  // ---------------------------------------------------------------------------------------------
  // Changes

  /**
   * Drops a key: changed here, or named by the log. The key's stripe keeps the highest version
   * of its drops, so a drop that took its version first but records it last does not lower it.
   */
  void drop(String key) {
    droppedVersions.accumulateAndGet(stripe(key), version.incrementAndGet(), Math::max);
    entries.remove(key);
  }

  /**
   * Drops everything: {@code invalidateAll} here, or a reset or new generation of the single log,
   * or another layout. Keeps the highest version of such drops, as {@link #drop} does per stripe:
   * two concurrent calls (a poll's reset and a local {@code invalidateAll}) cannot lower it.
   */
  void dropAll() {
    allDroppedVersion.accumulateAndGet(version.incrementAndGet(), Math::max);
    entries.clear();
  }

  /**
   * Drops the entries of one node's keys (a reset of that node's log): its fence version first,
   * then the entries tagged with it. With the single log, everything.
   */
  private void dropNode(Nodes current, int node) {
    if (current.nodes.length == 1) {
      dropAll();
      return;
    }
    current.dropped.accumulateAndGet(node, version.incrementAndGet(), Math::max);
    entries.removeIf(entry -> nodeOfEntry.applyAsInt(entry) == node);
  }

  /**
   * Records a change of one store key in the log of its node: completes once the record is in
   * the store, or fails (then the caller must not promise the bound), also when the store no
   * longer routes the key to a node of the current layout.
   */
  CompletableFuture<Void> record(String storeKey) {
    Nodes current = nodes;
    int node = current.layout.nodeOf().applyAsInt(storeKey);
    if (node < 0) {
      return CompletableFuture.failedFuture(new StoreException("the store's node list changed"
          + " and the near cache has not re-read it yet: the change is not recorded"));
    }
    return current.nodes[node].log.record(storeKey);
  }

  /** Records {@code invalidateAll} in every node's log: fails if any record failed. */
  CompletableFuture<Void> recordAll() {
    Node[] all = nodes.nodes;
    CompletableFuture<?>[] records = new CompletableFuture<?>[all.length];
    for (int i = 0; i < all.length; i++) {
      records[i] = all[i].log.recordAll();
    }
    return CompletableFuture.allOf(records);
  }

  /**
   * Polls every node's log once and applies what each found (each on its own: a node whose poll
   * fails keeps its old confirmation, the others are confirmed). Completes when every node's
   * poll has: with the first node's poll (the single log's), or with a failure if any failed.
   * A node's poll asked for while one runs is that poll.
   */
  CompletableFuture<NearLog.Poll> poll() {
    Node[] all = nodes.nodes;
    if (all.length == 1) {
      return all[0].poll();
    }
    return allOf(all, Node::poll);
  }

  /** Polls node {@code node}'s log once: see {@link Node#poll}. */
  CompletableFuture<NearLog.Poll> poll(int node) {
    return nodes.nodes[node].poll();
  }

  /**
   * A poll of every node that starts after this call: waits for a node's poll running now, if
   * any, then polls it. Fails as {@link #poll} does.
   */
  CompletableFuture<NearLog.Poll> pollFromNow() {
    return allOf(nodes.nodes, Node::pollFromNow);
  }

  private CompletableFuture<NearLog.Poll> allOf(Node[] all,
      java.util.function.Function<Node, CompletableFuture<NearLog.Poll>> each) {
    List<CompletableFuture<NearLog.Poll>> polls = new ArrayList<>(all.length);
    for (Node node : all) {
      polls.add(each.apply(node));
    }
    return CompletableFuture.allOf(polls.toArray(new CompletableFuture<?>[0]))
        .thenApply(done -> polls.get(0).join());
  }

  /**
   * Applies a node's poll: drops the keys it names, or the node's keys (everything with the
   * single log) on a reset or a new generation of its log, having set that node's generation
   * first.
   */
  private void apply(Nodes current, Node node, NearLog.Poll poll, long started) {
    long before = generation.current(node.index);
    // Before the layout's first poll of the node, its keys may have been judged and loaded by a
    // fallback (Generation#current): another generation than that one is new as well.
    long judgedBy = before != Generation.UNKNOWN ? before : generation.fallbackUsed(node.index);
    boolean newGeneration = poll.generation() != before;
    // before the drop (see the class comment); every poll, for the reading's time
    generation.set(node.index, poll.generation(), started);
    if (newGeneration || poll instanceof NearLog.Poll.Reset) {
      dropNode(current, node.index);
      events.reset();
      if (judgedBy != Generation.UNKNOWN && judgedBy != poll.generation()) {
        events.newGeneration();
      }
    } else {
      List<String> changed = poll instanceof NearLog.Poll.Partial partial ? partial.keys()
          : ((NearLog.Poll.Changes) poll).keys();
      changed.forEach(storeKey -> drop(tierKeyOf.apply(storeKey)));
      if (!changed.isEmpty()) {
        events.invalidated(changed.size());
      }
    }
  }

  /**
   * Takes another layout (the store's node list changed): drops everything, forgets the
   * generation and every node's confirmation, and polls every new node's log at once. Until a
   * node's poll has succeeded, its keys are judged and loaded by the generation the replaced
   * layout read from the same node while that reading is at most {@code Δ} old ({@link
   * Generation#current}; a caller's write whatever its age, {@link Generation#forWrite}), and
   * otherwise miss and write nothing.
   */
  private void switchTo(Layout layout) {
    Nodes replaced;
    Nodes next;
    synchronized (lock) {
      replaced = nodes;
      if (replaced.layout == layout) {
        return;
      }
      next = new Nodes(layout);
      confirmedAt = NEVER;
      nodes = next;
      // A caller's write of a key whose node is in both layouts keeps the generation read by
      // the replaced layout until the new one read that node's log (Generation.forWrite): a
      // failover that drops a node does not fail the others' writes meanwhile (issue 31).
      generation.reset(layout.nodeOf(), layout.logs().size(),
          !replaced.layout.ids().equals(Layout.SINGLE) && !layout.ids().equals(Layout.SINGLE));
      dropAll();
    }
    events.reset();
    synchronized (schedule) {
      for (Node old : replaced.nodes) {
        if (old.nextPoll != null) {
          old.nextPoll.cancel(false);
        }
      }
      if (scheduler != null) {
        for (Node node : next.nodes) {
          node.scheduleNextPoll(0);
        }
      }
    }
  }

  /** How many drop versions the fence keeps, whatever was dropped: its stripes (for tests). */
  int fenceSize() {
    return droppedVersions.length();
  }

  // ---------------------------------------------------------------------------------------------
  // The polling schedule

  /**
   * Starts polling on {@code scheduler}: each node's log at once, then {@link
   * #pollIntervalNanos} after each of its polls ends, whether it succeeded or failed, until
   * {@link #close}; sooner after a poll that found many records or ended at a missing one
   * ({@link #delayAfter}). Each node keeps its own schedule: a slow or dead node delays no other.
   */
  void start(Scheduler scheduler) {
    synchronized (schedule) {
      if (this.scheduler != null) {
        throw new IllegalStateException("already started");
      }
      this.scheduler = requireNonNull(scheduler, "scheduler");
      for (Node node : nodes.nodes) {
        node.scheduleNextPoll(0);
      }
    }
  }

  /** Stops polling; the tier stops serving once its last confirmation is older than the bound. */
  void close() {
    synchronized (schedule) {
      closed = true;
      for (Node node : nodes.nodes) {
        if (node.nextPoll != null) {
          node.nextPoll.cancel(false);
        }
      }
    }
  }

  /** The time between two polls: half the bound, so that one late poll still keeps it. */
  long pollIntervalNanos() {
    return stalenessNanos / 2;
  }

  /** The nodes of one layout, their confirmations and their fence versions. */
  private final class Nodes {
    final Layout layout;
    final Node[] nodes;
    /** Per node, the highest version of a drop of its keys (0: none). */
    final AtomicLongArray dropped;

    @SuppressWarnings({"unchecked", "rawtypes"})
    Nodes(Layout layout) {
      this.layout = layout;
      this.nodes = (Node[]) new NearTier.Node[layout.logs().size()];
      for (int i = 0; i < nodes.length; i++) {
        nodes[i] = new Node(this, i, layout.logs().get(i));
      }
      this.dropped = new AtomicLongArray(nodes.length);
    }

    boolean confirmed(int node, long now) {
      if (node < 0 || node >= nodes.length) {
        return false;
      }
      long at = nodes[node].confirmedAt;
      return at != NEVER && now - at <= stalenessNanos;
    }

    /** A node's fence version; an index of no node (an entry of another layout) refuses. */
    long droppedVersion(int node) {
      return node >= 0 && node < nodes.length ? dropped.get(node) : Long.MAX_VALUE;
    }

    /** The oldest confirmation of the nodes. Called under {@link #lock}. */
    long oldestConfirmation() {
      long oldest = Long.MAX_VALUE;
      for (Node node : nodes) {
        long at = node.confirmedAt;
        if (at == NEVER) {
          return NEVER;
        }
        oldest = Math.min(oldest, at);
      }
      return oldest;
    }
  }

  /** One node's log, its confirmation and its polling schedule. */
  private final class Node {
    /** The nodes of the layout this node belongs to. */
    final Nodes owner;
    final int index;
    final NearLog log;
    private volatile long confirmedAt = NEVER;
    private final AtomicReference<CompletableFuture<NearLog.Poll>> polling =
        new AtomicReference<>();
    /** The last applied poll's sequence and start: changed only as a poll completes. */
    private long lastSequence;
    private long lastPollStarted = NEVER;
    private volatile long nextPollDelayNanos;
    /** Guarded by {@link #schedule}. */
    Future<?> nextPoll;

    Node(Nodes owner, int index, NearLog log) {
      this.owner = owner;
      this.index = index;
      this.log = log;
    }

    /**
     * Polls the log once and applies what it found; then the node is confirmed from the moment
     * this poll started, or, if it ended at a record not yet written, from the moment the
     * previous successful poll started (every record that one counted is applied). A poll asked
     * for while one runs is that poll. Fails with the store's failure, applying nothing and
     * confirming nothing. A poll of a layout replaced meanwhile applies nothing.
     */
    CompletableFuture<NearLog.Poll> poll() {
      CompletableFuture<NearLog.Poll> mine = new CompletableFuture<>();
      CompletableFuture<NearLog.Poll> other = polling.compareAndExchange(null, mine);
      if (other != null) {
        return other;
      }
      long started = ticker.getAsLong();
      CompletableFuture<NearLog.Poll> read;
      try {
        read = log.poll();
      } catch (RuntimeException e) {
        read = CompletableFuture.failedFuture(e);
      }
      read.whenComplete((poll, failure) -> {
        if (poll != null) {
          synchronized (lock) {
            if (nodes == owner) {
              apply(owner, this, poll, started);
              // lastPollStarted: the previous successful poll's, never older than confirmedAt
              confirmedAt = poll instanceof NearLog.Poll.Partial ? lastPollStarted : started;
              NearTier.this.confirmedAt = owner.oldestConfirmation();
            }
          }
          nextPollDelayNanos = delayAfter(poll, started);
        }
        polling.set(null);
        if (failure != null) {
          mine.completeExceptionally(failure);
        } else {
          mine.complete(poll);
        }
      });
      return mine;
    }

    /** A poll that starts after this call: waits for the running one, if any, then polls. */
    CompletableFuture<NearLog.Poll> pollFromNow() {
      CompletableFuture<NearLog.Poll> running = polling.get();
      return running == null ? poll()
          : running.handle((poll, failure) -> null).thenCompose(ignored -> poll());
    }

    /**
     * The time from the end of a poll to the next: {@link #pollIntervalNanos}, or the time {@link
     * #CATCH_UP_RECORDS} records take at the rate this poll found if that is shorter (above
     * {@code CATCH_UP_RECORDS / interval}, 1,024 records/s with a bound of 1 s); an eighth of the
     * interval after a poll that ended at a missing record (most often one whose writer has not
     * yet written it: time for that write to land before the next poll, which resets if it, or
     * another record this poll counted, is still missing).
     */
    private long delayAfter(NearLog.Poll poll, long started) {
      long sequence = NearLog.sequenceOf(poll);
      long records = sequence - lastSequence;
      long window = started - lastPollStarted;
      boolean known = lastPollStarted != NEVER && window > 0 && records >= 0;
      lastSequence = sequence;
      lastPollStarted = started;
      long delay = pollIntervalNanos();
      if (known && records > 0) { // the time CATCH_UP_RECORDS take at the rate this poll found
        delay = Math.min(delay, (long) ((double) window * CATCH_UP_RECORDS / records));
      }
      return poll instanceof NearLog.Poll.Partial ? pollIntervalNanos() / 8 : delay;
    }

    /** Schedules this node's next poll, unless the tier is closed. Under {@link #schedule}. */
    void scheduleNextPoll(long delayNanos) {
      synchronized (schedule) {
        if (!closed && nodes == owner) {
          nextPoll = scheduler.schedule(this::pollAndContinue, delayNanos, TimeUnit.NANOSECONDS);
        }
      }
    }

    /**
     * Polls, then schedules the next poll; first takes another layout if the store's node list
     * changed (which starts the new nodes' schedules and ends this one's).
     */
    private void pollAndContinue() {
      if (nodes != owner) {
        return; // replaced
      }
      CompletableFuture<NearLog.Poll> poll;
      try {
        Layout fresh = layouts.get();
        if (fresh != null && fresh != owner.layout) {
          switchTo(fresh);
          return;
        }
        poll = poll();
      } catch (RuntimeException e) {
        poll = CompletableFuture.failedFuture(e);
      }
      poll.whenComplete((found, failure) -> {
        if (failure != null) {
          events.pollFailed(Failures.unwrap(failure));
        }
        scheduleNextPoll(failure != null ? pollIntervalNanos() : nextPollDelayNanos);
      });
    }
  }
}
