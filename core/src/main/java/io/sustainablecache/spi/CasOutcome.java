package io.sustainablecache.spi;

/** The result of {@link CacheStore#cas}: memcached's three answers to a compare-and-set. */
public enum CasOutcome {
  /** The item was unchanged since the token was read and now holds the new value. */
  STORED,
  /** The item was rewritten since the token was read; nothing was stored. */
  EXISTS,
  /** The item was deleted or expired since the token was read; nothing was stored. */
  NOT_FOUND
}
