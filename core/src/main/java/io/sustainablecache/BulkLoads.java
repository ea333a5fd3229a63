package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreItem;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.random.RandomGenerator;

/**
 * {@code getAll}: one bulk read for all keys, the decision per key, one bulk loader call for all
 * the keys this JVM must load (keys already loading are joined), pipelined writes, and background
 * refreshes of the keys found in their refresh window coalesced into bulk loader calls (batched
 * across calls that pass the same loader instance, within {@code refreshBatch} bounds).
 * Thread-safe.
 */
final class BulkLoads<V> {

  /** A key to load or refresh: the caller's key, the store key and the token of its read. */
  private record Wanted<V>(String key, String storeKey, long casToken, Entry<V> stale) {}

  private final DefaultSustainableCache<V> cache;
  private final CacheStore store;
  private final InstantSource clock;
  private final RandomGenerator random;
  private final RefreshPolicy policy;
  private final Policies.Mode mode;
  private final StatsCounter stats;
  private final Scheduler scheduler;
  private final boolean serveStaleOnError;
  private final int batchSize;
  private final long batchDelayMillis;
  private final long waitNanos;
  private final ConcurrentHashMap<Object, Batch> batches = new ConcurrentHashMap<>();

  BulkLoads(DefaultSustainableCache<V> cache, CacheConfig<V> config, StatsCounter stats) {
    this.cache = cache;
    this.store = config.store();
    this.clock = config.clock();
    this.random = config.random();
    this.policy = config.policy();
    this.mode = Policies.modeOf(policy);
    this.stats = stats;
    this.scheduler = config.scheduler();
    this.serveStaleOnError = config.serveStaleOnError();
    this.batchSize = config.refreshBatchSize();
    this.batchDelayMillis = config.refreshBatchDelay().toMillis();
    this.waitNanos = TimeUnit.MILLISECONDS.toNanos(config.loadTimeout().toMillis() + 1_000);
  }

  Map<String, V> getAll(Collection<String> keys, BulkLoader<? extends V> loader) {
    CallerRuns here = new CallerRuns();
    CompletableFuture<Map<String, V>> result = run(keys,
        wanted -> CompletableFuture.completedFuture(loader.loadAll(wanted)), loader, here);
    try {
      return here.drive(result, waitNanos);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof CacheLoadException failure) {
        if (failure.getCause() instanceof Error error) {
          throw error;
        }
        throw new CacheLoadException(failure.getMessage(), failure.getCause());
      }
      if (cause instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (cause instanceof Error error) {
        throw error;
      }
      throw new CacheLoadException("the bulk load failed", cause);
    } catch (TimeoutException e) {
      throw new CacheLoadException("gave up waiting for a bulk load", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CacheLoadException("interrupted while waiting for a bulk load", e);
    }
  }

  CompletableFuture<Map<String, V>> getAllAsync(Collection<String> keys,
      AsyncBulkLoader<? extends V> loader) {
    return run(keys, loader, loader, LoadCoordinator.DIRECT);
  }

  private CompletableFuture<Map<String, V>> run(Collection<String> callerKeys,
      AsyncBulkLoader<? extends V> loader, Object loaderIdentity, Executor continuation) {
    Map<String, String> storeKeys = new LinkedHashMap<>();
    for (String key : callerKeys) {
      storeKeys.putIfAbsent(key, cache.keys().storeKey(requireNonNull(key, "key")));
    }
    if (storeKeys.isEmpty()) {
      return CompletableFuture.completedFuture(new LinkedHashMap<>());
    }
    CompletableFuture<Map<String, V>> out = new CompletableFuture<>();
    store.getsAll(new ArrayList<>(storeKeys.values())).whenCompleteAsync((items, error) -> {
      try {
        afterRead(out, storeKeys, items, error, loader, loaderIdentity);
      } catch (Throwable t) {
        out.completeExceptionally(t);
      }
    }, continuation);
    return out;
  }

  private void afterRead(CompletableFuture<Map<String, V>> out, Map<String, String> storeKeys,
      Map<String, StoreItem> items, Throwable readError, AsyncBulkLoader<? extends V> loader,
      Object loaderIdentity) {
    boolean writeBack = readError == null;
    if (readError != null) {
      cache.storeError("a bulk read failed; treating every key as a miss",
          EntryWriter.unwrap(readError));
    }
    long now = clock.millis();
    Map<String, Object> answers = new HashMap<>();
    List<Wanted<V>> toLoad = new ArrayList<>();
    List<Wanted<V>> toRefresh = new ArrayList<>();
    for (Map.Entry<String, String> key : storeKeys.entrySet()) {
      StoreItem item = items == null ? null : items.get(key.getValue());
      Entry<V> entry = item == null ? null : cache.reader().read(item, now);
      Decision.Action action = Decision.decide(entry, now, mode, policy, random);
      if (action != Decision.Action.MISS) {
        stats.increment(Counter.HIT);
        if (entry.kind() == Entry.Kind.ABSENT) {
          stats.increment(Counter.ABSENT_HIT);
        }
      }
      switch (action) {
        case FRESH -> answers.put(key.getKey(), DefaultSustainableCache.answer(entry));
        case REFRESH_BACKGROUND, STALE -> {
          if (action == Decision.Action.STALE) {
            stats.increment(Counter.STALE_HIT);
          }
          answers.put(key.getKey(), DefaultSustainableCache.answer(entry));
          toRefresh.add(new Wanted<>(key.getKey(), key.getValue(), entry.casToken(), entry));
        }
        case REFRESH_INLINE -> toLoad.add(
            new Wanted<>(key.getKey(), key.getValue(), entry.casToken(), entry));
        default -> {
          stats.increment(Counter.MISS);
          toLoad.add(new Wanted<>(key.getKey(), key.getValue(),
              entry == null ? EntryWriter.NO_CAS : entry.casToken(),
              entry != null && entry.answers() ? entry : null));
        }
      }
    }
    refreshInBackground(toRefresh, loader, loaderIdentity);

    Map<String, CompletableFuture<Loaded<V>>> waits = new LinkedHashMap<>();
    List<Flight<V>> own = new ArrayList<>();
    RuntimeException[] failure = new RuntimeException[1];
    for (Wanted<V> wanted : toLoad) {
      KeyRegistry.Begin begin = cache.registry().begin(wanted.key(), wanted.storeKey(),
          Flight.Origin.MISS, wanted.casToken(), now);
      if (begin instanceof KeyRegistry.Started<?> started) {
        Flight<V> flight = cast(started.flight());
        own.add(flight);
        waits.put(wanted.key(), flight.result);
      } else if (begin instanceof KeyRegistry.Joined<?> joined) {
        Flight<V> flight = cast(joined.flight());
        waits.put(wanted.key(), flight.result);
      } else if (begin instanceof KeyRegistry.Remembered remembered) {
        stats.increment(Counter.FAILURE_REMEMBERED);
        if (!answerStale(answers, wanted) && failure[0] == null) {
          failure[0] = LoadCoordinator.rememberedFailure(remembered.failure(), now);
        }
      } else if (failure[0] == null) {
        failure[0] = LoadCoordinator.recursive();
      }
    }
    if (!own.isEmpty()) {
      load(own, loader, writeBack);
    }
    CompletableFuture.allOf(waits.values().toArray(new CompletableFuture<?>[0]))
        .whenComplete((ignored, error) -> {
          try {
            for (Wanted<V> wanted : toLoad) {
              CompletableFuture<Loaded<V>> wait = waits.get(wanted.key());
              if (wait == null) {
                continue;
              }
              if (!wait.isCompletedExceptionally()) {
                Loaded<V> loaded = wait.join();
                if (loaded.wasLoaded()) {
                  answers.put(wanted.key(), DefaultSustainableCache.answer(loaded));
                  continue;
                }
              }
              if (!answerStale(answers, wanted) && failure[0] == null) {
                failure[0] = wait.isCompletedExceptionally()
                    ? asLoadFailure(wait) : new CacheLoadException("a key could not be loaded:"
                        + " the load it joined ended without a value", null);
              }
            }
            if (failure[0] != null) {
              out.completeExceptionally(failure[0]);
              return;
            }
            Map<String, V> result = new LinkedHashMap<>();
            for (String key : storeKeys.keySet()) {
              Object answer = answers.get(key);
              if (answer != null && !DefaultSustainableCache.isAbsent(answer)) {
                result.put(key, cast(answer));
              }
            }
            out.complete(result);
          } catch (Throwable t) {
            out.completeExceptionally(t);
          }
        });
  }

  /** Answers a key with its stale entry, if allowed; whether it did. */
  private boolean answerStale(Map<String, Object> answers, Wanted<V> wanted) {
    if (wanted.stale() == null || !serveStaleOnError) {
      return false;
    }
    stats.increment(Counter.STALE_ON_ERROR);
    answers.put(wanted.key(), DefaultSustainableCache.answer(wanted.stale()));
    return true;
  }

  private static RuntimeException asLoadFailure(CompletableFuture<?> failed) {
    try {
      failed.join();
      return new IllegalStateException("not failed");
    } catch (RuntimeException e) {
      Throwable cause = EntryWriter.unwrap(e);
      return cause instanceof RuntimeException runtime ? runtime
          : new CacheLoadException("the load failed", cause);
    }
  }

  /**
   * One bulk loader call for the given flights, on this thread; completes each flight with its
   * key's value (or none), writes each and deregisters it.
   */
  private void load(List<Flight<V>> flights, AsyncBulkLoader<? extends V> loader,
      boolean writeBack) {
    Set<String> keys = new LinkedHashSet<>();
    for (Flight<V> flight : flights) {
      keys.add(flight.key);
    }
    Set<String> wanted = Collections.unmodifiableSet(keys);
    Thread starter = Thread.currentThread();
    long start = clock.millis();
    stats.increment(Counter.BULK_LOAD);
    CompletionStage<? extends Map<String, ? extends V>> stage;
    flights.forEach(flight -> flight.loaderThread = starter);
    try {
      stage = requireNonNull(loader.loadAll(wanted), "the bulk loader returned a null stage");
    } catch (Throwable t) {
      stage = CompletableFuture.failedFuture(t);
    } finally {
      flights.forEach(flight -> flight.loaderThread = null);
    }
    LoadCoordinator<V> loads = cache.loads();
    stage.whenComplete((values, error) -> {
      long end = clock.millis();
      long elapsed = Math.max(0, end - start);
      Throwable failure = error != null ? EntryWriter.unwrap(error)
          : values == null ? new NullPointerException("the bulk loader returned a null map")
          : null;
      // The flights complete here, on whichever thread completed the stage: their callers
      // never wait for the executor. Only the writes are handed to it when that thread is a
      // foreign one (an async driver's event loop), as for single keys.
      List<Runnable> writes = new ArrayList<>(flights.size());
      for (int i = 0; i < flights.size(); i++) {
        Flight<V> flight = flights.get(i);
        long statsMillis = i == 0 ? elapsed : 0; // the call's time, counted once
        if (failure != null) {
          loads.failed(flight, failure, statsMillis);
        } else {
          Runnable write = loads.complete(flight,
              new Loaded<>(values.get(flight.key), end, elapsed), writeBack, statsMillis);
          if (write != null) {
            writes.add(write);
          }
        }
      }
      if (writes.isEmpty()) {
        return;
      }
      Runnable writeAll = () -> writes.forEach(Runnable::run);
      if (Thread.currentThread() == starter || !cache.refresher().submit(writeAll)) {
        writeAll.run();
      }
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Coalesced background refreshes

  private void refreshInBackground(List<Wanted<V>> keys, AsyncBulkLoader<? extends V> loader,
      Object loaderIdentity) {
    if (keys.isEmpty()) {
      return;
    }
    if (cache.refresher().isClosed()) {
      stats.add(Counter.REFRESH_REJECTED, keys.size());
      return;
    }
    List<Flight<V>> flights = new ArrayList<>();
    long now = clock.millis();
    for (Wanted<V> wanted : keys) {
      KeyRegistry.Begin begin = cache.registry().begin(wanted.key(), wanted.storeKey(),
          Flight.Origin.REFRESH, wanted.casToken(), now);
      if (begin instanceof KeyRegistry.Started<?> started) {
        flights.add(cast(started.flight()));
      } else if (begin instanceof KeyRegistry.Busy busy && busy.backingOff()) {
        stats.increment(Counter.REFRESH_BACKOFF);
      } else {
        stats.increment(Counter.REFRESH_DEDUPED);
      }
    }
    if (flights.isEmpty()) {
      return;
    }
    if (batchDelayMillis == 0) {
      for (int from = 0; from < flights.size(); from += batchSize) {
        submit(flights.subList(from, Math.min(flights.size(), from + batchSize)), loader);
      }
      return;
    }
    List<List<Flight<V>>> full = new ArrayList<>();
    Batch[] created = new Batch[1];
    batches.compute(loaderIdentity, (identity, batch) -> {
      Batch current = batch;
      for (Flight<V> flight : flights) {
        if (current == null) {
          current = new Batch(loader);
          created[0] = current;
        }
        current.flights.add(flight);
        if (current.flights.size() >= batchSize) {
          full.add(cast(current.flights));
          current = null;
        }
      }
      return current;
    });
    for (List<Flight<V>> batch : full) {
      submit(batch, loader);
    }
    Batch pending = created[0];
    if (pending != null && batches.get(loaderIdentity) == pending) {
      try {
        scheduler.schedule(() -> flush(loaderIdentity, pending), batchDelayMillis,
            TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        flush(loaderIdentity, pending);
      }
    }
  }

  private void flush(Object loaderIdentity, Batch batch) {
    if (batches.remove(loaderIdentity, batch)) {
      submit(cast(batch.flights), cast(batch.loader));
    }
  }

  private void submit(List<Flight<V>> flights, AsyncBulkLoader<? extends V> loader) {
    List<Flight<V>> copy = List.copyOf(flights);
    if (cache.refresher().submit(() -> runRefresh(copy, loader))) {
      stats.add(Counter.REFRESH_SCHEDULED, copy.size());
    } else {
      for (Flight<V> flight : copy) {
        cache.registry().abandon(flight);
      }
      stats.add(Counter.REFRESH_REJECTED, copy.size());
    }
  }

  /** On a refresh thread: takes each key's fleet lease (if configured), loads the winners. */
  private void runRefresh(List<Flight<V>> flights, AsyncBulkLoader<? extends V> loader) {
    try {
      List<Flight<V>> winners = flights;
      FleetLease<V> lease = cache.lease();
      if (lease.enabled()) {
        List<CompletableFuture<Boolean>> leases = new ArrayList<>(flights.size());
        for (Flight<V> flight : flights) {
          leases.add(lease.beforeRefresh(flight)); // pipelined: one round trip for all
        }
        CallerRuns here = new CallerRuns();
        here.drive(CompletableFuture.allOf(leases.toArray(new CompletableFuture<?>[0])),
            waitNanos);
        winners = new ArrayList<>(flights.size());
        for (int i = 0; i < flights.size(); i++) {
          if (leases.get(i).join()) {
            winners.add(flights.get(i));
          } else {
            cache.registry().abandon(flights.get(i));
          }
        }
      }
      if (!winners.isEmpty()) {
        load(winners, loader, true);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      flights.forEach(flight -> cache.registry().abandon(flight));
    } catch (Exception | Error e) {
      for (Flight<V> flight : flights) {
        cache.loads().failed(flight, e, 0);
      }
    }
  }

  /** Refresh flights of one loader waiting to be loaded together. Guarded by the map's bin. */
  private static final class Batch {
    final Object loader;
    final List<Flight<?>> flights = new ArrayList<>();

    Batch(Object loader) {
      this.loader = loader;
    }
  }

  @SuppressWarnings("unchecked")
  private static <T> T cast(Object o) {
    return (T) o;
  }
}
