package io.sustainablecache.internal;

import io.sustainablecache.Scheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The background refreshes of {@code getAll}: keys found in their refresh window become refresh
 * flights, batched per loader instance (within {@code refreshBatch}: a batch is submitted when it
 * has that many keys or after its delay), and each batch goes to the {@link LoadPipeline}, which
 * takes its keys' fleet leases (pipelined) on a refresh thread and makes one bulk loader call for
 * the winners, as for every load. A loading cache's refreshes skip this batching: its
 * {@link Coalescer} batches them with its misses. Thread-safe.
 */
final class BulkRefreshes<V> {

  private final LoadPipeline<V> loads;
  private final Refresher refresher;
  private final StatsCounter stats;
  private final Scheduler scheduler;
  private final int batchSize;
  private final long batchDelayMillis;
  private final ConcurrentHashMap<Object, Pending<V>> batches = new ConcurrentHashMap<>();

  BulkRefreshes(CacheConfig<V> config, LoadPipeline<V> loads, Refresher refresher,
      StatsCounter stats) {
    this.loads = loads;
    this.refresher = refresher;
    this.stats = stats;
    this.scheduler = config.scheduler();
    this.batchSize = config.refreshBatchSize();
    this.batchDelayMillis = config.refreshBatchDelay().toMillis();
  }

  /**
   * Registers refresh flights for the keys (those not loading already and not backing off) and
   * batches them per loader identity; a full batch, or one whose delay passed, is submitted.
   */
  void refresh(List<LoadRequest<V>> keys, LoadPipeline.Batch<V> loader, Object loaderIdentity) {
    if (keys.isEmpty()) {
      return;
    }
    if (refresher.isClosed()) {
      stats.add(Counter.REFRESH_REJECTED, keys.size());
      return;
    }
    List<Flight<V>> flights = loads.beginRefreshes(keys);
    if (flights.isEmpty()) {
      return;
    }
    if (loader.coalesced()) { // a loading cache's: its coalescer batches them with its misses
      loads.refreshLater(flights, loader);
      return;
    }
    if (batchDelayMillis == 0) {
      for (int from = 0; from < flights.size(); from += batchSize) {
        submit(flights.subList(from, Math.min(flights.size(), from + batchSize)), loader);
      }
      return;
    }
    List<List<Flight<V>>> full = new ArrayList<>();
    List<Pending<V>> created = new ArrayList<>(1);
    batches.compute(loaderIdentity, (identity, batch) -> {
      Pending<V> current = batch;
      for (Flight<V> flight : flights) {
        if (current == null) {
          current = new Pending<>(loader);
          created.clear();
          created.add(current);
        }
        current.flights.add(flight);
        if (current.flights.size() >= batchSize) {
          full.add(current.flights);
          current = null;
        }
      }
      return current;
    });
    for (List<Flight<V>> batch : full) {
      submit(batch, loader);
    }
    Pending<V> pending = created.isEmpty() ? null : created.get(0);
    if (pending != null && batches.get(loaderIdentity) == pending) {
      try {
        scheduler.schedule(() -> flush(loaderIdentity, pending), batchDelayMillis,
            TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        flush(loaderIdentity, pending);
      }
    }
  }

  private void flush(Object loaderIdentity, Pending<V> batch) {
    if (batches.remove(loaderIdentity, batch)) {
      submit(batch.flights, batch.loader);
    }
  }

  private void submit(List<Flight<V>> flights, LoadPipeline.Batch<V> loader) {
    loads.refreshLater(flights, loader);
  }

  /** Refresh flights of one loader waiting to be loaded together. Guarded by the map's bin. */
  private static final class Pending<V> {
    final LoadPipeline.Batch<V> loader;
    final List<Flight<V>> flights = new ArrayList<>();

    Pending(LoadPipeline.Batch<V> loader) {
      this.loader = loader;
    }
  }
}
