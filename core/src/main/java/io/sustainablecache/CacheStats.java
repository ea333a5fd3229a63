package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.internal.Counter;
import java.util.Arrays;

/**
 * An immutable snapshot of a cache's counters since it was built. All counts are non-negative
 * and only grow; subtract two snapshots ({@link #minus}) to get the activity of an interval.
 *
 * <p>A final class rather than a record so that counters can be added in later versions without
 * breaking code compiled against this one. Thread-safe (immutable).
 */
public final class CacheStats {

  private static final int COUNTERS = Counter.values().length;

  private static final CacheStats EMPTY = new CacheStats(new long[COUNTERS]);

  private final long[] values;

  private CacheStats(long[] values) {
    this.values = values;
  }

  /**
   * Wraps counter values indexed by {@link Counter#ordinal()}: how the engine makes a snapshot.
   * Not part of the supported API (its argument's layout may change in any release); use {@link
   * #empty()} and a cache's {@link SustainableCache#stats()}.
   *
   * @param values one value per counter; not copied, so not changed afterwards
   * @return the snapshot
   * @throws IllegalArgumentException if {@code values} does not hold one value per counter
   */
  public static CacheStats of(long[] values) {
    if (values.length != COUNTERS) {
      throw new IllegalArgumentException("expected " + COUNTERS + " counters");
    }
    return new CacheStats(values);
  }

  /**
   * A snapshot with every counter at zero.
   *
   * @return a shared instance
   */
  public static CacheStats empty() {
    return EMPTY;
  }

  private long get(Counter counter) {
    return values[counter.ordinal()];
  }

  /**
   * Reads answered from the cache without waiting for a load, including stale values and
   * cached absences.
   *
   * @return a non-negative count
   */
  public long hitCount() {
    return get(Counter.HIT);
  }

  /**
   * Reads answered with a value past its logical expiry (within the grace period) while a
   * background refresh was requested; a subset of {@link #hitCount()}.
   *
   * @return a non-negative count
   */
  public long staleHitCount() {
    return get(Counter.STALE_HIT);
  }

  /**
   * Reads answered from a cached absence (the loader had found no value); a subset of {@link
   * #hitCount()}.
   *
   * @return a non-negative count
   */
  public long absentHitCount() {
    return get(Counter.ABSENT_HIT);
  }

  /**
   * Reads that had to load or wait for a load: absent, invalidated, corrupt, or expired under a
   * policy that does not serve stale values. Counted per key for bulk reads.
   *
   * @return a non-negative count
   */
  public long missCount() {
    return get(Counter.MISS);
  }

  /**
   * Loader calls that completed, with a value or with "no value" (per key for bulk loads).
   *
   * @return a non-negative count
   */
  public long loadSuccessCount() {
    return get(Counter.LOAD_SUCCESS);
  }

  /**
   * Loader calls that threw, failed or timed out (per key for bulk loads).
   *
   * @return a non-negative count
   */
  public long loadFailureCount() {
    return get(Counter.LOAD_FAILURE);
  }

  /**
   * Successful loads that found no value; a subset of {@link #loadSuccessCount()}.
   *
   * @return a non-negative count
   */
  public long absentLoadCount() {
    return get(Counter.ABSENT_LOAD);
  }

  /**
   * The summed duration of all loader calls, milliseconds on the cache's clock.
   *
   * @return a non-negative number of milliseconds
   */
  public long totalLoadTimeMillis() {
    return get(Counter.LOAD_TIME_MILLIS);
  }

  /**
   * Loads that did not finish within the load timeout; also counted in {@link
   * #loadFailureCount()}.
   *
   * @return a non-negative count
   */
  public long loadTimeoutCount() {
    return get(Counter.LOAD_TIMEOUT);
  }

  /**
   * Bulk loader calls (each also counts its keys in the load counters).
   *
   * @return a non-negative count
   */
  public long bulkLoadCount() {
    return get(Counter.BULK_LOAD);
  }

  /**
   * Reads that failed at once with the key's last load failure, without calling the loader,
   * because the key was backing off after failures.
   *
   * @return a non-negative count
   */
  public long failureRememberedCount() {
    return get(Counter.FAILURE_REMEMBERED);
  }

  /**
   * Background refreshes handed to the refresh executor.
   *
   * @return a non-negative count
   */
  public long refreshScheduledCount() {
    return get(Counter.REFRESH_SCHEDULED);
  }

  /**
   * Refresh requests dropped because a load of the key was already in flight in this JVM.
   *
   * @return a non-negative count
   */
  public long refreshDedupedCount() {
    return get(Counter.REFRESH_DEDUPED);
  }

  /**
   * Refresh requests the executor rejected (saturated or shut down); dropped, never run on the
   * caller's thread.
   *
   * @return a non-negative count
   */
  public long refreshRejectedCount() {
    return get(Counter.REFRESH_REJECTED);
  }

  /**
   * Refreshes (background or inline) whose result was written.
   *
   * @return a non-negative count
   */
  public long refreshSuccessCount() {
    return get(Counter.REFRESH_SUCCESS);
  }

  /**
   * Refreshes (background or inline) whose loader failed; the old value keeps being served.
   *
   * @return a non-negative count
   */
  public long refreshFailureCount() {
    return get(Counter.REFRESH_FAILURE);
  }

  /**
   * Refresh requests skipped because the key's previous load failed recently.
   *
   * @return a non-negative count
   */
  public long refreshBackoffCount() {
    return get(Counter.REFRESH_BACKOFF);
  }

  /**
   * Reads answered with a stale value because reloading it failed.
   *
   * @return a non-negative count
   */
  public long staleOnErrorCount() {
    return get(Counter.STALE_ON_ERROR);
  }

  /**
   * Loaded values not written because the item changed meanwhile (invalidated, rewritten, or
   * filled by another writer): the compare-and-set rule at work.
   *
   * @return a non-negative count
   */
  public long staleSetDiscardCount() {
    return get(Counter.STALE_SET_DISCARD);
  }

  /**
   * Loaded values returned to the caller but not cached: larger than {@code maxValueSize}, not
   * encodable by the codec, or with no executor to write them.
   *
   * @return a non-negative count
   */
  public long skippedWriteCount() {
    return get(Counter.SKIPPED_WRITE);
  }

  /**
   * Store operations that failed or timed out.
   *
   * @return a non-negative count
   */
  public long storeErrorCount() {
    return get(Counter.STORE_ERROR);
  }

  /**
   * Items that were not a valid envelope or whose payload the codec could not decode (foreign
   * data, truncation, another format version); each was treated as a miss.
   *
   * @return a non-negative count
   */
  public long corruptEntryCount() {
    return get(Counter.CORRUPT_ENTRY);
  }

  /**
   * Values stored by {@link SustainableCache#put} and {@link SustainableCache#putIfAbsent}.
   *
   * @return a non-negative count
   */
  public long putCount() {
    return get(Counter.PUT);
  }

  /**
   * Calls of {@link SustainableCache#invalidate} and {@link SustainableCache#invalidateAll}.
   *
   * @return a non-negative count
   */
  public long invalidationCount() {
    return get(Counter.INVALIDATION);
  }

  /**
   * Fleet leases this instance took before loading a key.
   *
   * @return a non-negative count
   */
  public long leaseWonCount() {
    return get(Counter.LEASE_WON);
  }

  /**
   * Loads this instance skipped (refreshes) or deferred (misses) because another instance held
   * the key's lease.
   *
   * @return a non-negative count
   */
  public long leaseLostCount() {
    return get(Counter.LEASE_LOST);
  }

  /**
   * Leases won after another instance's lease on the key ran out without it writing a value
   * (the holder died or was too slow).
   *
   * @return a non-negative count
   */
  public long leaseTakeoverCount() {
    return get(Counter.LEASE_TAKEOVER);
  }

  /**
   * Lease keys found holding a value that is no lease (planted, corrupt, or from another format
   * version) or one claiming to last longer than any lease does (a failure marker: longer than
   * the back-off of its failure count), or another instance's failure marker still there after
   * that back-off, counted from when this instance first saw it; each was ignored and taken over.
   *
   * @return a non-negative count
   */
  public long leaseInvalidCount() {
    return get(Counter.LEASE_INVALID);
  }

  /**
   * Calls of a loader: each call of a {@link Loader} or {@link AsyncLoader}, and each call of a
   * bulk loader however many keys it loads ({@link #bulkLoadCount()} counts the latter alone).
   * {@link #loadSuccessCount()} and {@link #loadFailureCount()} count keys, so a {@code getAll}
   * that loads 100 keys in one query adds 1 here and 100 there.
   *
   * @return a non-negative count
   */
  public long loaderCallCount() {
    return get(Counter.LOADER_CALL);
  }

  /**
   * Loaded values (and absences) the store accepted: writes of cold misses and of refreshes.
   * Together with {@link #putCount()} it is what Micrometer's {@code cache.puts} reports.
   *
   * @return a non-negative count
   */
  public long loadWrittenCount() {
    return get(Counter.LOAD_WRITTEN);
  }

  /**
   * Reads answered from the near cache, without a store round trip (also counted as hits);
   * zero without a near cache.
   *
   * @return a non-negative count
   */
  public long nearHitCount() {
    return get(Counter.NEAR_HIT);
  }

  /**
   * Reads of a cache with a near cache that went to the store: the key was not in the near
   * cache, its entry there had expired, or the near cache was not confirmed by a recent poll of
   * its invalidation log.
   *
   * @return a non-negative count
   */
  public long nearMissCount() {
    return get(Counter.NEAR_MISS);
  }

  /**
   * Changes that the near cache's invalidation log could not record: written by loads
   * (refreshes, misses), and by callers ({@code put}, {@code putNoValue}, {@code putIfAbsent},
   * {@code invalidate}, which then throw, unless issued on a thread of the store, see {@link
   * SustainableCache}). Other instances keep serving their near copy of the key until it
   * expires: alert on it.
   *
   * @return a non-negative count
   */
  public long nearRecordFailureCount() {
    return get(Counter.NEAR_RECORD_FAILURE);
  }

  /**
   * Polls of the near cache's invalidation log that failed (the store down or slow, or without
   * counters): while they fail, the near cache serves nothing once its last confirmation is older
   * than its bound. Without a near cache, failed polls of the namespace's generation ({@code
   * invalidateAllBound}): while they fail, another instance's {@code invalidateAll} does not
   * reach this one.
   *
   * @return a non-negative count
   */
  public long nearPollFailureCount() {
    return get(Counter.NEAR_POLL_FAILURE);
  }

  /**
   * Near hits read again from the store in the background to check them (one in a thousand by
   * default; {@link SustainableCacheBuilder#nearCache(long, java.time.Duration, double)}).
   *
   * @return a non-negative count
   */
  public long nearSampleCount() {
    return get(Counter.NEAR_SAMPLE);
  }

  /**
   * Checked near hits whose value the store had replaced more than the near cache's bound earlier
   * (by the replacing entry's write time, the writer's clock): reads served beyond the bound. The
   * bound says zero; a positive count means an invalidation that did not go through the log (a
   * writer without the near cache, a raw write) or hosts' clocks apart by more than the bound.
   *
   * @return a non-negative count
   */
  public long nearStaleSampleCount() {
    return get(Counter.NEAR_STALE_SAMPLE);
  }

  /**
   * Entries the near cache evicted to stay within its maximum size.
   *
   * @return a non-negative count
   */
  public long nearEvictionCount() {
    return get(Counter.NEAR_EVICTION);
  }

  /**
   * Keys the near cache dropped because its invalidation log named them: changes made on other
   * instances, applied here.
   *
   * @return a non-negative count
   */
  public long nearInvalidationCount() {
    return get(Counter.NEAR_INVALIDATION);
  }

  /**
   * Times the near cache dropped every entry because a poll of its log could not confirm that it
   * saw every change (a record evicted or overwritten, the log lost, more changes than its slots)
   * or found a new generation ({@code invalidateAll}, or the generation lost); each instance's
   * first poll counts too. With a log per node (a cluster under {@code FailureMode.Cancel}), a
   * reset of one node's log drops that node's entries only and counts once, as does a change of
   * the store's node list (which drops every entry).
   *
   * @return a non-negative count
   */
  public long nearResetCount() {
    return get(Counter.NEAR_RESET);
  }

  /**
   * Write fences placed ({@link SustainableCache#fence}): keys fenced while a database
   * transaction changed their data.
   *
   * @return a non-negative count
   */
  public long fenceCount() {
    return get(Counter.FENCE);
  }

  /**
   * Loads whose read found a write fence: returned to their callers and not cached.
   *
   * @return a non-negative count
   */
  public long fencedLoadCount() {
    return get(Counter.FENCED_LOAD);
  }

  /**
   * Hits answered under a write fence with the value it replaced, which is the database's
   * committed data until the transaction commits (a subset of {@link #hitCount}).
   *
   * @return a non-negative count
   */
  public long fencedHitCount() {
    return get(Counter.FENCED_HIT);
  }

  /**
   * Write fences this instance could not replace after their transaction ended, retried until
   * they would have expired (the store down or slow): each key stayed fenced, loading and caching
   * nothing, until its fence expired. Logged with the key.
   *
   * @return a non-negative count
   */
  public long fenceReleaseFailureCount() {
    return get(Counter.FENCE_RELEASE_FAILURE);
  }

  /**
   * Store writes and lease releases that {@link SustainableCache#close()} stopped waiting for at
   * its {@link SustainableCacheBuilder#closeTimeout closeTimeout}: still unanswered by the store
   * then (a store slow or down), and dropped if the client was shut down right after. Logged at
   * WARN with the number. Nothing stale comes of it: a dropped write-back is a key that loads
   * again; a dropped lease release makes other instances wait out the lease (at most one load
   * plus a bound).
   *
   * @return a non-negative count
   */
  public long unfinishedAtCloseCount() {
    return get(Counter.UNFINISHED_AT_CLOSE);
  }

  /**
   * Changes ({@code invalidate}, {@code put}, a write fence's commit) that returned normally
   * although their invalidation could not reach the store (it failed or did not answer): the
   * database change committed, and its key was remembered, to be invalidated as soon as the store
   * takes it ({@link SustainableCacheBuilder#failWritesWhenStoreDown}). Logged at WARN, rate
   * limited.
   *
   * @return a non-negative count
   */
  public long unprotectedWriteCount() {
    return get(Counter.UNPROTECTED_WRITE);
  }

  /**
   * Keys that entered this instance's list of invalidations owed to the store (a key owed again
   * while it waits counts once). {@link #owedInvalidationCount()} less {@link
   * #paidInvalidationCount()} is the number of keys waiting.
   *
   * @return a non-negative count
   */
  public long owedInvalidationCount() {
    return get(Counter.INVALIDATION_OWED);
  }

  /**
   * Keys that left the list of invalidations owed: invalidated in the store once it answered
   * again, or covered by a new generation of the namespace.
   *
   * @return a non-negative count
   */
  public long paidInvalidationCount() {
    return get(Counter.INVALIDATION_PAID);
  }

  /**
   * The keys waiting for an invalidation this instance owes the store, as of this snapshot: {@link
   * #owedInvalidationCount()} less {@link #paidInvalidationCount()}. Until one is paid, this
   * instance reads that key from the store only after invalidating it there.
   *
   * @return a non-negative number
   */
  public long keysAwaitingInvalidation() {
    return Math.max(0, owedInvalidationCount() - paidInvalidationCount());
  }

  /**
   * Times the invalidations owed fell back to a new generation of the namespace: more keys owed
   * than the bound (10,000), or owed longer than a minute. Every entry of the namespace is then a
   * miss once the new generation is written.
   *
   * @return a non-negative count
   */
  public long owedGenerationCount() {
    return get(Counter.GENERATION_OWED);
  }

  /**
   * Store operations that failed at once, without being sent, because their node had stopped
   * answering ({@link SustainableCacheBuilder#storeProbeInterval}); also counted in {@link
   * #storeErrorCount()} where a read or write reports its failure.
   *
   * @return a non-negative count
   */
  public long storeRejectedCount() {
    return get(Counter.STORE_REJECTED);
  }

  /**
   * Loads started for a read that failed on the store (a node down, hung or failing fast): what
   * the database takes while the store is out; a subset of {@link #loadCount()}. Reads that
   * failed and shared a load ({@link SustainableCacheBuilder#outageReuse}) are not counted.
   *
   * @return a non-negative count
   */
  public long outageLoadCount() {
    return get(Counter.OUTAGE_LOAD);
  }

  /**
   * Reads that reached the cache: {@code hitCount + missCount}.
   *
   * @return a non-negative count
   */
  public long requestCount() {
    return hitCount() + missCount();
  }

  /**
   * Every loader call, successful or not: the load the database saw (per key).
   *
   * @return a non-negative count
   */
  public long loadCount() {
    return loadSuccessCount() + loadFailureCount();
  }

  /**
   * The share of reads answered from the cache, or {@code 1.0} when there were none.
   *
   * @return a ratio in {@code [0, 1]}
   */
  public double hitRate() {
    long requests = requestCount();
    return requests == 0 ? 1.0 : (double) hitCount() / requests;
  }

  /**
   * The difference between this snapshot and an earlier one, counter by counter.
   *
   * @param earlier a snapshot taken before this one from the same cache; never {@code null}
   * @return the activity between the two snapshots
   */
  public CacheStats minus(CacheStats earlier) {
    requireNonNull(earlier, "earlier");
    long[] diff = new long[values.length];
    for (int i = 0; i < diff.length; i++) {
      diff[i] = values[i] - earlier.values[i];
    }
    return new CacheStats(diff);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CacheStats other && Arrays.equals(values, other.values);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(values);
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("CacheStats{");
    for (Counter counter : Counter.values()) {
      long value = values[counter.ordinal()];
      if (value != 0) {
        if (b.length() > "CacheStats{".length()) {
          b.append(", ");
        }
        b.append(counter.name().toLowerCase(java.util.Locale.ROOT)).append('=').append(value);
      }
    }
    return b.append('}').toString();
  }
}
