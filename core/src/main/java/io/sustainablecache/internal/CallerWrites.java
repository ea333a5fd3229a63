package io.sustainablecache.internal;

import io.sustainablecache.ReadStart;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.Ticker;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.time.InstantSource;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The writes a caller issues and must know the outcome of: {@code put}, {@code putIfAbsent},
 * {@code invalidate} (a tombstone, and the fleet lease voided) and {@code invalidateAll}. Each
 * detaches the key's state in this JVM (a load in flight is voided and writes nothing), issues
 * the change as one asynchronous flow (the write, then its record in the near cache's log) and
 * waits for it in one place ({@link #finish}): store failures are thrown as {@link
 * StoreException}; on a thread that may not wait ({@link Waiting}) the change is not awaited.
 * Thread-safe.
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
  private final long maxClockSkewMillis;
  /** The near cache; {@code null} without one. */
  private final NearCache<V> near;
  /**
   * The namespace's generation, which {@code invalidateAll} changes: the near cache, or the
   * generation alone ({@code invalidateAllBound}); {@code null} for neither.
   */
  private final NearCache<V> generations;
  private final RateLimitedLog notAwaitedFailures;
  /**
   * What close() waits for: the writes themselves count there, and so does, whole, a change
   * nobody awaits and a bulk peek's putLoaded, whose first step is a read.
   */
  private final PendingWrites pending;
  /** The ticker, on which a {@link ReadStart}'s reading is compared with {@link #sightings}. */
  private final Ticker ticker;
  /** Changes that kept a {@code putLoaded} out by their time, and when this instance saw them. */
  private final ChangeSightings sightings;

  /** The invalidations this instance owes the store: changes that committed unprotected. */
  private final OwedInvalidations owed;
  /** Whether a change that cannot reach the store throws instead of being owed. */
  private final boolean failClosed;
  private final RateLimitedLog unprotectedLog;

  CallerWrites(CacheConfig<V> config, PendingWrites pending, OwedInvalidations owed, Keys keys,
      ReadPath<V> reads, EntryReader<V> reader, EntryWriter<V> writer, KeyRegistry registry,
      FleetLease<V> lease, StatsCounter stats, long waitNanos, NearCache<V> near,
      NearCache<V> generations) {
    this.owed = owed;
    this.failClosed = config.failWritesWhenStoreDown();
    this.unprotectedLog = new RateLimitedLog(Log.LOGGER, config.ticker());
    this.pending = pending;
    this.near = near;
    this.generations = generations;
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
    this.maxClockSkewMillis = config.maxClockSkew().toMillis();
    this.notAwaitedFailures = new RateLimitedLog(Log.LOGGER, config.ticker());
    this.ticker = config.ticker();
    // a sighting helps reads that begin within about maxClockSkew of the change (later ones are
    // not kept out by its time): kept twice that
    this.sightings = new ChangeSightings(ticker,
        TimeUnit.MILLISECONDS.toNanos(2 * Math.max(1, maxClockSkewMillis)),
        ChangeSightings.MAX_KEYS);
  }

  void put(String key, V value) {
    String storeKey = keys.storeKey(key);
    change(storeKey, set(storeKey, writer.encodePut(storeKey, value, clock.millis()), "put"),
        "put");
  }

  /** Caches "no value" for the key, as a load returning null does; see SustainableCache. */
  void putNoValue(String key) {
    if (!writer.cachesAbsence()) {
      invalidate(key);
      return;
    }
    String storeKey = keys.storeKey(key);
    change(storeKey, set(storeKey, writer.encodeAbsentPut(storeKey, clock.millis()),
        "putNoValue"), "putNoValue");
  }

  /** Writes an entry unconditionally, after detaching the key's load in flight. */
  private CompletableFuture<Void> set(String storeKey, byte[] entry, String operation) {
    registry.detach(storeKey);
    Object debt = owed.debtOf(storeKey);
    return landed(storeKey, store.set(storeKey, entry, writer.putExptime(entry)), operation)
        .thenCompose(stored -> recorded(storeKey, operation))
        .thenRun(() -> {
          owed.settledBy(storeKey, debt);
          stats.increment(Counter.PUT);
        });
  }

  /**
   * A caller's write of the key, failing (counted) as the caller is told. A write that failed
   * may have landed all the same: the key is dropped from this instance's near cache (the other
   * instances learn nothing: a change that failed promises nothing).
   */
  <T> CompletableFuture<T> landed(String storeKey, CompletableFuture<T> write,
      String operation) {
    CompletableFuture<T> out = new CompletableFuture<>();
    write.whenComplete((result, failure) -> {
      if (failure == null) {
        out.complete(result);
        return;
      }
      if (near != null) {
        near.forget(storeKey);
      }
      out.completeExceptionally(storeFailure(failure, operation));
    });
    return out;
  }

  /**
   * After a write of the key landed: records it in the near cache's log and drops the key here;
   * fails if the record failed (then the near cache's bound does not cover this write), counted
   * as a store error and a near record failure.
   */
  CompletableFuture<Void> recorded(String storeKey, String operation) {
    if (near == null) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> out = new CompletableFuture<>();
    near.changedByCaller(storeKey).whenComplete((done, failure) -> {
      if (failure == null) {
        out.complete(null);
        return;
      }
      stats.increment(Counter.STORE_ERROR);
      stats.increment(Counter.NEAR_RECORD_FAILURE);
      out.completeExceptionally(new StoreException(operation + " reached the store, but"
          + " recording it in the near cache's log failed: other instances may serve what it"
          + " replaced from their near cache until that expires", Failures.unwrap(failure)));
    });
    return out;
  }

  Optional<V> putIfAbsent(String key, V value) {
    String storeKey = keys.storeKey(key);
    byte[] bytes = writer.encodePut(storeKey, value, clock.millis()); // too large: fails here
    return finish(storeKey, putUnless(storeKey, bytes, null, 0)
        .thenApply(held -> held.map(Entry::value)), "putIfAbsent", Optional.empty());
  }

  /**
   * Stores a value the caller loaded from a read of the source that began at {@code readStart},
   * unless the key holds a live value or a write fence, or was invalidated, fenced or released
   * less than {@code maxClockSkew} before that read began or since (a tombstone or absence that
   * recent): the read may then have seen the data before that change was committed. Unless this
   * instance saw that very item (tombstone, absence) in the store before the read began, on the
   * ticker (a {@code readStart} with a reading of this cache's ticker): then the change was made
   * before the read, and the write is conditional on the item.
   */
  boolean putLoaded(String key, V value, ReadStart readStart) {
    String storeKey = keys.storeKey(key);
    return finish(storeKey, putLoaded(storeKey, value, readStart, null), "putLoaded", false);
  }

  /**
   * {@link #putLoaded} without waiting ({@link BulkPeek#putLoaded}), its first attempt
   * conditional on {@code seen}, what a read of the key found before (empty: nothing; {@code
   * null}: not read, so read it now).
   */
  CompletableFuture<Boolean> putLoadedAsync(String key, V value, ReadStart readStart,
      Optional<StoreItem> seen) {
    return pending.track(putLoaded(keys.storeKey(key), value, readStart, seen));
  }

  private CompletableFuture<Boolean> putLoaded(String storeKey, V value, ReadStart readStart,
      Optional<StoreItem> seen) {
    byte[] bytes = writer.encodePut(storeKey, value, clock.millis()); // too large: fails here
    ReadBegan began = new ReadBegan(readStart.instant().toEpochMilli() - maxClockSkewMillis,
        readStart.tickOn(ticker));
    CompletableFuture<Optional<StoreItem>> read = seen == null
        ? read(storeKey, "putLoaded") : CompletableFuture.completedFuture(seen);
    if (read.isCompletedExceptionally()) { // refused at once (its node is out): its failure as
      return CompletableFuture.failedFuture(Failures.failureOf(read)); // it is, not wrapped
    }
    return putUnless(storeKey, bytes, began, 0, read).thenApply(Optional::isEmpty);
  }

  /**
   * A {@code putLoaded}'s read of the source: a change (a fence, or any entry other than a live
   * value) written at or after {@code changedSince} (epoch ms: the read's start less {@code
   * maxClockSkew}) keeps its value out, unless this instance saw that item in the store before
   * {@code tick}, the read's start on this cache's ticker (empty: not known).
   */
  private record ReadBegan(long changedSince, OptionalLong tick) {}

  /**
   * Reads the key and adds (or swaps in) the value unless it holds a live one, or, for a {@code
   * putLoaded} ({@code began} not {@code null}), a fence or any other envelope written at or after
   * its {@code changedSince} (epoch ms: a tombstone, an absence, a value this cache cannot decode,
   * such as another version's committed value) that this instance did not see before the read
   * began ({@link ChangeSightings}); 3 attempts. Completes empty if the value was stored,
   * otherwise with the entry that kept it out.
   */
  private CompletableFuture<Optional<Entry<V>>> putUnless(String storeKey, byte[] bytes,
      ReadBegan began, int attempt) {
    return putUnless(storeKey, bytes, began, attempt, read(storeKey,
        began != null ? "putLoaded" : "putIfAbsent"));
  }

  /** A read of the key for a conditional write, failing (counted) as the caller is told. */
  private CompletableFuture<Optional<StoreItem>> read(String storeKey, String operation) {
    CompletableFuture<Optional<StoreItem>> read = new CompletableFuture<>();
    // handle, not whenComplete: the stage whenComplete returns would wrap a failure in a
    // CompletionException (a stack walk) that nobody reads
    store.gets(storeKey).handle((found, failure) -> {
      if (failure == null) {
        read.complete(found);
      } else {
        read.completeExceptionally(storeFailure(failure, operation));
      }
      return null;
    });
    return read;
  }

  /** {@link #putUnless}, deciding on what {@code read} found (a read of this attempt or before). */
  private CompletableFuture<Optional<Entry<V>>> putUnless(String storeKey, byte[] bytes,
      ReadBegan began, int attempt, CompletableFuture<Optional<StoreItem>> read) {
    boolean loaded = began != null;
    if (attempt == 3) {
      return loaded ? CompletableFuture.completedFuture(Optional.of(new Entry<>(
              Entry.Kind.CORRUPT, null, 0, 0, 0, 0)))
          : CompletableFuture.failedFuture(new StoreException("putIfAbsent: the key kept"
              + " changing between the read and the write (3 attempts)"));
    }
    String operation = loaded ? "putLoaded" : "putIfAbsent";
    return read.thenCompose(found -> {
      long now = clock.millis();
      StoreItem item = found.orElse(null);
      Entry<V> entry = item == null ? null : reader.read(storeKey, item, now);
      boolean fenced = entry != null
          && (entry.kind() == Entry.Kind.FENCE || entry.kind() == Entry.Kind.PRIOR);
      if (entry != null && (entry.value() != null && now < entry.expiresAt()
          || loaded && (fenced || changedSince(storeKey, item, entry, began)))) {
        return CompletableFuture.completedFuture(Optional.of(entry));
      }
      if (fenced) {
        // putIfAbsent under a fence: a transaction is changing the key's data, and what the
        // caller offers may predate the change: not written (as if stored and invalidated)
        stats.increment(Counter.SKIPPED_WRITE);
        return CompletableFuture.completedFuture(Optional.<Entry<V>>empty());
      }
      int exptime = writer.putExptime(bytes);
      CompletableFuture<Boolean> stored = item == null
          ? landed(storeKey, store.add(storeKey, bytes, exptime), operation)
          : landed(storeKey, store.cas(storeKey, item.casToken(), bytes, exptime), operation)
              .thenApply(outcome -> outcome == CasOutcome.STORED);
      return stored.thenCompose(done -> {
        if (!done) {
          return putUnless(storeKey, bytes, began, attempt + 1);
        }
        registry.detach(storeKey);
        return recorded(storeKey, operation).thenApply(recorded -> {
          stats.increment(Counter.PUT);
          return Optional.<Entry<V>>empty();
        });
      });
    });
  }

  /**
   * Whether {@code entry} (a tombstone, an absence, an expired or foreign entry: not a live value,
   * not a fence), read from {@code item}, is a change a read that {@code began} may not have seen:
   * written at or after its {@code changedSince}, and not seen by this instance in the store
   * before the read began (on the ticker). Such an item is recorded as seen now, so that reads that
   * begin from now on may write over it.
   */
  private boolean changedSince(String storeKey, StoreItem item, Entry<V> entry,
      ReadBegan began) {
    if (entry.fetchedAt() < began.changedSince()) {
      return false;
    }
    long generation = writer.generation(storeKey); // an invalidateAll changes no item
    if (began.tick().isPresent() && sightings.seenBefore(storeKey, item.casToken(),
        entry.fetchedAt(), generation, began.tick().getAsLong())) {
      return false;
    }
    sightings.saw(storeKey, item.casToken(), entry.fetchedAt(), generation);
    return true;
  }

  void invalidate(String key) {
    String storeKey = keys.storeKey(key);
    registry.detach(storeKey);
    Object debt = owed.debtOf(storeKey);
    long now = clock.millis();
    CompletableFuture<Void> tombstone = store.set(storeKey, writer.tombstone(storeKey, now),
        writer.tombstoneExptime(now));
    CompletableFuture<?> released = lease.onInvalidate(storeKey);
    change(storeKey, landed(storeKey, tombstone, "invalidate").thenCompose(written -> {
      // Loads this JVM started while the tombstone was on its way read the key before it landed.
      registry.detach(storeKey);
      return recorded(storeKey, "invalidate");
    }).thenRun(() -> {
      owed.settledBy(storeKey, debt);
      stats.increment(Counter.INVALIDATION);
    }), "invalidate");
    awaitQuietly(released);
  }

  /**
   * A caller's change of a key's data ({@code put}, {@code invalidate}), awaited as {@link
   * #finish} does; if the store fails it or does not answer, the key's invalidation is owed
   * ({@link #oweAfterCommit}) and the call returns normally, unless the cache fails closed or
   * cannot owe it (then it throws, as before). The same on a thread that may not wait, where the
   * failure comes later.
   */
  private void change(String storeKey, CompletableFuture<Void> change, String operation) {
    if (failClosed) {
      finish(storeKey, change, operation, null);
      return;
    }
    CompletableFuture<Void> owing = change.handle((done, failure) -> {
      if (failure != null) {
        RuntimeException cause = Failures.unwrap(failure) instanceof RuntimeException r ? r
            : new StoreException(operation + " failed", Failures.unwrap(failure));
        if (!(cause instanceof StoreException) || !owe(storeKey, operation, cause)) {
          throw cause;
        }
      }
      return null;
    });
    try {
      finish(storeKey, owing, operation, null);
    } catch (StoreException e) {
      // a timeout is owed; a refused debt, or an interrupted caller, is thrown as before
      if (owing.isDone() || Thread.currentThread().isInterrupted()
          || !owe(storeKey, operation, e)) {
        throw e;
      }
    }
  }

  /**
   * Before a change that could not reach the store goes on (a write fence not placed, its
   * prior not dropped): throws {@code failure} if the cache fails closed, or if the key could not
   * be owed after the commit ({@link OwedInvalidations#MAX_KEYS} reached without a generation).
   * Otherwise returns, and the commit owes the key ({@link #oweAfterCommit}).
   */
  void refuseUnlessOwing(String storeKey, String operation, StoreException failure) {
    if (failClosed || !owed.canOwe(storeKey)) {
      throw failure;
    }
    unprotectedLog.warn(operation + " of key " + storeKey + " could not reach the store; the"
        + " transaction goes on, and its commit owes the key's invalidation", failure);
  }

  /**
   * A change of a key's data committed without its invalidation reaching the store: owed, so
   * that no read here is answered from the store before it is paid. Never throws a store
   * failure (the transaction committed): a key that cannot be owed is logged.
   */
  void oweAfterCommit(String storeKey, String operation) {
    owe(storeKey, operation, null);
  }

  /**
   * Owes the key's invalidation: this JVM's loads of it are voided and the near cache forgets it
   * (they may have read the data before the change). Logged at WARN, rate limited.
   *
   * @return {@code false} if it could not be owed (logged)
   */
  private boolean owe(String storeKey, String operation, RuntimeException failure) {
    registry.detach(storeKey);
    forget(storeKey);
    boolean owing = owed.owe(storeKey);
    String message = owing ? operation + " of key " + storeKey + " could not reach the store;"
        + " its invalidation is owed, and paid as soon as the store takes it"
        : operation + " of key " + storeKey + " could not reach the store, and this instance"
        + " already owes the store " + OwedInvalidations.MAX_KEYS + " invalidations with no"
        + " generation to fall back on: other instances may serve what the change replaced"
        + " until its TTL";
    if (failure == null) {
      unprotectedLog.warn(message);
    } else {
      unprotectedLog.warn(message, failure);
    }
    return owing;
  }

  /**
   * With a near cache or {@code invalidateAllBound}: a new generation of the namespace (any store
   * with counters). Without: the prefix flush (ARCUS only; the SPI's default refuses with an
   * UnsupportedOperationException, rethrown naming {@code invalidateAllBound}).
   */
  void invalidateAll() {
    if (generations == null && namespace.isEmpty()) {
      throw new IllegalStateException("invalidateAll needs a namespace: without one, flushing"
          + " would remove every other cache's entries too");
    }
    registry.detachAll();
    CompletableFuture<Void> change = new CompletableFuture<>();
    (generations != null ? generations.invalidateAll() : store.flushPrefix(namespace))
        .whenComplete((done, failure) -> {
          if (failure == null) {
            change.complete(null);
          } else if (generations != null) {
            stats.increment(Counter.STORE_ERROR);
            change.completeExceptionally(new StoreException("invalidateAll: the new generation"
                + " could not be recorded and read back; it may or may not have happened",
                Failures.unwrap(failure)));
          } else if (Failures.unwrap(failure) instanceof UnsupportedOperationException e) {
            change.completeExceptionally(new UnsupportedOperationException("invalidateAll: "
                + e.getMessage() + "; the cache has no generation (invalidateAllBound, setting"
                + " invalidate-all-bound, is zero, or the store has no counters): leave the"
                + " bound at its default, or set a near cache, for invalidateAll on every"
                + " store", e));
          } else {
            change.completeExceptionally(storeFailure(failure, "invalidateAll"));
          }
        });
    finish(null, change.thenRun(() -> {
      registry.detachAll();
      stats.increment(Counter.INVALIDATION);
    }), "invalidateAll", null);
  }

  /**
   * A failed store call as the caller is told: an {@link UnsupportedOperationException} as it
   * is; anything else counted as a store error and thrown as a {@link StoreException}.
   */
  private RuntimeException storeFailure(Throwable failure, String operation) {
    Throwable cause = Failures.unwrap(failure);
    if (cause instanceof UnsupportedOperationException unsupported) {
      return unsupported;
    }
    stats.increment(Counter.STORE_ERROR);
    return cause instanceof StoreException storeException ? storeException
        : new StoreException(operation + " failed", cause);
  }

  /**
   * The one place where a caller's write is awaited. On a thread that may not wait ({@link
   * Waiting}), a change that has not completed yet is not awaited: {@code notAwaited} is
   * returned, and a later failure (counted already) is logged. Otherwise the change is awaited
   * and its failure thrown; a change that did not complete in time drops the key (if any) from
   * this instance's near cache, since it may still land.
   *
   * @param storeKey the key changed, or {@code null} for every key
   */
  <T> T finish(String storeKey, CompletableFuture<T> change, String operation,
      T notAwaited) {
    if (!change.isDone() && !Waiting.allowed(store)) {
      pending.track(change).whenComplete((result, failure) -> {
        if (failure != null) {
          notAwaitedFailures.warn(operation + " was called on a thread that delivers the"
              + " store's answers, so nobody waited for it, and it failed",
              Failures.unwrap(failure));
        }
      });
      return notAwaited;
    }
    return Waiting.await(change, waitNanos, null, (how, failure) -> {
      if (how == Waiting.Unfinished.FAILED) {
        if (failure instanceof Error error) {
          throw error;
        }
        return failure instanceof RuntimeException runtime ? runtime
            : new StoreException(operation + " failed", failure);
      }
      forget(storeKey);
      stats.increment(Counter.STORE_ERROR);
      return new StoreException(operation + (how == Waiting.Unfinished.TIMED_OUT
          ? ": the store did not answer in time" : " interrupted")
          + "; it may or may not have happened", failure);
    });
  }

  private void forget(String storeKey) {
    if (near != null && storeKey != null) {
      near.forget(storeKey);
    }
  }

  void awaitQuietly(CompletableFuture<?> future) {
    if (!future.isDone() && !Waiting.allowed(store)) {
      future.whenComplete((done, failure) -> {
        if (failure != null) {
          reads.storeError("releasing a fleet lease failed", Failures.unwrap(failure));
        }
      });
      return;
    }
    Waiting.await(future, waitNanos, null, (how, failure) -> {
      if (how != Waiting.Unfinished.INTERRUPTED) {
        reads.storeError("releasing a fleet lease failed", failure);
      }
      return null;
    });
  }
}
