package io.sustainablecache.internal;

/**
 * A refresh policy that refreshes only in the last part of an entry's life (SUS): the engine
 * reads the window to let a near hit skip the decision before it ({@code
 * Decision.freshUntil}). Implemented by the built-in sustainable policy; public for the API
 * package only, not part of the supported API.
 */
public interface RefreshWindow {

  /**
   * The last part of an entry's life in which a read may refresh it.
   *
   * @param fetchedAtMillis when the value was loaded, epoch milliseconds
   * @param expiresAtMillis its logical expiry, epoch milliseconds
   * @param loadMillis the measured load time, milliseconds
   * @return milliseconds
   */
  double window(long fetchedAtMillis, long expiresAtMillis, long loadMillis);
}
