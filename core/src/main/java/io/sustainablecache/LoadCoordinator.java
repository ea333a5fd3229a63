package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import java.time.InstantSource;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;

/**
 * Runs the loads of single keys through the {@link KeyRegistry}: misses (the caller waits),
 * background refreshes (on the {@link Refresher}), inline refreshes (PER). It starts the loader,
 * measures it, completes the flight (waking every caller that joined it) and then issues the
 * write, before deregistering the flight, so that a caller arriving in between joins the finished
 * flight instead of loading again. Thread-safe.
 *
 * <p>Threads: a loader is started on the thread that runs the flow's continuation: the caller's
 * (synchronous API, through {@link CallerRuns}), a refresh thread, or, for the asynchronous API,
 * whichever thread completed the store read. The write follows on the thread that completed the
 * load if that is the thread that started it (a synchronous loader); otherwise (an asynchronous
 * loader completing on, say, a driver's event loop) it is handed to the refresh executor.
 */
final class LoadCoordinator<V> {

  private static final Logger log = Log.LOGGER;

  /** Runs continuations on the completing thread. */
  static final Executor DIRECT = Runnable::run;

  private final KeyRegistry registry;
  private final EntryWriter<V> writer;
  private final Refresher refresher;
  private final FleetLease<V> lease;
  private final InstantSource clock;
  private final Ticker ticker;
  private final StatsCounter stats;
  private final LoadTimes loadTimes;
  private final long driveTimeoutNanos;
  private final RateLimitedLog refreshErrorLog;
  private final RateLimitedLog slowLoadLog;

  /**
   * @param clock the wall clock: a load's time in its envelope, for other hosts
   * @param ticker measures loads, and how old a flight is when its write is due
   */
  LoadCoordinator(KeyRegistry registry, EntryWriter<V> writer, Refresher refresher,
      FleetLease<V> lease, InstantSource clock, Ticker ticker, StatsCounter stats,
      LoadTimes loadTimes, long driveTimeoutNanos) {
    this.ticker = ticker;
    this.refreshErrorLog = new RateLimitedLog(log, ticker);
    this.slowLoadLog = new RateLimitedLog(log, ticker);
    this.loadTimes = loadTimes;
    this.driveTimeoutNanos = driveTimeoutNanos;
    this.registry = registry;
    this.writer = writer;
    this.refresher = refresher;
    this.lease = lease;
    this.clock = clock;
    this.stats = stats;
  }

  /**
   * A caller found no usable entry: joins the key's load in flight or starts one. The loader is
   * started through {@code continuation}, never on the thread that completed a store round trip:
   * if the continuation refuses (a synchronous caller that left), the load goes to the refresh
   * executor, and if that refuses too, the flight ends without loading.
   *
   * @param continuation where the flow continues, and the loader runs: the caller's {@link
   *     CallerRuns} for the synchronous API, {@link #DIRECT} or an executor off the client's
   *     threads for the asynchronous one
   * @return the caller's own future of the load's result: a value, or none; failing with {@link
   *     CacheLoadException}, or {@link IllegalStateException} for a recursive load
   */
  CompletableFuture<Loaded<V>> miss(LoadRequest<V> request, AsyncLoader<? extends V> loader,
      Executor continuation) {
    KeyRegistry.Begin begin = registry.begin(request, Flight.Origin.MISS, clock.millis());
    if (begin instanceof KeyRegistry.Started<?> started) {
      Flight<V> flight = cast(started.flight());
      flight.expectLoadMillis(request.expectedLoadMillis());
      // The leader's own future: its load's outcome, or the flight's failure, whichever comes
      // first, except that a flight timing out while a thread is inside the loader (a
      // synchronous loader, run by this very leader) does not fail it: the leader was never
      // waiting, and when the loader returns late it still hands its caller the value.
      CompletableFuture<Loaded<V>> own = new CompletableFuture<>();
      flight.whenCompleted((loaded, error) -> {
        if (error == null) {
          own.complete(loaded);
        } else if (!flight.loaderRunning()) {
          own.completeExceptionally(error);
        }
      });
      boolean writeBack = request.writeBack();
      if (writeBack && lease.enabled()) {
        lease.beforeMiss(flight).whenComplete((step, error) -> afterLease(flight, step,
            () -> start(flight, loader, true, own, continuation)));
      } else {
        start(flight, loader, writeBack, own, continuation);
      }
      return own;
    }
    if (begin instanceof KeyRegistry.Joined<?> joined) {
      return LoadCoordinator.<V>cast(joined.flight()).answer();
    }
    if (begin instanceof KeyRegistry.After<?> after) {
      return after.flight().ended().thenCompose(ended -> miss(request, loader, continuation));
    }
    if (begin instanceof KeyRegistry.Remembered remembered) {
      stats.increment(Counter.FAILURE_REMEMBERED);
      return CompletableFuture.failedFuture(
          Backoff.exception(remembered.failure(), registry.tickMillis()));
    }
    return CompletableFuture.failedFuture(recursive());
  }

  /**
   * The refresh policy decided to reload an entry that keeps being served: registers a refresh
   * flight and hands it to the refresh executor, unless the key is loading or backing off
   * already. Never blocks and never runs the loader on the calling thread.
   */
  void refreshInBackground(LoadRequest<V> request, AsyncLoader<? extends V> loader) {
    if (refresher.isClosed()) {
      stats.increment(Counter.REFRESH_REJECTED);
      return;
    }
    KeyRegistry.Begin begin = registry.begin(request, Flight.Origin.REFRESH, clock.millis());
    if (!(begin instanceof KeyRegistry.Started<?> started)) {
      countNotStarted(begin);
      return;
    }
    Flight<V> flight = cast(started.flight());
    flight.expectLoadMillis(request.expectedLoadMillis());
    if (refresher.submit(Refusable.of(() -> runRefresh(flight, loader), () -> {
      abandon(flight); // rejected, or still queued when close() gave up on the executor
      stats.increment(Counter.REFRESH_REJECTED);
    }))) {
      stats.increment(Counter.REFRESH_SCHEDULED);
    }
  }

  /**
   * PER: recompute for the reading caller, which waits. Returns the caller's future of the
   * result, or {@code null} if the key is loading or backing off already (the caller serves the
   * current value). The loader starts through {@code continuation}, as for {@link #miss}.
   */
  CompletableFuture<Loaded<V>> refreshInline(LoadRequest<V> request,
      AsyncLoader<? extends V> loader, Executor continuation) {
    KeyRegistry.Begin begin = registry.begin(request, Flight.Origin.REFRESH, clock.millis());
    if (!(begin instanceof KeyRegistry.Started<?> started)) {
      countNotStarted(begin);
      return null;
    }
    Flight<V> flight = cast(started.flight());
    flight.expectLoadMillis(request.expectedLoadMillis());
    CompletableFuture<Loaded<V>> result = flight.answer();
    if (lease.enabled()) {
      lease.beforeRefresh(flight).whenComplete((step, error) -> afterLease(flight, step,
          () -> start(flight, loader, true, null, continuation)));
    } else {
      start(flight, loader, true, null, continuation);
    }
    return result;
  }

  private void countNotStarted(KeyRegistry.Begin begin) {
    if (begin instanceof KeyRegistry.Busy busy && busy.backingOff()) {
      stats.increment(Counter.REFRESH_BACKOFF);
    } else {
      stats.increment(Counter.REFRESH_DEDUPED);
    }
  }

  /**
   * Starts a flight's load on {@code on}; if {@code on} refuses (a synchronous caller that left:
   * its loader must not run on whatever thread completed the lease), on the refresh executor; if
   * that refuses too, the flight ends without loading (its callers read again).
   */
  private void start(Flight<V> flight, AsyncLoader<? extends V> loader, boolean writeBack,
      CompletableFuture<Loaded<V>> own, Executor on) {
    Refusable task = Refusable.of(() -> run(flight, loader, writeBack, own),
        () -> abandon(flight));
    try {
      on.execute(task);
    } catch (RejectedExecutionException e) {
      refresher.submit(task);
    }
  }

  /**
   * On a refresh thread: takes the fleet lease if configured, then loads on this thread. If the
   * wait for the lease is interrupted ({@code close()}) or times out, the flight ends without
   * loading and a lease won later is released.
   */
  private void runRefresh(Flight<V> flight, AsyncLoader<? extends V> loader) {
    if (!lease.enabled()) {
      run(flight, loader, true);
      return;
    }
    CompletableFuture<LeaseStep<V>> step = lease.beforeRefresh(flight);
    try {
      afterLease(flight, step.get(driveTimeoutNanos, TimeUnit.NANOSECONDS),
          () -> run(flight, loader, true));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      step.whenComplete((late, error) -> afterLease(flight, late, null));
    } catch (TimeoutException | ExecutionException e) {
      step.whenComplete((late, error) -> afterLease(flight, late, null));
    }
  }

  /**
   * Acts on what the fleet lease decided for a flight (the lease never completes a flight): runs
   * {@code load}; or answers the flight with another instance's write, and deregisters it; or
   * fails it with another instance's remembered failure; or ends it without loading ({@link
   * #abandon}: a refresh that lost the lease, or a flight completed meanwhile). A {@code null}
   * step (the lease's future failed, which it does not) loads, as the lease fails open.
   *
   * @param load starts the load; {@code null} if it may no longer start (the wait for the lease
   *     was given up): then a lease won is released and the flight ends
   */
  void afterLease(Flight<V> flight, LeaseStep<V> step, Runnable load) {
    if (step instanceof LeaseStep.Written<V> written) {
      if (flight.deliver(written.loaded())) {
        registry.finish(flight, null, clock.millis());
      }
    } else if (step instanceof LeaseStep.Failed<V> failed) {
      flight.fail(failed.failure());
    } else if (step instanceof LeaseStep.Skip<V> || load == null) {
      abandon(flight);
    } else {
      load.run();
    }
  }

  /**
   * Ends a flight that will not load (a refresh that lost the lease, a load with no thread to run
   * on): deregisters it, completes it with {@link Loaded#notLoaded()} so that joined callers read
   * again, and releases the fleet lease if it holds one.
   */
  void abandon(Flight<V> flight) {
    registry.abandon(flight);
    lease.afterLoad(flight, null);
  }

  /** Taken before a store read: see {@link KeyRegistry#readMark}. */
  long readMark() {
    return registry.readMark();
  }

  /**
   * The generation a load of {@code storeKey} starting now belongs to: see {@link
   * EntryWriter#generation(String)}.
   */
  long generation(String storeKey) {
    return writer.generation(storeKey);
  }

  /**
   * Starts the flight's loader on this thread, measures it and completes the flight. Every
   * {@link Throwable} of the loader, {@link Error}s included, fails this flight only.
   */
  void run(Flight<V> flight, AsyncLoader<? extends V> loader, boolean writeBack) {
    run(flight, loader, writeBack, null);
  }

  /**
   * {@link #run(Flight, AsyncLoader, boolean)}, also completing {@code own} (if not {@code null})
   * with this load's own outcome before the flight's.
   */
  private void run(Flight<V> flight, AsyncLoader<? extends V> loader, boolean writeBack,
      CompletableFuture<Loaded<V>> own) {
    Thread starter = Thread.currentThread();
    long start = ticker.read();
    long generation = writer.generation(flight.storeKey);
    CompletionStage<? extends V> stage;
    flight.enterLoader(starter);
    stats.increment(Counter.LOADER_CALL);
    try {
      stage = requireNonNull(loader.load(flight.key), "the loader returned a null stage");
    } catch (Throwable t) {
      stage = CompletableFuture.failedFuture(t);
    } finally {
      flight.leaveLoader();
    }
    try {
      stage.whenComplete((value, error) -> {
        long elapsed = elapsedMillis(start);
        if (error != null) {
          Throwable cause = EntryWriter.unwrap(error);
          if (own != null) {
            own.completeExceptionally(new CacheLoadException("the loader failed", cause));
          }
          failed(flight, cause, elapsed);
        } else {
          Loaded<V> loaded = new Loaded<>(value, clock.millis(), elapsed, generation);
          if (own != null) {
            own.complete(loaded);
          }
          loaded(flight, loaded, writeBack, Thread.currentThread() == starter, elapsed);
        }
      });
    } catch (Throwable t) {
      if (own != null) {
        own.completeExceptionally(new CacheLoadException("the loader failed", t));
      }
      failed(flight, t, elapsedMillis(start));
    }
    if (own != null && !own.isDone() && flight.completedExceptionally()) {
      // timed out while load() itself was running, and its stage is still pending
      flight.whenCompleted((loaded, error) -> own.completeExceptionally(error));
    }
  }

  /**
   * Completes a flight with its load's result, then writes it (unless {@code writeBack} is off
   * or the flight was voided) and deregisters it.
   *
   * @param onStarter whether this thread started the load: then the write is issued here;
   *     otherwise it is handed to the refresh executor
   * @param statsMillis the load time to add to the statistics (a bulk load counts its time once)
   */
  void loaded(Flight<V> flight, Loaded<V> loaded, boolean writeBack, boolean onStarter,
      long statsMillis) {
    Runnable write = complete(flight, loaded, writeBack, statsMillis);
    if (write != null) {
      if (onStarter) {
        write.run();
      } else {
        refresher.submit(Refusable.of(write, write)); // refused: written on this thread
      }
    }
  }

  /**
   * Completes a flight with its load's result, waking every caller that joined it, and returns
   * the write that must follow (it writes, unless the flight was voided by then, and
   * deregisters the flight), or {@code null} if there is none (no write back, a {@linkplain
   * Flight#fenced fenced} flight): the flight was deregistered here.
   */
  Runnable complete(Flight<V> flight, Loaded<V> loaded, boolean writeBack, long statsMillis) {
    stats.recordLoad(statsMillis, loaded.value() == null);
    loadTimes.recordSuccess(statsMillis, 1); // a bulk call's time comes with its first key
    if (flight.fenced) {
      stats.increment(Counter.FENCED_LOAD);
      writeBack = false; // one bulk call may load fenced and unfenced keys
    }
    if (!flight.deliver(loaded) || !writeBack || flight.voided()) {
      if (writeBack && flight.voided()) {
        stats.increment(Counter.STALE_SET_DISCARD); // invalidated or overwritten meanwhile
      }
      end(flight, null);
      return null;
    }
    return () -> write(flight, loaded);
  }

  private void write(Flight<V> flight, Loaded<V> loaded) {
    try {
      if (flight.voided()) {
        stats.increment(Counter.STALE_SET_DISCARD);
      } else if (registry.tickMillis() - flight.startedTick >= writer.fenceMillis()) {
        // Older than the shortest entry lifetime (or fenceTimeout): an invalidation or a write
        // fence during the load could have been followed by an entry that expired already (or
        // by a fence never released), leaving nothing to fence this write.
        stats.increment(Counter.SKIPPED_WRITE);
        slowLoadLog.warn("a load took longer than the shortest entry lifetime (ttl + grace) or"
            + " fenceTimeout; its value was returned but not cached");
      } else {
        writer.writeLoad(flight.storeKey, loaded, flight.casToken).thenAccept(stored -> {
          if (stored) {
            stats.increment(Counter.LOAD_WRITTEN);
            if (flight.origin == Flight.Origin.REFRESH) {
              stats.increment(Counter.REFRESH_SUCCESS);
            }
          }
        });
      }
    } finally {
      end(flight, null);
    }
  }

  /** Milliseconds on the ticker since {@code startNanos}, a reading of it; never negative. */
  long elapsedMillis(long startNanos) {
    return Math.max(0, TimeUnit.NANOSECONDS.toMillis(ticker.read() - startNanos));
  }

  /** Deregisters a flight whose load ended, and releases the fleet lease it held. */
  private void end(Flight<V> flight, Throwable failure) {
    lease.afterLoad(flight, registry.finish(flight, failure, clock.millis()));
  }

  /** Fails a flight (its callers get a {@link CacheLoadException}) and records the failure. */
  void failed(Flight<V> flight, Throwable cause, long elapsed) {
    stats.recordLoadFailure(elapsed);
    boolean mine = flight.fail(
        new CacheLoadException("the loader failed", cause));
    end(flight, cause);
    if (mine) {
      if (flight.origin == Flight.Origin.REFRESH) {
        stats.increment(Counter.REFRESH_FAILURE);
        refreshErrorLog.warn("a refresh failed; the cached value keeps being served", cause);
        if (log.isDebugEnabled()) {
          log.debug("refresh failed for key {}", flight.storeKey, cause);
        }
      }
    }
  }

  static IllegalStateException recursive() {
    return new IllegalStateException("recursive load: a loader called the cache for the key it"
        + " is loading (it would wait for itself); load what it needs directly instead");
  }

  @SuppressWarnings("unchecked")
  private static <V> Flight<V> cast(Flight<?> flight) {
    return (Flight<V>) flight;
  }
}

