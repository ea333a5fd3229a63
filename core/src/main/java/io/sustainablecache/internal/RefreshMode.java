package io.sustainablecache.internal;

import io.sustainablecache.RefreshPolicy;

/**
 * Where a refresh decided by {@link RefreshPolicy#shouldRefresh} runs: {@link CacheConfig}
 * resolves it from the policy into {@link CacheConfig#refreshMode()}.
 */
enum RefreshMode {
  /** The policy never refreshes early; expired entries are reloaded by the reader. */
  NONE,
  /** The reading thread recomputes, writes and returns the new value (the paper's PER). */
  INLINE,
  /**
   * The reader returns the cached value at once and a background executor recomputes it, at
   * most once per key at a time; past the logical expiry the stale value is served while the
   * refresh runs.
   */
  BACKGROUND;

  /**
   * The mode of a built-in policy. {@link RefreshPolicy} is sealed to three: {@link
   * RefreshPolicy#none()} (a single instance) never refreshes, the sustainable policy is the one
   * {@link RefreshWindow} and refreshes in the background, and PER recomputes inline.
   */
  static RefreshMode of(RefreshPolicy policy) {
    if (policy == RefreshPolicy.none()) {
      return NONE;
    }
    return policy instanceof RefreshWindow ? BACKGROUND : INLINE;
  }
}
