package io.sustainablecache.internal;

import io.sustainablecache.RefreshPolicy;
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
  static Action decide(Entry<?> entry, long now, RefreshMode mode, RefreshPolicy policy,
      RandomGenerator random) {
    if (entry == null || !entry.answers()) {
      return Action.MISS;
    }
    if (entry.kind() == Entry.Kind.PRIOR) {
      return Action.FRESH; // under a write fence: no load may write, so none refreshes
    }
    if (now < entry.expiresAt()) {
      if (mode == RefreshMode.NONE || !policy.shouldRefresh(now, entry.fetchedAt(),
          entry.expiresAt(), entry.loadMillis(), random)) {
        return Action.FRESH;
      }
      return mode == RefreshMode.INLINE ? Action.REFRESH_INLINE : Action.REFRESH_BACKGROUND;
    }
    return mode == RefreshMode.BACKGROUND ? Action.STALE : Action.MISS;
  }

  /**
   * A time before which {@link #decide} of {@code entry} returns {@link Action#FRESH} without a
   * random draw, for the built-in policies that draw only late in an entry's life ({@code
   * none()}: its expiry; {@code sustainable()}: before its window, less a millisecond of
   * rounding), so that a near hit can skip the decision; {@link Long#MIN_VALUE} (always decide)
   * for an entry that does not answer, for PER (which draws on every read) and for any other
   * policy. Never later than the true boundary, so skipping changes no decision.
   *
   * @return epoch milliseconds
   */
  static long freshUntil(Entry<?> entry, RefreshMode mode, RefreshPolicy policy) {
    if (!entry.cached()) {
      return Long.MIN_VALUE;
    }
    if (mode == RefreshMode.NONE) {
      return entry.expiresAt();
    }
    if (policy instanceof RefreshWindow sustainable) {
      double window =
          sustainable.window(entry.fetchedAt(), entry.expiresAt(), entry.loadMillis());
      // fresh while expiresAt - now > window, i.e. for now < expiresAt - window
      return window >= 0 && window < 1e15 ? entry.expiresAt() - (long) Math.ceil(window) - 1
          : Long.MIN_VALUE;
    }
    return Long.MIN_VALUE;
  }
}
