package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.time.InstantSource;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link SustainableCache} implementation: the facade that maps keys, reads the store, asks
 * the {@link Decision} what to do with each read and hands loads to the {@link LoadCoordinator}
 * (single keys) or {@link BulkLoads} ({@code getAll}). Per-key state lives in the {@link
 * KeyRegistry}; decoding in the {@link EntryReader}; writing in the {@link EntryWriter}.
 *
 * <p>Internally an answer is the value or {@link #ABSENT}; {@code get} turns the latter into a
 * {@link CacheLoadException}, {@code find} into an empty {@link Optional}.
 */
final class DefaultSustainableCache<V> implements SustainableCache<V> {

  private static final Logger log = LoggerFactory.getLogger(SustainableCache.class);

  /** The answer for a key without a value. */
  private static final Object ABSENT = new Object();

  private final CacheConfig<V> config;
  private final CacheStore store;
  private final Keys keys;
  private final RefreshPolicy policy;
  private final Policies.Mode mode;
  private final InstantSource clock;
  private final RandomGenerator random;
  private final boolean serveStaleOnError;
  private final long waitNanos;
  private final StatsCounter stats = new StatsCounter();
  private final RateLimitedLog storeErrorLog = new RateLimitedLog(log);
  private final RateLimitedLog staleOnErrorLog = new RateLimitedLog(log);
  private final EntryReader<V> reader;
  private final EntryWriter<V> writer;
  private final KeyRegistry registry;
  private final Refresher refresher;
  private final FleetLease<V> lease;
  private final LoadCoordinator<V> loads;
  private final BulkLoads<V> bulk;

  DefaultSustainableCache(CacheConfig<V> config) {
    this.config = config;
    this.store = config.store();
    this.keys = new Keys(config.namespace(), store.maxKeyLength(), config.keyPolicy());
    this.policy = config.policy();
    this.mode = Policies.modeOf(policy);
    this.clock = config.clock();
    this.random = config.random();
    this.serveStaleOnError = config.serveStaleOnError();
    // The synchronous API waits for a load at most its timeout (plus a margin for the timer).
    this.waitNanos = TimeUnit.MILLISECONDS.toNanos(config.loadTimeout().toMillis() + 1_000);
    this.reader = new EntryReader<>(config, stats);
    this.writer = new EntryWriter<>(config, stats, storeErrorLog);
    this.registry = new KeyRegistry(config, stats);
    this.refresher = new Refresher(config);
    this.lease = new FleetLease<>(config, keys, reader, registry, stats, storeErrorLog);
    this.loads = new LoadCoordinator<>(registry, writer, refresher, lease, clock, stats,
        waitNanos);
    this.bulk = new BulkLoads<>(this, config, stats);
  }

  // ---------------------------------------------------------------------------------------------
  // Synchronous reads

  @Override
  public V get(String key, Loader<? extends V> loader) {
    requireNonNull(loader, "loader");
    return valueOrThrow(lookup(key, loader, true));
  }

  @Override
  public Optional<V> find(String key, Loader<? extends V> loader) {
    requireNonNull(loader, "loader");
    return optional(lookup(key, loader, true));
  }

  /**
   * Reads the key and answers: on a hit without waiting for anything but the store (the hit
   * path allocates nothing of its own beyond what the decision needs), otherwise by waiting on
   * this thread for the load, whose loader also runs on this thread.
   */
  private Object lookup(String key, Loader<? extends V> loader, boolean mayRetry) {
    String storeKey = keys.storeKey(key);
    StoreItem item;
    try {
      item = readNow(storeKey);
    } catch (StoreException e) {
      storeError("a read failed; treating it as a miss", e);
      stats.increment(Counter.MISS);
      CallerRuns here = new CallerRuns();
      return awaitLoad(key, loader, loads.miss(key, storeKey, adapt(loader), EntryWriter.NO_CAS,
          -1, false, here), null, mayRetry, here);
    }
    long now = clock.millis();
    Entry<V> entry = item == null ? null : reader.read(item, now);
    switch (Decision.decide(entry, now, mode, policy, random)) {
      case FRESH:
        hit(entry);
        return answer(entry);
      case REFRESH_BACKGROUND:
        hit(entry);
        loads.refreshInBackground(key, storeKey, entry.casToken(), entry.loadMillis(),
            adapt(loader));
        return answer(entry);
      case STALE:
        hit(entry);
        stats.increment(Counter.STALE_HIT);
        loads.refreshInBackground(key, storeKey, entry.casToken(), entry.loadMillis(),
            adapt(loader));
        return answer(entry);
      case REFRESH_INLINE: {
        hit(entry);
        CallerRuns here = new CallerRuns();
        CompletableFuture<Loaded<V>> refresh =
            loads.refreshInline(key, storeKey, entry.casToken(), entry.loadMillis(),
                adapt(loader), here);
        if (refresh == null) {
          return answer(entry);
        }
        try {
          Loaded<V> loaded = here.drive(refresh, waitNanos);
          return loaded.wasLoaded() ? answer(loaded) : answer(entry);
        } catch (ExecutionException | TimeoutException e) {
          return answer(entry); // counted and logged as a failed refresh
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return answer(entry);
        }
      }
      default: {
        stats.increment(Counter.MISS);
        Entry<V> stale = entry != null && entry.answers() ? entry : null;
        long token = entry == null ? EntryWriter.NO_CAS : entry.casToken();
        CallerRuns here = new CallerRuns();
        return awaitLoad(key, loader, loads.miss(key, storeKey, adapt(loader), token,
            tombstoneAt(entry), expectedLoadMillis(entry), true, here), stale, mayRetry, here);
      }
    }
  }

  /** Waits on this thread for a load (running its continuations here); maps its outcome. */
  private Object awaitLoad(String key, Loader<? extends V> loader,
      CompletableFuture<Loaded<V>> load, Entry<V> stale, boolean mayRetry, CallerRuns here) {
    Loaded<V> loaded;
    try {
      loaded = here.drive(load, waitNanos);
    } catch (ExecutionException e) {
      return staleOrThrow(e.getCause(), stale);
    } catch (TimeoutException e) {
      return staleOrThrow(new CacheLoadException("gave up waiting for a load after "
          + config.loadTimeout().toMillis() + " ms", null), stale);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CacheLoadException("interrupted while waiting for a load", e);
    }
    if (loaded.wasLoaded()) {
      return answer(loaded);
    }
    // The joined refresh ended without loading (rejected, or another instance holds the lease):
    // read the key again, once.
    if (mayRetry) {
      return lookup(key, loader, false);
    }
    throw new CacheLoadException("the key could not be loaded: the load it joined ended without"
        + " a value twice", null);
  }

  private Object staleOrThrow(Throwable failure, Entry<V> stale) {
    if (stale != null && serveStaleOnError && failure instanceof CacheLoadException) {
      stats.increment(Counter.STALE_ON_ERROR);
      staleOnErrorLog.warn("reloading an expired entry failed; serving the stale value",
          failure.getCause() == null ? failure : failure.getCause());
      return answer(stale);
    }
    if (failure instanceof CacheLoadException loadFailure) {
      if (loadFailure.getCause() instanceof Error error
          && !(loadFailure instanceof LoadCoordinator.RememberedFailure)) {
        throw error; // the load this caller shared failed with an Error: rethrow it as it is
      }
      // every caller gets its own exception, with this thread's stack
      throw new CacheLoadException(loadFailure.getMessage(), loadFailure.getCause());
    }
    if (failure instanceof RuntimeException runtime) {
      throw runtime;
    }
    if (failure instanceof Error error) {
      throw error;
    }
    throw new CacheLoadException("the load failed", failure);
  }

  /** Reads an item, waiting at most the load timeout even if an adapter breaks its bound. */
  private StoreItem readNow(String storeKey) {
    CompletableFuture<Optional<StoreItem>> read = store.gets(storeKey);
    try {
      return read.get(waitNanos, TimeUnit.NANOSECONDS).orElse(null);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw cause instanceof StoreException failure ? failure
          : new StoreException("the store read failed", cause);
    } catch (TimeoutException e) {
      read.cancel(false);
      throw new StoreException("the store did not answer a read within the load timeout", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      read.cancel(false);
      throw new CacheLoadException("interrupted while reading the store", e);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Asynchronous reads

  @Override
  public CompletableFuture<V> getAsync(String key, AsyncLoader<? extends V> loader) {
    requireNonNull(loader, "loader");
    return lookupAsync(key, loader, false);
  }

  @Override
  public CompletableFuture<Optional<V>> findAsync(String key, AsyncLoader<? extends V> loader) {
    requireNonNull(loader, "loader");
    return lookupAsync(key, loader, true);
  }

  /**
   * The asynchronous read: the same decisions as {@link #lookup}, chained on the store's and the
   * load's futures instead of waited for. Completes {@code out} with the value (failing for an
   * absent key) or, if {@code optional}, with an {@link Optional}.
   */
  private <R> CompletableFuture<R> lookupAsync(String key, AsyncLoader<? extends V> loader,
      boolean optional) {
    String storeKey = keys.storeKey(key);
    CompletableFuture<R> out = new CompletableFuture<>();
    readAsync(out, key, storeKey, loader, optional, true);
    return out;
  }

  private <R> void readAsync(CompletableFuture<R> out, String key, String storeKey,
      AsyncLoader<? extends V> loader, boolean optional, boolean mayRetry) {
    store.gets(storeKey).whenComplete((item, error) -> {
      try {
        afterReadAsync(out, key, storeKey, loader, optional, mayRetry,
            error == null ? item.orElse(null) : null, error);
      } catch (Throwable t) {
        out.completeExceptionally(t);
      }
    });
  }

  private <R> void afterReadAsync(CompletableFuture<R> out, String key, String storeKey,
      AsyncLoader<? extends V> loader, boolean optional, boolean mayRetry, StoreItem item,
      Throwable error) {
    if (error != null) {
      storeError("a read failed; treating it as a miss", EntryWriter.unwrap(error));
      stats.increment(Counter.MISS);
      deliverLoad(out, key, storeKey, loader, optional, mayRetry, null,
          loads.miss(key, storeKey, loader, EntryWriter.NO_CAS, -1, false,
              LoadCoordinator.DIRECT));
      return;
    }
    long now = clock.millis();
    Entry<V> entry = item == null ? null : reader.read(item, now);
    switch (Decision.decide(entry, now, mode, policy, random)) {
      case FRESH -> {
        hit(entry);
        deliver(out, answer(entry), optional);
      }
      case REFRESH_BACKGROUND -> {
        hit(entry);
        loads.refreshInBackground(key, storeKey, entry.casToken(), entry.loadMillis(), loader);
        deliver(out, answer(entry), optional);
      }
      case STALE -> {
        hit(entry);
        stats.increment(Counter.STALE_HIT);
        loads.refreshInBackground(key, storeKey, entry.casToken(), entry.loadMillis(), loader);
        deliver(out, answer(entry), optional);
      }
      case REFRESH_INLINE -> {
        hit(entry);
        CompletableFuture<Loaded<V>> refresh = loads.refreshInline(key, storeKey,
            entry.casToken(), entry.loadMillis(), loader, LoadCoordinator.DIRECT);
        if (refresh == null) {
          deliver(out, answer(entry), optional);
        } else {
          refresh.whenComplete((loaded, failure) -> deliver(out,
              failure == null && loaded.wasLoaded() ? answer(loaded) : answer(entry), optional));
        }
      }
      default -> {
        stats.increment(Counter.MISS);
        Entry<V> stale = entry != null && entry.answers() ? entry : null;
        long token = entry == null ? EntryWriter.NO_CAS : entry.casToken();
        deliverLoad(out, key, storeKey, loader, optional, mayRetry, stale,
            loads.miss(key, storeKey, loader, token, tombstoneAt(entry),
                expectedLoadMillis(entry), true, LoadCoordinator.DIRECT));
      }
    }
  }

  private <R> void deliverLoad(CompletableFuture<R> out, String key, String storeKey,
      AsyncLoader<? extends V> loader, boolean optional, boolean mayRetry, Entry<V> stale,
      CompletableFuture<Loaded<V>> load) {
    load.whenComplete((loaded, error) -> {
      try {
        if (error != null) {
          deliver(out, staleOrThrow(EntryWriter.unwrap(error), stale), optional);
        } else if (loaded.wasLoaded()) {
          deliver(out, answer(loaded), optional);
        } else if (mayRetry) {
          readAsync(out, key, storeKey, loader, optional, false);
        } else {
          throw new CacheLoadException("the key could not be loaded: the load it joined ended"
              + " without a value twice", null);
        }
      } catch (Throwable t) {
        out.completeExceptionally(t);
      }
    });
  }

  @SuppressWarnings("unchecked")
  private <R> void deliver(CompletableFuture<R> out, Object answer, boolean optional) {
    try {
      out.complete((R) (optional ? optional(answer) : valueOrThrow(answer)));
    } catch (RuntimeException e) {
      out.completeExceptionally(e);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Bulk reads

  @Override
  public Map<String, V> getAll(Collection<String> keys, BulkLoader<? extends V> loader) {
    requireNonNull(keys, "keys");
    requireNonNull(loader, "loader");
    return bulk.getAll(keys, loader);
  }

  @Override
  public CompletableFuture<Map<String, V>> getAllAsync(Collection<String> keys,
      AsyncBulkLoader<? extends V> loader) {
    requireNonNull(keys, "keys");
    requireNonNull(loader, "loader");
    return bulk.getAllAsync(keys, loader);
  }

  // ---------------------------------------------------------------------------------------------
  // Peeks and writes

  @Override
  public Optional<V> getIfPresent(String key) {
    String storeKey = keys.storeKey(key);
    StoreItem item;
    try {
      item = readNow(storeKey);
    } catch (StoreException e) {
      storeError("a read failed; treating it as a miss", e);
      item = null;
    }
    long now = clock.millis();
    Entry<V> entry = item == null ? null : reader.read(item, now);
    if (entry != null && entry.answers()
        && (now < entry.expiresAt() || mode == Policies.Mode.BACKGROUND)) {
      hit(entry);
      if (now >= entry.expiresAt()) {
        stats.increment(Counter.STALE_HIT);
      }
      return Optional.ofNullable(entry.value());
    }
    stats.increment(Counter.MISS);
    return Optional.empty();
  }

  @Override
  public void put(String key, V value) {
    requireNonNull(value, "value");
    String storeKey = keys.storeKey(key);
    byte[] bytes = writer.encodePut(value, clock.millis());
    registry.detach(storeKey);
    awaitWrite(store.set(storeKey, bytes, writer.putExptime(bytes)), "put");
    stats.increment(Counter.PUT);
  }

  @Override
  public Optional<V> putIfAbsent(String key, V value) {
    requireNonNull(value, "value");
    String storeKey = keys.storeKey(key);
    for (int attempt = 0; attempt < 3; attempt++) {
      long now = clock.millis();
      StoreItem item = readNow(storeKey);
      Entry<V> entry = item == null ? null : reader.read(item, now);
      if (entry != null && entry.kind() == Entry.Kind.VALUE && now < entry.expiresAt()) {
        return Optional.of(entry.value());
      }
      byte[] bytes = writer.encodePut(value, now);
      int exptime = writer.putExptime(bytes);
      boolean stored = item == null
          ? awaitWrite(store.add(storeKey, bytes, exptime), "putIfAbsent")
          : awaitWrite(store.cas(storeKey, item.casToken(), bytes, exptime), "putIfAbsent")
              == CasOutcome.STORED;
      if (stored) {
        registry.detach(storeKey);
        stats.increment(Counter.PUT);
        return Optional.empty();
      }
    }
    throw new StoreException("putIfAbsent: the key kept changing between the read and the write"
        + " (3 attempts)");
  }

  @Override
  public void invalidate(String key) {
    String storeKey = keys.storeKey(key);
    registry.detach(storeKey);
    long now = clock.millis();
    CompletableFuture<Void> tombstone = store.set(storeKey, EntryWriter.tombstone(now),
        writer.tombstoneExptime(now));
    CompletableFuture<?> released = lease.onInvalidate(storeKey);
    awaitWrite(tombstone, "invalidate");
    // Loads this JVM started while the tombstone was on its way read the key before it landed.
    registry.detach(storeKey);
    stats.increment(Counter.INVALIDATION);
    awaitQuietly(released);
  }

  @Override
  public void invalidateAll() {
    if (config.namespace().isEmpty()) {
      throw new IllegalStateException("invalidateAll needs a namespace: without one, flushing"
          + " would remove every other cache's entries too");
    }
    registry.detachAll();
    try {
      awaitWrite(store.flushPrefix(config.namespace()), "invalidateAll");
    } catch (StoreException e) {
      if (e.getCause() instanceof UnsupportedOperationException unsupported) {
        throw unsupported;
      }
      throw e;
    }
    registry.detachAll();
    stats.increment(Counter.INVALIDATION);
  }

  /** Waits for a write the caller must know the outcome of; store failures are thrown. */
  private <T> T awaitWrite(CompletableFuture<T> write, String operation) {
    try {
      return write.get(waitNanos, TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof UnsupportedOperationException unsupported) {
        throw unsupported;
      }
      stats.increment(Counter.STORE_ERROR);
      throw cause instanceof StoreException failure ? failure
          : new StoreException(operation + " failed", cause);
    } catch (TimeoutException e) {
      write.cancel(false);
      stats.increment(Counter.STORE_ERROR);
      throw new StoreException(operation + ": the store did not answer in time", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stats.increment(Counter.STORE_ERROR);
      throw new StoreException(operation + " interrupted; it may or may not have happened", e);
    }
  }

  private void awaitQuietly(CompletableFuture<?> future) {
    try {
      future.get(waitNanos, TimeUnit.NANOSECONDS);
    } catch (ExecutionException | TimeoutException e) {
      storeError("releasing a fleet lease failed", EntryWriter.unwrap(e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ---------------------------------------------------------------------------------------------

  @Override
  public CacheStats stats() {
    return stats.snapshot();
  }

  @Override
  public void close() {
    refresher.close();
  }

  @Override
  public String toString() {
    return "SustainableCache{" + config + "}";
  }

  /** The number of keys with per-key state (loads in flight, failures); for tests. */
  int registeredKeyCount() {
    return registry.size();
  }

  KeyRegistry registry() {
    return registry;
  }

  Keys keys() {
    return keys;
  }

  LoadCoordinator<V> loads() {
    return loads;
  }

  EntryReader<V> reader() {
    return reader;
  }

  EntryWriter<V> writer() {
    return writer;
  }

  FleetLease<V> lease() {
    return lease;
  }

  Refresher refresher() {
    return refresher;
  }

  CacheStore store() {
    return store;
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  private void hit(Entry<V> entry) {
    stats.increment(Counter.HIT);
    if (entry.kind() == Entry.Kind.ABSENT) {
      stats.increment(Counter.ABSENT_HIT);
    }
  }

  void storeError(String message, Throwable e) {
    stats.increment(Counter.STORE_ERROR);
    storeErrorLog.warn(message, e);
  }

  /** When the tombstone a read found was written, or -1 if the read found none. */
  static long tombstoneAt(Entry<?> entry) {
    return entry != null && entry.kind() == Entry.Kind.TOMBSTONE ? entry.fetchedAt() : -1;
  }

  /** The measured load time of the entry a miss found, or -1 if it holds none. */
  static long expectedLoadMillis(Entry<?> entry) {
    return entry != null && entry.answers() ? entry.loadMillis() : -1;
  }

  static Object answer(Entry<?> entry) {
    return entry.kind() == Entry.Kind.VALUE ? entry.value() : ABSENT;
  }

  static Object answer(Loaded<?> loaded) {
    return loaded.value() == null ? ABSENT : loaded.value();
  }

  static boolean isAbsent(Object answer) {
    return answer == ABSENT;
  }

  @SuppressWarnings("unchecked")
  private V valueOrThrow(Object answer) {
    if (answer == ABSENT) {
      throw new CacheLoadException("the key has no value: its loader found none (cached as"
          + " absent for absentTtl); use find() for keys that may not exist", null);
    }
    return (V) answer;
  }

  @SuppressWarnings("unchecked")
  private Optional<V> optional(Object answer) {
    return answer == ABSENT ? Optional.empty() : Optional.of((V) answer);
  }

  /** A synchronous loader as an asynchronous one: it runs inside {@code load}, on that thread. */
  static <V> AsyncLoader<V> adapt(Loader<? extends V> loader) {
    return key -> CompletableFuture.completedFuture(loader.load(key));
  }

  Executor directExecutor() {
    return LoadCoordinator.DIRECT;
  }
}
