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
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
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
  private final int maxValueSize;
  private final long backoffBaseMillis;
  private final long backoffCapMillis;
  private final boolean serveStaleOnError;
  private final long maxSkewMillis;
  private final Executor executor;
  private final ThreadPoolExecutor ownedExecutor;
  private final String description;

  private final StatsCounter stats = new StatsCounter();
  private final RateLimitedLog storeErrorLog = new RateLimitedLog(log);
  private final RateLimitedLog refreshErrorLog = new RateLimitedLog(log);
  private final RateLimitedLog skippedWriteLog = new RateLimitedLog(log);
  private final RateLimitedLog clockSkewLog = new RateLimitedLog(log);
  private final ConcurrentHashMap<String, CompletableFuture<V>> loads = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, RefreshTicket> refreshes = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Backoff> backoffs = new ConcurrentHashMap<>();
  /** Loader calls running now, one per key: a miss joins a running refresh, and vice versa. */
  private final ConcurrentHashMap<String, CompletableFuture<Loaded<V>>> running =
      new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** Marks a key's background refresh as in flight since {@code startedAtMillis}. */
  private record RefreshTicket(long startedAtMillis) {}

  /** A key whose refreshes failed {@code failures} times in a row; next try not before then. */
  private record Backoff(int failures, long notBeforeMillis) {}

  /** Above this many keys in back-off, expired records are swept when a new one is added. */
  private static final int BACKOFF_SWEEP_THRESHOLD = 1024;

  DefaultSustainableCache(SustainableCacheBuilder<?> builder, ValueCodec<V> codec) {
    this.store = builder.store;
    this.codec = codec;
    this.policy = builder.resolvedPolicy();
    this.mode = requireNonNull(policy.mode(), "policy.mode()");
    this.clock = builder.resolvedClock();
    this.random = builder.resolvedRandom();
    this.ttlMillis = builder.ttl.toMillis();
    this.lifetimeMillis = ttlMillis + builder.resolvedGrace().toMillis();
    this.maxValueSize = builder.resolvedMaxValueSize();
    this.backoffBaseMillis = builder.resolvedRefreshBackoff().toMillis();
    this.backoffCapMillis = Math.max(backoffBaseMillis, ttlMillis);
    this.serveStaleOnError = builder.resolvedServeStaleOnError();
    this.maxSkewMillis = builder.resolvedMaxClockSkew().toMillis();
    String namespace = builder.resolvedNamespace();
    this.keys = new Keys(namespace, store.maxKeyLength(), builder.resolvedKeyPolicy());
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
    return join(getAsync(key, k -> {
      try {
        return CompletableFuture.completedFuture(loader.load(k));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return CompletableFuture.failedFuture(e);
      } catch (Exception e) {
        return CompletableFuture.failedFuture(e);
      }
    }));
  }

  @Override
  public CompletableFuture<V> getAsync(String key, AsyncLoader<? extends V> loader) {
    requireNonNull(loader, "loader");
    String storeKey = keys.storeKey(key);
    StoreItem item;
    try {
      item = store.gets(storeKey).orElse(null);
    } catch (RuntimeException e) {
      storeError("read failed; treating as a miss", e);
      stats.misses.increment();
      // The server just failed: do not make the caller wait for a write that will likely fail
      // (or time out) too. The next successful read fills the key.
      return loadShared(key, storeKey, loader, NO_CAS, false, false);
    }
    if (item == null) {
      stats.misses.increment();
      return loadShared(key, storeKey, loader, NO_CAS, true, true);
    }
    byte[] bytes = item.value();
    V value = decode(bytes);
    if (value == null) {
      stats.misses.increment();
      return loadShared(key, storeKey, loader, item.casToken(), false, true);
    }
    long now = clock.millis();
    long fetchedAt = Envelope.fetchedAt(bytes);
    long expiresAt = trustedExpiry(bytes, now);
    if (now < expiresAt) {
      stats.hits.increment();
      if (mode != RefreshPolicy.Mode.NONE && policy.shouldRefresh(now, fetchedAt,
          expiresAt, Envelope.loadMillis(bytes), random)) {
        if (mode == RefreshPolicy.Mode.INLINE) {
          return refreshInline(key, storeKey, item.casToken(), loader, value);
        }
        scheduleRefresh(key, storeKey, item.casToken(), loader, now);
      }
      return CompletableFuture.completedFuture(value);
    }
    if (mode == RefreshPolicy.Mode.BACKGROUND) {
      stats.hits.increment();
      stats.staleHits.increment();
      scheduleRefresh(key, storeKey, item.casToken(), loader, now);
      return CompletableFuture.completedFuture(value);
    }
    stats.misses.increment();
    CompletableFuture<V> reload =
        loadShared(key, storeKey, loader, item.casToken(), false, true);
    if (!serveStaleOnError) {
      return reload;
    }
    V stale = value;
    return reload.handle((loaded, error) -> {
      if (error == null) {
        return loaded;
      }
      stats.staleOnErrors.increment();
      refreshErrorLog.warn("reloading an expired entry failed; serving the stale value",
          error instanceof CompletionException && error.getCause() != null
              ? error.getCause() : error);
      return stale;
    });
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
      long now = clock.millis();
      boolean fresh = now < trustedExpiry(item.value(), now);
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
    if (bytes.length > maxValueSize) {
      throw new IllegalArgumentException("value of " + bytes.length
          + " bytes (envelope included) exceeds maxValueSize " + maxValueSize);
    }
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

  /** Keys with a background refresh marked in flight; for tests. */
  int inFlightRefreshCount() {
    return refreshes.size();
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

  private CompletableFuture<V> loadShared(String key, String storeKey,
      AsyncLoader<? extends V> loader, long casToken, boolean recheck, boolean writeBack) {
    CompletableFuture<V> mine = new CompletableFuture<>();
    CompletableFuture<V> leader = loads.putIfAbsent(storeKey, mine);
    if (leader != null) {
      return leader.copy();
    }
    V rechecked = recheck ? freshValue(storeKey) : null;
    if (rechecked != null) {
      loads.remove(storeKey, mine);
      mine.complete(rechecked);
      return mine;
    }
    // Either we start the load, or a background refresh of this key is loading already: then we
    // share its result, and it writes the value back. Retried if that load ends in between.
    CompletableFuture<Loaded<V>> load;
    boolean own;
    do {
      load = exclusiveLoad(key, storeKey, loader);
      own = load != null;
      if (!own) {
        load = running.get(storeKey);
      }
    } while (load == null);
    boolean write = own && writeBack;
    load.whenComplete((loaded, error) -> {
      try {
        if (error == null && write) {
          if (casToken == NO_CAS && loads.get(storeKey) != mine) {
            stats.staleSetDiscards.increment(); // invalidated while loading
          } else if (write(storeKey, loaded, casToken) && casToken == NO_CAS
              && loads.get(storeKey) != mine) {
            // invalidate() ran while our add was in flight, and its delete may have reached the
            // server first: remove what we wrote. At worst this costs one more miss.
            stats.staleSetDiscards.increment();
            deleteQuietly(storeKey);
          }
        }
      } finally {
        loads.remove(storeKey, mine);
        if (error == null) {
          mine.complete(loaded.value());
        } else {
          mine.completeExceptionally(error);
        }
      }
    });
    return mine.copy();
  }

  /**
   * The logical expiry of a valid envelope as this host trusts it: an entry loaded further in the
   * future than {@code maxClockSkew} (a writer whose clock runs ahead) counts as expired now.
   */
  private long trustedExpiry(byte[] bytes, long now) {
    long fetchedAt = Envelope.fetchedAt(bytes);
    if (fetchedAt - now > maxSkewMillis) {
      clockSkewLog.warn("an entry was loaded " + (fetchedAt - now) + " ms in the future by this"
          + " host's clock, more than maxClockSkew; treating it as expired. Check clock"
          + " synchronization");
      return now;
    }
    return Envelope.expiresAt(bytes);
  }

  /**
   * Re-reads the store after winning the leadership of a cold miss: another caller may have
   * filled the key between our read and our registration, and this saves a duplicate load.
   */
  private V freshValue(String storeKey) {
    try {
      StoreItem item = store.gets(storeKey).orElse(null);
      if (item != null && Envelope.isValid(item.value())) {
        long now = clock.millis();
        if (now < trustedExpiry(item.value(), now)) {
          return decode(item.value());
        }
      }
    } catch (RuntimeException e) {
      storeError("read failed; treating as a miss", e);
    }
    return null;
  }

  /** Waits for a load; every caller gets its own {@link CacheLoadException}. */
  private static <V> V join(CompletableFuture<V> future) {
    try {
      return future.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CacheLoadException("interrupted while waiting for a load", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof CacheLoadException failed) {
        throw new CacheLoadException(failed.getMessage(), failed.getCause());
      }
      if (cause instanceof Error error) {
        throw error;
      }
      throw new CacheLoadException("load failed", cause);
    }
  }

  private record Loaded<V>(V value, long fetchedAtMillis, long loadMillis) {}

  /**
   * Starts the loader unless a load of the key is already running in this JVM, in which case it
   * returns {@code null}: the one gate through which misses and background refreshes call
   * loaders, so that a key is never loaded twice at once in this JVM.
   */
  private CompletableFuture<Loaded<V>> exclusiveLoad(String key, String storeKey,
      AsyncLoader<? extends V> loader) {
    CompletableFuture<Loaded<V>> promise = new CompletableFuture<>();
    if (running.putIfAbsent(storeKey, promise) != null) {
      return null;
    }
    try {
      startLoad(key, loader).whenComplete((loaded, error) -> {
        running.remove(storeKey, promise);
        if (error == null) {
          promise.complete(loaded);
        } else {
          promise.completeExceptionally(error);
        }
      });
    } catch (RuntimeException | Error e) {
      running.remove(storeKey, promise);
      throw e;
    }
    return promise;
  }

  private void deleteQuietly(String storeKey) {
    try {
      store.delete(storeKey);
    } catch (RuntimeException e) {
      storeError("delete after a concurrent invalidation failed", e);
    }
  }

  /**
   * Starts the loader and measures it. The future fails with a {@link CacheLoadException} (the
   * loader's exception as its cause) if the loader throws, fails or yields {@code null}; failures
   * are counted here.
   */
  private CompletableFuture<Loaded<V>> startLoad(String key, AsyncLoader<? extends V> loader) {
    long start = clock.millis();
    CompletionStage<? extends V> stage;
    try {
      stage = requireNonNull(loader.load(key), "loader returned a null stage");
    } catch (Exception e) {
      stage = CompletableFuture.failedFuture(e);
    }
    CompletableFuture<Loaded<V>> result = new CompletableFuture<>();
    stage.whenComplete((value, error) -> {
      long end = clock.millis();
      long elapsed = Math.max(0, end - start);
      if (error != null || value == null) {
        stats.recordLoadFailure(elapsed);
        Throwable cause = error instanceof CompletionException && error.getCause() != null
            ? error.getCause() : error;
        result.completeExceptionally(cause == null
            ? new CacheLoadException("loader returned null", null)
            : new CacheLoadException("loader failed", cause));
      } else {
        stats.recordLoad(elapsed);
        result.complete(new Loaded<>(value, end, elapsed));
      }
    });
    return result;
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
      stats.skippedWrites.increment();
      skippedWriteLog.warn("a loaded value could not be encoded; returned to the caller, not"
          + " cached", e);
      return false;
    }
    if (bytes.length > maxValueSize) {
      stats.skippedWrites.increment();
      skippedWriteLog.warn("a loaded value of " + bytes.length + " bytes exceeds maxValueSize "
          + maxValueSize + "; returned to the caller, not cached");
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
  private CompletableFuture<V> refreshInline(String key, String storeKey, long casToken,
      AsyncLoader<? extends V> loader, V current) {
    return startLoad(key, loader).handle((loaded, error) -> {
      if (error != null) {
        stats.refreshFailures.increment();
        refreshErrorLog.warn("inline refresh failed; serving the cached value", error.getCause());
        return current;
      }
      if (write(storeKey, loaded, casToken)) {
        stats.refreshSuccesses.increment();
      }
      return loaded.value();
    });
  }

  private void scheduleRefresh(String key, String storeKey, long casToken,
      AsyncLoader<? extends V> loader, long now) {
    Backoff backoff = backoffs.get(storeKey);
    if (backoff != null && now < backoff.notBeforeMillis()) {
      stats.refreshBackoffs.increment();
      return;
    }
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

  /** Runs on the refresh executor; the key stays in flight until the load completes. */
  private void runRefresh(String key, String storeKey, long casToken,
      AsyncLoader<? extends V> loader, RefreshTicket ticket) {
    try {
      CompletableFuture<Loaded<V>> load = exclusiveLoad(key, storeKey, loader);
      if (load == null) { // a caller's load of this key is running, and it writes the value
        stats.refreshesDeduped.increment();
        refreshes.remove(storeKey, ticket);
        return;
      }
      load.whenComplete((loaded, error) -> {
        try {
          if (error != null) {
            stats.refreshFailures.increment();
            backOff(storeKey);
            refreshErrorLog.warn("background refresh failed; the cached value keeps being served",
                error.getCause() == null ? error : error.getCause());
            if (log.isDebugEnabled()) {
              log.debug("background refresh failed for key {}", storeKey, error);
            }
          } else {
            backoffs.remove(storeKey);
            if (write(storeKey, loaded, casToken)) {
              stats.refreshSuccesses.increment();
            }
          }
        } finally {
          refreshes.remove(storeKey, ticket);
        }
      });
    } catch (RuntimeException | Error e) {
      refreshes.remove(storeKey, ticket);
      throw e;
    }
  }

  /**
   * Records a failed refresh: the key's next attempt waits {@code base * 2^(failures - 1)},
   * capped, drawn from 50 % to 150 % of that.
   */
  private void backOff(String storeKey) {
    long now = clock.millis();
    if (backoffs.size() >= BACKOFF_SWEEP_THRESHOLD) {
      backoffs.values().removeIf(b -> now - b.notBeforeMillis() > lifetimeMillis);
    }
    backoffs.compute(storeKey, (k, previous) -> {
      int failures = previous == null ? 1 : previous.failures() + 1;
      long window = backoffBaseMillis;
      for (int i = 1; i < failures && window < backoffCapMillis; i++) {
        window = Math.min(backoffCapMillis, window * 2);
      }
      long wait = (long) (window * (0.5 + random.nextDouble()));
      return new Backoff(failures, now + Math.max(1, wait));
    });
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
