package io.sustainablecache.internal;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.AsyncBulkLoader;
import io.sustainablecache.CacheLoadException;
import io.sustainablecache.CacheObserver.Kind;
import io.sustainablecache.CacheObserver.Scope;
import io.sustainablecache.CacheObserver.Span;
import io.sustainablecache.Ticker;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * The one load pipeline, over batches: a single key's miss or refresh is a batch of one. Every
 * load, from {@code get}, {@code getAll}, a background or an inline refresh, single or bulk, goes
 * the same way:
 * <ol>
 *   <li><b>begin</b> each key in the {@link KeyRegistry} (join a load in flight, fail fast within
 *       a back-off, or register a {@link Flight});</li>
 *   <li><b>lease</b> each registered flight that writes back ({@link FleetLease}, the requests
 *       issued together, so pipelined), and act on each {@link LeaseStep}: load, another
 *       instance's write, its failure, skip, or wait for a peer (the {@link LeaseStage});</li>
 *   <li><b>load</b> the winners with <em>one</em> loader call ({@link #run}: a single key's
 *       loader is called as a bulk loader of one key, {@link Batch#ofOne}), complete each flight
 *       (waking every caller that joined it), <b>write</b> each result back, and <b>end</b>
 *       each flight ({@link LeaseStage#end}: {@link KeyRegistry#end} with its {@link Ending}),
 *       releasing its lease.</li>
 * </ol>
 * A flight is deregistered only after its write was issued, so that a caller arriving in between
 * joins the finished flight instead of loading again. Thread-safe.
 *
 * <p>Threads: a loader is started on the executor the caller gives: the caller's own thread
 * (synchronous API, through {@link CallerRuns}), a refresh thread, or, for the asynchronous API,
 * whichever thread completed the store read while the caller is still in the call, else the
 * refresh executor. If that executor refuses (a synchronous caller that left), the load goes to
 * the refresh executor, and if that refuses too, the flights end without loading. The writes
 * follow on the thread that completed the load if that is the thread that started it (a
 * synchronous loader); otherwise they are handed to the refresh executor.
 */
final class LoadPipeline<V> {

  private static final Logger log = Log.LOGGER;

  /** Runs continuations on the completing thread. */
  static final Executor DIRECT = Runnable::run;

  private final KeyRegistry registry;
  private final EntryWriter<V> writer;
  private final Refresher refresher;
  /** The writes close() waits for: a load's writes handed to the refresh executor count. */
  private final PendingWrites pending;
  /** The lease step, and where a flight ends. */
  private final LeaseStage<V> leases;
  private final InstantSource clock;
  private final Ticker ticker;
  private final StatsCounter stats;
  private final LoadTimes loadTimes;
  private final long driveTimeoutNanos;
  private final RateLimitedLog refreshErrorLog;
  private final RateLimitedLog slowLoadLog;
  /** The cache's one batcher: a loading cache's flights, and bulk loaders' refreshes. */
  private final Coalescer<V> coalescer;
  /** The spans of loads and background refreshes (and, through the lease stage, of leases). */
  private final Spans spans;

  /**
   * @param config its clock (a load's time in its envelope, for other hosts), ticker (measures
   *     loads, and how old a flight is when its write is due), scheduler and {@code coalesce}
   * @param driveTimeoutNanos how long a refresh thread waits for its leases, at most
   */
  LoadPipeline(CacheConfig<V> config, KeyRegistry registry, EntryWriter<V> writer,
      Refresher refresher, FleetLease<V> lease, PendingWrites pending, StatsCounter stats,
      LoadTimes loadTimes, long driveTimeoutNanos, Spans spans) {
    this.spans = spans;
    this.pending = pending;
    this.ticker = config.ticker();
    this.refreshErrorLog = new RateLimitedLog(log, ticker);
    this.slowLoadLog = new RateLimitedLog(log, ticker);
    this.loadTimes = loadTimes;
    this.driveTimeoutNanos = driveTimeoutNanos;
    this.registry = registry;
    this.writer = writer;
    this.refresher = refresher;
    this.leases = new LeaseStage<>(registry, lease, stats, this::start, spans);
    this.clock = config.clock();
    this.stats = stats;
    Duration maxWait = config.coalesceMaxWait();
    this.coalescer = new Coalescer<>(leases::leaseThenLoad, config.coalesceMaxBatchSize(),
        maxWait == null ? 0 : Math.max(1, maxWait.toMillis()), config.scheduler(),
        refresher.asExecutor());
  }

  // ---------------------------------------------------------------------------------------------
  // Entry points

  /**
   * Callers found no usable entry for these keys: each joins its key's load in flight or starts
   * one; the keys started here are leased and loaded with one loader call, through {@code on}.
   *
   * @param on where the loader runs: the caller's {@link CallerRuns} for the synchronous API,
   *     {@link #DIRECT} or an executor off the client's threads for the asynchronous one
   * @return per request, in order, the caller's future of its key's result: a value, none (the
   *     load ended without loading: read again), or failing with the raw failure ({@link
   *     CacheLoadException}, a remembered one, or {@link IllegalStateException} for a recursive
   *     load; see {@link Failures} for what the caller then gets)
   */
  List<CompletableFuture<Loaded<V>>> misses(List<LoadRequest<V>> requests, Batch<V> loader,
      Executor on) {
    List<CompletableFuture<Loaded<V>>> answers = new ArrayList<>(requests.size());
    List<Leg<V>> legs = new ArrayList<>();
    long now = clock.millis();
    Thread caller = on instanceof CallerRuns here ? here.owner() : Thread.currentThread();
    for (LoadRequest<V> request : requests) {
      KeyRegistry.Begin begin = registry.begin(request, Flight.Origin.MISS, now);
      if (begin instanceof KeyRegistry.Started<?> started) {
        Flight<V> flight = cast(started.flight());
        flight.expectLoadMillis(request.expectedLoadMillis());
        CompletableFuture<Loaded<V>> own = own(flight, caller);
        legs.add(new Leg<>(flight, own));
        answers.add(own);
      } else if (begin instanceof KeyRegistry.Joined<?> joined) {
        Flight<V> flight = cast(joined.flight());
        answers.add(flight.answer());
      } else if (begin instanceof KeyRegistry.After<?> after) {
        // a fenced read reads the key again once that load ended: the fence may have been
        // released meanwhile (then the key loads once, leased and cached); a failed read has
        // nothing newer to read, and begins again with its request
        answers.add(after.flight().ended().thenCompose(ended -> request.fenced()
            ? CompletableFuture.completedFuture(Loaded.<V>notLoaded())
            : misses(List.of(request), loader, on).get(0)));
      } else if (begin instanceof KeyRegistry.Remembered remembered) {
        stats.increment(Counter.FAILURE_REMEMBERED);
        answers.add(CompletableFuture.failedFuture(
            Backoff.exception(remembered.failure(), registry.tickMillis())));
      } else {
        answers.add(CompletableFuture.failedFuture(recursive()));
      }
    }
    if (!legs.isEmpty()) {
      launch(legs, loader, on);
    }
    return answers;
  }

  /**
   * PER: recompute for the reading caller, which waits. Returns the caller's future of the
   * result, or {@code null} if the key is loading or backing off already (the caller serves the
   * current value). The loader starts through {@code on}, as for {@link #misses}.
   */
  CompletableFuture<Loaded<V>> refreshInline(LoadRequest<V> request, Batch<V> loader,
      Executor on) {
    List<Leg<V>> legs = beginRefreshes(List.of(request), false);
    if (legs.isEmpty()) {
      return null;
    }
    CompletableFuture<Loaded<V>> result = legs.get(0).flight().answer();
    launch(legs, loader, on);
    return result;
  }

  /**
   * Registers refresh flights for the keys not loading already and not backing off (the others
   * are counted); with an observer, a background refresh's span begins, ended with its flight.
   *
   * @return the flights registered, nobody's own ({@link Leg#own} {@code null})
   */
  private List<Leg<V>> beginRefreshes(List<LoadRequest<V>> requests, boolean background) {
    List<Leg<V>> legs = new ArrayList<>(requests.size());
    long now = clock.millis();
    for (LoadRequest<V> request : requests) {
      KeyRegistry.Begin begin = registry.begin(request, Flight.Origin.REFRESH, now);
      if (begin instanceof KeyRegistry.Started<?> started) {
        Flight<V> flight = cast(started.flight());
        flight.expectLoadMillis(request.expectedLoadMillis());
        legs.add(Leg.refresh(flight, background && spans.on() ? refreshSpan(flight) : null));
      } else if (begin instanceof KeyRegistry.Busy busy && busy.backingOff()) {
        stats.increment(Counter.REFRESH_BACKOFF);
      } else {
        stats.increment(Counter.REFRESH_DEDUPED);
      }
    }
    return legs;
  }

  /**
   * The refresh policy decided to reload entries that keep being served: registers refresh
   * flights for the keys not loading already and not backing off ({@link #beginRefreshes}), and
   * hands them on. A bulk loader's join the {@link Coalescer}'s batches of that loader, their
   * calls on refresh threads: a loading cache's at once (with its misses), a caller's from a
   * refresh thread (its caller does no store work for them); a single key's loader's is leased
   * and loaded on a refresh thread ({@link #runRefresh}). Flights the executor refuses end
   * without loading. Never blocks and never runs the loader on the calling thread.
   */
  void refreshInBackground(List<LoadRequest<V>> requests, Batch<V> loader) {
    if (refresher.isClosed()) {
      stats.add(Counter.REFRESH_REJECTED, requests.size());
      return;
    }
    List<Leg<V>> legs = beginRefreshes(requests, true);
    if (legs.isEmpty()) {
      return;
    }
    if (loader.kind() == Batch.Kind.LOADING) {
      stats.add(Counter.REFRESH_SCHEDULED, legs.size());
      coalescer.offer(loader, legs, refresher.asExecutor());
      return;
    }
    Runnable refresh = loader.bulk()
        ? () -> coalescer.offer(loader, legs, refresher.asExecutor())
        : () -> runRefresh(legs, loader);
    if (refresher.submit(Refusable.of(refresh, () -> {
      // rejected, or still queued when close() gave up on it
      legs.forEach(leg -> leases.abandon(leg.flight()));
      stats.add(Counter.REFRESH_REJECTED, legs.size());
    }))) {
      stats.add(Counter.REFRESH_SCHEDULED, legs.size());
    }
  }

  /**
   * Begins a background refresh's span, a root: it ends with the flight's outcome ({@code
   * success}, {@code failure}, or {@code not.loaded}: lost lease, refused, closed).
   */
  private Span refreshSpan(Flight<V> flight) {
    Span span = spans.begin(Kind.REFRESH, List.of(flight.key), true, null);
    flight.whenCompleted((loaded, error) -> {
      Throwable cause = error == null ? null : Failures.unwrap(error);
      if (cause instanceof CacheLoadException && cause.getCause() != null) {
        cause = cause.getCause(); // the loader's own failure
      }
      spans.end(span, cause != null ? "failure" : loaded.wasLoaded() ? "success" : "not.loaded",
          cause);
    });
    return span;
  }

  /** How many loaders the coalescer holds a batch of; for tests. */
  int coalescedLoaders() {
    return coalescer.groups();
  }

  /** Taken before a store read: see {@link KeyRegistry#readMark}. */
  long readMark() {
    return registry.readMark();
  }

  // ---------------------------------------------------------------------------------------------
  // Coalescing

  /**
   * A loading cache's bulk loader as a batch: its flights, from misses, {@code getAll} and
   * refreshes alike, are offered to the {@link Coalescer}. A thread inside one of its calls is
   * known to the coalescer: a miss it offers must not wait for that very call.
   */
  Batch<V> loading(AsyncBulkLoader<? extends V> loader) {
    return Batch.loading(keys -> {
      coalescer.enter();
      try {
        return loader.loadAll(keys);
      } finally {
        coalescer.leave();
      }
    });
  }

  /** Starts the legs: a loading cache's are offered to the coalescer, others start at once. */
  private void launch(List<Leg<V>> legs, Batch<V> loader, Executor on) {
    if (loader.kind() == Batch.Kind.LOADING) {
      coalescer.offer(loader, legs, on);
    } else {
      leases.leaseThenLoad(legs, loader, on);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Lease each (LeaseStage), load the winners

  /**
   * On a refresh thread: leases the flights and loads the winners on this very thread (it drives
   * the flow as a synchronous caller does). If the wait is interrupted ({@code close()}) or runs
   * out, the flights that are still to load end without loading, and leases won later are
   * released.
   */
  private void runRefresh(List<Leg<V>> legs, Batch<V> loader) {
    CallerRuns here = new CallerRuns(task -> {
      throw new RejectedExecutionException("the refresh gave up waiting for its leases");
    });
    // unfinished, the flights still to load are refused by `here` from now on, and end
    Waiting.await(leases.leaseThenLoad(legs, loader, here), driveTimeoutNanos, here,
        (how, e) -> null);
  }

  /**
   * Starts one load of {@code legs} on {@code on}; if {@code on} refuses (a synchronous caller
   * that left: its loader must not run on whatever thread completed the lease), on the refresh
   * executor; if that refuses too, the flights end without loading (a refresh's counted as
   * rejected). Completes {@code launched} once the loader call returned, or at once if there is
   * nothing to load.
   */
  private void start(List<Leg<V>> legs, Batch<V> loader, Executor on,
      CompletableFuture<Void> launched) {
    if (legs.isEmpty()) {
      launched.complete(null);
      return;
    }
    Refusable task = Refusable.of(() -> {
      try {
        run(legs, loader, on);
      } finally {
        launched.complete(null);
      }
    }, () -> {
      for (Leg<V> leg : legs) {
        if (leg.flight().origin == Flight.Origin.REFRESH) {
          stats.increment(Counter.REFRESH_REJECTED);
        }
        leases.abandon(leg.flight());
      }
      launched.complete(null);
    });
    try {
      on.execute(task);
    } catch (RejectedExecutionException e) {
      refresher.submit(task);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The runner

  /**
   * One loader call for the flights' keys, on this thread; completes each flight with its key's
   * value (or none), writes each and ends it. Every {@link Throwable} of the loader, {@link
   * Error}s included, fails these flights only. Flights completed before the call (timed out while
   * they waited for a lease) are not loaded: they end, and release their leases. With an
   * observer, the call is a {@link Kind#LOAD} span, current on this thread while the loader is
   * called; {@code on} says whether this is a waiting caller's thread.
   */
  private void run(List<Leg<V>> all, Batch<V> loader, Executor on) {
    List<Leg<V>> legs = new ArrayList<>(all.size());
    for (Leg<V> leg : all) {
      if (leg.flight().completed()) {
        leases.abandon(leg.flight());
      } else {
        legs.add(leg);
      }
    }
    if (legs.isEmpty()) {
      return;
    }
    Set<String> keys = new LinkedHashSet<>();
    long[] generations = new long[legs.size()];
    for (int i = 0; i < legs.size(); i++) {
      Flight<V> flight = legs.get(i).flight();
      keys.add(flight.key);
      generations[i] = writer.generation(flight.storeKey);
    }
    legs.forEach(leg -> leg.flight().transition(Flight.State.LOADING));
    Thread starter = Thread.currentThread();
    long start = ticker.read();
    if (loader.bulk()) {
      stats.increment(Counter.BULK_LOAD);
    }
    stats.increment(Counter.LOADER_CALL);
    legs.forEach(leg -> leg.flight().enterLoader(starter));
    Set<String> called = Collections.unmodifiableSet(keys);
    Span span = spans.on() ? loadSpan(legs, called, on) : null;
    Scope scope = spans.open(span);
    CompletionStage<? extends Map<String, ? extends V>> stage;
    try {
      stage = requireNonNull(loader.calls().loadAll(called),
          "the bulk loader returned a null stage");
    } catch (Throwable t) {
      stage = CompletableFuture.failedFuture(t);
    } finally {
      spans.close(scope);
      legs.forEach(leg -> leg.flight().leaveLoader());
    }
    try {
      stage.whenComplete((values, error) -> loaded(legs, generations, values, error, starter,
          start, span));
    } catch (Throwable t) { // a foreign stage's whenComplete threw
      loaded(legs, generations, null, t, starter, start, span);
    }
    for (Leg<V> leg : legs) {
      CompletableFuture<Loaded<V>> own = leg.own();
      if (own != null && !own.isDone() && leg.flight().completedExceptionally()) {
        // timed out while load() itself was running, and its stage is still pending
        leg.flight().whenCompleted((loaded, failure) -> own.completeExceptionally(failure));
      }
    }
  }

  /**
   * Begins a loader call's span on this thread: in the background unless this is the thread of
   * a synchronous caller that waits ({@link CallerRuns}; a refresh thread drives one too, for
   * its background refreshes), a child of the first key's background refresh if there is one.
   */
  private Span loadSpan(List<Leg<V>> legs, Set<String> keys, Executor on) {
    Span refresh = legs.get(0).refresh();
    boolean background = refresh != null
        || !(on instanceof CallerRuns here && here.owner() == Thread.currentThread());
    return spans.begin(Kind.LOAD, keys, background, refresh);
  }

  /**
   * The loader call completed: completes every flight (here, on whichever thread completed the
   * stage: callers never wait for the executor), then issues the writes on this thread if it
   * started the call, else hands them to the refresh executor; ends the call's span, if any.
   */
  private void loaded(List<Leg<V>> legs, long[] generations,
      Map<String, ? extends V> values, Throwable error, Thread starter, long start, Span span) {
    long end = clock.millis(); // the values' load time, for other hosts
    long elapsed = elapsedMillis(start);
    Throwable failure = error != null ? Failures.unwrap(error)
        : values == null ? new NullPointerException("the bulk loader returned a null map")
        : null;
    List<V> found = new ArrayList<>(legs.size());
    if (failure == null) {
      try { // the caller's map: its get may throw, which fails the load at once
        for (Leg<V> leg : legs) {
          found.add(values.get(leg.flight().key));
        }
      } catch (Throwable t) {
        failure = t;
      }
    }
    if (failure == null) {
      // a key of a bulk call appears after the whole call: what a peer waiting for it expects
      loadTimes.recordSuccess(elapsed, 1);
    }
    spans.end(span, failure == null ? "success" : "failure", failure);
    List<Runnable> writes = new ArrayList<>(legs.size());
    for (int i = 0; i < legs.size(); i++) {
      Leg<V> leg = legs.get(i);
      long statsMillis = i == 0 ? elapsed : 0; // the call's time, counted once
      if (failure != null) {
        if (leg.own() != null) {
          leg.own().completeExceptionally(new CacheLoadException("the loader failed", failure));
        }
        failed(leg.flight(), failure, statsMillis);
      } else {
        Loaded<V> loaded = new Loaded<>(found.get(i), end, elapsed, generations[i]);
        if (leg.own() != null) {
          leg.own().complete(loaded);
        }
        Runnable write = complete(leg.flight(), loaded, statsMillis);
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
      // counted from the hand-over until the writes were issued (and are counted themselves),
      // so that close() waits for a write still queued in a caller's executor
      CompletableFuture<Void> handedOver = new CompletableFuture<>();
      pending.track(handedOver);
      Runnable issue = () -> {
        try {
          writeAll.run();
        } finally {
          handedOver.complete(null);
        }
      };
      refresher.submit(Refusable.of(issue, issue)); // refused: written on this thread
    }
  }

  /**
   * Completes a flight with its load's result, waking every caller that joined it, and returns
   * the write that must follow (it writes, unless the flight was voided by then, and ends the
   * flight), or {@code null} if there is none (no write back, a {@linkplain Flight#fenced fenced}
   * flight): the flight was ended here.
   *
   * @param statsMillis the load time to add to the statistics (a bulk call counts its time once)
   */
  private Runnable complete(Flight<V> flight, Loaded<V> loaded, long statsMillis) {
    stats.recordLoad(statsMillis, loaded.value() == null);
    if (flight.fenced) {
      stats.increment(Counter.FENCED_LOAD);
    }
    boolean writeBack = flight.writeBack;
    if (!flight.deliver(loaded) || !writeBack || flight.voided()) {
      if (writeBack && flight.voided()) {
        stats.increment(Counter.STALE_SET_DISCARD); // invalidated or overwritten meanwhile
      }
      leases.end(flight, Ending.SUCCEEDED);
      return null;
    }
    flight.transition(Flight.State.WRITING);
    return () -> write(flight, loaded);
  }

  private void write(Flight<V> flight, Loaded<V> loaded) {
    CompletableFuture<Void> written = null;
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
        written = writer.writeLoad(flight.storeKey, loaded, flight.casToken).thenAccept(stored -> {
          if (stored) {
            stats.increment(Counter.LOAD_WRITTEN);
            if (flight.origin == Flight.Origin.REFRESH) {
              stats.increment(Counter.REFRESH_SUCCESS);
            }
          }
        });
      }
    } finally {
      if (written == null) {
        leases.end(flight, Ending.SUCCEEDED);
      } else {
        // Ended once the write has landed (or failed): until then a read misses the store, and
        // joins this flight for its value instead of loading the key again (issue 30: a reload
        // of a hot key cost 1.6 loads a write when this ended as the write was issued). The
        // lease is released after the write as before, now after its answer.
        written.whenComplete((nothing, failure) -> leases.end(flight, Ending.SUCCEEDED));
      }
    }
  }

  /** Fails a flight (its callers get a {@link CacheLoadException}) and records the failure. */
  private void failed(Flight<V> flight, Throwable cause, long elapsed) {
    stats.recordLoadFailure(elapsed);
    boolean mine = flight.fail(new CacheLoadException("the loader failed", cause));
    leases.end(flight, new Ending.Failed(cause));
    if (mine && flight.origin == Flight.Origin.REFRESH) {
      stats.increment(Counter.REFRESH_FAILURE);
      refreshErrorLog.warn("a refresh failed; the cached value keeps being served", cause);
      if (log.isDebugEnabled()) {
        log.debug("refresh failed for key {}", flight.storeKey, cause);
      }
    }
  }

  /**
   * The leader's own future of a miss's flight (see {@link Leg}): its flight's outcome, except
   * that a failure (a load timeout) does not fail it while {@code caller}, the thread that waits
   * for it, is itself inside the flight's loader call.
   */
  private static <V> CompletableFuture<Loaded<V>> own(Flight<V> flight, Thread caller) {
    CompletableFuture<Loaded<V>> own = new CompletableFuture<>();
    flight.whenCompleted((loaded, error) -> {
      if (error == null) {
        own.complete(loaded);
      } else if (!flight.inLoader(caller)) {
        own.completeExceptionally(error);
      }
    });
    return own;
  }

  /** Milliseconds on the ticker since {@code startNanos}, a reading of it; never negative. */
  private long elapsedMillis(long startNanos) {
    return Math.max(0, TimeUnit.NANOSECONDS.toMillis(ticker.read() - startNanos));
  }

  static IllegalStateException recursive() {
    return new IllegalStateException("recursive load: a loader called the cache for the key it"
        + " is loading (it would wait for itself); load what it needs directly instead");
  }

  @SuppressWarnings("unchecked")
  private static <T> T cast(Object o) {
    return (T) o;
  }
}
