package io.sustainablecache.internal;

/**
 * A refresh policy that refreshes only in the last part of an entry's life, in the background:
 * the built-in sustainable policy (SUS), and only it. The engine reads the window to let a near
 * hit skip the decision before it ({@code Decision.freshUntil}), and tells the background policy
 * by this interface ({@link RefreshMode#of}).
 *
 * <p><b>Not part of the supported API:</b> public so that the API package's policy can implement
 * it; it may change in any release. <b>Thread-safety:</b> implementations are immutable.
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
