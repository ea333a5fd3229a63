package io.sustainablecache;

/**
 * A key fenced while a database transaction changes its data: returned by {@link
 * SustainableCache#fence}, completed with exactly one of {@link #committed()}, {@link
 * #committed(Object)} or {@link #rolledBack()} once the transaction has ended.
 *
 * <p>While the fence stands, on every instance of the namespace: a read of the key loads it from
 * the loader and caches nothing (concurrent readers of one instance share one load); no load
 * that read the key before the fence can write; near caches drop the key within their bound. The
 * fence is held in the store, not in this JVM: a writer that dies leaves it to expire after
 * {@link SustainableCacheBuilder#fenceTimeout}. Several writers may hold one key's fence at once;
 * it stands until the last of them completes.
 *
 * <p>Completing never throws a store failure: the change is retried in the background, with
 * back-off, until the fence would have expired; a final failure is counted ({@link
 * CacheStats#fenceReleaseFailureCount}) and logged with the time the fence stands until. A fence
 * that was not released is safe: readers keep loading and caching nothing until it expires. Each
 * completing method waits for its first attempt (at most the load timeout, and not at all on a
 * thread that delivers the store's answers); once it returned, no read on this instance returns
 * what the key held before the fence, and other instances follow within the near cache's bound
 * (at once without a near cache).
 *
 * <p>Thread-safe; the first completion wins, a second one throws {@link IllegalStateException}.
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
