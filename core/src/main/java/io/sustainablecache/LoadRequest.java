package io.sustainablecache;

/**
 * What a read hands on when it decides to load or refresh a key: everything about the read that
 * the load depends on, built in one place ({@link #of}) for every read method, single or bulk.
 *
 * @param key the caller's key (what the loader receives)
 * @param storeKey the key on the server
 * @param casToken the token of the version read ({@link EntryWriter#NO_CAS} if the key was
 *     absent); every write of the load is conditional on it
 * @param tombstoneAt when the tombstone the read found was written, epoch milliseconds of the
 *     invalidating host, or -1 if the read found none: a load registered before that
 *     invalidation is not joined (see {@link KeyRegistry#begin})
 * @param expectedLoadMillis the load time the entry measured, or -1 if the read found none
 * @param stale the entry served if the load fails and stale-on-error is on, or {@code null}
 * @param writeBack {@code false} after a failed read: the server just failed, so the result is
 *     returned without a write that would likely fail or time out too
 */
record LoadRequest<V>(String key, String storeKey, long casToken, long tombstoneAt,
    long expectedLoadMillis, Entry<V> stale, boolean writeBack) {

  /**
   * The request of a read that found {@code entry} ({@code null}: nothing, or the read failed
   * when {@code readFailed}).
   */
  static <V> LoadRequest<V> of(String key, String storeKey, Entry<V> entry, boolean readFailed) {
    if (entry == null) {
      return new LoadRequest<>(key, storeKey, EntryWriter.NO_CAS, -1, -1, null, !readFailed);
    }
    boolean answers = entry.answers();
    return new LoadRequest<>(key, storeKey, entry.casToken(),
        entry.kind() == Entry.Kind.TOMBSTONE ? entry.fetchedAt() : -1,
        answers ? entry.loadMillis() : -1, answers ? entry : null, true);
  }
}
