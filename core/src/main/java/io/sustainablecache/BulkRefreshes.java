package io.sustainablecache;

import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;

/**
 * The background refreshes of {@code getAll}: keys found in their refresh window become refresh
 * flights, batched per loader instance (within {@code refreshBatch}: a batch is submitted when it
 * has that many keys or after its delay), and each batch takes its keys' fleet leases (pipelined)
 * on a refresh thread and makes one bulk loader call for the winners. Thread-safe.
 */
final class BulkRefreshes<V> {

  private final KeyRegistry registry;
  private final LoadCoordinator<V> loads;
  private final Refresher refresher;
  private final FleetLease<V> lease;
  private final InstantSource clock;
  private final StatsCounter stats;
  private final Scheduler scheduler;
  private final int batchSize;
  private final long batchDelayMillis;
  private final long waitNanos;
  /** One bulk loader call for flights, writing the results ({@link BulkLoads#load}). */
  private final BiConsumer<List<Flight<V>>, AsyncBulkLoader<? extends V>> load;
  private final ConcurrentHashMap<Object, Batch> batches = new ConcurrentHashMap<>();

  BulkRefreshes(CacheConfig<V> config, KeyRegistry registry, LoadCoordinator<V> loads,
      Refresher refresher, FleetLease<V> lease, StatsCounter stats, long waitNanos,
      BiConsumer<List<Flight<V>>, AsyncBulkLoader<? extends V>> load) {
    this.registry = registry;
    this.loads = loads;
    this.refresher = refresher;
    this.lease = lease;
    this.clock = config.clock();
    this.stats = stats;
    this.scheduler = config.scheduler();
    this.batchSize = config.refreshBatchSize();
    this.batchDelayMillis = config.refreshBatchDelay().toMillis();
    this.waitNanos = waitNanos;
    this.load = load;
  }

  /**
   * Registers refresh flights for the keys (those not loading already and not backing off) and
   * batches them per loader identity; a full batch, or one whose delay passed, is submitted.
   */
  void refresh(List<LoadRequest<V>> keys, AsyncBulkLoader<? extends V> loader,
      Object loaderIdentity) {
    if (keys.isEmpty()) {
      return;
    }
    if (refresher.isClosed()) {
      stats.add(Counter.REFRESH_REJECTED, keys.size());
      return;
    }
    List<Flight<V>> flights = new ArrayList<>();
    long now = clock.millis();
    for (LoadRequest<V> wanted : keys) {
      KeyRegistry.Begin begin = registry.begin(wanted, Flight.Origin.REFRESH, now);
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
    if (refresher.submit(Refusable.of(() -> runRefresh(copy, loader), () -> {
      copy.forEach(loads::abandon); // rejected, or still queued when close() gave up on it
      stats.add(Counter.REFRESH_REJECTED, copy.size());
    }))) {
      stats.add(Counter.REFRESH_SCHEDULED, copy.size());
    }
  }

  /**
   * On a refresh thread: takes each key's fleet lease (if configured; pipelined, one round trip
   * for all), then loads the winners on this thread. If the wait for the leases is interrupted
   * ({@code close()}) or times out, the flights end without loading, and leases won later are
   * released.
   */
  private void runRefresh(List<Flight<V>> flights, AsyncBulkLoader<? extends V> loader) {
    List<Flight<V>> winners = flights;
    if (lease.enabled()) {
      List<CompletableFuture<LeaseStep<V>>> leases = new ArrayList<>(flights.size());
      for (Flight<V> flight : flights) {
        leases.add(lease.beforeRefresh(flight));
      }
      try {
        CompletableFuture.allOf(leases.toArray(new CompletableFuture<?>[0]))
            .get(waitNanos, TimeUnit.NANOSECONDS);
      } catch (InterruptedException | ExecutionException | TimeoutException e) {
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        for (int i = 0; i < flights.size(); i++) {
          Flight<V> flight = flights.get(i);
          leases.get(i).whenComplete((step, error) -> loads.afterLease(flight, step, null));
        }
        return;
      }
      List<Flight<V>> won = new ArrayList<>(flights.size());
      for (int i = 0; i < flights.size(); i++) {
        Flight<V> flight = flights.get(i);
        loads.afterLease(flight, leases.get(i).join(), () -> won.add(flight));
      }
      winners = won;
    }
    if (!winners.isEmpty()) {
      load.accept(winners, loader);
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
