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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * {@code getAll}: one bulk read for all keys, the decision per key, one bulk loader call for all
 * the keys this JVM must load (keys already loading are joined), and pipelined writes. The keys
 * found in their refresh window go to {@link BulkRefreshes}, which coalesces them into bulk loader
 * calls made by {@link #load}. Thread-safe.
 */
final class BulkLoads<V> {

  private final Keys keys;
  private final ReadPath<V> reads;
  private final KeyRegistry registry;
  private final LoadCoordinator<V> loads;
  private final Refresher refresher;
  private final CacheStore store;
  private final InstantSource clock;
  private final Ticker ticker;
  private final StatsCounter stats;
  private final boolean serveStaleOnError;
  private final long waitNanos;
  private final BulkRefreshes<V> refreshes;

  BulkLoads(CacheConfig<V> config, Keys keys, ReadPath<V> reads, KeyRegistry registry,
      LoadCoordinator<V> loads, Refresher refresher, FleetLease<V> lease, StatsCounter stats,
      long waitNanos) {
    this.keys = keys;
    this.reads = reads;
    this.registry = registry;
    this.loads = loads;
    this.refresher = refresher;
    this.store = config.store();
    this.clock = config.clock();
    this.ticker = config.ticker();
    this.stats = stats;
    this.serveStaleOnError = config.serveStaleOnError();
    this.waitNanos = waitNanos;
    this.refreshes = new BulkRefreshes<>(config, registry, loads, refresher, lease, stats,
        waitNanos, (flights, bulkLoader) -> load(flights, bulkLoader, true));
  }

  Map<String, V> getAll(Collection<String> keys, BulkLoader<? extends V> loader) {
    CallerRuns here = new CallerRuns(refresher.asExecutor());
    boolean mayWait = Waiting.allowed(store);
    CompletableFuture<Map<String, V>> result = run(keys,
        wanted -> CompletableFuture.completedFuture(loader.loadAll(wanted)), loader, here, here,
        mayWait);
    try {
      // on a thread that may not wait, the loader queued here runs, and nothing is waited for
      return here.drive(result, mayWait ? waitNanos : 0);
    } catch (ExecutionException e) {
      throw Failures.rethrow(e.getCause());
    } catch (TimeoutException e) {
      throw new CacheLoadException(mayWait ? "gave up waiting for a bulk load" : "keys are being"
          + " loaded by another thread, and this thread delivers the store's answers, so it does"
          + " not wait", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CacheLoadException("interrupted while waiting for a bulk load", e);
    }
  }

  CompletableFuture<Map<String, V>> getAllAsync(Collection<String> keys,
      AsyncBulkLoader<? extends V> loader) {
    return run(keys, loader, loader, LoadCoordinator.DIRECT,
        reads.loaderExecutor(Thread.currentThread()), true);
  }

  /**
   * @param continuation where the decisions run after the bulk read: the synchronous caller's
   *     thread (so that a recursive load is detected), or the thread that completed the read
   * @param loadOn where the bulk loader starts (see {@link LoadCoordinator#miss})
   * @param readStore {@code false} for a synchronous call on a thread that may not wait (see
   *     {@link Waiting}): the keys the near cache does not answer are read as a failed read
   */
  private CompletableFuture<Map<String, V>> run(Collection<String> callerKeys,
      AsyncBulkLoader<? extends V> loader, Object loaderIdentity, Executor continuation,
      Executor loadOn, boolean readStore) {
    // The keys the near cache answers, with the read step; the others are read from the store.
    NearCache<V> near = reads.near();
    Set<String> order = new LinkedHashSet<>();
    Map<String, Object> answers = new HashMap<>();
    List<LoadRequest<V>> toRefresh = new ArrayList<>();
    Map<String, String> storeKeys = new LinkedHashMap<>();
    long now = clock.millis();
    for (String key : callerKeys) {
      if (!order.add(requireNonNull(key, "key"))) {
        continue;
      }
      if (near != null) {
        NearEntry<V> hit = near.get(key);
        Decision.Action action = reads.nearStep(key, hit, now);
        Object answer = action == null ? null : near.answer(key, hit);
        if (answer != null) {
          answers.put(key, answer);
          if (action != Decision.Action.FRESH) {
            toRefresh.add(LoadRequest.of(key, keys.storeKey(key), hit.entry(),
                LoadRequest.READ_OK));
          }
          continue;
        }
      }
      storeKeys.put(key, keys.storeKey(key));
    }
    if (storeKeys.isEmpty()) {
      refreshes.refresh(toRefresh, loader, loaderIdentity);
      return CompletableFuture.completedFuture(result(order, answers));
    }
    NearTier.Ticket ticket = reads.nearTicket();
    CompletableFuture<Map<String, V>> out = new CompletableFuture<>();
    long readMark = registry.readMark();
    CompletableFuture<Map<String, StoreItem>> read = readStore
        ? store.getsAll(new ArrayList<>(storeKeys.values()))
        : CompletableFuture.failedFuture(Waiting.notRead());
    read.whenCompleteAsync((items, error) -> {
      try {
        afterRead(out, order, storeKeys, answers, toRefresh, items,
            readMark, error, ticket, loader,
            loaderIdentity, loadOn);
      } catch (Throwable t) {
        out.completeExceptionally(t);
      }
    }, continuation);
    return out;
  }

  /** The answers that are values, in the caller's order of the keys. */
  private Map<String, V> result(Set<String> order, Map<String, Object> answers) {
    Map<String, V> result = new LinkedHashMap<>();
    for (String key : order) {
      Object answer = answers.get(key);
      if (answer != null && answer != ReadPath.ABSENT) {
        result.put(key, cast(answer));
      }
    }
    return result;
  }

  private void afterRead(CompletableFuture<Map<String, V>> out, Set<String> order,
      Map<String, String> storeKeys, Map<String, Object> answers,
      List<LoadRequest<V>> toRefresh, Map<String, StoreItem> items, long readMark,
      Throwable readError, NearTier.Ticket ticket, AsyncBulkLoader<? extends V> loader,
      Object loaderIdentity, Executor loadOn) {
    boolean readFailed = readError != null;
    if (readFailed) {
      reads.storeError("a bulk read failed; treating every key as a miss",
          EntryWriter.unwrap(readError));
    }
    long now = clock.millis();
    List<LoadRequest<V>> toLoad = new ArrayList<>();
    for (Map.Entry<String, String> key : storeKeys.entrySet()) {
      StoreItem item = items == null ? null : items.get(key.getValue());
      Entry<V> entry = reads.entry(key.getValue(), item, now, ticket);
      Decision.Action action = reads.step(entry, now);
      LoadRequest<V> request =
          LoadRequest.of(key.getKey(), key.getValue(), entry,
              LoadRequest.markOf(entry, readFailed, readMark));
      switch (action) {
        case FRESH -> answers.put(key.getKey(), ReadPath.answer(entry));
        case REFRESH_BACKGROUND, STALE -> {
          answers.put(key.getKey(), ReadPath.answer(entry));
          toRefresh.add(request);
        }
        case REFRESH_INLINE -> {
          stats.increment(Counter.MISS); // the caller waits for the reload
          toLoad.add(request);
        }
        default -> toLoad.add(request);
      }
    }
    refreshes.refresh(toRefresh, loader, loaderIdentity);

    Map<String, CompletableFuture<Loaded<V>>> waits = new LinkedHashMap<>();
    List<Flight<V>> own = new ArrayList<>();
    Throwable[] failure = new Throwable[1];
    for (LoadRequest<V> wanted : toLoad) {
      KeyRegistry.Begin begin = registry.begin(wanted, Flight.Origin.MISS, now);
      if (begin instanceof KeyRegistry.Started<?> started) {
        Flight<V> flight = cast(started.flight());
        own.add(flight);
        waits.put(wanted.key(), flight.answer());
      } else if (begin instanceof KeyRegistry.Joined<?> joined) {
        Flight<V> flight = cast(joined.flight());
        waits.put(wanted.key(), flight.answer());
      } else if (begin instanceof KeyRegistry.After<?> after) {
        waits.put(wanted.key(), afterEnded(wanted, after.flight(), loader, loadOn));
      } else if (begin instanceof KeyRegistry.Remembered remembered) {
        stats.increment(Counter.FAILURE_REMEMBERED);
        if (!answerStale(answers, wanted) && failure[0] == null) {
          failure[0] = Backoff.exception(remembered.failure(), registry.tickMillis());
        }
      } else if (failure[0] == null) {
        failure[0] = LoadCoordinator.recursive();
      }
    }
    if (!own.isEmpty()) {
      startLoad(own, loader, !readFailed, loadOn);
    }
    CompletableFuture.allOf(waits.values().toArray(new CompletableFuture<?>[0]))
        .whenComplete((ignored, error) -> {
          try {
            for (LoadRequest<V> wanted : toLoad) {
              CompletableFuture<Loaded<V>> wait = waits.get(wanted.key());
              if (wait == null) {
                continue;
              }
              if (!wait.isCompletedExceptionally()) {
                Loaded<V> loaded = wait.join();
                if (loaded.wasLoaded()) {
                  answers.put(wanted.key(), ReadPath.answer(loaded));
                  continue;
                }
              }
              if (!answerStale(answers, wanted) && failure[0] == null) {
                failure[0] = wait.isCompletedExceptionally()
                    ? wait.handle((value, thrown) -> thrown).join()
                    : new CacheLoadException("a key could not be loaded:"
                        + " the load it joined ended without a value", null);
              }
            }
            if (failure[0] != null) {
              out.completeExceptionally(Failures.forCaller(failure[0]));
              return;
            }
            out.complete(result(order, answers));
          } catch (Throwable t) {
            out.completeExceptionally(t);
          }
        });
  }

  /**
   * A key whose failed read may not share {@code older} ({@link KeyRegistry.After}): begins
   * again once that flight has ended, as a load of its own (one bulk loader call for the key) or
   * joining a load registered since.
   */
  private CompletableFuture<Loaded<V>> afterEnded(LoadRequest<V> wanted, Flight<?> older,
      AsyncBulkLoader<? extends V> loader, Executor on) {
    return older.ended().thenCompose(ended -> {
      KeyRegistry.Begin begin = registry.begin(wanted, Flight.Origin.MISS, clock.millis());
      if (begin instanceof KeyRegistry.Started<?> started) {
        Flight<V> flight = cast(started.flight());
        startLoad(List.of(flight), loader, false, on);
        return flight.answer();
      }
      if (begin instanceof KeyRegistry.Joined<?> joined) {
        Flight<V> flight = cast(joined.flight());
        return flight.answer();
      }
      if (begin instanceof KeyRegistry.After<?> after) {
        return afterEnded(wanted, after.flight(), loader, on);
      }
      if (begin instanceof KeyRegistry.Remembered remembered) {
        stats.increment(Counter.FAILURE_REMEMBERED);
        return CompletableFuture.failedFuture(
            Backoff.exception(remembered.failure(), registry.tickMillis()));
      }
      return CompletableFuture.failedFuture(LoadCoordinator.recursive());
    });
  }

  /** Answers a key with its stale entry, if allowed; whether it did. */
  private boolean answerStale(Map<String, Object> answers, LoadRequest<V> wanted) {
    if (wanted.stale() == null || !serveStaleOnError) {
      return false;
    }
    stats.increment(Counter.STALE_ON_ERROR);
    answers.put(wanted.key(), ReadPath.answer(wanted.stale()));
    return true;
  }

  /**
   * Starts one bulk load of a caller's flights on {@code on}; if it refuses (a synchronous caller
   * that left), on the refresh executor; if that refuses too, the flights end without loading.
   */
  private void startLoad(List<Flight<V>> flights, AsyncBulkLoader<? extends V> loader,
      boolean writeBack, Executor on) {
    Refusable task = Refusable.of(() -> load(flights, loader, writeBack),
        () -> flights.forEach(loads::abandon));
    try {
      on.execute(task);
    } catch (RejectedExecutionException e) {
      refresher.submit(task);
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
    long start = ticker.read();
    long[] generations = new long[flights.size()];
    for (int i = 0; i < generations.length; i++) {
      generations[i] = loads.generation(flights.get(i).storeKey);
    }
    stats.increment(Counter.BULK_LOAD);
    stats.increment(Counter.LOADER_CALL);
    CompletionStage<? extends Map<String, ? extends V>> stage;
    flights.forEach(flight -> {
      flight.enterLoader(starter);
    });
    try {
      stage = requireNonNull(loader.loadAll(wanted), "the bulk loader returned a null stage");
    } catch (Throwable t) {
      stage = CompletableFuture.failedFuture(t);
    } finally {
      flights.forEach(Flight::leaveLoader);
    }
    stage.whenComplete((values, error) -> {
      long end = clock.millis(); // the values' load time, for other hosts
      long elapsed = loads.elapsedMillis(start);
      Throwable failure = error != null ? EntryWriter.unwrap(error)
          : values == null ? new NullPointerException("the bulk loader returned a null map")
          : null;
      List<V> loaded = new ArrayList<>(flights.size());
      if (failure == null) {
        try { // the caller's map: its get may throw, which fails the load at once
          for (Flight<V> flight : flights) {
            loaded.add(values.get(flight.key));
          }
        } catch (Throwable t) {
          failure = t;
        }
      }
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
              new Loaded<>(loaded.get(i), end, elapsed, generations[i]),
              writeBack, statsMillis);
          if (write != null) {
            writes.add(write);
          }
        }
      }
      if (writes.isEmpty()) {
        return;
      }
      Runnable writeAll = () -> writes.forEach(Runnable::run);
      if (Thread.currentThread() == starter) {
        writeAll.run();
      } else {
        refresher.submit(Refusable.of(writeAll, writeAll)); // refused: written on this thread
      }
    });
  }

  @SuppressWarnings("unchecked")
  private static <T> T cast(Object o) {
    return (T) o;
  }
}
