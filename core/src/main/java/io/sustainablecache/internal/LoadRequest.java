package io.sustainablecache.internal;

/**
 * What a read hands on when it decides to load or refresh a key: everything about the read that
 * the load depends on, built in one place ({@link #of}) for every read method, single or bulk.
 *
 * @param key the caller's key (what the loader receives)
 * @param storeKey the key on the server
 * @param casToken the token of the version read ({@link Entry#NO_CAS} if the key was
 *     absent); every write of the load is conditional on it
 * @param tombstoneAt when the tombstone (or write fence) the read found was written, epoch
 *     milliseconds of the invalidating host, or -1 if the read found none: a load registered
 *     before that invalidation is not joined (see {@link KeyRegistry#begin})
 * @param expectedLoadMillis the load time the entry measured, or -1 if the read found none
 * @param stale the entry served if the load fails and stale-on-error is on, or {@code null}
 * @param failedReadMark for a read that failed on the store or found a write fence, the
 *     registry's {@linkplain KeyRegistry#readMark mark} taken before it began: a miss may then
 *     take the result of a load of this JVM registered since, and does not join one registered
 *     before (see {@link KeyRegistry#begin}); {@link #READ_OK} for any other read. Under a fence
 *     whose release failed the fence's token is unchanged after the commit, so a load registered
 *     before the read began may have read the row before a commit that returned before it
 * @param fenced whether the read found a write fence: a database transaction is changing the
 *     key's data, so the load's result is returned to its callers and never cached, here or in
 *     the store (see {@link Flight#fenced})
 */
record LoadRequest<V>(String key, String storeKey, long casToken, long tombstoneAt,
    long expectedLoadMillis, Entry<V> stale, long failedReadMark, boolean fenced) {

  /** The {@link #failedReadMark} of a read that did not fail (or of a refresh). */
  static final long READ_OK = -1;

  /**
   * The request of a read that found {@code entry} ({@code null}: nothing, or the read failed).
   *
   * @param failedReadMark see the record's component ({@link #markOf}); taken for a read that
   *     failed ({@code entry} is {@code null}) or found a write fence, ignored otherwise
   */
  static <V> LoadRequest<V> of(String key, String storeKey, Entry<V> entry,
      long failedReadMark) {
    if (entry == null) {
      return new LoadRequest<>(key, storeKey, Entry.NO_CAS, -1, -1, null, failedReadMark,
          false);
    }
    boolean answers = entry.answers();
    boolean fenced = entry.kind() == Entry.Kind.FENCE;
    return new LoadRequest<>(key, storeKey, entry.casToken(),
        entry.kind() == Entry.Kind.TOMBSTONE || fenced ? entry.fetchedAt() : -1,
        answers ? entry.loadMillis() : -1, answers ? entry : null,
        fenced ? failedReadMark : READ_OK, fenced);
  }

  /**
   * The {@link #failedReadMark} of a read that found {@code entry}: {@code readMark}, taken before
   * the read, if the read failed or found a write fence; {@link #READ_OK} otherwise.
   */
  static long markOf(Entry<?> entry, boolean readFailed, long readMark) {
    return readFailed || (entry != null && entry.kind() == Entry.Kind.FENCE) ? readMark : READ_OK;
  }

  /** Whether the read failed on the store. */
  boolean readFailed() {
    return failedReadMark != READ_OK && !fenced;
  }

  /**
   * Whether the load's result is written: not after a failed read (the server just failed, so
   * the result is returned without a write that would likely fail or time out too), nor after a
   * read that found a write fence.
   */
  boolean writeBack() {
    return !readFailed() && !fenced;
  }
}
