package io.sustainablecache.internal;

import io.sustainablecache.CacheLoadException;
import io.sustainablecache.RefreshPolicy;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.random.RandomGenerator;

/**
 * The read path of single keys, written once: read the item, decode it, take the <em>read
 * step</em> ({@link #step}: what the entry means now, counted), then answer a fresh hit at once,
 * or hand the step's result to {@link AfterRead}, the one consumer of read steps (answer and
 * refresh in the background, refresh inline, or load), which {@code getAll} uses too ({@link
 * BulkLoads}). The asynchronous flow is the only flow; the synchronous API drives it on the
 * caller's thread with a {@link CallerRuns}, and answers a hit without leaving the caller's
 * thread. A read without a loader (a peek: {@code getIfPresent}) takes the same step and never
 * loads or refreshes. Thread-safe.
 *
 * <p>The hit paths answer without allocating: an answer here is the value, or an {@link Answer}'s
 * shared instance: {@link Answer#absent()} for a key without one, {@link Answer#notCached()} for a
 * peek that missed; the facade maps it to a value, an exception or an {@link Optional}. A key that
 * waited for a load gets the same ({@link #consume}). A synchronous loader is adapted to an
 * asynchronous one only when the read needs a loader: never for a hit.
 */
final class ReadPath<V> {

  private final CacheStore store;
  private final Keys keys;
  private final EntryReader<V> reader;
  private final LoadPipeline<V> loads;
  private final AfterRead<V> afterRead;
  private final Refresher refresher;
  private final RefreshPolicy policy;
  private final RefreshMode mode;
  private final InstantSource clock;
  private final RandomGenerator random;
  private final StatsCounter stats;
  private final RateLimitedLog storeErrorLog;
  private final long loadTimeoutMillis;
  private final long waitNanos;
  /** The near cache; {@code null} without one. */
  private final NearCache<V> near;

  ReadPath(CacheConfig<V> config, Keys keys, EntryReader<V> reader, LoadPipeline<V> loads,
      AfterRead<V> afterRead, Refresher refresher, StatsCounter stats,
      RateLimitedLog storeErrorLog, long waitNanos, NearCache<V> near) {
    this.afterRead = afterRead;
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
    this.loadTimeoutMillis = config.loadTimeout().toMillis();
    this.waitNanos = waitNanos;
  }

  // ---------------------------------------------------------------------------------------------
  // The read step

  /**
   * The read step: what a read that found {@code entry} ({@code null}: nothing usable, or the
   * read failed) does next, counted once: a hit (and a stale or absent hit), or a miss. An inline
   * refresh is counted when it is known whether the reader waits ({@link AfterRead}; a peek's
   * is a hit).
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
      default -> stats.hit(Counter.HIT, action, entry);
    }
  }

  /**
   * The near cache's answer, or {@code null} to read the store: it holds no entry it may serve
   * now, or its entry is past what a hit may answer (then the store's entry decides). A near hit
   * takes the same read step as a store hit: a refresh it calls for starts in the background.
   * It reads the time once (the near cache's ticker; the clock's time from {@link
   * NearCache#millis}) and allocates nothing: the loader's {@link Batch} is made only for a
   * refresh.
   *
   * @param loader see {@link #read}
   */
  private <L> Object fromNear(String key, L loader, Function<? super L, Batch<V>> batch) {
    long tick = near.tick();
    NearEntry<V> hit = near.get(key, tick);
    Decision.Action action = nearStep(key, hit, hit == null ? 0 : near.millis(tick));
    if (action == null) {
      return null;
    }
    if (action != Decision.Action.FRESH && loader != null) {
      // a refresh in the background, nothing to wait for
      afterRead.consume(List.of(new AfterRead.Step<>(LoadRequest.of(key, keys.storeKey(key),
          hit.entry(), LoadRequest.READ_OK), action)), batch.apply(loader), null);
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
        if (!refresh || entry.casToken() != Entry.NO_CAS) {
          stats.hit(Counter.NEAR_HIT, action, entry);
          near.sample(key, entry, now);
          return refresh ? action : Decision.Action.FRESH;
        }
      }
    }
    stats.increment(Counter.NEAR_MISS);
    return null;
  }

  /** The one consumer of read steps, {@code getAll}'s too; for tests. */
  AfterRead<V> afterRead() {
    return afterRead;
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
   * @param loader what the read loads with (the caller's loader, or a loading cache's {@link
   *     Batch}), or {@code null} for a peek
   * @param batch makes the {@link Batch} of {@code loader}, called only when the read loads or
   *     refreshes, so that a hit allocates nothing: {@link Batch#ofOneSync}, {@link Batch#ofOne},
   *     or {@link Function#identity()} for a loading cache's; {@code null} for a peek
   * @return the value or {@link Answer#absent()} ({@link Answer#notCached()}: a peek's miss)
   */
  <L> Object read(String key, L loader, Function<? super L, Batch<V>> batch) {
    if (near != null) {
      Object answer = fromNear(key, loader, batch);
      if (answer != null) {
        return answer;
      }
    }
    return readStore(key, loader, batch);
  }

  /** {@link #read} past the near cache: reads the store on this thread and answers. */
  private <L> Object readStore(String key, L loader, Function<? super L, Batch<V>> batch) {
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
    if (loader == null) {
      return peek(action, entry);
    }
    if (action == Decision.Action.FRESH) {
      return answer(entry);
    }
    long failedReadMark = LoadRequest.markOf(entry, readFailed, readMark);
    if (!waits(action)) { // served while it refreshes in the background
      consume(null, key, storeKey, entry, action, failedReadMark, batch.apply(loader), null, 0);
      return answer(entry);
    }
    CallerRuns here = new CallerRuns(refresher.asExecutor());
    CompletableFuture<Object> pending = new CompletableFuture<>();
    consume(pending, key, storeKey, entry, action, failedReadMark, batch.apply(loader), here, 0);
    // on a thread that may not wait, a loader it queued runs here
    return await(pending, here, mayWait ? waitNanos : 0);
  }

  /**
   * Reads a key asynchronously: the same flow, continued on the threads that complete the store's
   * futures, except that a loader never starts on such a thread (see {@link #loaderExecutor}).
   *
   * @param loader see {@link #read}
   * @param batch see {@link #read}
   * @return a future of the value or {@link Answer#absent()} ({@link Answer#notCached()}: a
   *     peek's miss)
   */
  <L> CompletableFuture<Object> readAsync(String key, L loader,
      Function<? super L, Batch<V>> batch) {
    if (near != null) {
      Object answer;
      try {
        answer = fromNear(key, loader, batch);
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
    readAsync(out, key, keys.storeKey(key), loader, batch, null, 0); // not a re-read
    return out;
  }

  /**
   * The store read of {@link #readAsync(String, Object, Function)}, and the reads again of a key
   * whose load ended without a value ({@code rereads} of them so far, continued on {@code
   * continuation}).
   */
  private <L> void readAsync(CompletableFuture<Object> out, String key, String storeKey,
      L loader, Function<? super L, Batch<V>> batch, Executor continuation, int rereads) {
    Thread caller = Thread.currentThread();
    NearTier.Ticket ticket = nearTicket();
    long readMark = loads.readMark();
    store.gets(storeKey).whenComplete((item, error) -> {
      try {
        if (error != null) {
          storeError("a read failed; treating it as a miss", Failures.unwrap(error));
        }
        long now = clock.millis();
        Entry<V> entry =
            entry(storeKey, error == null ? item.orElse(null) : null, now, ticket);
        Decision.Action action = step(entry, now);
        if (loader == null) {
          out.complete(peek(action, entry));
        } else if (action == Decision.Action.FRESH) {
          out.complete(answer(entry));
        } else {
          Executor on = continuation != null || !waits(action) ? continuation
              : loaderExecutor(caller);
          consume(out, key, storeKey, entry, action,
              LoadRequest.markOf(entry, error != null, readMark), batch.apply(loader), on,
              rereads);
        }
      } catch (Throwable t) {
        out.completeExceptionally(t);
      }
    });
  }

  /**
   * A peek's answer (it never loads or refreshes): the entry's, or {@link Answer#notCached()} for a miss;
   * an entry due for an inline refresh is the hit it is for a peek. For {@code getIfPresent} and
   * {@code getAllIfPresent} alike.
   */
  Object peek(Decision.Action action, Entry<V> entry) {
    if (action == Decision.Action.REFRESH_INLINE) {
      stats.hit(Counter.HIT, action, entry);
    }
    return action == Decision.Action.MISS ? Answer.notCached() : answer(entry);
  }

  /**
   * Hands a single key's read step result (not a fresh hit, not a peek) to {@link AfterRead},
   * the consumer {@code getAll} shares, and completes {@code out} ({@code null}: nobody waits, a
   * refresh in the background) with its answer as the facade takes it: the one place an {@link
   * Answer} of a load becomes a single read's (a value unboxed, {@link Answer#absent()} as it is, a
   * failure as {@link Failures} gives it to the caller).
   *
   * @param failedReadMark see {@link LoadRequest#failedReadMark}
   * @param on where a loader starts (see {@link LoadPipeline#misses})
   * @param rereads how many times this read read its key again after a load ended without a
   *     value ({@link AfterRead#afterNotLoaded})
   */
  private void consume(CompletableFuture<Object> out, String key, String storeKey,
      Entry<V> entry, Decision.Action action, long failedReadMark, Batch<V> loader,
      Executor on, int rereads) {
    LoadRequest<V> request = LoadRequest.of(key, storeKey, entry, failedReadMark);
    CompletableFuture<Answer<V>> pending = afterRead.consume(List.of(new AfterRead.Step<>(request,
        action)), loader, on).get(0);
    if (out == null) {
      return;
    }
    if (pending == null) {
      out.complete(answer(entry));
      return;
    }
    pending.whenComplete((answer, error) -> {
      try {
        Answer<V> after = answer instanceof Answer.NotLoaded<V>
            ? afterRead.afterNotLoaded(request, rereads) : answer;
        if (error != null) {
          out.completeExceptionally(Failures.unwrap(error));
        } else if (after instanceof Answer.Failed<V> failed) {
          out.completeExceptionally(Failures.forCaller(failed.cause()));
        } else if (after != null) {
          out.complete(after instanceof Answer.Value<V> value ? value.value() : after);
        } else {
          // read the key again, on the continuation, which refuses if the caller has left
          // (then nobody waits for the answer)
          on.execute(() -> readAsync(out, key, storeKey, loader, Function.identity(), on,
              rereads + 1));
        }
      } catch (Throwable t) {
        out.completeExceptionally(t);
      }
    });
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
    return Waiting.await(pending, patienceNanos, here, (how, failure) -> switch (how) {
      case FAILED -> Failures.rethrow(failure);
      case TIMED_OUT -> new CacheLoadException(patienceNanos == 0 ? "the key is being loaded by"
          + " another thread, and this thread delivers the store's answers, so it does not wait"
          : "gave up waiting for a load after " + loadTimeoutMillis + " ms", null);
      case INTERRUPTED -> new CacheLoadException("interrupted while waiting for a load", failure);
    });
  }

  /** Reads an item, waiting at most the load timeout even if an adapter breaks its bound. */
  StoreItem readNow(String storeKey) {
    return awaitRead(store.gets(storeKey)).orElse(null);
  }

  private <T> T awaitRead(CompletableFuture<T> read) {
    try {
      return Waiting.await(read, waitNanos, null, ReadPath::readFailure); // allocates nothing
    } finally {
      read.cancel(false); // a read not answered (timed out, interrupted); no-op once it was
    }
  }

  private static RuntimeException readFailure(Waiting.Unfinished how, Throwable failure) {
    return switch (how) {
      case FAILED -> failure instanceof StoreException storeFailure ? storeFailure
          : new StoreException("the store read failed", failure);
      case TIMED_OUT -> new StoreException("the store did not answer a read within the load"
          + " timeout", failure);
      case INTERRUPTED -> new CacheLoadException("interrupted while reading the store", failure);
    };
  }

  /**
   * Reads several items with one bulk read, waiting as {@link #readNow} does.
   *
   * @return the items found, by store key
   */
  Map<String, StoreItem> readAllNow(List<String> storeKeys) {
    return awaitRead(store.getsAll(storeKeys));
  }

  void storeError(String message, Throwable e) {
    stats.increment(Counter.STORE_ERROR);
    storeErrorLog.warn(message, e);
  }

  /** A hit's answer: the entry's value, or {@link Answer#absent()}. */
  static Object answer(Entry<?> entry) {
    return entry.value() != null ? entry.value() : Answer.absent(); // a prior may be a value
  }

  /** A hit path's answer as {@code getAll} collects it: the value, or {@code null} for absent. */
  @SuppressWarnings("unchecked")
  static <V> V valueOf(Object answer) {
    return answer == Answer.absent() ? null : (V) answer;
  }
}
