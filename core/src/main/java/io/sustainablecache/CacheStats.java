package io.sustainablecache;

/**
 * An immutable snapshot of a cache's counters since it was built. All counts are
 * non-negative and only grow; subtract two snapshots ({@link #minus}) to get the activity of an
 * interval.
 *
 * @param hitCount reads answered from the cache, including stale ones
 * @param staleHitCount reads answered with a value past its logical expiry (within the grace
 *     period) while a background refresh was requested; a subset of {@code hitCount}
 * @param missCount reads that had to load: absent, corrupt, or expired under a policy that does
 *     not serve stale values
 * @param loadSuccessCount loader calls that returned a value (misses and refreshes)
 * @param loadFailureCount loader calls that threw or returned {@code null}
 * @param totalLoadTimeMillis the summed duration of all loader calls, milliseconds
 * @param refreshScheduledCount background refreshes handed to the refresh executor
 * @param refreshDedupedCount refresh requests dropped because one was already in flight for
 *     the key
 * @param refreshRejectedCount refresh requests the executor rejected (saturated or shut down);
 *     they are dropped, never run on the caller's thread
 * @param refreshSuccessCount refreshes (background or inline) whose result was written
 * @param refreshFailureCount refreshes (background or inline) whose loader failed; the old value
 *     keeps being served
 * @param refreshBackoffCount refresh requests skipped because the key's previous refresh failed
 *     recently (see {@link SustainableCacheBuilder#refreshBackoff})
 * @param staleOnErrorCount reads answered with a stale value because reloading it failed (see
 *     {@link SustainableCacheBuilder#serveStaleOnError})
 * @param staleSetDiscardCount loaded values not written because the item changed meanwhile
 *     (invalidated, rewritten, or filled by another writer): the compare-and-set rule at work
 * @param skippedWriteCount loaded values returned to the caller but not cached, because they
 *     exceeded {@link SustainableCacheBuilder#maxValueSize} or the codec could not encode them
 * @param storeErrorCount store operations that failed or timed out
 * @param corruptEntryCount items that were not a valid envelope or whose payload the codec could
 *     not decode (foreign data, truncation, another format version); each was treated as a miss
 */
public record CacheStats(
    long hitCount,
    long staleHitCount,
    long missCount,
    long loadSuccessCount,
    long loadFailureCount,
    long totalLoadTimeMillis,
    long refreshScheduledCount,
    long refreshDedupedCount,
    long refreshRejectedCount,
    long refreshSuccessCount,
    long refreshFailureCount,
    long refreshBackoffCount,
    long staleOnErrorCount,
    long staleSetDiscardCount,
    long skippedWriteCount,
    long storeErrorCount,
    long corruptEntryCount) {

  /**
   * Reads that reached the cache: {@code hitCount + missCount}.
   *
   * @return a non-negative count
   */
  public long requestCount() {
    return hitCount + missCount;
  }

  /**
   * Every loader call, successful or not: the load the database saw.
   *
   * @return a non-negative count
   */
  public long loadCount() {
    return loadSuccessCount + loadFailureCount;
  }

  /**
   * The share of reads answered from the cache, or {@code 1.0} when there were none.
   *
   * @return a ratio in {@code [0, 1]}
   */
  public double hitRate() {
    long requests = requestCount();
    return requests == 0 ? 1.0 : (double) hitCount / requests;
  }

  /**
   * The difference between this snapshot and an earlier one, counter by counter.
   *
   * @param earlier a snapshot taken before this one from the same cache; never {@code null}
   * @return the activity between the two snapshots
   */
  public CacheStats minus(CacheStats earlier) {
    return new CacheStats(
        hitCount - earlier.hitCount,
        staleHitCount - earlier.staleHitCount,
        missCount - earlier.missCount,
        loadSuccessCount - earlier.loadSuccessCount,
        loadFailureCount - earlier.loadFailureCount,
        totalLoadTimeMillis - earlier.totalLoadTimeMillis,
        refreshScheduledCount - earlier.refreshScheduledCount,
        refreshDedupedCount - earlier.refreshDedupedCount,
        refreshRejectedCount - earlier.refreshRejectedCount,
        refreshSuccessCount - earlier.refreshSuccessCount,
        refreshFailureCount - earlier.refreshFailureCount,
        refreshBackoffCount - earlier.refreshBackoffCount,
        staleOnErrorCount - earlier.staleOnErrorCount,
        staleSetDiscardCount - earlier.staleSetDiscardCount,
        skippedWriteCount - earlier.skippedWriteCount,
        storeErrorCount - earlier.storeErrorCount,
        corruptEntryCount - earlier.corruptEntryCount);
  }
}
