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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;

/**
 * The {@link SustainableCache} implementation: a facade. Reads go through the {@link ReadPath}
 * (single keys) and {@link BulkLoads} ({@code getAll}), which share one read step; loads through
 * the {@link LoadCoordinator}; per-key state lives in the {@link KeyRegistry}; decoding in the
 * {@link EntryReader}; writing in the {@link EntryWriter}. Writes of the caller ({@code put},
 * {@code invalidate}) are here.
 */
final class DefaultSustainableCache<V> implements SustainableCache<V> {

  private static final Logger log = Log.LOGGER;

  private final CacheConfig<V> config;
  private final CacheStore store;
  private final Keys keys;
  private final InstantSource clock;
  private final long waitNanos;
  private final StatsCounter stats = new StatsCounter();
  private final RateLimitedLog storeErrorLog = new RateLimitedLog(log);
  private final EntryReader<V> reader;
  private final EntryWriter<V> writer;
  private final KeyRegistry registry;
  private final Refresher refresher;
  private final FleetLease<V> lease;
  private final ReadPath<V> reads;
  private final BulkLoads<V> bulk;

  DefaultSustainableCache(CacheConfig<V> config) {
    this.config = config;
    this.store = config.store();
    this.keys = new Keys(config.namespace(), store.maxKeyLength(), config.keyPolicy());
    this.clock = config.clock();
    // The synchronous API waits for a load at most its timeout (plus a margin for the timer).
    this.waitNanos = TimeUnit.MILLISECONDS.toNanos(config.loadTimeout().toMillis() + 1_000);
    this.reader = new EntryReader<>(config, stats);
    this.writer = new EntryWriter<>(config, stats, storeErrorLog);
    this.registry = new KeyRegistry(config, stats);
    this.refresher = new Refresher(config);
    LoadTimes loadTimes = new LoadTimes();
    this.lease = new FleetLease<>(config, keys, reader, registry, stats, loadTimes,
        storeErrorLog);
    LoadCoordinator<V> loads = new LoadCoordinator<>(registry, writer, refresher, lease, clock,
        stats, loadTimes, waitNanos);
    this.reads = new ReadPath<>(config, keys, reader, loads, refresher, stats, storeErrorLog,
        waitNanos);
    this.bulk = new BulkLoads<>(config, keys, reads, registry, loads, refresher, lease, stats,
        waitNanos);
  }

  // ---------------------------------------------------------------------------------------------
  // Reads

  @Override
  public V get(String key, Loader<? extends V> loader) {
    return valueOrThrow(reads.read(key, adapt(requireNonNull(loader, "loader"))));
  }

  @Override
  public Optional<V> find(String key, Loader<? extends V> loader) {
    return optional(reads.read(key, adapt(requireNonNull(loader, "loader"))));
  }

  @Override
  public CompletableFuture<V> getAsync(String key, AsyncLoader<? extends V> loader) {
    return reads.readAsync(key, requireNonNull(loader, "loader")).thenApply(this::valueOrThrow);
  }

  @Override
  public CompletableFuture<Optional<V>> findAsync(String key, AsyncLoader<? extends V> loader) {
    return reads.readAsync(key, requireNonNull(loader, "loader")).thenApply(this::optional);
  }

  @Override
  public Optional<V> getIfPresent(String key) {
    return optional(reads.read(key, null));
  }

  @Override
  public CompletableFuture<Optional<V>> getIfPresentAsync(String key) {
    return reads.readAsync(key, null).thenApply(this::optional);
  }

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
  // Writes

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
      StoreItem item = reads.readNow(storeKey);
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
      reads.storeError("releasing a fleet lease failed", EntryWriter.unwrap(e));
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

  @SuppressWarnings("unchecked")
  private V valueOrThrow(Object answer) {
    if (answer == ReadPath.ABSENT) {
      throw new CacheLoadException("the key has no value: its loader found none (cached as"
          + " absent for absentTtl); use find() for keys that may not exist", null);
    }
    return (V) answer;
  }

  @SuppressWarnings("unchecked")
  private Optional<V> optional(Object answer) {
    return answer == ReadPath.ABSENT ? Optional.empty() : Optional.of((V) answer);
  }

  /** A synchronous loader as an asynchronous one: it runs inside {@code load}, on that thread. */
  static <V> AsyncLoader<V> adapt(Loader<? extends V> loader) {
    return key -> CompletableFuture.completedFuture(loader.load(key));
  }
}
