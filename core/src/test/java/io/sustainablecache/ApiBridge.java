package io.sustainablecache;

import io.sustainablecache.internal.RefreshMode;

/** The API package's package-private rules that the engine's tests (package {@code internal}) use. */
public final class ApiBridge {

  private ApiBridge() {}

  /** Where the policy's refreshes run, as the builder resolves it into the configuration. */
  public static RefreshMode modeOf(RefreshPolicy policy) {
    return Policies.modeOf(policy);
  }
}
