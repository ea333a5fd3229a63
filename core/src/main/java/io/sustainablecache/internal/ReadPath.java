package io.sustainablecache.internal;

import io.sustainablecache.AsyncLoader;
import io.sustainablecache.CacheLoadException;
import io.sustainablecache.Loader;
import io.sustainablecache.RefreshPolicy;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.random.RandomGenerator;

/**
 * The read path of single keys, written once: read the item, decode it, take the <em>read
 * step</em> ({@link #step}: what the entry means now, counted), then {@link #proceed}: answer,
 * answer and refresh in the background, refresh inline, or load. The asynchronous flow is the
 * only flow; the synchronous API drives it on the caller's thread with a {@link CallerRuns}, and
 * answers a hit without leaving the caller's thread. {@code getAll} takes the same step per key
 * ({@link BulkLoads}). A read without a loader (a peek: {@code getIfPresent}) takes the same step
 * and never loads or refreshes. Thread-safe.
 *
 * <p>An answer is the value, {@link #ABSENT} for a key without one, or (for a peek that missed)
 * {@link #NOT_CACHED}; the facade maps it to a
 * value, an exception or an {@link Optional}.
 */
final class ReadPath<V> {

  /** The answer for a key without a value. */
  static final Object ABSENT = new Object();

  /** A peek's answer when nothing is cached under the key (a miss). */
  static final Object NOT_CACHED = new Object();

  private static final CompletableFuture<Object> NOTHING =
      CompletableFuture.completedFuture(NOT_CACHED);

  private final CacheStore store;
  private final Keys keys;
  private final EntryReader<V> reader;
  private final LoadPipeline<V> loads;
  private final Refresher refresher;
  private final RefreshPolicy policy;
  private final RefreshMode mode;
  private final InstantSource clock;
  private final RandomGenerator random;
  private final StatsCounter stats;
  private final RateLimitedLog storeErrorLog;
  private final RateLimitedLog staleOnErrorLog;
  private final boolean serveStaleOnError;
  private final long loadTimeoutMillis;
  private final long waitNanos;
  /** The near cache; {@code null} without one. */
  private final NearCache<V> near;

  ReadPath(CacheConfig<V> config, Keys keys, EntryReader<V> reader, LoadPipeline<V> loads,
      Refresher refresher, StatsCounter stats, RateLimitedLog storeErrorLog, long waitNanos,
      NearCache<V> near) {
    this.near = near;
    this.store = config.store();
    this.keys = keys;
    this.reader = reader;
    this.loads = loads;
    this.refresher = refresher;
    this.policy = config.policy();
    this.mode = config.refreshMode();
    this.clock = config.clock();
    this.random = config.random();
    this.stats = stats;
    this.storeErrorLog = storeErrorLog;
    this.staleOnErrorLog = new RateLimitedLog(Log.LOGGER, config.ticker());
    this.serveStaleOnError = config.serveStaleOnError();
    this.loadTimeoutMillis = config.loadTimeout().toMillis();
    this.waitNanos = waitNanos;
  }

  // ---------------------------------------------------------------------------------------------
  // The read step

  /**
   * The read step: what a read that found {@code entry} ({@code null}: nothing usable, or the
   * read failed) does next, counted once: a hit (and a stale or absent hit), or a miss. An inline
   * refresh is counted when it is known whether the reader waits ({@link #proceed}).
   */
  Decision.Action step(Entry<V> entry, long now) {
    Decision.Action action = Decision.decide(entry, now, mode, policy, random);
    count(action, entry);
    return action;
  }

  private void count(Decision.Action action, Entry<V> entry) {
    switch (action) {
      case MISS -> stats.increment(Counter.MISS);
      case REFRESH_INLINE -> { }
      default -> hit(Counter.HIT, action, entry);
    }
  }

  /**
   * The near cache's answer, or {@code null} to read the store: it holds no entry it may serve
   * now, or its entry is past what a hit may answer (then the store's entry decides). A near hit
   * takes the same read step as a store hit: a refresh it calls for starts in the background.
   * It reads the time once (the near cache's ticker; the clock's time from {@link
   * NearCache#millis}) and allocates nothing: a synchronous loader is adapted only for a refresh.
   *
   * @param loader the loader of an asynchronous read; {@code null} for a synchronous one or a peek
   * @param syncLoader the loader of a synchronous read; {@code null} for an asynchronous one or a
   *     peek
   */
  private Object fromNear(String key, AsyncLoader<? extends V> loader,
      Loader<? extends V> syncLoader) {
    long tick = near.tick();
    NearEntry<V> hit = near.get(key, tick);
    Decision.Action action = nearStep(key, hit, hit == null ? 0 : near.millis(tick));
    if (action == null) {
      return null;
    }
    if (action != Decision.Action.FRESH) { // a refresh in the background, nothing to wait for
      proceed(action, key, keys.storeKey(key), hit.entry(), LoadRequest.READ_OK,
          syncLoader == null ? loader : DefaultSustainableCache.adapt(syncLoader), null, true);
    }
    return near.answer(key, hit); // null: its copy could not be decoded, read the store
  }

  /**
   * The read step of what the near cache holds for a key ({@code hit}, {@code null}: nothing
   * servable), for {@code get} and {@code getAll} alike. If the entry may answer without the
   * store (fresh, or due for a refresh in the background): counted as a near hit (which is also a
   * hit, see {@link StatsCounter}), sampled (see {@link NearCache#sample}), and the action
   * returned, as {@code FRESH} when a near hit started the entry's refresh less than the pause ago
   * ({@link NearEntry}). Otherwise {@code null}, counted as a near miss: read the store. An entry
   * due for a refresh that this instance wrote itself (so without a CAS token) also reads the
   * store, once per refresh pause.
   *
   * @param now the clock's time, epoch milliseconds (not read when {@code hit} is {@code null})
   */
  Decision.Action nearStep(String key, NearEntry<V> hit, long now) {
    if (hit != null) {
      Entry<V> entry = hit.entry();
      Decision.Action action = now < hit.freshUntil() ? Decision.Action.FRESH
          : Decision.decide(entry, now, mode, policy, random);
      if (action == Decision.Action.FRESH || action == Decision.Action.REFRESH_BACKGROUND
          || action == Decision.Action.STALE) {
        boolean refresh = action != Decision.Action.FRESH && near.mayRefresh(hit);
        // An entry this instance wrote has no token (a write returns none); the refresh's write
        // must be conditional on one, so that read goes to the store.
        if (!refresh || entry.casToken() != EntryWriter.NO_CAS) {
          hit(Counter.NEAR_HIT, action, entry);
          near.sample(key, entry, now);
          return refresh ? action : Decision.Action.FRESH;
        }
      }
    }
    stats.increment(Counter.NEAR_MISS);
    return null;
  }

  /** The near cache; {@code null} without one. */
  NearCache<V> near() {
    return near;
  }

  /** Taken before a store read whose entry the near cache may hold; {@code null} without one. */
  NearTier.Ticket nearTicket() {
    return near == null ? null : near.ticket();
  }

  /**
   * The entry of an item read at {@code now}, or {@code null} if there was none; offered to the
   * near cache if the read took a {@link #nearTicket} ({@code null}: none).
   */
  Entry<V> entry(String storeKey, StoreItem item, long now, NearTier.Ticket ticket) {
    Entry<V> entry = item == null ? null : reader.read(storeKey, item, now);
    if (ticket != null) {
      near.offer(storeKey, item, entry, ticket);
    }
    return entry;
  }

  // ---------------------------------------------------------------------------------------------
  // Single keys

  /**
   * Reads a key on this thread and answers: a hit without waiting for anything but the store,
   * otherwise by driving the flow here, so that the loader runs on this thread.
   *
   * @param loader the loader, or {@code null} for a peek
   * @return the value or {@link #ABSENT}
   */
  Object read(String key, AsyncLoader<? extends V> loader) {
    if (near != null) {
      Object answer = fromNear(key, loader, null);
      if (answer != null) {
        return answer;
      }
    }
    return readStore(key, loader);
  }

  /**
   * {@link #read} with a synchronous loader ({@code get}, {@code find}), adapted to an
   * asynchronous one only when the read needs it: a near hit allocates nothing.
   */
  Object readSync(String key, Loader<? extends V> loader) {
    if (near != null) {
      Object answer = fromNear(key, null, loader);
      if (answer != null) {
        return answer;
      }
    }
    return readStore(key, DefaultSustainableCache.adapt(loader));
  }

  /** {@link #read} past the near cache: reads the store on this thread and answers. */
  private Object readStore(String key, AsyncLoader<? extends V> loader) {
    NearTier.Ticket ticket = nearTicket();
    String storeKey = keys.storeKey(key);
    StoreItem item = null;
    long readMark = loads.readMark();
    boolean readFailed = false;
    boolean mayWait = Waiting.allowed(store);
    try {
      if (!mayWait) {
        throw Waiting.notRead();
      }
      item = readNow(storeKey);
    } catch (StoreException e) {
      storeError("a read failed; treating it as a miss", e);
      readFailed = true;
    }
    long now = clock.millis();
    Entry<V> entry = entry(storeKey, item, now, ticket);
    Decision.Action action = step(entry, now);
    CallerRuns here = loader != null && waits(action) ? new CallerRuns(refresher.asExecutor())
        : null;
    CompletableFuture<Object> pending =
        proceed(action, key, storeKey, entry, LoadRequest.markOf(entry, readFailed, readMark),
            loader, here, true);
    if (pending == null) {
      return answer(entry);
    }
    // a peek's is done already; on a thread that may not wait, a loader it queued runs here
    return here == null ? pending.join() : await(pending, here, mayWait ? waitNanos : 0);
  }

  /**
   * Reads a key asynchronously: the same flow, continued on the threads that complete the store's
   * futures, except that a loader never starts on such a thread (see {@link #loaderExecutor}).
   *
   * @param loader the loader, or {@code null} for a peek
   * @return a future of the value or {@link #ABSENT}
   */
  CompletableFuture<Object> readAsync(String key, AsyncLoader<? extends V> loader) {
    if (near != null) {
      Object answer;
      try {
        answer = fromNear(key, loader, null);
      } catch (IllegalArgumentException | NullPointerException invalidKey) {
        throw invalidKey; // as without a near cache
      } catch (Throwable t) {
        return CompletableFuture.failedFuture(t);
      }
      if (answer != null) {
        return CompletableFuture.completedFuture(answer); // no store key built for a near hit
      }
    }
    CompletableFuture<Object> out = new CompletableFuture<>();
    readAsync(out, key, keys.storeKey(key), loader, null, true);
    return out;
  }

  /** The store read of {@link #readAsync(String, AsyncLoader)} and of its one retry. */
  private void readAsync(CompletableFuture<Object> out, String key, String storeKey,
      AsyncLoader<? extends V> loader, Executor continuation, boolean mayRetry) {
    Thread caller = Thread.currentThread();
    NearTier.Ticket ticket = nearTicket();
    long readMark = loads.readMark();
    store.gets(storeKey).whenComplete((item, error) -> {
      try {
        if (error != null) {
          storeError("a read failed; treating it as a miss", EntryWriter.unwrap(error));
        }
        long now = clock.millis();
        Entry<V> entry =
            entry(storeKey, error == null ? item.orElse(null) : null, now, ticket);
        Decision.Action action = step(entry, now);
        Executor on = continuation != null || loader == null || !waits(action) ? continuation
            : loaderExecutor(caller);
        CompletableFuture<Object> pending =
            proceed(action, key, storeKey, entry,
                LoadRequest.markOf(entry, error != null, readMark), loader, on, mayRetry);
        if (pending == null) {
          out.complete(answer(entry));
        } else {
          pending.whenComplete((answer, failure) -> {
            if (failure == null) {
              out.complete(answer);
            } else {
              out.completeExceptionally(EntryWriter.unwrap(failure));
            }
          });
        }
      } catch (Throwable t) {
        out.completeExceptionally(t);
      }
    });
  }

  /**
   * What follows the read step, written once for every single-key read: starts the refresh or the
   * load the action calls for, and returns the future of the answer, or {@code null} when the
   * answer is the entry itself (nothing to wait for). A peek ({@code loader == null}) answers what
   * is there and never loads.
   *
   * @param failedReadMark see {@link LoadRequest#failedReadMark}
   * @param on where a loader starts (see {@link LoadPipeline#misses})
   * @param mayRetry whether a joined load that ended without a value may be followed by one more
   *     read
   */
  private CompletableFuture<Object> proceed(Decision.Action action, String key, String storeKey,
      Entry<V> entry, long failedReadMark, AsyncLoader<? extends V> loader, Executor on,
      boolean mayRetry) {
    if (loader == null) { // a peek
      if (action == Decision.Action.REFRESH_INLINE) {
        hit(Counter.HIT, action, entry);
      }
      return action == Decision.Action.MISS ? NOTHING : null;
    }
    switch (action) {
      case FRESH:
        return null;
      case REFRESH_BACKGROUND:
      case STALE:
        loads.refreshInBackground(LoadRequest.of(key, storeKey, entry, LoadRequest.READ_OK),
            LoadPipeline.Batch.ofOne(loader));
        return null;
      case REFRESH_INLINE: {
        CompletableFuture<Loaded<V>> refresh =
            loads.refreshInline(LoadRequest.of(key, storeKey, entry, LoadRequest.READ_OK),
                LoadPipeline.Batch.ofOne(loader), on);
        if (refresh == null) {
          // another load is refreshing it: the reader does not wait
          hit(Counter.HIT, action, entry);
          return null;
        }
        stats.increment(Counter.MISS); // the reader waits for the reload
        return refresh.handle((loaded, failure) ->
            failure == null && loaded.wasLoaded() ? answer(loaded) : answer(entry));
      }
      default: {
        LoadRequest<V> request = LoadRequest.of(key, storeKey, entry, failedReadMark);
        CompletableFuture<Object> answer = new CompletableFuture<>();
        loads.misses(List.of(request), LoadPipeline.Batch.ofOne(loader), on).get(0)
            .whenComplete((loaded, error) -> {
          try {
            if (error != null) {
              answer.complete(staleOrThrow(EntryWriter.unwrap(error), request.stale()));
            } else if (loaded.wasLoaded()) {
              answer.complete(answer(loaded));
            } else if (mayRetry) {
              // The joined load ended without a value (a refresh rejected, or another instance
              // held the lease): read the key once more, on the continuation, which refuses if
              // the caller has left (then nobody waits for the answer).
              on.execute(() -> readAsync(answer, key, storeKey, loader, on, false));
            } else {
              throw new CacheLoadException("the key could not be loaded: the load it joined"
                  + " ended without a value twice", null);
            }
          } catch (Throwable t) {
            answer.completeExceptionally(t);
          }
        });
        return answer;
      }
    }
  }

  private static boolean waits(Decision.Action action) {
    return action == Decision.Action.MISS || action == Decision.Action.REFRESH_INLINE;
  }

  /**
   * Where an asynchronous read starts a loader: on the calling thread while it is still in the
   * call (a store that answered at once), otherwise on the refresh executor, never on a client's
   * I/O thread or the scheduler, where a blocking loader would stall every other read.
   */
  Executor loaderExecutor(Thread caller) {
    Executor refreshes = refresher.asExecutor();
    return task -> {
      if (Thread.currentThread() == caller) {
        task.run();
      } else {
        refreshes.execute(task);
      }
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Answers and failures

  /**
   * Waits on this thread for a pending answer, running the flow's tasks here, at most {@code
   * patienceNanos} (zero: only runs what is queued already, see {@link Waiting}).
   */
  private Object await(CompletableFuture<Object> pending, CallerRuns here, long patienceNanos) {
    try {
      return here.drive(pending, patienceNanos);
    } catch (ExecutionException e) {
      throw Failures.rethrow(e.getCause());
    } catch (TimeoutException e) {
      throw new CacheLoadException(patienceNanos == 0 ? "the key is being loaded by another"
          + " thread, and this thread delivers the store's answers, so it does not wait"
          : "gave up waiting for a load after " + loadTimeoutMillis + " ms", null);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CacheLoadException("interrupted while waiting for a load", e);
    }
  }

  /**
   * The answer of a load that failed with {@code failure}: the stale entry if allowed, otherwise
   * thrown as {@link Failures} says.
   */
  Object staleOrThrow(Throwable failure, Entry<V> stale) {
    Object answer = staleOnError(failure, stale);
    if (answer != null) {
      return answer;
    }
    throw Failures.rethrow(failure);
  }

  /**
   * The one stale-on-error rule, for {@code get} and {@code getAll}: the answer of the stale entry
   * a failed load of the key had ({@code null}: none), counted and logged, if stale-on-error is on
   * and the failure is a load's ({@link CacheLoadException}: the loader's, a timeout, a
   * remembered one; not a recursive load); otherwise {@code null}.
   */
  Object staleOnError(Throwable failure, Entry<V> stale) {
    if (stale == null || !serveStaleOnError || !(failure instanceof CacheLoadException)) {
      return null;
    }
    stats.increment(Counter.STALE_ON_ERROR);
    staleOnErrorLog.warn("reloading an expired entry failed; serving the stale value",
        failure.getCause() == null ? failure : failure.getCause());
    return answer(stale);
  }

  /** Reads an item, waiting at most the load timeout even if an adapter breaks its bound. */
  StoreItem readNow(String storeKey) {
    CompletableFuture<Optional<StoreItem>> read = store.gets(storeKey);
    try {
      return read.get(waitNanos, TimeUnit.NANOSECONDS).orElse(null);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw cause instanceof StoreException failure ? failure
          : new StoreException("the store read failed", cause);
    } catch (TimeoutException e) {
      read.cancel(false);
      throw new StoreException("the store did not answer a read within the load timeout", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      read.cancel(false);
      throw new CacheLoadException("interrupted while reading the store", e);
    }
  }

  void storeError(String message, Throwable e) {
    stats.increment(Counter.STORE_ERROR);
    storeErrorLog.warn(message, e);
  }

  /**
   * Counts a hit of {@code entry}: as {@code counter} ({@link Counter#HIT}, or {@link
   * Counter#NEAR_HIT}, which is also a hit), and as an absent and a stale hit where it is one.
   */
  private void hit(Counter counter, Decision.Action action, Entry<V> entry) {
    stats.increment(counter);
    if (entry.kind() == Entry.Kind.ABSENT) {
      stats.increment(Counter.ABSENT_HIT);
    }
    if (action == Decision.Action.STALE) {
      stats.increment(Counter.STALE_HIT);
    }
  }

  static Object answer(Entry<?> entry) {
    return entry.kind() == Entry.Kind.VALUE ? entry.value() : ABSENT;
  }

  static Object answer(Loaded<?> loaded) {
    return loaded.value() == null ? ABSENT : loaded.value();
  }
}
