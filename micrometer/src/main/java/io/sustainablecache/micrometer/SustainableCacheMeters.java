package io.sustainablecache.micrometer;

/**
 * The names and tags of the meters {@link SustainableCacheMetrics} registers, lower-case and
 * dot-separated as Micrometer's naming convention asks (registries rename them, e.g. Prometheus
 * to {@code cache_stale_hits_total}). Every meter carries the tag {@value #TAG_CACHE} with the
 * cache's name, plus the tags given to the binder (Spring Boot adds {@code cache.manager}).
 *
 * <p>The first three are Micrometer's own ({@code CacheMeterBinder}); the others are this
 * library's. Every counter is a {@code FunctionCounter} over {@link
 * io.sustainablecache.CacheStats}, cumulative since the cache was built.
 */
public final class SustainableCacheMeters {

  /** The tag naming the cache, as Micrometer's cache binders use it. */
  public static final String TAG_CACHE = "cache";

  /** The tag of a result or an outcome. */
  public static final String TAG_RESULT = "result";

  /**
   * Micrometer's {@code cache.gets}, tagged {@code result=hit} ({@code CacheStats.hitCount}: reads
   * answered without waiting for a load, including stale values and cached absences) and {@code
   * result=miss} ({@code missCount}: reads that loaded or waited for a load).
   */
  public static final String GETS = "cache.gets";

  /**
   * Micrometer's {@code cache.puts}: entries added, by {@code put} and {@code putIfAbsent} and the
   * loaded values written (as Micrometer's Caffeine binder counts its loads here).
   */
  public static final String PUTS = "cache.puts";

  /**
   * Micrometer's {@code cache.evictions}: here the explicit removals, {@code invalidate} and
   * {@code invalidateAll} (Spring's {@code evict} and {@code clear}). The server's own LRU
   * evictions are not visible to a client.
   */
  public static final String EVICTIONS = "cache.evictions";

  /**
   * Keys loaded, tagged {@code result=success} (with a value or with "no value") and {@code
   * result=failure} (threw, failed or timed out); a bulk call counts each of its keys ({@link
   * #LOADER_CALLS} counts the calls: the queries the database saw). Named as Micrometer's Caffeine
   * binder names its loads.
   */
  public static final String LOADS = "cache.load";

  /**
   * A function timer of the loader calls: count = loader calls ({@link #LOADER_CALLS}: a bulk call
   * once), total time = {@code CacheStats.totalLoadTimeMillis} (their summed duration, on the
   * cache's ticker), so its mean is the time of one call; a call is counted when it starts and
   * its time added when it ends, so calls still running lower the mean until they end.
   */
  public static final String LOAD_DURATION = "cache.load.duration";

  /** Loads that did not finish within the load timeout (also counted as load failures). */
  public static final String LOAD_TIMEOUTS = "cache.load.timeouts";

  /**
   * Reads that failed at once with the key's last load failure, during the failure back-off,
   * without calling the loader.
   */
  public static final String FAILURES_REMEMBERED = "cache.load.failures.remembered";

  /** Hits answered with a value past its TTL (within the grace period) while it refreshes. */
  public static final String STALE_HITS = "cache.stale.hits";

  /** Hits answered from a cached absence ("no value", negative caching). */
  public static final String NO_VALUE_HITS = "cache.no.value.hits";

  /** Reads answered with a stale value because reloading it failed ({@code none}/PER). */
  public static final String STALE_ON_ERROR = "cache.stale.on.error";

  /**
   * What became of each refresh the policy asked for, tagged {@code result=scheduled} (handed to
   * the refresh executor), {@code deduplicated} (a load of the key was already running), {@code
   * rejected} (the executor was full) and {@code backed.off} (the key's last load failed
   * recently).
   */
  public static final String REFRESH_REQUESTS = "cache.refresh.requests";

  /**
   * Refreshes that ran, tagged {@code result=success} (written) and {@code result=failure} (the
   * loader failed; the old value keeps being served).
   */
  public static final String REFRESHES = "cache.refreshes";

  /** Store operations that failed or timed out (reads count as misses, so callers still get values). */
  public static final String STORE_ERRORS = "cache.store.errors";

  /** Stored items that were not a valid envelope or that the codec could not decode. */
  public static final String CORRUPT_ENTRIES = "cache.corrupt.entries";

  /** Loaded values returned but not cached: too large, not encodable, or no executor to write. */
  public static final String WRITES_SKIPPED = "cache.writes.skipped";

  /** Loaded values not written because the item changed meanwhile (invalidated or rewritten). */
  public static final String WRITES_DISCARDED = "cache.writes.discarded";

  /**
   * Fleet leases, tagged {@code result=won} (this instance loads) and {@code result=lost} (another
   * instance held the key's lease, so this one kept serving or waited).
   */
  public static final String LEASES = "cache.lease";

  /** Loader calls: a single key's, or one bulk call however many keys it loads. */
  public static final String LOADER_CALLS = "cache.loader.calls";

  /** Leases won after another instance's lease ran out without it writing a value. */
  public static final String LEASE_TAKEOVERS = "cache.lease.takeovers";

  /** Lease keys found holding no valid lease (planted, corrupt, another version): taken over. */
  public static final String LEASES_INVALID = "cache.lease.invalid";

  /**
   * Reads of a cache with a near cache, tagged {@code result=hit} (answered from the JVM, no
   * store round trip; also counted in {@code cache.gets}) and {@code result=miss} (went to the
   * store).
   */
  public static final String NEAR_GETS = "cache.near.gets";

  /**
   * The near cache's invalidation log: {@code result=poll.failed} (a poll of the log failed: past
   * the bound, near entries are not served) and {@code result=record.failed} (a load's write
   * could not be recorded: other instances keep their copy until it expires).
   */
  public static final String NEAR_LOG_FAILURES = "cache.near.log.failures";

  /**
   * Near hits checked against the store in the background (a share of them), tagged {@code
   * result=checked} (every check) and {@code result=stale} (the store had replaced the value more
   * than the near cache's bound earlier: served beyond the bound).
   */
  public static final String NEAR_SAMPLES = "cache.near.samples";

  /**
   * What the near cache dropped, tagged {@code result=evicted} (entries evicted to stay within its
   * size), {@code result=invalidated} (keys its invalidation log named: changes made on other
   * instances) and {@code result=reset} (every entry at once: a poll that could not confirm every
   * change, or a new generation).
   */
  public static final String NEAR_DROPS = "cache.near.drops";

  /**
   * Write fences around database transactions, tagged {@code result=placed} (keys fenced), {@code
   * result=answered} (reads answered under a fence with the value it replaced, the database's
   * committed data until the commit), {@code result=loaded} (loads whose read found a fence
   * without one: returned, not cached) and {@code
   * result=release.failed} (fences that could not be replaced after their transaction, retried
   * until they expired: alert on it).
   */
  public static final String FENCES = "cache.fences";

  /**
   * Changes ({@code invalidate}, {@code put}, a write fence's commit) that returned normally
   * although their invalidation could not reach the store: the database committed, and the key
   * was owed to the store ({@code unprotected_write}). A function counter.
   */
  public static final String WRITES_UNPROTECTED = "cache.writes.unprotected";

  /**
   * Keys waiting for an invalidation this instance owes the store ({@code
   * CacheStats.keysAwaitingInvalidation}): other instances may serve their old entry until it is
   * paid. A gauge; it falls to 0 within about a second of the store answering again.
   */
  public static final String INVALIDATIONS_OWED = "cache.invalidations.owed";

  /**
   * A gauge per store node, tagged {@code node=<host:port>} ({@code node=store} for a store that
   * names no nodes): 1 while the node's operations fail at once because it stopped answering
   * (its breaker is open; reads of its keys load without waiting), 0 while they are sent. A node
   * first used after the meters were bound has no gauge. Alert on it: a node at 1 for longer
   * than a few seconds is hung or down.
   */
  public static final String STORE_NODE_OUT = "cache.store.node.out";

  /**
   * Store operations that failed at once without being sent, because their node had stopped
   * answering: what the breaker saved the callers from waiting.
   */
  public static final String STORE_REJECTED = "cache.store.rejected";

  /**
   * Loads started for reads that failed on the store: the database's load while the store is
   * out (a subset of {@link #LOADS}).
   */
  public static final String OUTAGE_LOADS = "cache.outage.loads";

  private SustainableCacheMeters() {}
}
