package io.sustainablecache;

import io.sustainablecache.spi.CacheStore;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A demand-fill cache over a shared memcached or ARCUS store that refreshes hot entries before
 * they expire, so that callers never wait for a reload after warm-up and the database sees about
 * one load per key per TTL period instead of a stampede.
 *
 * <p>Each value is stored in an envelope with the time it was loaded, its logical expiry and the
 * measured load time. On every read the {@link RefreshPolicy} decides whether to refresh early;
 * the default {@linkplain RefreshPolicy#sustainable() sustainable policy} does so in the
 * background with per-key deduplication. The item's physical expiry on the server is longer than
 * its logical TTL by a grace period, so the server's one-second expiry tick never removes an item
 * before the cache has had the chance to refresh it.
 *
 * <pre>{@code
 * SustainableCache<String> cache = SustainableCache.builder(ArcusStore.of(arcusClient))
 *     .namespace("user")
 *     .ttl(Duration.ofSeconds(30))
 *     .codec(ValueCodec.utf8())
 *     .build();
 * String name = cache.get("42", key -> userRepository.findName(key));
 * }</pre>
 *
 * <h2>Absent values</h2>
 * A loader returns {@code null} (an asynchronous one completes with {@code null}; a bulk loader
 * leaves the key out of its map) when there is no value for a key. The cache remembers that for
 * {@link SustainableCacheBuilder#noValueTtl noValueTtl} like any other entry, so requests for ids
 * that do not exist stop reaching the database. {@link #find} returns such a key as empty; {@link
 * #get}, whose result is never {@code null}, throws {@link CacheLoadException}. The peeks, which
 * never load: {@link #getIfPresent} answers empty for it as for nothing cached, and {@link
 * #lookup} tells the two apart ({@link Lookup.NoValue}, {@link Lookup.NotCached}). {@link
 * #putNoValue} caches "no value" without a load.
 *
 * <h2>Loads</h2>
 * A key is loaded at most once at a time in this JVM: concurrent misses share one loader call,
 * and a miss that finds a background refresh of its key running waits for that refresh. A load
 * that does not finish within {@link SustainableCacheBuilder#loadTimeout loadTimeout} releases
 * its key: its waiting callers fail with {@link CacheLoadException}, the next caller starts a new
 * load, and the late result is not written. A loader that calls back into the cache for the key
 * it is loading fails with {@link IllegalStateException} instead of deadlocking.
 *
 * <h2>Invalidation</h2>
 * {@link #invalidate} replaces the item with a short-lived tombstone rather than deleting it, and
 * every write of a load is conditional on the version it read before loading, so a load that
 * began before an invalidation, in this JVM or on another host, can never write its result
 * afterwards; and a read that starts after {@code invalidate} returned never receives a value
 * loaded from a read that began before it.
 *
 * <h2>Calls on the store's threads</h2>
 * A store's futures complete on threads that serve every operation of its client: a memcached
 * client's I/O thread (where dependent actions of the {@code *Async} methods' futures run, and
 * with them an application's callbacks or Spring's reactive caching) and the adapter's deadline
 * threads; the cache's timers run on the {@linkplain Scheduler#systemScheduler() shared
 * scheduler}'s thread. A synchronous method called on such a thread (one the store names with
 * {@link CacheStore#isCompletionThread}, or the shared scheduler's) never waits there, since the
 * answer it would wait for can only come from that thread once it has returned:
 * <ul>
 *   <li><b>Reads</b> ({@link #get}, {@link #find}, {@link #getAll}, {@link #getIfPresent},
 *       {@link #lookup}, {@link #getAllIfPresent}, {@link #peekAll}) answer from the near
 *       cache, and otherwise do not read the store:
 *       as after a failed read (a store error, counted and logged), a peek answers nothing and a
 *       loader runs on this thread, its value returned and not written. A key whose load another
 *       thread is running fails with {@link CacheLoadException} rather than wait for it.</li>
 *   <li><b>Writes</b> ({@link #put}, {@link #putNoValue}, {@link #putIfAbsent}, {@link
 *       #invalidate}, {@link #invalidateAll}) are issued and not awaited: the method returns once
 *       the change is on its way, and promises only what an awaited change promises once it
 *       completed, from when it completes (this instance's near cache and the others' follow its
 *       record in the invalidation log, as for an awaited change). A failure known before it
 *       returns is thrown; a later one cannot be: it is counted ({@link
 *       CacheStats#storeErrorCount()}, {@code near_record_failure}) and logged
 *       at WARN (rate-limited). {@link #putIfAbsent} then answers empty without knowing whether
 *       the value was stored.</li>
 *   <li>{@link #close()} waits neither for running refreshes nor for the writes in flight;
 *       building a cache with a near cache does not wait for its first poll.</li>
 * </ul>
 * The asynchronous methods never wait on any thread.
 *
 * <p><b>Thread-safety:</b> implementations are thread-safe. <b>Nulls:</b> no method accepts
 * {@code null} or returns {@code null}. <b>Keys</b> are the caller's keys; the cache prefixes them
 * with its namespace and rejects (or, with {@link KeyPolicy#HASH}, hashes) keys the store cannot
 * hold.
 *
 * <p><b>Implementations:</b> this library's; a test double or a decorator may implement it too,
 * but later releases may add methods to it (with default implementations where they can).
 *
 * @param <V> the value type
 */
public interface SustainableCache<V> extends AutoCloseable {

  /**
   * Starts building a cache over a store. Values are byte arrays until {@link
   * SustainableCacheBuilder#codec} chooses another type.
   *
   * @param store the store adapter, e.g. {@code ArcusStore.of(client)}; the cache does not own or
   *     close it
   * @return a new builder
   * @throws NullPointerException if {@code store} is {@code null}
   */
  static SustainableCacheBuilder<byte[]> builder(CacheStore store) {
    return new SustainableCacheBuilder<>(store);
  }

  /**
   * Returns the cached value for {@code key}, loading it on a miss.
   *
   * <ul>
   *   <li><b>Hit:</b> the cached value is returned; the refresh policy may schedule an early
   *       refresh (SUS, in the background) or recompute on this thread (PER).</li>
   *   <li><b>Miss</b> (absent, invalidated, not a valid envelope, or expired under a policy that
   *       does not serve stale values): {@code loader} is called on this thread, the result is
   *       returned and written to the store without waiting for the write. Concurrent misses of
   *       one key in this JVM share one loader call.</li>
   *   <li><b>Store failure</b> (server down, timeout): treated as a miss; the caller still gets
   *       the loaded value and the error is counted, never thrown.</li>
   * </ul>
   *
   * @param key the caller's key: non-empty, printable ASCII without spaces, short enough for the
   *     store once namespaced
   * @param loader computes the value on a miss or refresh; returns {@code null} when there is none
   * @return the cached or loaded value, never {@code null}
   * @throws IllegalArgumentException if the key is empty, too long or has characters memcached
   *     cannot hold
   * @throws NullPointerException if an argument is {@code null}
   * @throws CacheLoadException if the value had to be loaded and the loader failed or timed out,
   *     if the key's last load failed moments ago (see {@link
   *     SustainableCacheBuilder#failureBackoff}), or if there is no value for the key
   * @throws IllegalStateException if called by the loader of the same key (a recursive load)
   */
  V get(String key, Loader<? extends V> loader);

  /**
   * Like {@link #get}, but a key without a value is returned as empty instead of failing.
   *
   * @param key the caller's key, as for {@link #get}
   * @param loader computes the value on a miss or refresh; returns {@code null} when there is none,
   *     which is cached for {@link SustainableCacheBuilder#noValueTtl noValueTtl}
   * @return the value, or empty if there is none
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if an argument is {@code null}
   * @throws CacheLoadException if the value had to be loaded and the loader failed or timed out
   * @throws IllegalStateException if called by the loader of the same key (a recursive load)
   */
  Optional<V> find(String key, Loader<? extends V> loader);

  /**
   * The asynchronous form of {@link #get}: the same decisions, with a loader that returns a
   * {@link java.util.concurrent.CompletionStage}. Neither the store read nor the load blocks the
   * calling thread; a hit completes the future on the thread that received the store's answer.
   *
   * @param key the caller's key, as for {@link #get}
   * @param loader starts loading the value on a miss or refresh
   * @return a future completing with the value, or exceptionally with a {@link
   *     CacheLoadException} as {@link #get} throws it; cancelling it does not cancel a load other
   *     callers share
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if an argument is {@code null}
   */
  CompletableFuture<V> getAsync(String key, AsyncLoader<? extends V> loader);

  /**
   * The asynchronous form of {@link #find}.
   *
   * @param key the caller's key, as for {@link #get}
   * @param loader starts loading the value on a miss or refresh; its stage completes with {@code
   *     null} when there is no value
   * @return a future of the value or of empty, or failing as {@link #getAsync} does
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if an argument is {@code null}
   */
  CompletableFuture<Optional<V>> findAsync(String key, AsyncLoader<? extends V> loader);

  /**
   * Returns the values of several keys: one bulk read from the store for all of them, the
   * refresh decision per key, and <b>one</b> loader call for all the keys that missed. Keys whose
   * load is already running in this JVM are joined, not loaded twice. Keys found in their refresh
   * window are refreshed together in the background, in one bulk loader call. Writes are issued
   * without waiting for each other.
   *
   * @param keys the caller's keys, as for {@link #get}; duplicates are read once
   * @param loader loads the keys that missed, all at once; keys it leaves out of its map have no
   *     value (cached as "no value")
   * @return the keys that have a value, with their values, in the iteration order of {@code
   *     keys}; keys without a value are left out
   * @throws IllegalArgumentException if a key is invalid
   * @throws NullPointerException if an argument or a key is {@code null}
   * @throws CacheLoadException if values had to be loaded and the loader failed or timed out
   */
  Map<String, V> getAll(Collection<String> keys, BulkLoader<? extends V> loader);

  /**
   * The asynchronous form of {@link #getAll}.
   *
   * @param keys the caller's keys, as for {@link #get}
   * @param loader starts loading the keys that missed
   * @return a future of the map {@link #getAll} returns, or failing as it throws
   * @throws IllegalArgumentException if a key is invalid
   * @throws NullPointerException if an argument or a key is {@code null}
   */
  CompletableFuture<Map<String, V>> getAllAsync(Collection<String> keys,
      AsyncBulkLoader<? extends V> loader);

  /**
   * Returns the cached value without loading or refreshing: the value if the item is present,
   * a valid envelope holding a value, and not logically expired (or expired within the grace
   * period, under a policy that serves stale values). Store failures are counted and read as
   * empty.
   *
   * @param key the caller's key, as for {@link #get}
   * @return the value, or empty
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if {@code key} is {@code null}
   */
  Optional<V> getIfPresent(String key);

  /**
   * {@link #getIfPresent} without blocking: the same answer, completed on the thread that
   * completes the store's read. A store failure is counted and completes the future empty; it
   * never fails it. Never loads, refreshes or waits for a load.
   *
   * @param key the caller's key, as for {@link #get}
   * @return a future of the value, or empty
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if {@code key} is {@code null}
   */
  CompletableFuture<Optional<V>> getIfPresentAsync(String key);

  /**
   * Peeks at the key like {@link #getIfPresent}, telling a key cached as having no value (a load
   * returned {@code null}, or {@link #putNoValue}) apart from a key with nothing cached: what
   * Spring's {@code Cache.get(key)} needs to return a cached {@code null}. Never loads, refreshes
   * or waits for a load; a store failure reads as nothing cached.
   *
   * @param key the caller's key, as for {@link #get}
   * @return {@link Lookup.Hit} with the cached value, {@link Lookup.NoValue} for a key cached
   *     as having no value, or {@link Lookup.NotCached}; never {@code null}
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if {@code key} is {@code null}
   */
  Lookup<V> lookup(String key);

  /**
   * {@link #lookup} without blocking, as {@link #getIfPresentAsync} is to {@link
   * #getIfPresent}.
   *
   * @param key the caller's key, as for {@link #get}
   * @return a future of the answer of {@link #lookup}; it never fails for a store failure
   *     (that reads as {@link Lookup.NotCached})
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if {@code key} is {@code null}
   */
  CompletableFuture<Lookup<V>> lookupAsync(String key);

  /**
   * {@link #getIfPresent} for several keys, with one bulk read: the near cache answers what it
   * may, and one {@code getsAll} reads the rest. Each key's answer, and how it is counted (a hit,
   * a miss, a near hit), is {@code getIfPresent}'s; never loads, refreshes or waits for a load. A
   * store failure is counted and reads as nothing for the keys the near cache did not answer.
   *
   * @param keys the caller's keys, as for {@link #get}; duplicates are read once
   * @return the keys that hold a value, with their values, in the iteration order of {@code
   *     keys}; keys without one (or cached as having none) are left out; never {@code null}
   * @throws IllegalArgumentException if a key is invalid
   * @throws NullPointerException if {@code keys} or a key is {@code null}
   */
  Map<String, V> getAllIfPresent(Collection<String> keys);

  /**
   * {@link #getAllIfPresent}, keeping what the read found so that values the caller then loads
   * for the keys that missed are cached without reading them again ({@link BulkPeek#putLoaded}).
   *
   * @param keys the caller's keys, as for {@link #get}; duplicates are read once
   * @return the values found and what was read; never {@code null}
   * @throws IllegalArgumentException if a key is invalid
   * @throws NullPointerException if {@code keys} or a key is {@code null}
   */
  BulkPeek<V> peekAll(Collection<String> keys);

  /**
   * Stores a value unconditionally, as if it had just been loaded (its load time is recorded as
   * zero). A load of the key in flight in this JVM will not overwrite it, and loads on other hosts
   * that read the item before this write cannot either.
   *
   * @param key the caller's key, as for {@link #get}
   * @param value the value; never {@code null}
   * @throws IllegalArgumentException if the key is invalid or the encoded value exceeds {@link
   *     SustainableCacheBuilder#maxValueSize}
   * @throws NullPointerException if an argument is {@code null}
   * @throws io.sustainablecache.spi.StoreException only with {@link
   *     SustainableCacheBuilder#failWritesWhenStoreDown} (or past the bound of invalidations owed,
   *     without a generation), if the store failed: the value may not be stored. By default a
   *     store failure returns normally, and the key's invalidation is owed (the value is not
   *     cached; the next read loads). With a near cache, also if the value was stored but
   *     recording the change in the near cache's log failed (counted as {@code
   *     near_record_failure}, {@link CacheStats#count}): other instances may then serve the
   *     replaced value from their near cache until it expires. On a thread of the store, see
   *     "Calls on the store's threads"
   */
  void put(String key, V value);

  /**
   * Caches that the key has no value, as a load returning {@code null} does: for {@code
   * noValueTtl}, {@link #get} fails with {@link CacheLoadException}, {@link #find} answers empty,
   * and neither calls its loader (a refresh may, as for a loaded absence). A load in flight in
   * this JVM will not overwrite it. With {@code noValueTtl} zero, absences are not cached and this
   * invalidates the key.
   *
   * @param key the caller's key, as for {@link #get}
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if {@code key} is {@code null}
   * @throws io.sustainablecache.spi.StoreException if the store failed and the cache fails such
   *     writes ({@link SustainableCacheBuilder#failWritesWhenStoreDown}; by default the key's
   *     invalidation is owed instead, see {@link #invalidate}); the write may not have happened
   */
  void putNoValue(String key);

  /**
   * Stores a value unless the key holds a live value already (memcached {@code add}; an
   * invalidated, absent-marked, expired or corrupt entry counts as no value). A key under a
   * {@linkplain #fence write fence} is not written (a transaction is changing its data, and the
   * value offered may predate the change): empty is returned, as for a value stored and at once
   * invalidated, and {@code skipped_write} counts it.
   *
   * @param key the caller's key, as for {@link #get}
   * @param value the value; never {@code null}
   * @return empty if {@code value} was stored (or skipped under a fence), otherwise the value the
   *     key holds
   * @throws IllegalArgumentException if the key is invalid or the encoded value exceeds {@link
   *     SustainableCacheBuilder#maxValueSize}
   * @throws NullPointerException if an argument is {@code null}
   * @throws io.sustainablecache.spi.StoreException if the store failed; the value may not be
   *     stored
   */
  Optional<V> putIfAbsent(String key, V value);

  /**
   * Caches a value the caller loaded itself, as a load of the cache would: only if nothing
   * changed the key since the caller's read of the source began. Made for callers whose read of
   * the cache and whose load are separate steps, such as Hibernate's second-level cache. The
   * value is stored (memcached {@code add}, or {@code cas} over what the key holds) unless the
   * key holds
   * <ul>
   *   <li>a live value (the first load's value stays, as with {@link #putIfAbsent});</li>
   *   <li>a {@linkplain #fence write fence}: a transaction is changing the data;</li>
   *   <li>a tombstone or cached absence written less than {@link
   *       SustainableCacheBuilder#maxClockSkew maxClockSkew} before {@code readStart}, or after
   *       it: an {@link #invalidate}, or a fence's release, that may have followed a commit the
   *       caller's read did not see.</li>
   * </ul>
   * So a value read before a fenced transaction committed is never cached after the fence's
   * release, on any host, as long as the release's tombstone is in the store (it lives longer
   * than the longest load, {@code max(ttl + grace, loadTimeout + 10 s)}). A caller whose read
   * began before the change but after the tombstone expired is not fenced: keep reads shorter
   * than that. Loads of this JVM in flight are voided, as by {@link #put}.
   *
   * @param key the caller's key, as for {@link #get}
   * @param value the value loaded; never {@code null}
   * @param readStart when the caller's read of the source began (no later than its first
   *     statement; a transaction's start is safe), on this host's wall clock
   * @return whether the value was stored; {@code false} also when the key kept changing between
   *     this method's read and its write (3 attempts), or, on a thread that delivers the store's
   *     answers, when the write had not completed at once
   * @throws IllegalArgumentException if the key is invalid or the encoded value exceeds {@link
   *     SustainableCacheBuilder#maxValueSize}
   * @throws NullPointerException if an argument is {@code null}
   * @throws io.sustainablecache.spi.StoreException if the store failed; the value may or may not
   *     be stored
   */
  boolean putLoaded(String key, V value, Instant readStart);

  /**
   * {@link #putLoaded(String, Object, Instant)} with a start that may carry a reading of the
   * cache's ticker ({@link ReadStart#now}): then a tombstone or absence that this instance saw in
   * the store (through a {@code putLoaded} it kept out) at a ticker reading before {@code
   * readStart} no longer keeps the value out, however recent its time: that very item (the same
   * CAS token) was in the store before the caller's read began, so the change it marks was made
   * before that read, which saw it. The write is conditional on that item ({@code cas}), so a
   * change after it still keeps the value out. A key whose change others keep reading is then
   * cached again after one more read instead of after {@code maxClockSkew}; live values and
   * fences keep values out as before. A start without a ticker reading, or with another ticker's,
   * is compared by its instant only, as {@link #putLoaded(String, Object, Instant)} does.
   *
   * @param key the caller's key, as for {@link #get}
   * @param value the value loaded; never {@code null}
   * @param readStart when the caller's read of the source began (no later than its first
   *     statement; a transaction's start is safe)
   * @return as {@link #putLoaded(String, Object, Instant)}
   * @throws IllegalArgumentException if the key is invalid or the encoded value exceeds {@link
   *     SustainableCacheBuilder#maxValueSize}
   * @throws NullPointerException if an argument is {@code null}
   * @throws io.sustainablecache.spi.StoreException if the store failed; the value may or may not
   *     be stored
   */
  default boolean putLoaded(String key, V value, ReadStart readStart) {
    return putLoaded(key, value, java.util.Objects.requireNonNull(readStart, "readStart")
        .instant());
  }

  /**
   * Removes the cached value, typically after the source data changed. When this method returns,
   * no read that starts afterwards, on any host, can receive a value loaded before the call: the
   * item is replaced by a tombstone, loads in flight in this JVM are released (callers already
   * waiting for them still get their result, but it is not written), and writes of loads in
   * flight on other hosts fail their compare-and-set.
   *
   * @param key the caller's key, as for {@link #get}
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if {@code key} is {@code null}
   * @throws io.sustainablecache.spi.StoreException only if the store failed and the cache fails
   *     such writes ({@link SustainableCacheBuilder#failWritesWhenStoreDown}), or already owes
   *     10,000 invalidations and has no generation to fall back on: the item may still be there.
   *     By default a store failure (or no answer) returns normally: the invalidation is owed,
   *     written before this instance reads the key from the store again and as soon as the store
   *     answers (other instances may serve the old item until then; counted in
   *     {@code unprotected_write})
   */
  void invalidate(String key);

  /**
   * Removes every entry of this cache's namespace. Loads in flight in this JVM are released and
   * not written.
   *
   * <p>By default (a cache with a namespace over a store with counters: ARCUS and plain
   * memcached alike), it starts a new generation of the namespace and sends no {@code
   * flush_prefix}: entries of the old one are misses, on this instance once this returned, on
   * the others within {@link SustainableCacheBuilder#invalidateAllBound} (1 s), or the near
   * cache's bound, while their reads of the generation succeed (near caches stop serving after
   * the bound either way); a load that started in the old generation anywhere is not written in
   * the new one, and a {@linkplain #fence write fence} stays standing. Without a generation
   * ({@code invalidateAllBound} zero and no near cache, or a store without counters), it is
   * ARCUS's {@code flush_prefix} of the namespace, which plain memcached does not have; loads in
   * flight on other hosts are then not fenced (one that completes after the flush may write its
   * value) and fences are deleted with the rest.
   *
   * @throws IllegalStateException if the cache has neither a namespace nor a near cache
   *     (flushing would remove other caches' entries)
   * @throws UnsupportedOperationException if the cache has no generation ({@code
   *     invalidateAllBound} set to zero, or a store without counters) and the store cannot remove
   *     keys by prefix (plain memcached)
   * @throws io.sustainablecache.spi.StoreException if the store failed: it may or may not have
   *     happened
   */
  void invalidateAll();

  /**
   * Fences a key whose data a database transaction is about to change: call it inside the
   * transaction, before the change is committed (before the row is updated is simplest), and
   * complete the returned fence once the transaction ended: {@link WriteFence#committed()} (the
   * key is invalidated), {@link WriteFence#committed(Object)} (the key caches the committed
   * value) or {@link WriteFence#rolledBack()}. Spring's cache manager does this for {@code
   * evict} and {@code put} inside a transaction.
   *
   * <pre>{@code
   * try (Connection c = dataSource.getConnection()) {
   *   c.setAutoCommit(false);
   *   WriteFence<User> fence = users.fence("user:42");
   *   try {
   *     update(c, 42, newName);
   *     fence.beforeCommit();
   *     c.commit();
   *   } catch (SQLException | RuntimeException e) {
   *     c.rollback();
   *     fence.rolledBack();
   *     throw e;
   *   }
   *   fence.committed();
   * }
   * }</pre>
   *
   * <p>While the fence stands, on every instance of the namespace: until {@link
   * WriteFence#beforeCommit()}, reads of the key are answered with the value the fence replaced
   * (the database's committed data: a write costs the database no load while its transaction
   * runs; the transaction itself reads its change from the database, not from here), and for
   * at most 100 ms after it (the commit window: the commit and the release are concurrent with
   * them); from then until the release they load from their loader and cache nothing; no load
   * that read the key
   * before the fence can write; near caches drop the key within their bound. {@code invalidate}
   * during a transaction leaves a window: between the commit and the deferred evict, and for a
   * load that read the data before the commit and writes after the evict; the fence closes both,
   * on every host. Each writer's hold ends at the latest {@link
   * SustainableCacheBuilder#fenceTimeout} (default 30 s) after it placed it, so a writer that dies
   * pins no key. See {@link WriteFence} for several writers and for failures around the commit,
   * and {@code docs/design.md}, "Writes inside database transactions".
   *
   * <p>A plain {@link #invalidate} or {@link #put} while a fence stands replaces it (the key is
   * then not fenced any more, and the fence's release writes a tombstone). {@link #invalidateAll}
   * as a new generation (the default; see {@link SustainableCacheBuilder#invalidateAllBound})
   * leaves it standing; ARCUS's {@code flush_prefix} (a cache without a generation) deletes it
   * like every item of the namespace: loads may then cache the pre-commit row until the release,
   * which writes a tombstone.
   *
   * @param key the caller's key, as for {@link #get}
   * @return the fence, to be completed exactly once; never {@code null}
   * @throws IllegalArgumentException if the key is invalid
   * @throws NullPointerException if {@code key} is {@code null}
   * @throws IllegalStateException if called on a thread that delivers the store's answers (the
   *     fence must be in place before the transaction goes on, and such a thread may not wait)
   * @throws io.sustainablecache.spi.StoreException only with {@link
   *     SustainableCacheBuilder#failWritesWhenStoreDown} (or past the bound of invalidations owed,
   *     without a generation), if the fence could not be placed (or recorded in the near cache's
   *     log): the key is not protected, so the transaction should not change its data; a fence
   *     that landed all the same expires after the fence timeout. By default such a fence is
   *     returned unplaced, and its commit owes the key's invalidation (see {@link #invalidate})
   */
  WriteFence<V> fence(String key);

  /**
   * A snapshot of the counters since the cache was built: the headline ones by accessor, every
   * one by name ({@link CacheStats#count}). Cheap (no store call), so a metrics scrape may call
   * it per meter.
   *
   * @return an immutable snapshot, never {@code null}
   */
  CacheStats stats();

  /**
   * The store's nodes as this cache's breakers see them ({@link
   * SustainableCacheBuilder#storeProbeInterval}): each node's id ({@code host:port}, or {@code
   * "store"} for a store that names no nodes) and whether its operations fail at once now,
   * because it stopped answering and has not answered a probe since ({@code true}). Nodes are
   * listed from the cache's start on, and a node that joins later from its first operation.
   * Thread-safe; a snapshot, taken without waiting.
   *
   * @return a snapshot, a copy the caller may keep; empty when the breakers are off (the default
   *     of an implementation without them)
   */
  default Map<String, Boolean> storeNodeStates() {
    return Map.of();
  }

  /**
   * Stops scheduling background refreshes, shuts down the refresh executor if the cache owns it,
   * and waits until the store has answered the writes this cache issued, so that the client can
   * be shut down right after this returns without dropping any of them. In order:
   * <ol>
   *   <li>Background refreshes stop; running ones are waited for at most {@link
   *       SustainableCacheBuilder#closeTimeout closeTimeout}, then interrupted and waited for
   *       once more as long (they issue writes too, so they come first).</li>
   *   <li>The store writes and lease releases still on their way are waited for, at most {@code
   *       closeTimeout} again: the write-backs of loads (also one handed to a caller's refresh
   *       executor and not run yet), the fleet lease's deletes and failure markers, {@code put}s
   *       and invalidations that nobody awaited (made on a store thread, or {@link
   *       BulkPeek#putLoaded}), near-cache log records, and write fences' releases in progress.
   *       A release waiting out its back-off after a store failure is retried at once; if that
   *       fails too it is given up, as from then on is every release that fails (its fence stands
   *       until the writer's hold ends, at most {@code fenceTimeout} after it was placed), so a
   *       store that is down costs {@code close()} one more attempt, not the back-off. Writes
   *       issued while it waits are waited for as well. A load still running is not waited
   *       for: its write, issued when it ends, may come after this returns.</li>
   * </ol>
   * The bound is measured on the cache's {@linkplain SustainableCacheBuilder#scheduler
   * scheduler} (so on an injected ticker in tests), backed by the wall clock. What the store has
   * not answered by then is left: counted ({@code unfinished_at_close}) and
   * logged at WARN with the number. A write that fails is not waited for again and not thrown:
   * it was counted and logged where it failed. So {@code close()} throws nothing for a store
   * that is slow, down or failing; with nothing in flight it returns at once.
   *
   * <p>Thread-safe and idempotent: every call waits for what is in flight at the time (so a
   * second call after more writes waits for those). On a thread that delivers the store's
   * answers it waits for neither refreshes nor writes (see "Calls on the store's threads").
   * Reads, writes and invalidations keep working afterwards, without background refreshes. The
   * store is not closed: shut its client down after this returns.
   */
  @Override
  void close();
}
