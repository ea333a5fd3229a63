package io.sustainablecache.internal;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.AsyncBulkLoader;
import io.sustainablecache.BulkLoader;
import io.sustainablecache.CacheLoadException;
import io.sustainablecache.Ticker;
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
 * calls; every load goes through the {@link LoadPipeline}, as a single key's does. Thread-safe.
 */
final class BulkLoads<V> {

  private final Keys keys;
  private final ReadPath<V> reads;
  private final KeyRegistry registry;
  private final LoadPipeline<V> loads;
  private final Refresher refresher;
  private final CacheStore store;
  private final InstantSource clock;
  private final Ticker ticker;
  private final StatsCounter stats;
  private final long waitNanos;
  private final BulkRefreshes<V> refreshes;

  BulkLoads(CacheConfig<V> config, Keys keys, ReadPath<V> reads, KeyRegistry registry,
      LoadPipeline<V> loads, Refresher refresher, StatsCounter stats, long waitNanos) {
    this.keys = keys;
    this.reads = reads;
    this.registry = registry;
    this.loads = loads;
    this.refresher = refresher;
    this.store = config.store();
    this.clock = config.clock();
    this.ticker = config.ticker();
    this.stats = stats;
    this.waitNanos = waitNanos;
    this.refreshes = new BulkRefreshes<>(config, loads, refresher, stats);
  }

  Map<String, V> getAll(Collection<String> keys, BulkLoader<? extends V> loader) {
    return getAll(keys,
        LoadPipeline.Batch.of(wanted -> CompletableFuture.completedFuture(loader.loadAll(wanted))),
        loader);
  }

  /**
   * {@code getAll} with a batch of the pipeline (a loading cache's coalescing one, or a caller's
   * bulk loader); {@code loaderIdentity} groups background refreshes ({@link BulkRefreshes}).
   */
  Map<String, V> getAll(Collection<String> keys, LoadPipeline.Batch<V> loader,
      Object loaderIdentity) {
    CallerRuns here = new CallerRuns(refresher.asExecutor());
    boolean mayWait = Waiting.allowed(store);
    CompletableFuture<Map<String, V>> result = run(keys, loader, loaderIdentity, here, here,
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
    return getAllAsync(keys, LoadPipeline.Batch.of(loader), loader);
  }

  /** {@code getAllAsync} with a batch of the pipeline (see {@link #getAll(Collection,
   * LoadPipeline.Batch, Object)}). */
  CompletableFuture<Map<String, V>> getAllAsync(Collection<String> keys,
      LoadPipeline.Batch<V> loader, Object loaderIdentity) {
    return run(keys, loader, loaderIdentity, LoadPipeline.DIRECT,
        reads.loaderExecutor(Thread.currentThread()), true);
  }

  /**
   * @param continuation where the decisions run after the bulk read: the synchronous caller's
   *     thread (so that a recursive load is detected), or the thread that completed the read
   * @param loadOn where the bulk loader starts (see {@link LoadPipeline#misses})
   * @param readStore {@code false} for a synchronous call on a thread that may not wait (see
   *     {@link Waiting}): the keys the near cache does not answer are read as a failed read
   */
  private CompletableFuture<Map<String, V>> run(Collection<String> callerKeys,
      LoadPipeline.Batch<V> loader, Object loaderIdentity, Executor continuation,
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
      Throwable readError, NearTier.Ticket ticket, LoadPipeline.Batch<V> loader,
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
    List<CompletableFuture<Loaded<V>>> waits = loads.misses(toLoad, loader, loadOn);
    CompletableFuture.allOf(waits.toArray(new CompletableFuture<?>[0]))
        .whenComplete((ignored, error) -> {
          try {
            Throwable failure = null;
            for (int i = 0; i < toLoad.size(); i++) {
              LoadRequest<V> wanted = toLoad.get(i);
              CompletableFuture<Loaded<V>> wait = waits.get(i);
              if (!wait.isCompletedExceptionally()) {
                Loaded<V> loaded = wait.join();
                if (loaded.wasLoaded()) {
                  answers.put(wanted.key(), ReadPath.answer(loaded));
                  continue;
                }
              }
              Throwable keyFailure = wait.isCompletedExceptionally()
                  ? EntryWriter.unwrap(wait.handle((value, thrown) -> thrown).join())
                  : new CacheLoadException("a key could not be loaded: the load it joined"
                      + " ended without a value", null);
              Object stale = reads.staleOnError(keyFailure, wanted.stale());
              if (stale != null) {
                answers.put(wanted.key(), stale);
              } else if (failure == null) {
                failure = keyFailure;
              }
            }
            if (failure != null) {
              out.completeExceptionally(Failures.forCaller(failure));
              return;
            }
            out.complete(result(order, answers));
          } catch (Throwable t) {
            out.completeExceptionally(t);
          }
        });
  }

  @SuppressWarnings("unchecked")
  private static <T> T cast(Object o) {
    return (T) o;
  }
}
