package io.sustainablecache.internal;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;
import java.util.function.ToIntFunction;

/**
 * The namespace's generation as this instance knows it, in a cache with a near cache ({@code
 * docs/near-cache.md}) or with {@code invalidateAllBound} (the same logs in generation-only mode,
 * {@link NearLog#generationOnly}, without a tier): one per node of the near tier's layout (one for the namespace's single
 * log, one per node with a log per node). Every entry the cache writes carries the generation of
 * its key's node ({@link EntryWriter}), and an entry of another generation reads as a tombstone
 * ({@link EntryReader}): {@code invalidateAll} is one change of every node's generation, on plain
 * memcached as on ARCUS. A node's generation changes in one place, when the near tier applies a
 * poll of that node's log that found another generation ({@link NearTier}); the instance that
 * calls {@code invalidateAll} waits for such a poll of every node.
 *
 * <p>A node's generation is {@link #UNKNOWN} until a poll of its log succeeded: then every entry
 * of its keys reads as a miss and loads of them write nothing; except, just after the store's
 * node list changed, for a node the previous layouts had read ({@link #current}: the fallback).
 *
 * <h2>The fallback after a change of the node list, and why it keeps the bound</h2>
 *
 * When the store's node list changes, the near tier takes a new layout ({@link #reset}) and reads
 * every node's log again; until it has read a node's, that node's keys would all read as misses
 * (about half a poll interval: the lab's cluster scenario saw a surviving node's key miss, and a
 * node back empty loaded its keys again). Instead, for a node of the new layout whose log it has
 * not read yet, this instance uses the generation the replaced layout last read from the node it
 * routes the key to (the replaced layout's {@code nodeOf}, which follows the client's routing now
 * and answers {@code -1} for a node not in that layout's list: the same server, whose log is the
 * same items; by key, not by id, since the adapters' ids carry a node's position in the list),
 * together with the ticker reading of the start of the poll that read it, its <em>reading
 * time</em>:
 *
 * <ul>
 *   <li><b>Reads and loads</b> ({@link #current}) use it only while {@code now - readingTime <=
 *       Δ}, {@code Δ} being the generation's bound ({@code invalidateAllBound}, or the near
 *       cache's staleness). Let {@code invalidateAll} return at {@code T} on any instance W (whose
 *       node list holds the node: its {@code incr} of the node's generation item returned before
 *       {@code T}), and let a read begin on this instance at {@code t > T + Δ} and judge an entry
 *       at {@code now >= t} by a fallback read at {@code p} ({@code now - p <= Δ}). Then {@code p
 *       >= now - Δ >= t - Δ > T}: the poll that read it started after W's {@code incr} returned,
 *       read the item after it, and so read the new generation (or a later one, or a fresh random
 *       one if the item was lost since: every older entry is a miss in any of them). So the read
 *       sees no entry written before {@code invalidateAll}, as with a generation the current
 *       layout read. A fallback older than {@code Δ} could be one from before {@code T}: it is
 *       not used, and the node's keys read as misses until its poll (as before this fallback).
 *       The reading time is the poll's <em>start</em> (the item is read after it), so the age is
 *       never underestimated; the ticker is monotonic and the same one the polls use.</li>
 *   <li><b>A load</b> that started in a fallback generation is written only if the generation of
 *       its key is still that one when the write is issued ({@link EntryWriter}): an {@code
 *       invalidateAll} since then, seen by a poll of the new layout, refuses it; and the near tier
 *       voids the flights of a node whose first poll in the new layout finds another generation
 *       than a fallback a read of its keys used ({@link #fallbackUsed(int)}), as it does for any
 *       new generation.</li>
 *   <li><b>A caller's write</b> ({@link #forWrite}) uses the fallback whatever its age (issue
 *       31: a failover must not fail the surviving nodes' changes until the new layout read their
 *       logs). An entry written in a generation that changed meanwhile is a tombstone for every
 *       instance that knows the new one, and an instance that still judges by the old one does so
 *       only within {@code Δ} of its reading, which started before the change: never a value
 *       served past the bound.</li>
 * </ul>
 *
 * <p>The fallback passes from layout to layout: a layout replaced before it read a key's node
 * asks the one it replaced ({@link #MAX_LAYOUTS} layouts in all), with the original reading time,
 * so two changes of the list in a row (a node dropped, then back) keep the age right. A node that
 * joined, or came back as a new connection of the client, has no fallback. Thread-safe.
 */
final class Generation {

  /** Before the first successful poll. Generations are positive. */
  static final long UNKNOWN = -1;

  /** The layouts a fallback is looked for in: the current one and the two before it. */
  static final int MAX_LAYOUTS = 3;

  /** A reading time for "never read". */
  private static final long NEVER = Long.MIN_VALUE;

  /**
   * The nodes of one layout: where a store key is, each node's generation and reading time (the
   * start of the poll that last read it), the layout it replaced (for the fallback; {@code null}:
   * none, or no longer needed) and, per node, the fallback generation a read of its keys used
   * ({@link #UNKNOWN}: none).
   */
  private static final class Nodes {
    final ToIntFunction<String> nodeOf;
    final AtomicLongArray generations;
    final AtomicLongArray readAt;
    final AtomicLongArray fallbacksUsed;
    volatile Nodes previous;

    Nodes(ToIntFunction<String> nodeOf, int count, Nodes previous) {
      this.nodeOf = nodeOf;
      this.generations = new AtomicLongArray(count);
      this.readAt = new AtomicLongArray(count);
      this.fallbacksUsed = new AtomicLongArray(count);
      for (int i = 0; i < count; i++) {
        generations.set(i, UNKNOWN);
        readAt.set(i, NEVER);
        fallbacksUsed.set(i, UNKNOWN);
      }
      this.previous = previous;
    }

    boolean holds(int node) {
      return node >= 0 && node < generations.length();
    }

    long generation(int node) {
      return holds(node) ? generations.get(node) : UNKNOWN;
    }

    boolean everyNodeKnown() {
      for (int i = 0; i < generations.length(); i++) {
        if (generations.get(i) == UNKNOWN) {
          return false;
        }
      }
      return true;
    }
  }

  private final LongSupplier ticker;
  private final long boundNanos;
  private volatile Nodes nodes = new Nodes(key -> 0, 1, null);

  /**
   * A generation of one unread node (the single log) until the near tier sets its layout.
   *
   * @param ticker the monotonic time of the polls, in nanoseconds (the cache's ticker)
   * @param bound the generation's bound: a fallback older than this is not read by
   *     {@link #current}
   */
  Generation(LongSupplier ticker, Duration bound) {
    this.ticker = requireNonNull(ticker, "ticker");
    this.boundNanos = bound.toNanos();
  }

  /**
   * The generation a store key's entries are judged by, and loads of it started and written in:
   * the one of the key's node that the current layout read; before it has (just after the store's
   * node list changed), the fallback the previous layouts read from the node the key is routed
   * to, while that reading is at most the bound old (see the class comment for why that keeps
   * the bound).
   *
   * @return the generation, or {@link #UNKNOWN} (not read, a fallback too old or none, or the
   *     store no longer routes the key to a node of the current layout)
   */
  long current(String storeKey) {
    Nodes current = nodes;
    int node = current.nodeOf.applyAsInt(storeKey);
    long generation = current.generation(node);
    if (generation != UNKNOWN || !current.holds(node) || current.previous == null) {
      return generation;
    }
    Nodes before = readingLayout(current.previous, storeKey);
    if (before == null) {
      return UNKNOWN;
    }
    int there = before.nodeOf.applyAsInt(storeKey);
    long fallback = before.generations.get(there);
    if (ticker.getAsLong() - before.readAt.get(there) > boundNanos) {
      return UNKNOWN;
    }
    if (current.fallbacksUsed.get(node) != fallback) {
      current.fallbacksUsed.set(node, fallback);
    }
    return fallback;
  }

  /**
   * The first of {@code from} and the layouts before it (at most {@link #MAX_LAYOUTS} - 1 in
   * all) that read the generation of the node it routes {@code storeKey} to; {@code null}: none.
   */
  private static Nodes readingLayout(Nodes from, String storeKey) {
    Nodes layout = from;
    for (int depth = 1; layout != null && depth < MAX_LAYOUTS; depth++) {
      if (layout.generation(layout.nodeOf.applyAsInt(storeKey)) != UNKNOWN) {
        return layout;
      }
      layout = layout.previous;
    }
    return null;
  }

  /**
   * The generation node {@code node} of the current layout read, or {@link #UNKNOWN}; no
   * fallback.
   */
  long current(int node) {
    return nodes.generation(node);
  }

  /**
   * The last fallback generation a read of a key of node {@code node} of the current layout was
   * judged by ({@link #current}), or {@link #UNKNOWN} (none).
   */
  long fallbackUsed(int node) {
    Nodes current = nodes;
    return current.holds(node) ? current.fallbacksUsed.get(node) : UNKNOWN;
  }

  /** Whether node {@code node}'s generation is known: a poll of its log has succeeded. */
  boolean known(int node) {
    return current(node) != UNKNOWN;
  }

  /**
   * The generation a caller's write of a store key is written in ({@link EntryWriter}): the one of
   * the key's node ({@link #current}); while the current layout has not read that node's log yet
   * (just after the store's node list changed: the near tier reads every node's log again), the
   * fallback for that key, whatever its age: what the previous layouts read from the node the
   * key is routed to.
   *
   * <p>So a failover, which drops a node and keeps the others, does not fail the writes of the
   * others' keys (and of the keys that moved to them) until the new layout's polls completed
   * (issue 31). It is what the previous layout would have written a moment earlier; a generation
   * that changed meanwhile (an {@code invalidateAll} elsewhere) makes such an entry read as a
   * tombstone to the instances that know the new one, and an instance that judges by that old one
   * (its own fallback) does so within the bound of its reading only: never a value served past
   * its change.
   *
   * @return the generation, or {@link #UNKNOWN} if no layout read one for the key's node
   */
  long forWrite(String storeKey) {
    Nodes current = nodes;
    long generation = current.generation(current.nodeOf.applyAsInt(storeKey));
    if (generation != UNKNOWN || current.previous == null) {
      return generation;
    }
    Nodes before = readingLayout(current.previous, storeKey);
    return before == null ? UNKNOWN : before.generation(before.nodeOf.applyAsInt(storeKey));
  }

  /**
   * Takes another layout of {@code count} nodes, whose keys {@code nodeOf} places: every node's
   * generation unknown until its log is polled, with a fallback for a key whose node the replaced
   * layout (or the one before it) had read. Only the near tier calls this.
   *
   * @param keepFallbacks whether the layout replaced passes its readings on as fallbacks: {@code
   *     true} when both are layouts of a log per node (the same items on a node that is in both)
   */
  void reset(ToIntFunction<String> nodeOf, int count, boolean keepFallbacks) {
    Nodes replaced = nodes;
    Nodes next = new Nodes(nodeOf, count, keepFallbacks ? replaced : null);
    Nodes last = next;
    for (int depth = 1; last != null; depth++) {
      if (depth == MAX_LAYOUTS) {
        last.previous = null; // older layouts are not looked in: let them go
      }
      last = last.previous;
    }
    nodes = next;
  }

  /**
   * Sets the generation a poll of node {@code node}'s log found, and when that poll started; only
   * the near tier calls this, for every poll it applies (the reading time moves on even when the
   * generation did not change).
   *
   * @param startedNanos the ticker's reading when the poll started
   */
  void set(int node, long generation, long startedNanos) {
    if (generation <= 0) {
      throw new IllegalArgumentException("a generation is positive: " + generation);
    }
    Nodes current = nodes;
    current.readAt.accumulateAndGet(node, startedNanos,
        (held, given) -> held == NEVER || given - held > 0 ? given : held);
    current.generations.set(node, generation);
    if (current.previous != null && current.everyNodeKnown()) {
      current.previous = null; // not needed any more: let the replaced layouts go
    }
  }
}
