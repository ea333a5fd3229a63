package io.sustainablecache.internal;

/**
 * What one read found under a key, decoded and judged: the value (or its absence), the
 * envelope's times as this cache trusts them, and the CAS token of the version read, which every
 * write of a load started from this read is conditional on.
 *
 * @param kind what the item holds
 * @param value the decoded value for {@link Kind#VALUE}, otherwise {@code null}
 * @param fetchedAt when the entry was loaded (or invalidated), epoch milliseconds
 * @param expiresAt its logical expiry as trusted here: clamped to {@code fetchedAt + ttl} of this
 *     cache, and {@code now} for an entry written by a clock too far ahead
 * @param loadMillis the measured load time
 * @param casToken the version token of the item
 */
record Entry<V>(Kind kind, V value, long fetchedAt, long expiresAt, long loadMillis,
    long casToken) {

  /** memcached never hands out CAS 0, so it marks "no token: write with add". */
  static final long NO_CAS = 0L;

  /** The kinds of item a read can find. */
  enum Kind {
    /** A value. */
    VALUE,
    /** A cached "no value": the loader found none. */
    ABSENT,
    /** The key was invalidated; a miss whose token fences out older loads. */
    TOMBSTONE,
    /**
     * A write fence: a database transaction is changing the key's data. A miss whose token fences
     * out older loads, and whose own loads are returned to their callers and never cached.
     */
    FENCE,
    /**
     * A write fence that carries its <em>prior</em>, the value (or absence, {@code value} {@code
     * null}) it replaced, which is the database's committed data until a holder commits (or, for
     * a fence marked committing, within {@link WriteFences#COMMIT_WINDOW_MILLIS} of the mark: the
     * commit is concurrent with the read): it answers as a fresh hit, is never refreshed nor held
     * near, and its token fences out older loads as a fence's does.
     */
    PRIOR,
    /** Not an envelope this cache can read (foreign, truncated, another version, undecodable). */
    CORRUPT
  }

  /** Whether the entry answers a read: a value, a cached absence, or a fence's prior. */
  boolean answers() {
    return kind == Kind.VALUE || kind == Kind.ABSENT || kind == Kind.PRIOR;
  }

  /** Whether the entry is a value or a cached absence as a load wrote it (not a fence's prior). */
  boolean cached() {
    return kind == Kind.VALUE || kind == Kind.ABSENT;
  }
}
