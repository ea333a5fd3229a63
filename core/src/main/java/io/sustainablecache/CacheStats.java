package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.internal.Engine;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An immutable snapshot of a cache's counters since it was built. All counts are non-negative
 * and only grow; subtract two snapshots ({@link #minus}) to get the activity of an interval.
 *
 * <p>The headline figures have accessors ({@link #hitCount()}, {@link #missCount()}, the load,
 * refresh, invalidation and store-error counts, the keys awaiting an invalidation); every
 * counter, those included, is read by name with {@link #count(String)}, and {@link
 * #counterNames()} lists the names. Counters may be added in later releases, so code that
 * iterates the names must not assume a fixed list. The names:
 *
 * <table class="striped">
 *   <caption>Counters by name</caption>
 *   <tr><th>name</th><th>counts</th></tr>
 *   <tr><td>{@code hit}</td><td>reads answered from the cache without waiting for a load,
 *       stale values, cached absences and near hits included</td></tr>
 *   <tr><td>{@code stale_hit}</td><td>hits with a value past its logical expiry (within the
 *       grace period) while a background refresh was requested</td></tr>
 *   <tr><td>{@code no_value_hit}</td><td>hits on a key cached as having no value</td></tr>
 *   <tr><td>{@code miss}</td><td>reads that had to load or wait for a load (per key for bulk
 *       reads)</td></tr>
 *   <tr><td>{@code load_success}</td><td>keys a loader loaded, with a value or without
 *       one</td></tr>
 *   <tr><td>{@code load_failure}</td><td>keys whose load threw, failed or timed out</td></tr>
 *   <tr><td>{@code no_value_load}</td><td>successful loads that found no value</td></tr>
 *   <tr><td>{@code load_time_millis}</td><td>the summed duration of all loader calls (a bulk
 *       call's once), milliseconds on the cache's ticker</td></tr>
 *   <tr><td>{@code load_timeout}</td><td>loads that did not finish within the load timeout (also
 *       {@code load_failure})</td></tr>
 *   <tr><td>{@code bulk_load}</td><td>bulk loader calls</td></tr>
 *   <tr><td>{@code loader_call}</td><td>loader calls of any kind; a bulk call counts once, while
 *       the load counters count its keys</td></tr>
 *   <tr><td>{@code failure_remembered}</td><td>reads failed at once with the key's last load
 *       failure, while the key backs off ({@link SustainableCacheBuilder#failureBackoff})</td></tr>
 *   <tr><td>{@code refresh_scheduled}</td><td>background refreshes handed to the refresh
 *       executor</td></tr>
 *   <tr><td>{@code refresh_deduped}</td><td>refreshes dropped: a load of the key was in
 *       flight in this JVM</td></tr>
 *   <tr><td>{@code refresh_rejected}</td><td>refreshes the executor rejected (never run on the
 *       caller's thread)</td></tr>
 *   <tr><td>{@code refresh_success}</td><td>refreshes (background or inline) whose result was
 *       written</td></tr>
 *   <tr><td>{@code refresh_failure}</td><td>refreshes whose loader failed; the old value keeps
 *       being served</td></tr>
 *   <tr><td>{@code refresh_backoff}</td><td>refreshes skipped: the key's last load failed
 *       recently</td></tr>
 *   <tr><td>{@code stale_on_error}</td><td>reads answered with a stale value because reloading
 *       it failed</td></tr>
 *   <tr><td>{@code stale_set_discard}</td><td>loaded values not written because the item
 *       changed meanwhile (the compare-and-set rule at work)</td></tr>
 *   <tr><td>{@code skipped_write}</td><td>loaded values returned but not cached (too large, not
 *       encodable, under a write fence, no executor to write them)</td></tr>
 *   <tr><td>{@code store_error}</td><td>store operations that failed or timed out</td></tr>
 *   <tr><td>{@code store_rejected}</td><td>store operations failed at once because their node
 *       had stopped answering ({@link SustainableCacheBuilder#storeProbeInterval})</td></tr>
 *   <tr><td>{@code corrupt_entry}</td><td>items that were no valid envelope or could not be
 *       decoded; each read as a miss</td></tr>
 *   <tr><td>{@code put}</td><td>values stored by {@code put} and {@code putIfAbsent}</td></tr>
 *   <tr><td>{@code load_written}</td><td>loaded values (and absences) the store accepted</td></tr>
 *   <tr><td>{@code invalidation}</td><td>calls of {@code invalidate} and {@code
 *       invalidateAll}</td></tr>
 *   <tr><td>{@code lease_won}</td><td>fleet leases this instance took before loading</td></tr>
 *   <tr><td>{@code lease_lost}</td><td>loads skipped or deferred because another instance held
 *       the key's lease</td></tr>
 *   <tr><td>{@code lease_takeover}</td><td>leases won after another holder's lease ran out
 *       without a value written</td></tr>
 *   <tr><td>{@code lease_invalid}</td><td>lease keys holding no valid lease (planted, corrupt,
 *       over-long, or a stale failure marker), ignored and taken over</td></tr>
 *   <tr><td>{@code near_hit}</td><td>reads answered from the near cache (also {@code
 *       hit})</td></tr>
 *   <tr><td>{@code near_miss}</td><td>reads of a cache with a near cache that went to the
 *       store</td></tr>
 *   <tr><td>{@code near_record_failure}</td><td>changes the near cache's invalidation log could
 *       not record: other instances may serve their near copy until it expires; alert on
 *       it</td></tr>
 *   <tr><td>{@code near_poll_failure}</td><td>failed polls of the near cache's log (or, without
 *       a near cache, of the namespace's generation)</td></tr>
 *   <tr><td>{@code near_sample}</td><td>near hits read again from the store to check them</td></tr>
 *   <tr><td>{@code near_stale_sample}</td><td>checked near hits served beyond the near cache's
 *       bound; the bound says zero</td></tr>
 *   <tr><td>{@code near_eviction}</td><td>near entries evicted to stay within the size</td></tr>
 *   <tr><td>{@code near_invalidation}</td><td>near entries dropped because the log named
 *       them</td></tr>
 *   <tr><td>{@code near_reset}</td><td>times the near cache dropped every entry (a log it could
 *       not confirm, a new generation, a first poll)</td></tr>
 *   <tr><td>{@code fence}</td><td>write fences placed ({@link SustainableCache#fence})</td></tr>
 *   <tr><td>{@code fenced_load}</td><td>loads whose read found a fence: returned, not
 *       cached</td></tr>
 *   <tr><td>{@code fenced_hit}</td><td>hits answered under a fence with the value it
 *       replaced</td></tr>
 *   <tr><td>{@code fence_release_failure}</td><td>fences that could not be replaced after their
 *       transaction and were left to expire (logged with the key)</td></tr>
 *   <tr><td>{@code unfinished_at_close}</td><td>writes and lease releases {@link
 *       SustainableCache#close()} stopped waiting for at its timeout</td></tr>
 *   <tr><td>{@code unprotected_write}</td><td>changes that returned normally although their
 *       invalidation could not reach the store; the key's invalidation is owed ({@link
 *       SustainableCacheBuilder#failWritesWhenStoreDown})</td></tr>
 *   <tr><td>{@code invalidation_owed}</td><td>keys that entered the list of invalidations owed
 *       to the store; less {@code invalidation_paid}, the keys waiting</td></tr>
 *   <tr><td>{@code invalidation_paid}</td><td>keys that left that list: invalidated once the
 *       store answered, or covered by a new generation</td></tr>
 *   <tr><td>{@code generation_owed}</td><td>times the invalidations owed fell back to a new
 *       generation of the namespace (more than 10,000 keys, or owed over a minute)</td></tr>
 *   <tr><td>{@code outage_load}</td><td>loads started for a read that failed on the store: what
 *       the database takes while the store is out</td></tr>
 * </table>
 *
 * <p>A final class rather than a record so that counters can be added without breaking code
 * compiled against this one. <b>Thread-safety:</b> immutable. <b>Nulls:</b> no method accepts or
 * returns {@code null}.
 */
public final class CacheStats {

  private static final List<String> NAMES = Engine.counterNames();

  private static final Map<String, Integer> INDEX = new HashMap<>();

  static {
    for (int i = 0; i < NAMES.size(); i++) {
      INDEX.put(NAMES.get(i), i);
    }
  }

  private static final int HIT = INDEX.get("hit");
  private static final int MISS = INDEX.get("miss");
  private static final int LOAD_SUCCESS = INDEX.get("load_success");
  private static final int LOAD_FAILURE = INDEX.get("load_failure");
  private static final int LOAD_TIME_MILLIS = INDEX.get("load_time_millis");
  private static final int REFRESH_SUCCESS = INDEX.get("refresh_success");
  private static final int REFRESH_FAILURE = INDEX.get("refresh_failure");
  private static final int INVALIDATION = INDEX.get("invalidation");
  private static final int STORE_ERROR = INDEX.get("store_error");
  private static final int INVALIDATION_OWED = INDEX.get("invalidation_owed");
  private static final int INVALIDATION_PAID = INDEX.get("invalidation_paid");

  private static final CacheStats EMPTY = new CacheStats(new long[NAMES.size()]);

  private final long[] values;

  private CacheStats(long[] values) {
    this.values = values;
  }

  /**
   * A snapshot with the given counts, every other counter at zero: how the engine makes its
   * snapshots, and how a test or a stand-in cache can make one.
   *
   * @param counts counts by {@linkplain #counterNames() counter name}; never {@code null}
   * @return the snapshot
   * @throws IllegalArgumentException if a name is not a counter's, or a count is negative
   * @throws NullPointerException if {@code counts}, a name or a count is {@code null}
   */
  public static CacheStats of(Map<String, Long> counts) {
    requireNonNull(counts, "counts");
    long[] values = new long[NAMES.size()];
    counts.forEach((name, count) -> {
      long value = requireNonNull(count, "count");
      if (value < 0) {
        throw new IllegalArgumentException("count must not be negative: " + name + "=" + value);
      }
      values[index(name)] = value;
    });
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

  /**
   * The names of every counter, for {@link #count(String)}: lower-case words joined by {@code
   * _}, as the table above lists them. Later releases may add names.
   *
   * @return an unmodifiable list in a stable order
   */
  public static List<String> counterNames() {
    return NAMES;
  }

  /**
   * A counter by name.
   *
   * @param name one of {@link #counterNames()}, e.g. {@code "stale_hit"}
   * @return a non-negative count
   * @throws IllegalArgumentException if {@code name} is no counter's name
   * @throws NullPointerException if {@code name} is {@code null}
   */
  public long count(String name) {
    return values[index(name)];
  }

  private static int index(String name) {
    Integer index = INDEX.get(requireNonNull(name, "name"));
    if (index == null) {
      throw new IllegalArgumentException("no counter named '" + name + "'; the counters are "
          + NAMES);
    }
    return index;
  }

  /**
   * Reads answered from the cache without waiting for a load, including stale values, cached
   * absences and near hits ({@code "hit"}).
   *
   * @return a non-negative count
   */
  public long hitCount() {
    return values[HIT];
  }

  /**
   * Reads that had to load or wait for a load: absent, invalidated, corrupt, or expired under a
   * policy that does not serve stale values; per key for bulk reads ({@code "miss"}).
   *
   * @return a non-negative count
   */
  public long missCount() {
    return values[MISS];
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
   * The share of reads answered from the cache, or {@code 1.0} when there were none.
   *
   * @return a ratio in {@code [0, 1]}
   */
  public double hitRate() {
    long requests = requestCount();
    return requests == 0 ? 1.0 : (double) hitCount() / requests;
  }

  /**
   * Keys loaded, with a value or with "no value", per key for bulk loads ({@code
   * "load_success"}).
   *
   * @return a non-negative count
   */
  public long loadSuccessCount() {
    return values[LOAD_SUCCESS];
  }

  /**
   * Keys whose load threw, failed or timed out, per key for bulk loads ({@code
   * "load_failure"}).
   *
   * @return a non-negative count
   */
  public long loadFailureCount() {
    return values[LOAD_FAILURE];
  }

  /**
   * Every load, successful or not: what the database saw, per key ({@code loadSuccessCount +
   * loadFailureCount}).
   *
   * @return a non-negative count
   */
  public long loadCount() {
    return loadSuccessCount() + loadFailureCount();
  }

  /**
   * The summed duration of all loader calls, milliseconds on the cache's ticker ({@code
   * "load_time_millis"}): a bulk call's time counts once, so divide by {@code
   * count("loader_call")}, not by {@link #loadCount()} (which counts keys), for a call's mean.
   *
   * @return a non-negative number of milliseconds
   */
  public long totalLoadTimeMillis() {
    return values[LOAD_TIME_MILLIS];
  }

  /**
   * Refreshes (background or inline) whose result was written ({@code "refresh_success"}).
   *
   * @return a non-negative count
   */
  public long refreshSuccessCount() {
    return values[REFRESH_SUCCESS];
  }

  /**
   * Refreshes (background or inline) whose loader failed; the old value keeps being served
   * ({@code "refresh_failure"}).
   *
   * @return a non-negative count
   */
  public long refreshFailureCount() {
    return values[REFRESH_FAILURE];
  }

  /**
   * Calls of {@link SustainableCache#invalidate} and {@link SustainableCache#invalidateAll}
   * ({@code "invalidation"}).
   *
   * @return a non-negative count
   */
  public long invalidationCount() {
    return values[INVALIDATION];
  }

  /**
   * Store operations that failed or timed out ({@code "store_error"}). The cache answers such
   * reads by loading, so this is the figure to alert on besides the near cache's {@code
   * "near_record_failure"}.
   *
   * @return a non-negative count
   */
  public long storeErrorCount() {
    return values[STORE_ERROR];
  }

  /**
   * The keys waiting for an invalidation this instance owes the store, as of this snapshot:
   * {@code "invalidation_owed"} less {@code "invalidation_paid"}. Until one is paid, this
   * instance reads that key from the store only after invalidating it there ({@link
   * SustainableCacheBuilder#failWritesWhenStoreDown}).
   *
   * @return a non-negative count
   */
  public long keysAwaitingInvalidation() {
    return Math.max(0, values[INVALIDATION_OWED] - values[INVALIDATION_PAID]);
  }

  /**
   * The difference between this snapshot and an earlier one, counter by counter, each at least
   * 0 (as Caffeine's {@code minus}): snapshots passed in the wrong order, or of two caches, give
   * zeros where the counts would fall, never a negative count.
   *
   * @param earlier a snapshot taken before this one from the same cache; never {@code null}
   * @return the activity between the two snapshots
   * @throws NullPointerException if {@code earlier} is {@code null}
   */
  public CacheStats minus(CacheStats earlier) {
    requireNonNull(earlier, "earlier");
    long[] diff = new long[values.length];
    for (int i = 0; i < diff.length; i++) {
      diff[i] = Math.max(0, values[i] - earlier.values[i]);
    }
    return new CacheStats(diff);
  }

  /** Whether {@code o} is a snapshot with the same counts. */
  @Override
  public boolean equals(Object o) {
    return o instanceof CacheStats other && Arrays.equals(values, other.values);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(values);
  }

  /** The counters that are not zero, as {@code CacheStats{hit=3, miss=1}}. */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("CacheStats{");
    String separator = "";
    for (int i = 0; i < values.length; i++) {
      if (values[i] != 0) {
        b.append(separator).append(NAMES.get(i)).append('=').append(values[i]);
        separator = ", ";
      }
    }
    return b.append('}').toString();
  }
}
