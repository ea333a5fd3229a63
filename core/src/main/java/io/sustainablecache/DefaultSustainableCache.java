package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link SustainableCache} implementation.
 *
 * <p>Two maps make loads single-flight in this JVM, both registered with {@code putIfAbsent} and
 * cleared with {@code remove(key, mine)}:
 * <ul>
 *   <li>{@code loads}: caller-facing loads (cold misses, expired entries). Concurrent callers
 *       wait on the leader's future. {@link #invalidate} removes the entry, which tells the
 *       leader not to write its result.</li>
 *   <li>{@code refreshes}: background refreshes. A duplicate request is dropped and counted; a
 *       rejected one is removed at once; a ticket older than the item's physical lifetime is
 *       treated as abandoned (an executor that silently dropped the task) and replaced.</li>
 * </ul>
 * A refresh writes with {@code cas} using the token of the read that decided it, so an item
 * invalidated or rewritten meanwhile is never overwritten.
 */
final class DefaultSustainableCache<V> implements SustainableCache<V> {

  private static final Logger log = LoggerFactory.getLogger(SustainableCache.class);

  /** memcached never hands out CAS 0, so it marks "no token: write with add". */
  private static final long NO_CAS = 0L;

  private static final long CLOSE_TIMEOUT_MILLIS = 5_000;

  private final CacheStore store;
  private final Keys keys;
  private final ValueCodec<V> codec;
  private final RefreshPolicy policy;
  private final RefreshPolicy.Mode mode;
  private final InstantSource clock;
  private final RandomGenerator random;
  private final long ttlMillis;
  private final long lifetimeMillis;
  private final Executor executor;
  private final ThreadPoolExecutor ownedExecutor;
  private final String description;

  private final StatsCounter stats = new StatsCounter();
  private final RateLimitedLog storeErrorLog = new RateLimitedLog(log);
  private final RateLimitedLog refreshErrorLog = new RateLimitedLog(log);
  private final ConcurrentHashMap<String, CompletableFuture<V>> loads = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, RefreshTicket> refreshes = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** Marks a key's background refresh as in flight since {@code startedAtMillis}. */
  private record RefreshTicket(long startedAtMillis) {}

  DefaultSustainableCache(SustainableCacheBuilder<?> builder, ValueCodec<V> codec) {
    this.store = builder.store;
    this.codec = codec;
    this.policy = builder.resolvedPolicy();
    this.mode = requireNonNull(policy.mode(), "policy.mode()");
    this.clock = builder.resolvedClock();
    this.random = builder.resolvedRandom();
    this.ttlMillis = builder.ttl.toMillis();
    this.lifetimeMillis = ttlMillis + builder.resolvedGrace().toMillis();
    String namespace = builder.resolvedNamespace();
    this.keys = new Keys(namespace, store.maxKeyLength());
    if (builder.executor != null) {
      this.executor = builder.executor;
      this.ownedExecutor = null;
    } else {
      this.ownedExecutor = newRefreshExecutor(namespace, builder.resolvedRefreshThreads(),
          builder.resolvedRefreshQueueCapacity());
      this.executor = ownedExecutor;
    }
    this.description = "SustainableCache{namespace=" + namespace + ", ttl=" + builder.ttl
        + ", grace=" + builder.resolvedGrace() + ", policy=" + policy + ", codec=" + codec + "}";
  }

  @Override
  public V get(String key, Loader<? extends V> loader) {
    requireNonNull(loader, "loader");
    String storeKey = keys.storeKey(key);
    StoreItem item;
    try {
      item = store.gets(storeKey).orElse(null);
    } catch (RuntimeException e) {
      storeError("read failed; treating as a miss", e);
      stats.misses.increment();
      return loadShared(key, storeKey, loader, NO_CAS, false);
    }
    if (item == null) {
      stats.misses.increment();
      return loadShared(key, storeKey, loader, NO_CAS, true);
    }
    byte[] bytes = item.value();
    V value = decode(bytes);
    if (value == null) {
      stats.misses.increment();
      return loadShared(key, storeKey, loader, item.casToken(), false);
    }
    long now = clock.millis();
    long expiresAt = Envelope.expiresAt(bytes);
    if (now < expiresAt) {
      stats.hits.increment();
      if (mode != RefreshPolicy.Mode.NONE && policy.shouldRefresh(now, Envelope.fetchedAt(bytes),
          expiresAt, Envelope.loadMillis(bytes), random)) {
        if (mode == RefreshPolicy.Mode.INLINE) {
          return refreshInline(key, storeKey, item.casToken(), loader, value);
        }
        scheduleRefresh(key, storeKey, item.casToken(), loader, now);
      }
      return value;
    }
    if (mode == RefreshPolicy.Mode.BACKGROUND) {
      stats.hits.increment();
      stats.staleHits.increment();
      scheduleRefresh(key, storeKey, item.casToken(), loader, now);
      return value;
    }
    stats.misses.increment();
    return loadShared(key, storeKey, loader, item.casToken(), false);
  }

  @Override
  public Optional<V> getIfPresent(String key) {
    String storeKey = keys.storeKey(key);
    StoreItem item;
    try {
      item = store.gets(storeKey).orElse(null);
    } catch (RuntimeException e) {
      storeError("read failed; treating as a miss", e);
      item = null;
    }
    V value = item == null ? null : decode(item.value());
    if (value != null) {
      boolean fresh = clock.millis() < Envelope.expiresAt(item.value());
      if (fresh || mode == RefreshPolicy.Mode.BACKGROUND) {
        stats.hits.increment();
        if (!fresh) {
          stats.staleHits.increment();
        }
        return Optional.of(value);
      }
    }
    stats.misses.increment();
    return Optional.empty();
  }

  @Override
  public void put(String key, V value) {
    requireNonNull(value, "value");
    String storeKey = keys.storeKey(key);
    long now = clock.millis();
    byte[] bytes = Envelope.encode(now, now + ttlMillis, 0, codec.encode(value));
    try {
      store.set(storeKey, bytes, Exptime.of(lifetimeMillis, now));
    } catch (RuntimeException e) {
      stats.storeErrors.increment();
      throw e;
    }
  }

  @Override
  public void invalidate(String key) {
    String storeKey = keys.storeKey(key);
    // Deregister first: a cold-miss leader checks its registration before writing.
    loads.remove(storeKey);
    try {
      store.delete(storeKey);
    } catch (RuntimeException e) {
      stats.storeErrors.increment();
      throw e;
    }
  }

  @Override
  public CacheStats stats() {
    return stats.snapshot();
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (ownedExecutor != null) {
      ownedExecutor.shutdown();
      try {
        if (!ownedExecutor.awaitTermination(CLOSE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)) {
          ownedExecutor.shutdownNow();
        }
      } catch (InterruptedException e) {
        ownedExecutor.shutdownNow();
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public String toString() {
    return description;
  }

  // ---------------------------------------------------------------------------------------------
  // Reads

  /** Decodes a stored item, or returns null (counted) when it is not a readable envelope. */
  private V decode(byte[] bytes) {
    if (!Envelope.isValid(bytes)) {
      stats.corruptEntries.increment();
      log.debug("not a valid envelope ({} bytes); treating as a miss", bytes.length);
      return null;
    }
    try {
      V value = codec.decode(bytes, Envelope.HEADER_SIZE, Envelope.payloadLength(bytes));
      if (value == null) {
        throw new IllegalStateException(codec + " decoded null");
      }
      return value;
    } catch (RuntimeException e) {
      stats.corruptEntries.increment();
      log.debug("payload could not be decoded; treating as a miss", e);
      return null;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Caller-facing loads: single-flight per key in this JVM

  private V loadShared(String key, String storeKey, Loader<? extends V> loader, long casToken,
      boolean recheck) {
    CompletableFuture<V> mine = new CompletableFuture<>();
    CompletableFuture<V> leader = loads.putIfAbsent(storeKey, mine);
    if (leader != null) {
      return await(leader);
    }
    try {
      V value = recheck ? freshValue(storeKey) : null;
      if (value == null) {
        Loaded<V> loaded = load(key, loader);
        if (casToken == NO_CAS && loads.get(storeKey) != mine) {
          stats.staleSetDiscards.increment(); // invalidated while loading
        } else {
          write(storeKey, loaded, casToken);
        }
        value = loaded.value();
      }
      mine.complete(value);
      return value;
    } catch (RuntimeException | Error e) {
      mine.completeExceptionally(e);
      throw e;
    } finally {
      loads.remove(storeKey, mine);
    }
  }

  /**
   * Re-reads the store after winning the leadership of a cold miss: another caller may have
   * filled the key between our read and our registration, and this saves a duplicate load.
   */
  private V freshValue(String storeKey) {
    try {
      StoreItem item = store.gets(storeKey).orElse(null);
      if (item != null && Envelope.isValid(item.value())
          && clock.millis() < Envelope.expiresAt(item.value())) {
        return decode(item.value());
      }
    } catch (RuntimeException e) {
      storeError("read failed; treating as a miss", e);
    }
    return null;
  }

  private V await(CompletableFuture<V> leader) {
    try {
      return leader.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CacheLoadException("interrupted while waiting for a shared load", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof CacheLoadException shared) {
        throw new CacheLoadException(shared.getMessage(), shared.getCause());
      }
      if (cause instanceof Error error) {
        throw error;
      }
      throw new CacheLoadException("shared load failed", cause);
    }
  }

  private record Loaded<V>(V value, long fetchedAtMillis, long loadMillis) {}

  /** Calls the loader, measuring it; failures are counted and wrapped. */
  private Loaded<V> load(String key, Loader<? extends V> loader) {
    long start = clock.millis();
    V value;
    try {
      value = loader.load(key);
    } catch (Exception e) {
      stats.recordLoadFailure(Math.max(0, clock.millis() - start));
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new CacheLoadException("loader failed", e);
    }
    long end = clock.millis();
    long elapsed = Math.max(0, end - start);
    if (value == null) {
      stats.recordLoadFailure(elapsed);
      throw new CacheLoadException("loader returned null", null);
    }
    stats.recordLoad(elapsed);
    return new Loaded<>(value, end, elapsed);
  }

  /**
   * Writes a loaded value: {@code add} when there was no item, {@code cas} against the token of
   * the read otherwise. Never throws; returns whether the value was stored.
   */
  private boolean write(String storeKey, Loaded<V> loaded, long casToken) {
    byte[] bytes;
    try {
      long fetchedAt = loaded.fetchedAtMillis();
      bytes = Envelope.encode(fetchedAt, fetchedAt + ttlMillis, loaded.loadMillis(),
          codec.encode(loaded.value()));
    } catch (RuntimeException e) {
      storeError("value could not be encoded; not cached", e);
      return false;
    }
    int exptime = Exptime.of(lifetimeMillis, loaded.fetchedAtMillis());
    try {
      boolean stored = casToken == NO_CAS
          ? store.add(storeKey, bytes, exptime)
          : store.cas(storeKey, casToken, bytes, exptime) == CasOutcome.STORED;
      if (!stored) {
        stats.staleSetDiscards.increment();
      }
      return stored;
    } catch (RuntimeException e) {
      storeError("write failed; value not cached", e);
      return false;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Refreshes

  /** PER: recompute on the reading thread; on failure keep serving the current value. */
  private V refreshInline(String key, String storeKey, long casToken, Loader<? extends V> loader,
      V current) {
    Loaded<V> loaded;
    try {
      loaded = load(key, loader);
    } catch (CacheLoadException e) {
      stats.refreshFailures.increment();
      refreshErrorLog.warn("inline refresh failed; serving the cached value", e.getCause());
      return current;
    }
    if (write(storeKey, loaded, casToken)) {
      stats.refreshSuccesses.increment();
    }
    return loaded.value();
  }

  private void scheduleRefresh(String key, String storeKey, long casToken,
      Loader<? extends V> loader, long now) {
    RefreshTicket existing = refreshes.get(storeKey);
    if (existing != null && now - existing.startedAtMillis() < lifetimeMillis) {
      stats.refreshesDeduped.increment();
      return;
    }
    RefreshTicket ticket = new RefreshTicket(now);
    boolean registered = existing == null
        ? refreshes.putIfAbsent(storeKey, ticket) == null
        : refreshes.replace(storeKey, existing, ticket);
    if (!registered) {
      stats.refreshesDeduped.increment();
      return;
    }
    if (existing != null) {
      log.warn("a background refresh was still marked in flight after {} ms, longer than the"
          + " item's lifetime; the refresh executor may have dropped it", now
          - existing.startedAtMillis());
    }
    if (closed) {
      refreshes.remove(storeKey, ticket);
      stats.refreshesRejected.increment();
      return;
    }
    try {
      executor.execute(() -> runRefresh(key, storeKey, casToken, loader, ticket));
      stats.refreshesScheduled.increment();
    } catch (RejectedExecutionException e) {
      refreshes.remove(storeKey, ticket);
      stats.refreshesRejected.increment();
      log.debug("refresh rejected by the executor", e);
    }
  }

  private void runRefresh(String key, String storeKey, long casToken, Loader<? extends V> loader,
      RefreshTicket ticket) {
    try {
      Loaded<V> loaded = load(key, loader);
      if (write(storeKey, loaded, casToken)) {
        stats.refreshSuccesses.increment();
      }
    } catch (CacheLoadException e) {
      stats.refreshFailures.increment();
      refreshErrorLog.warn("background refresh failed; the cached value keeps being served",
          e.getCause() == null ? e : e.getCause());
      if (log.isDebugEnabled()) {
        log.debug("background refresh failed for key {}", storeKey, e);
      }
    } finally {
      refreshes.remove(storeKey, ticket);
    }
  }

  private void storeError(String message, RuntimeException e) {
    stats.storeErrors.increment();
    storeErrorLog.warn(message, e);
  }

  private static ThreadPoolExecutor newRefreshExecutor(String namespace, int threads,
      int queueCapacity) {
    BlockingQueue<Runnable> queue = queueCapacity == 0
        ? new SynchronousQueue<>()
        : new ArrayBlockingQueue<>(queueCapacity);
    String prefix = "sustainable-cache-refresh-" + (namespace.isEmpty() ? "" : namespace + "-");
    AtomicInteger counter = new AtomicInteger();
    ThreadFactory factory = runnable -> {
      Thread thread = new Thread(runnable, prefix + counter.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
    ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
        queue, factory, new ThreadPoolExecutor.AbortPolicy());
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }
}
