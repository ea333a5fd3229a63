package io.sustainablecache;

import java.util.random.RandomGenerator;

/**
 * The refresh decision for one read: a pure function of the entry, the time, the policy and one
 * random draw. Table-tested in {@code DecisionTest}.
 */
final class Decision {

  /** What a read does with what it found. */
  enum Action {
    /** Answer from the entry; nothing else. */
    FRESH,
    /** Recompute on the reading thread and answer with the new value (PER). */
    REFRESH_INLINE,
    /** Answer from the entry and refresh it in the background (SUS, before expiry). */
    REFRESH_BACKGROUND,
    /** Answer with the expired entry (within the grace period) and refresh it (SUS). */
    STALE,
    /** No usable entry: load. */
    MISS
  }

  private Decision() {}

  /**
   * Decides a read.
   *
   * @param entry what the read found, or {@code null} if the key was absent
   * @param now the reader's time, epoch milliseconds
   */
  static Action decide(Entry<?> entry, long now, Policies.Mode mode, RefreshPolicy policy,
      RandomGenerator random) {
    if (entry == null || !entry.answers()) {
      return Action.MISS;
    }
    if (now < entry.expiresAt()) {
      if (mode == Policies.Mode.NONE || !policy.shouldRefresh(now, entry.fetchedAt(),
          entry.expiresAt(), entry.loadMillis(), random)) {
        return Action.FRESH;
      }
      return mode == Policies.Mode.INLINE ? Action.REFRESH_INLINE : Action.REFRESH_BACKGROUND;
    }
    return mode == Policies.Mode.BACKGROUND ? Action.STALE : Action.MISS;
  }
}
