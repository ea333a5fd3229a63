package io.sustainablecache;

/**
 * The namespace's generation as this instance knows it, in a cache with a near cache ({@code
 * docs/near-cache.md}). Every entry the cache writes carries it ({@link EntryWriter}), and an
 * entry of another generation reads as a tombstone ({@link EntryReader}): {@code invalidateAll}
 * is one change of the generation, on plain memcached as on ARCUS. It changes in one place, when
 * the near tier applies a poll of the namespace's log that found another generation ({@link
 * NearTier}); the instance that calls {@code invalidateAll} waits for such a poll. With a log per
 * node it is a mix of every node's log's generation: it changes when any of them does, and is
 * unknown until every node's log was read once.
 *
 * <p>{@link #UNKNOWN} until a poll succeeded: then every entry reads as a miss and loads write
 * nothing. Thread-safe.
 */
final class Generation {

  /** Before the first successful poll. Generations are positive. */
  static final long UNKNOWN = -1;

  private volatile long current = UNKNOWN;

  /** The generation, or {@link #UNKNOWN}. */
  long current() {
    return current;
  }

  /** Whether the generation is known: a poll has succeeded. */
  boolean known() {
    return current != UNKNOWN;
  }

  /**
   * Forgets the generation: {@link #UNKNOWN} until the near tier has polled every node's log
   * again (after the store's node list changed).
   */
  void forget() {
    current = UNKNOWN;
  }

  /** Sets the generation a poll found; only the near tier calls this. */
  void set(long generation) {
    if (generation <= 0) {
      throw new IllegalArgumentException("a generation is positive: " + generation);
    }
    current = generation;
  }
}
