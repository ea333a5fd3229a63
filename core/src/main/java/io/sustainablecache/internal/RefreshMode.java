package io.sustainablecache.internal;

/**
 * Where a refresh decided by {@link io.sustainablecache.RefreshPolicy#shouldRefresh} runs: the
 * builder resolves it from the policy into {@link CacheConfig#refreshMode()}. Public for the API
 * package only; not part of the supported API.
 */
public enum RefreshMode {
  /** The policy never refreshes early; expired entries are reloaded by the reader. */
  NONE,
  /** The reading thread recomputes, writes and returns the new value (the paper's PER). */
  INLINE,
  /**
   * The reader returns the cached value at once and a background executor recomputes it, at
   * most once per key at a time; past the logical expiry the stale value is served while the
   * refresh runs.
   */
  BACKGROUND
}
