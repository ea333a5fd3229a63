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
   * Takes another layout of {@code count} nodes, whose keys {@code nodeOf} places: every node's
   * generation unknown until its log is polled. Only the near tier calls this.
   */
  void reset(ToIntFunction<String> nodeOf, int count) {
    nodes = nodes(nodeOf, count);
  }

  /** Sets the generation a poll of node {@code node}'s log found; only the near tier calls this. */
  void set(int node, long generation) {
    if (generation <= 0) {
      throw new IllegalArgumentException("a generation is positive: " + generation);
    }
    nodes.generations().set(node, generation);
  }
}
