package io.sustainablecache.spring;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.CacheLoadException;
import io.sustainablecache.LoadingSustainableCache;
import io.sustainablecache.Lookup;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.spi.StoreException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.cache.Cache;
import org.springframework.cache.support.SimpleValueWrapper;

/**
 * A Spring {@link Cache} over a {@link SustainableCache}. Create it through {@link
 * SustainableCacheManager}.
 *
 * <h2>Use {@code @Cacheable(sync = true)}</h2>
 * With {@code sync = true} Spring calls {@link #get(Object, Callable)} and hands over the annotated
 * method as the loader: this cache calls it on a miss (once per key at a time in this JVM) and
 * <b>again in the background shortly before the entry expires</b>, so callers keep getting the
 * cached value and the method runs about once per TTL period per key. <b>Without {@code sync}</b>
 * Spring calls {@link #get(Object)}, runs the method itself on a miss and then {@link #put}s the
 * result: the cache never sees the method, so it cannot refresh ahead, every expiry is a miss
 * that waits for the method, and concurrent misses each run it. Methods returning {@code
 * CompletableFuture} with {@code sync = true} go through {@link #retrieve(Object, Supplier)},
 * with the same refresh-ahead.
 *
 * <h2>Mapping</h2>
 * <table>
 *   <caption>Spring operations and what they do</caption>
 *   <tr><th>Spring</th><th>here</th></tr>
 *   <tr><td>{@code get(key, Callable)}</td><td>{@link SustainableCache#find}: the callable is the
 *       loader; a {@code null} result is cached as "no value" for the no-value TTL and returned as
 *       {@code null} (without {@code allowNullValues}: {@link IllegalArgumentException}); a
 *       loader exception (or a timeout, or a failure remembered during the back-off) is thrown
 *       as {@link Cache.ValueRetrievalException} whose cause is the loader's exception</td></tr>
 *   <tr><td>{@code retrieve(key, Supplier)}</td><td>{@link SustainableCache#findAsync}</td></tr>
 *   <tr><td>{@code get(key)}, {@code get(key, Class)}, {@code retrieve(key)}</td><td>a peek
 *       ({@link SustainableCache#lookup}): no load, no refresh. With {@code
 *       allowNullValues} (the default) a cached "no value" is a {@code ValueWrapper} holding
 *       {@code null}, and {@code retrieve(key)}'s future holds a {@code ValueWrapper}; without,
 *       "no value" reads as a miss and the future holds the plain value. {@code retrieve(key)}
 *       never blocks its caller</td></tr>
 *   <tr><td>{@code put(key, value)}</td><td>{@link SustainableCache#put}; {@code put(key, null)}
 *       caches "no value" for the no-value TTL ({@link SustainableCache#putNoValue}), so the old
 *       value does not outlive the {@code null} (without {@code allowNullValues}: {@link
 *       IllegalArgumentException}). Store failures are thrown with a near cache, else
 *       counted (see below). <b>In a transaction</b>: {@link SustainableCache#fence} at once,
 *       {@link io.sustainablecache.WriteFence#committed(Object)} after the commit ({@code
 *       put(key, null)}: {@link io.sustainablecache.WriteFence#committed()}, an
 *       invalidation)</td></tr>
 *   <tr><td>{@code putIfAbsent(key, value)}</td><td>{@link SustainableCache#putIfAbsent}
 *       (memcached {@code add}); a cached {@code null} counts as no value and is replaced. With
 *       a {@code null} value: the cached value if there is one, otherwise "no value" is cached
 *       (a peek then a write, not atomic)</td></tr>
 *   <tr><td>{@code evict}, {@code evictIfPresent}</td><td>{@link SustainableCache#invalidate},
 *       immediate; {@code evictIfPresent} returns {@code false} (presence is not
 *       determined). <b>In a transaction</b>: {@link SustainableCache#fence} at once, {@link
 *       io.sustainablecache.WriteFence#committed()} after the commit</td></tr>
 *   <tr><td>{@code clear}, {@code invalidate}</td><td>{@link SustainableCache#invalidateAll}: a
 *       new generation of the namespace on any store with counters (both adapters; the
 *       core's default, {@code invalidate-all-bound=1s}, unless a spec sets it to zero), seen
 *       here when it returns and by the other instances within the bound; without a
 *       generation, the store's prefix flush, or an {@link UnsupportedOperationException} that
 *       says why.
 *       <b>In a transaction</b>: at once and again after the commit</td></tr>
 *   <tr><td>{@code evict}, {@code put}, <b>in a transaction that rolled back</b></td><td>{@link
 *       io.sustainablecache.WriteFence#rolledBack()}: the fence is removed, the next read loads
 *       the unchanged data</td></tr>
 * </table>
 *
 * <p><b>Keys</b> are encoded by the manager's {@link KeyEncoder} and stored with {@link
 * io.sustainablecache.KeyPolicy#HASH}. <b>Values</b> are encoded by the cache's codec; a {@code
 * put} of a value of the wrong type (when the spec names a value type) fails with {@link
 * IllegalArgumentException}. Failures of {@code evict} and {@code clear} surface as {@link
 * StoreException}, which Spring hands to its {@code CacheErrorHandler}: the caller must learn
 * that an old value may still be served. So do store failures of {@code put} and {@code
 * putIfAbsent} on a cache with a near cache (its spec's settings {@code near-cache}; one that a
 * {@link CacheSpec#customizer() customizer} adds on the builder is not seen here): a write that
 * failed may have landed, or landed without its record in the near cache's invalidation log
 * (counted in {@code near_record_failure}), and then other
 * instances may serve the value it replaced past the near cache's bound. Without a near cache
 * they are counted ({@link io.sustainablecache.CacheStats#storeErrorCount()}), logged at DEBUG
 * and not thrown: the value is simply not cached, as when a read fails.
 *
 * <h2>Inside database transactions</h2>
 * Unless the manager was built with {@link SustainableCacheManager.Builder#transactionAware
 * transactionAware(false)}, and if spring-tx is on the class path: inside an active,
 * non-read-only Spring transaction synchronization ({@code @Transactional}, {@code
 * TransactionTemplate}, with any {@code PlatformTransactionManager}), {@code evict}, {@code
 * evictIfPresent} and {@code put} fence their key at once ({@link SustainableCache#fence}: until
 * the commit, reads on every instance are answered with the value the fence replaced, which is
 * the database's committed row, without a load, and so they are for at most 100 ms after
 * right before the commit ({@link io.sustainablecache.WriteFence#beforeCommit}: the commit
 * window, concurrent with the commit); past it, until the fence is released, they load without
 * caching; no load in flight can write) and complete after the transaction: after a commit the
 * key is invalidated, or holds the value put; after a rollback the fence is removed. So a write
 * costs the database one load of the new row, a read that loads the old row between the change
 * and the commit, on any instance, cannot leave it cached, and once the write returned neither
 * the writer nor anyone else reads the old value (other instances with a near cache: within its
 * bound; a release that did not land: within the commit window, see {@link
 * io.sustainablecache.WriteFence}). <b>The transaction reads its own changes</b>: in it, a read of a key it changed misses
 * (a {@code sync} read calls the loader without the cache), so the method reads the database's
 * uncommitted row, not the cached one. When memcached cannot be reached (fails or does not answer),
 * by default the transaction commits all the same: the fence was not placed or could not be
 * marked committing, and the key's invalidation is owed and written as soon as the store answers
 * again (see {@link io.sustainablecache.SustainableCacheBuilder#failWritesWhenStoreDown}); with
 * the setting {@code fail-writes-when-store-down=true}, a fence that cannot be marked
 * committing before the commit throws from Spring's {@code beforeCommit} ({@link StoreException}), and
 * the transaction rolls back. Several changes of one key in one transaction fence it once; the last one decides what
 * the commit writes; after a {@code clear} in the transaction every key it changed is
 * invalidated after the commit, whatever came last. A
 * {@code REQUIRES_NEW} transaction completes its own changes at its own end; a nested
 * (savepoint) one's complete with the outer transaction, and a rollback to a savepoint turns
 * the changes made since it into invalidations (never a value the database may not commit). With that setting, a fence that cannot be placed is thrown ({@link
 * StoreException}, to Spring's {@code CacheErrorHandler}): the key is not protected. Completing never throws: the
 * store is retried in the background until the fence would expire (see {@link
 * io.sustainablecache.WriteFence}). Outside a transaction, in a read-only one, and for {@code
 * putIfAbsent} (conditional), writes act at once. Reactive (R2DBC) transactions are not seen:
 * the {@link Cache} API is not reactive, so writes there act at once, unfenced, as outside a
 * transaction.
 *
 * <h2>Calls on the store's threads</h2>
 * Every method returns promptly on a memcached client's I/O thread, as {@link SustainableCache}
 * does there (its "Calls on the store's threads"): this is where Spring's {@code put} after a
 * non-{@code sync} {@code @Cacheable} method returning {@code Mono}, {@code Flux} or {@code
 * CompletableFuture} runs. There a {@code put} is issued and not awaited; its failure cannot be
 * thrown and is counted and logged at WARN instead.
 *
 * <p>Thread-safe. {@code null} keys are rejected with {@link NullPointerException}.
 */
public final class SustainableSpringCache implements Cache {

  private static final Logger LOG = LoggerFactory.getLogger(SustainableSpringCache.class);

  private final String name;
  private final SustainableCache<Object> cache;
  private final KeyEncoder keys;
  private final Class<?> valueType;
  private final boolean allowNullValues;
  /** Whether the cache has a near cache: then a failed write may break its bound. */
  private final boolean nearCache;
  /** Writes inside transactions; {@code null} if not transaction-aware (or no spring-tx). */
  private final TransactionalWrites transactional;
  /** The loading cache, if a bulk loader was registered for this cache; else {@code null}. */
  private final LoadingSustainableCache<Object> loading;
  /** The registered bulk loader, for reads of keys a transaction changed; or {@code null}. */
  private final BulkCacheLoader<?, ?> loader;
  /** The type of the ids the registered bulk loader takes; {@code null} without one. */
  private final Class<?> loaderKeyType;

  SustainableSpringCache(String name, SustainableCache<Object> cache, KeyEncoder keys,
      Class<?> valueType, boolean allowNullValues, boolean nearCache, boolean transactionAware,
      SustainableCacheManager.KeyedLoader<?> loader) {
    this.name = requireNonNull(name, "name");
    this.cache = requireNonNull(cache, "cache");
    this.keys = requireNonNull(keys, "keys");
    this.valueType = valueType;
    this.allowNullValues = allowNullValues;
    this.nearCache = nearCache;
    this.transactional = transactionAware ? new TransactionalWrites(name, cache) : null;
    this.loading = loader == null ? null : (LoadingSustainableCache<Object>) cache;
    this.loader = loader == null ? null : loader.loader();
    this.loaderKeyType = loader == null ? null : loader.keyType();
  }

  /** The loading cache, if the key is one its bulk loader takes; else {@code null}. */
  private LoadingSustainableCache<Object> coalescing(Object key) {
    return loading != null && loaderKeyType.isInstance(key) ? loading : null;
  }

  /**
   * Whether this cache holds {@code null} values (see {@link
   * SustainableCacheManager.Builder#allowNullValues}).
   *
   * @return the manager's setting
   */
  public boolean isAllowNullValues() {
    return allowNullValues;
  }

  @Override
  public String getName() {
    return name;
  }

  /**
   * The underlying cache, for its {@link SustainableCache#stats()} and for calls of your own. It
   * does not encode keys: Spring's key {@code k} is the native key {@link #encodeKey
   * encodeKey(k)}, so a native key equal to an encoded Spring key addresses Spring's entry (with
   * the default {@link KeyEncoder#typeTagged()}, the native key {@code "s1:1"} is Spring's string
   * key {@code "1"}). Use {@code encodeKey} to reach Spring's entries on purpose, and keep entries
   * of your own in a cache of their own.
   *
   * @return the {@link SustainableCache}
   */
  @Override
  public SustainableCache<Object> getNativeCache() {
    return cache;
  }

  /**
   * The store key's source for a Spring key: what {@link SustainableCache} receives.
   *
   * @param key the Spring key
   * @return the encoded key
   */
  public String encodeKey(Object key) {
    return keys.encode(requireNonNull(key, "key"));
  }

  @Override
  public ValueWrapper get(Object key) {
    String encoded = encodeKey(key);
    return changedHere(encoded) ? null : wrapper(cache.lookup(encoded));
  }

  /**
   * Whether the current transaction changed the key (see the class comment): its reads miss, and
   * a loader is called without the cache, so that it reads the transaction's own change.
   */
  private boolean changedHere(String encoded) {
    return transactional != null && transactional.changed(encoded);
  }

  /**
   * What a peek found, as Spring reads it: {@code null} for nothing cached (and, without {@code
   * allowNullValues}, for a cached "no value"), otherwise a wrapper of the value or {@code null}.
   */
  private ValueWrapper wrapper(Lookup<Object> found) {
    if (found instanceof Lookup.Hit<Object> hit) {
      return new SimpleValueWrapper(hit.value());
    }
    return found instanceof Lookup.NoValue && allowNullValues
        ? new SimpleValueWrapper(null) : null;
  }

  @Override
  public <T> T get(Object key, Class<T> type) {
    String encoded = encodeKey(key);
    Object value = changedHere(encoded) ? null : cache.getIfPresent(encoded).orElse(null);
    if (value != null && type != null && !type.isInstance(value)) {
      throw new IllegalStateException("Cached value is not of required type ["
          + type.getName() + "]: " + value.getClass().getName());
    }
    @SuppressWarnings("unchecked")
    T result = (T) value;
    return result;
  }

  @Override
  public <T> T get(Object key, Callable<T> valueLoader) {
    requireNonNull(valueLoader, "valueLoader");
    String encoded = encodeKey(key);
    if (changedHere(encoded)) {
      try {
        return valueLoader.call();
      } catch (Exception e) {
        throw new ValueRetrievalException(key, valueLoader, e);
      }
    }
    LoadingSustainableCache<Object> coalescing = coalescing(key);
    try {
      return loaded(coalescing != null ? coalescing.find(encoded)
          : cache.find(encoded, ignored -> valueLoader.call()));
    } catch (CacheLoadException e) {
      throw new ValueRetrievalException(key, valueLoader, e.getCause() != null ? e.getCause() : e);
    }
  }

  /**
   * Reads many ids at once, with the same keys and entries as single-key {@code @Cacheable}
   * calls of this cache (an id here and a method's single parameter, or its {@code key}
   * expression, with the same value address the same entry, so each hits what the other cached):
   * <b>one</b> bulk read from the store for all of them, and <b>one</b> call of {@code loader}
   * for the ids that missed (ids whose load is already running in this JVM are joined). Ids that
   * were found are refreshed ahead of expiry as single-key reads are, in one background call of
   * {@code loader}. An id the loader leaves out is cached as "no value" and left out of the
   * answer, as a {@code @Cacheable} method's {@code null} is cached. Inside a transaction that
   * changed some of the ids (see the class comment), those are loaded without the cache, in a
   * second call of {@code loader}.
   *
   * <pre>{@code
   * Map<Long, Book> page = books.getAll(ids, repository::findAllByIdAsMap);
   * }</pre>
   *
   * <p>Blocks the calling thread for the read and the load; on a memcached client's I/O thread
   * it does not read the store and calls the loader (see the class comment).
   *
   * @param ids the ids; duplicates are read once; never {@code null}, nor any id
   * @param loader loads the ids that missed, all at once
   * @param <K> the type of the ids
   * @param <V> the type of the values
   * @return the ids that have a value, with their values, in the iteration order of {@code ids}
   * @throws NullPointerException if an argument or an id is {@code null}
   * @throws IllegalArgumentException if an id has no key encoding
   * @throws CacheLoadException if values had to be loaded and the loader failed or timed out (its
   *     exception is the cause)
   */
  public <K, V> Map<K, V> getAll(Collection<? extends K> ids,
      BulkCacheLoader<K, ? extends V> loader) {
    requireNonNull(loader, "loader");
    Map<K, String> encodedById = encodedById(ids);
    Map<String, K> idByEncoded = new HashMap<>(encodedById.size() * 2);
    encodedById.forEach((id, encoded) -> idByEncoded.put(encoded, id));
    return readAll(encodedById, keys -> cache.getAll(keys, asked -> {
      Map<K, String> askedIds = new LinkedHashMap<>(asked.size() * 2);
      for (String key : asked) {
        askedIds.put(idByEncoded.get(key), key);
      }
      return load(loader, askedIds);
    }), loader);
  }

  /**
   * As {@link #getAll(Collection, BulkCacheLoader)}, loading with the bulk loader registered for
   * this cache ({@link SustainableCacheManager.Builder#bulkLoader}): the misses are coalesced
   * with those of every other caller (a page larger than the cache's {@code coalesce} batch size
   * is split into several calls, run in parallel).
   *
   * @param ids the ids, of the registered loader's id type
   * @param <K> the type of the ids
   * @param <V> the type of the registered loader's values; not checked (as Spring's {@code
   *     Cache.get(Object)} result is cast by its caller): another type fails with a {@link
   *     ClassCastException} where a value is used
   * @return the ids that have a value, with their values, in the iteration order of {@code ids}
   * @throws IllegalStateException if no bulk loader was registered for this cache
   * @throws IllegalArgumentException if an id is not of the loader's id type
   * @throws NullPointerException if {@code ids} or an id is {@code null}
   * @throws CacheLoadException if values had to be loaded and the loader failed or timed out
   */
  public <K, V> Map<K, V> getAll(Collection<? extends K> ids) {
    if (loading == null) {
      throw new IllegalStateException("cache '" + name + "' has no bulk loader: register one"
          + " (SustainableCacheManager.Builder.bulkLoader) or pass one to getAll");
    }
    Map<K, String> encodedById = encodedById(ids);
    for (K id : encodedById.keySet()) {
      if (!loaderKeyType.isInstance(id)) {
        throw new IllegalArgumentException("cache '" + name + "' loads ids of type "
            + loaderKeyType.getName() + ", not " + id.getClass().getName());
      }
    }
    @SuppressWarnings("unchecked")
    BulkCacheLoader<K, V> registered = (BulkCacheLoader<K, V>) loader;
    return readAll(encodedById, loading::getAll, registered);
  }

  /**
   * The ids' values: the keys this transaction changed (see the class comment) loaded with
   * {@code loader} without the cache, the others read with {@code fromCache}.
   */
  private <K, V> Map<K, V> readAll(Map<K, String> encodedById,
      Function<Collection<String>, Map<String, Object>> fromCache,
      BulkCacheLoader<K, ? extends V> loader) {
    Map<K, String> changed = new LinkedHashMap<>();
    List<String> read = new ArrayList<>(encodedById.size());
    encodedById.forEach((id, encoded) -> {
      if (changedHere(encoded)) {
        changed.put(id, encoded);
      } else {
        read.add(encoded);
      }
    });
    Map<String, Object> found = read.isEmpty() ? Map.of() : fromCache.apply(read);
    Map<String, Object> own = changed.isEmpty() ? Map.of() : loadUncached(loader, changed);
    Map<K, V> values = new LinkedHashMap<>(encodedById.size() * 2);
    encodedById.forEach((id, encoded) -> {
      Object value = found.containsKey(encoded) ? found.get(encoded) : own.get(encoded);
      if (value != null) {
        @SuppressWarnings("unchecked")
        V v = (V) value;
        values.put(id, v);
      }
    });
    return values;
  }

  /** The keys a transaction changed: loaded without the cache, a failure as the cache's. */
  private <K> Map<String, Object> loadUncached(BulkCacheLoader<K, ?> loader,
      Map<K, String> encodedById) {
    try {
      return load(loader, encodedById);
    } catch (Exception e) {
      throw new CacheLoadException("cache '" + name + "': the bulk loader failed", e);
    }
  }

  /**
   * Calls a bulk loader for ids and answers by encoded key: the values of the ids asked for, an
   * id left out or mapped to {@code null} left out (no value), ids not asked for ignored.
   *
   * @param encodedById the ids to load, each with its encoded key
   */
  static <K> Map<String, Object> load(BulkCacheLoader<K, ?> loader, Map<K, String> encodedById)
      throws Exception {
    Map<K, ?> loaded = loader.loadAll(Collections.unmodifiableSet(encodedById.keySet()));
    if (loaded == null) {
      throw new NullPointerException("the bulk loader returned null instead of a map");
    }
    Map<String, Object> byKey = new HashMap<>(loaded.size() * 2);
    loaded.forEach((id, value) -> {
      String encoded = id == null ? null : encodedById.get(id);
      if (encoded != null && value != null) {
        byKey.put(encoded, value);
      }
    });
    return byKey;
  }

  private <K> Map<K, String> encodedById(Collection<? extends K> ids) {
    requireNonNull(ids, "ids");
    Map<K, String> encodedById = new LinkedHashMap<>(ids.size() * 2);
    for (K id : ids) {
      encodedById.computeIfAbsent(requireNonNull(id, "an id"), this::encodeKey);
    }
    return encodedById;
  }

  /**
   * Peeks without blocking. With {@code allowNullValues} the future holds a {@code ValueWrapper}
   * for a cached value, {@code null} included, as Spring's own caches answer; otherwise the plain
   * value. It holds {@code null} for a miss.
   */
  @Override
  public CompletableFuture<?> retrieve(Object key) {
    String encoded = encodeKey(key);
    if (changedHere(encoded)) {
      return CompletableFuture.completedFuture(null);
    }
    return cache.lookupAsync(encoded).thenApply(found -> {
      ValueWrapper wrapper = wrapper(found);
      return wrapper == null || allowNullValues ? wrapper : wrapper.get();
    });
  }

  @Override
  public <T> CompletableFuture<T> retrieve(Object key,
      Supplier<CompletableFuture<T>> valueLoader) {
    requireNonNull(valueLoader, "valueLoader");
    String encoded = encodeKey(key);
    if (changedHere(encoded)) {
      return stageOf(valueLoader);
    }
    LoadingSustainableCache<Object> coalescing = coalescing(key);
    CompletableFuture<Optional<Object>> found = coalescing != null ? coalescing.findAsync(encoded)
        : cache.findAsync(encoded, ignored -> stageOf(valueLoader));
    CompletableFuture<T> result = new CompletableFuture<>();
    found.whenComplete((value, failure) -> {
      if (failure == null) {
        try {
          result.complete(loaded(value));
        } catch (IllegalArgumentException e) {
          result.completeExceptionally(e);
        }
      } else {
        result.completeExceptionally(loaderFailure(failure));
      }
    });
    return result;
  }

  private <T> CompletableFuture<T> stageOf(Supplier<CompletableFuture<T>> valueLoader) {
    CompletableFuture<T> stage = valueLoader.get();
    if (stage == null) {
      throw new IllegalStateException("the value loader of cache '" + name
          + "' returned null instead of a CompletableFuture");
    }
    return stage;
  }

  /** The loader's own exception where there is one, as Spring's synchronous path reports it. */
  private static Throwable loaderFailure(Throwable failure) {
    Throwable t = failure;
    if (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof CacheLoadException && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /**
   * Stores the value. A store failure is counted as a store error ({@link
   * io.sustainablecache.CacheStats#storeErrorCount()}). Without a near cache it is logged at DEBUG,
   * not thrown: Spring calls this after the annotated method has answered, and a cache that
   * cannot store must not fail that request (reads during the same outage log a rate-limited
   * WARN). With a near cache it is thrown, for Spring's {@code CacheErrorHandler}: the write may
   * have landed unrecorded, and other instances may then serve the replaced value past the bound.
   * Inside a transaction (see the class comment) the key is fenced at once and gets the value
   * after the commit; {@code put(key, null)} there invalidates the key after the commit (the next
   * read loads, and caches the absence).
   *
   * @throws IllegalArgumentException if the value is not of the cache's value type
   * @throws StoreException with a near cache, if the store failed (see above); inside a
   *     transaction, if the fence could not be placed
   */
  @Override
  public void put(Object key, Object value) {
    String encoded = encodeKey(key);
    if (value == null) {
      checkNullAllowed();
    } else {
      checkType(value);
    }
    if (transactional == null || !transactional.put(encoded, value)) {
      store(encoded, value);
    }
  }

  /** Writes at once: the value, or "no value" for {@code null}; a store failure as {@link #put}. */
  private void store(String encoded, Object value) {
    try {
      if (value == null) {
        cache.putNoValue(encoded);
      } else {
        cache.put(encoded, value);
      }
    } catch (StoreException e) {
      swallowUnlessNear(e, "put");
    }
  }

  /**
   * Stores the value unless the key has one, at once, inside a transaction too (it is
   * conditional); a store failure is handled as {@link #put} does it (thrown with a near cache),
   * and otherwise answers {@code null} (nothing was cached).
   *
   * @throws StoreException with a near cache, if the store failed
   */
  @Override
  public ValueWrapper putIfAbsent(Object key, Object value) {
    String encoded = encodeKey(key);
    if (value == null) {
      checkNullAllowed();
      ValueWrapper existing = get(key);
      if (existing == null) {
        store(encoded, null);
      }
      return existing;
    }
    checkType(value);
    try {
      return cache.putIfAbsent(encoded, value).map(SimpleValueWrapper::new).orElse(null);
    } catch (StoreException e) {
      swallowUnlessNear(e, "putIfAbsent");
      return null;
    }
  }

  /** A write's store failure: thrown with a near cache (its bound may be broken), else logged. */
  private void swallowUnlessNear(StoreException e, String operation) {
    if (nearCache) {
      throw e;
    }
    LOG.debug("cache '{}': a {} failed; the value was not cached", name, operation, e);
  }

  /** A loaded value as Spring's loaders see it: {@code null} for "no value", if allowed. */
  @SuppressWarnings("unchecked")
  private <T> T loaded(Optional<Object> value) {
    if (value.isEmpty()) {
      checkNullAllowed();
    }
    return (T) value.orElse(null);
  }

  private void checkNullAllowed() {
    if (!allowNullValues) {
      throw new IllegalArgumentException("cache '" + name + "' is configured to not allow null"
          + " values but null was provided");
    }
  }

  private void checkType(Object value) {
    if (valueType != null && !valueType.isInstance(value)) {
      throw new IllegalArgumentException("cache '" + name + "' holds " + valueType.getName()
          + " values (its codec's type), not " + value.getClass().getName());
    }
  }

  /**
   * Invalidates the key: at once, or, inside a transaction (see the class comment), fenced at
   * once and invalidated after it.
   *
   * @throws StoreException if the store failed (the old value may still be served), or, inside a
   *     transaction, if the fence could not be placed
   */
  @Override
  public void evict(Object key) {
    String encoded = encodeKey(key);
    if (transactional == null || !transactional.evict(encoded)) {
      cache.invalidate(encoded);
    }
  }

  /**
   * Invalidates the key, as {@link #evict}.
   *
   * @param key the key
   * @return {@code false}: whether the key had a value is not determined
   */
  @Override
  public boolean evictIfPresent(Object key) {
    evict(key);
    return false;
  }

  /**
   * Removes every entry of this cache's namespace; inside a transaction (see the class comment)
   * at once and again after the commit.
   *
   * @throws UnsupportedOperationException if the cache has no generation (a store without
   *     counters, or {@code invalidate-all-bound=0} in its spec or customizer) and the store
   *     cannot remove keys by prefix
   * @throws io.sustainablecache.spi.StoreException if the store failed
   */
  @Override
  public void clear() {
    try {
      if (transactional == null || !transactional.clear()) {
        cache.invalidateAll();
      }
    } catch (UnsupportedOperationException | IllegalStateException e) {
      throw new UnsupportedOperationException("cache '" + name + "' cannot be cleared: " + e.getMessage()
          + ". Clearing needs a generation of the namespace (the default over a store with"
          + " counters, unless invalidate-all-bound is zero; or a near cache) or a store that"
          + " removes every key of a namespace (ARCUS flush_prefix).", e);
    }
  }

  /**
   * Like {@link #clear()}.
   *
   * @return {@code false}: whether the cache had entries is not determined
   * @throws UnsupportedOperationException as {@link #clear()}
   */
  @Override
  public boolean invalidate() {
    clear();
    return false;
  }

  @Override
  public String toString() {
    return "SustainableSpringCache[" + name + "]";
  }
}
