package io.sustainablecache;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The writes a caller issues and must know the outcome of: {@code put}, {@code putIfAbsent},
 * {@code invalidate} (a tombstone, and the fleet lease voided) and {@code invalidateAll}. Each
 * detaches the key's state in this JVM (a load in flight is voided and writes nothing) and waits
 * for the store; store failures are thrown as {@link StoreException}. Thread-safe.
 */
final class CallerWrites<V> {

  private final CacheStore store;
  private final String namespace;
  private final Keys keys;
  private final InstantSource clock;
  private final ReadPath<V> reads;
  private final EntryReader<V> reader;
  private final EntryWriter<V> writer;
  private final KeyRegistry registry;
  private final FleetLease<V> lease;
  private final StatsCounter stats;
  private final long waitNanos;
  /** The near cache; {@code null} without one. */
  private final NearCache<V> near;

  CallerWrites(CacheConfig<V> config, Keys keys, ReadPath<V> reads, EntryReader<V> reader,
      EntryWriter<V> writer, KeyRegistry registry, FleetLease<V> lease, StatsCounter stats,
      long waitNanos, NearCache<V> near) {
    this.near = near;
    this.store = config.store();
    this.namespace = config.namespace();
    this.keys = keys;
    this.clock = config.clock();
    this.reads = reads;
    this.reader = reader;
    this.writer = writer;
    this.registry = registry;
    this.lease = lease;
    this.stats = stats;
    this.waitNanos = waitNanos;
  }

  void put(String key, V value) {
    set(keys.storeKey(key), writer.encodePut(value, clock.millis()), "put");
  }

  /** Caches "no value" for the key, as a load returning null does; see SustainableCache. */
  void putAbsent(String key) {
    if (!writer.cachesAbsence()) {
      invalidate(key);
      return;
    }
    set(keys.storeKey(key), writer.encodeAbsentPut(clock.millis()), "putAbsent");
  }

  /** Writes an entry unconditionally, after detaching the key's load in flight. */
  private void set(String storeKey, byte[] entry, String operation) {
    registry.detach(storeKey);
    awaitChange(storeKey, store.set(storeKey, entry, writer.putExptime(entry)), operation);
    recordInNearLog(storeKey, operation);
    stats.increment(Counter.PUT);
  }

  /**
   * Waits for a caller's write of the key, as {@link #awaitWrite} does. A write that failed may
   * have landed all the same: the key is dropped from this instance's near cache before the
   * failure is thrown (the other instances learn nothing: a change that threw promises nothing).
   */
  private <T> T awaitChange(String storeKey, CompletableFuture<T> write, String operation) {
    try {
      return awaitWrite(write, operation);
    } catch (RuntimeException failed) {
      if (near != null) {
        near.forget(storeKey);
      }
      throw failed;
    }
  }

  /**
   * After a write of the key landed: records it in the near cache's log and drops the key here;
   * throws if the record failed (then the near cache's bound does not cover this write).
   */
  private void recordInNearLog(String storeKey, String operation) {
    if (near != null) {
      awaitNearRecord(near.changedByCaller(storeKey), operation);
    }
  }

  private void awaitNearRecord(CompletableFuture<Void> record, String operation) {
    try {
      awaitWrite(record, operation);
    } catch (StoreException e) {
      throw new StoreException(operation + " reached the store, but recording it in the near"
          + " cache's log failed: other instances may serve what it replaced from their near"
          + " cache until that expires", e);
    }
  }

  Optional<V> putIfAbsent(String key, V value) {
    String storeKey = keys.storeKey(key);
    for (int attempt = 0; attempt < 3; attempt++) {
      long now = clock.millis();
      StoreItem item;
      try {
        item = reads.readNow(storeKey);
      } catch (StoreException e) {
        stats.increment(Counter.STORE_ERROR);
        throw e;
      }
      Entry<V> entry = item == null ? null : reader.read(item, now);
      if (entry != null && entry.kind() == Entry.Kind.VALUE && now < entry.expiresAt()) {
        return Optional.of(entry.value());
      }
      byte[] bytes = writer.encodePut(value, now);
      int exptime = writer.putExptime(bytes);
      boolean stored = item == null
          ? awaitChange(storeKey, store.add(storeKey, bytes, exptime), "putIfAbsent")
          : awaitChange(storeKey, store.cas(storeKey, item.casToken(), bytes, exptime),
              "putIfAbsent") == CasOutcome.STORED;
      if (stored) {
        registry.detach(storeKey);
        recordInNearLog(storeKey, "putIfAbsent");
        stats.increment(Counter.PUT);
        return Optional.empty();
      }
    }
    throw new StoreException("putIfAbsent: the key kept changing between the read and the write"
        + " (3 attempts)");
  }

  void invalidate(String key) {
    String storeKey = keys.storeKey(key);
    registry.detach(storeKey);
    long now = clock.millis();
    CompletableFuture<Void> tombstone = store.set(storeKey, writer.tombstone(now),
        writer.tombstoneExptime(now));
    CompletableFuture<?> released = lease.onInvalidate(storeKey);
    awaitChange(storeKey, tombstone, "invalidate");
    // Loads this JVM started while the tombstone was on its way read the key before it landed.
    registry.detach(storeKey);
    recordInNearLog(storeKey, "invalidate");
    stats.increment(Counter.INVALIDATION);
    awaitQuietly(released);
  }

  /**
   * With a near cache: a new generation of the namespace (any store with counters). Without: the
   * prefix flush (ARCUS only; the SPI's default refuses with UnsupportedOperationException).
   */
  void invalidateAll() {
    if (near == null && namespace.isEmpty()) {
      throw new IllegalStateException("invalidateAll needs a namespace: without one, flushing"
          + " would remove every other cache's entries too");
    }
    registry.detachAll();
    if (near != null) {
      try {
        awaitWrite(near.invalidateAll(), "invalidateAll");
      } catch (StoreException e) {
        throw new StoreException("invalidateAll: the new generation could not be recorded and"
            + " read back; it may or may not have happened", e);
      }
    } else {
      awaitWrite(store.flushPrefix(namespace), "invalidateAll");
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
}
