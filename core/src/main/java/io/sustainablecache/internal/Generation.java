package io.sustainablecache.internal;

import java.util.concurrent.atomic.AtomicLongArray;
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
 * of its keys reads as a miss and loads of them write nothing. Thread-safe.
 */
final class Generation {

  /** Before the first successful poll. Generations are positive. */
  static final long UNKNOWN = -1;

  /** The nodes of one layout: where a store key is, and each node's generation. */
  private record Nodes(ToIntFunction<String> nodeOf, AtomicLongArray generations) {}

  private volatile Nodes nodes = nodes(key -> 0, 1);
  /**
   * The layout before the current one, whose generations a caller's write of a key falls back on
   * while the current layout has not read the key's node yet ({@link #forWrite}); {@code null}:
   * none (the first layout, or a change between the single log and a log per node, whose
   * generations are different items).
   */
  private volatile Nodes previous;

  private static Nodes nodes(ToIntFunction<String> nodeOf, int count) {
    AtomicLongArray generations = new AtomicLongArray(count);
    for (int i = 0; i < count; i++) {
      generations.set(i, UNKNOWN);
    }
    return new Nodes(nodeOf, generations);
  }

  /**
   * The generation of a store key's node, or {@link #UNKNOWN} (not read yet, or the store no
   * longer routes the key to a node of the current layout).
   */
  long current(String storeKey) {
    Nodes current = nodes;
    return current(current, current.nodeOf().applyAsInt(storeKey));
  }

  /** The generation of node {@code node} of the current layout, or {@link #UNKNOWN}. */
  long current(int node) {
    return current(nodes, node);
  }

  private static long current(Nodes nodes, int node) {
    return node >= 0 && node < nodes.generations().length() ? nodes.generations().get(node)
        : UNKNOWN;
  }

  /** Whether node {@code node}'s generation is known: a poll of its log has succeeded. */
  boolean known(int node) {
    return current(node) != UNKNOWN;
  }

  /**
   * The generation a caller's write of a store key is written in ({@link EntryWriter}): the one of
   * the key's node ({@link #current}); while the current layout has not read that node's log yet
   * (just after the store's node list changed: the near tier reads every node's log again), the
   * generation the previous layout last read from the same node, if it had read one and the key's
   * node is one of its nodes too. The previous layout's {@code nodeOf} says so: a store's {@link
   * io.sustainablecache.spi.StoreNodes#nodeOf} answers with the node the client routes the key to
   * now, or {@code -1} if that node is not in its (older) snapshot, such as a node that joined.
   *
   * <p>So a failover, which drops a node and keeps the others, does not fail the writes of the
   * others' keys (and of the keys that moved to them) until the new layout's polls completed
   * (issue 31). It is what the previous layout would have written a moment earlier; a generation
   * that changed meanwhile (an {@code invalidateAll} elsewhere) makes such an entry read as a
   * tombstone to the instances that know the new one, never a value served past its change.
   * Reads do not fall back ({@link #current}): an entry is judged by a generation read by the
   * current layout only.
   *
   * @return the generation, or {@link #UNKNOWN} if neither layout read one for the key's node
   */
  long forWrite(String storeKey) {
    Nodes current = nodes;
    long generation = current(current, current.nodeOf().applyAsInt(storeKey));
    Nodes before = previous;
    if (generation != UNKNOWN || before == null) {
      return generation;
    }
    return current(before, before.nodeOf().applyAsInt(storeKey));
  }

  /**
   * Takes another layout of {@code count} nodes, whose keys {@code nodeOf} places: every node's
   * generation unknown until its log is polled. Only the near tier calls this.
   *
   * @param keepPrevious whether the layout replaced keeps serving {@link #forWrite} until the new
   *     one read the key's node: {@code true} when both are layouts of a log per node (the same
   *     items on a node that is in both)
   */
  void reset(ToIntFunction<String> nodeOf, int count, boolean keepPrevious) {
    Nodes replaced = nodes;
    previous = keepPrevious ? replaced : null;
    nodes = nodes(nodeOf, count);
  }

  /** Sets the generation a poll of node {@code node}'s log found; only the near tier calls this. */
  void set(int node, long generation) {
    if (generation <= 0) {
      throw new IllegalArgumentException("a generation is positive: " + generation);
    }
    Nodes current = nodes;
    current.generations().set(node, generation);
    if (previous != null && everyNodeKnown(current)) {
      previous = null; // not needed any more: let the replaced layout's nodes go
    }
  }

  private static boolean everyNodeKnown(Nodes nodes) {
    for (int i = 0; i < nodes.generations().length(); i++) {
      if (nodes.generations().get(i) == UNKNOWN) {
        return false;
      }
    }
    return true;
  }
}
