package io.sustainablecache.memcached;

/**
 * The exptime the adapters send for the {@link io.sustainablecache.spi.CacheStore} contract's
 * exptime: the same number, except that a negative one, which the contract defines as "expires
 * at once", is sent as {@link #EXPIRED}, because servers disagree about negative exptimes:
 * <ul>
 *   <li>memcached 1.6 expires an item with any negative exptime at once;</li>
 *   <li>ARCUS (arcus-memcached, built with sticky items, the default) reads {@code -1} as
 *       <em>sticky</em>, an item that never expires: 1.15 refuses it unless a sticky limit is
 *       configured ({@code SERVER_ERROR out of memory storing object}, after which the client
 *       re-opens the connection) and otherwise keeps it forever; ARCUS before 1.15 adds any
 *       other negative exptime to its clock, which wraps to "almost never" once the sum is
 *       negative.</li>
 * </ul>
 * {@link #EXPIRED} is an absolute Unix time in January 1970 (above the 30-day limit of relative
 * exptimes), so every memcached 1.4 or later and every ARCUS release expires it at once: their
 * {@code realtime()} turns an absolute exptime at or before the server's start into "one second
 * after the start", which has passed. Stateless.
 */
final class Exptimes {

  /** 30 days and one second: the smallest absolute exptime, 1970-01-31T00:00:01Z. */
  static final int EXPIRED = 60 * 60 * 24 * 30 + 1;

  private Exptimes() {}

  /**
   * The exptime to send for a contract exptime.
   *
   * @param exptime the contract's exptime: 0 (no expiry), relative seconds up to 30 days, an
   *     absolute Unix time beyond, or negative (expired at once)
   * @return {@code exptime} unless it is negative, then {@link #EXPIRED}
   */
  static int toServer(int exptime) {
    return exptime < 0 ? EXPIRED : exptime;
  }
}
