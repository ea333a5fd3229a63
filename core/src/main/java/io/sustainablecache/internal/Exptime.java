package io.sustainablecache.internal;

/**
 * Converts an item's physical lifetime into a memcached exptime.
 *
 * <p>memcached expires items on a one-second tick: an item set with exptime {@code N} lives
 * between {@code N - 1} and {@code N} seconds. To guarantee at least {@code lifetimeMillis}, the
 * exptime is {@code ceil(lifetimeMillis / 1000) + 1}. Relative exptimes above 30 days are not
 * allowed by the protocol, so longer lifetimes become an absolute Unix time, at most {@code
 * Integer.MAX_VALUE} (January 2038).
 */
final class Exptime {

  /** memcached's largest relative exptime, in seconds (30 days). */
  static final long MAX_RELATIVE_SECONDS = 60L * 60 * 24 * 30;

  private Exptime() {}

  static int of(long lifetimeMillis, long nowMillis) {
    long seconds = Math.floorDiv(lifetimeMillis + 999, 1000) + 1;
    if (seconds <= MAX_RELATIVE_SECONDS) {
      return (int) seconds;
    }
    // memcached reads exptime as a 32-bit value: past 2038 the furthest time it can hold.
    return (int) Math.min(Integer.MAX_VALUE, Math.floorDiv(nowMillis, 1000) + seconds);
  }
}
