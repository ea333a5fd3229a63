package io.sustainablecache;

/**
 * A key fenced while a database transaction changes its data: returned by {@link
 * SustainableCache#fence}; {@link #beforeCommit()} is called right before the database commit,
 * and exactly one of {@link #committed()}, {@link #committed(Object)} or {@link #rolledBack()}
 * once the transaction has ended.
 *
 * <pre>{@code
 * WriteFence<User> fence = users.fence(id);  // readers keep getting the committed user
 * ... update the row ...
 * fence.beforeCommit();                      // readers keep it for at most 100 ms more
 * tx.commit();
 * fence.committed(updated);                  // the key holds the new user
 * }</pre>
 *
 * <p>While the fence stands, on every instance of the namespace: no load that read the key before
 * the fence can write; near caches drop the key within their bound. <b>Until {@link
 * #beforeCommit()}</b>, a read of the key is answered with the value (or absence) the fence
 * replaced, the database's committed data, as a hit that is never refreshed and never held in a
 * near cache; so a write costs the database no load while its transaction runs. This includes
 * reads on the writer's own thread: <b>the transaction reads its own change from the database,
 * not from the cache</b> (the Spring and Hibernate integrations do this for you). <b>{@link
 * #beforeCommit()}</b> marks the fence committing: reads go on being answered with that value,
 * without waiting, for at most 100 ms after the mark (the <em>commit window</em>, judged by the
 * fence's time), since until this writer's completing call returns a read is concurrent with
 * the write; the commit and the release normally land well within it. Once the fence is
 * marked, any change of it (another writer joining it or committing, a release leaving it to
 * other writers) ends that value for good. After the window (a commit step slower than that),
 * or if the key held no value when it was fenced, a read loads from the loader and caches
 * nothing (concurrent readers of one instance share one load) until the fence is released;
 * after the release the key is loaded once, fleet-wide, and cached, or holds the value {@link
 * #committed(Object)} wrote.
 * <b>The bound for a failed release:</b> a read that starts after the completing call returned
 * is answered with the value the fence replaced only if this writer's release did not land
 * (the store unreachable from the writer, or the writer killed between the commit and the
 * release), and then at most 100 ms after {@code beforeCommit()} plus the clock skew between the
 * writer's and the reader's hosts (a mark further ahead of the reader's clock than {@link
 * SustainableCacheBuilder#maxClockSkew} is not answered at all).
 * Without {@link #beforeCommit()}, the value replaced is answered until the release lands, which
 * {@link #committed()} waits for; if it cannot land, other instances may answer with it for as
 * long as this writer's hold lasts ({@link SustainableCacheBuilder#fenceTimeout}): call it.
 *
 * <p>The fence is held in the store, not in this JVM. Several writers may hold one key's fence at
 * once; it stands until the last of them completes, and each writer's hold ends on its own, at
 * the latest {@code fenceTimeout} after that writer placed it (by the writers' clocks): a writer
 * that dies holds the key no longer than that, whatever other writers do.
 *
 * <p>Completing never throws a store failure: the change is retried in the background, with
 * back-off, until the fence would have expired; a final failure is counted ({@code
 * fence_release_failure}) and logged with the time the fence stands until. A fence
 * that was not released is safe: past the commit window, readers load and cache nothing until it
 * expires. Each
 * completing method waits for its first attempt (at most the load timeout, and not at all on a
 * thread that delivers the store's answers); once it returned, no read on this instance returns
 * what the key held before the fence, and other instances follow within the near cache's bound
 * (at once without a near cache).
 *
 * <p>Thread-safe; the first completion wins, a second one throws {@link IllegalStateException}.
 *
 * <p><b>Implementations:</b> this library's; a test double or a decorator may implement it too,
 * but later releases may add methods to it (with default implementations where they can).
 *
 * @param <V> the type of the cached values
 */
public interface WriteFence<V> {

  /**
   * The caller's key this fence stands in.
   *
   * @return the key, never {@code null}
   */
  String key();

  /**
   * The transaction is about to commit: the fence is marked committing, so that it answers reads
   * with the value it replaced for at most 100 ms from now (the commit window), then they load
   * and cache nothing until the fence is released. If another writer marked the fence first, or
   * this writer's hold ended, the fence stops answering with that value at once (the other
   * writer may have committed). Waits for the store, at most the load timeout; call it on the
   * transaction's thread, right before the commit. Optional, but without it a release that
   * cannot land leaves the replaced value readable on other instances after the commit, at most
   * {@code fenceTimeout} instead of the commit window (see above).
   *
   * @throws io.sustainablecache.spi.StoreException only with {@link
   *     SustainableCacheBuilder#failWritesWhenStoreDown}, if the store did not confirm it (by
   *     default it returns, and the commit owes the key's invalidation): do not
   *     commit (roll back, then {@link #rolledBack()}), since other instances could answer with
   *     the replaced value after the commit
   * @throws IllegalStateException if this fence was completed already, or if called on a thread
   *     that delivers the store's answers
   */
  void beforeCommit();

  /**
   * The transaction committed: the fence is replaced by a tombstone (the next read loads the
   * committed data), or, if other writers still hold it, left to them.
   *
   * @throws IllegalStateException if this fence was completed already
   */
  void committed();

  /**
   * The transaction committed {@code value} as the key's new data: the fence is replaced by it,
   * if this writer was the fence's only holder; otherwise (another writer held it too, whose
   * commit may have come later) by a tombstone, as {@link #committed()} does.
   *
   * @param value the new value; never {@code null}
   * @throws IllegalStateException if this fence was completed already
   * @throws NullPointerException if {@code value} is {@code null}
   * @throws IllegalArgumentException if the encoded value exceeds {@code maxValueSize} (the fence
   *     is then replaced by a tombstone)
   * @throws RuntimeException what the codec threw if it could not encode {@code value} (the fence
   *     is then replaced by a tombstone, as by {@link #committed()})
   */
  void committed(V value);

  /**
   * The transaction rolled back: the fence is removed (as a tombstone: the next read loads the
   * data, unchanged), or, if other writers still hold it, left to them.
   *
   * @throws IllegalStateException if this fence was completed already
   */
  void rolledBack();
}
