package io.sustainablecache.internal;

import io.sustainablecache.CacheLoadException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * What follows the read step, written once: the one consumer of the read step's results, for a
 * single key's read ({@code get}, {@code getAsync}, and the refresh a near hit calls for) and for
 * {@code getAll}'s keys alike. A read hands it the keys its step did not answer outright, with
 * their {@link Decision.Action}s; it starts the refreshes and the loads they call for through the
 * {@link LoadPipeline} (a read's misses with one loader call, its refreshes as one batch) and
 * answers each key that waits with a typed {@link Answer}, the one stale-on-error rule applied.
 * A fresh hit never comes here (hits stay out of the pipeline). Thread-safe.
 *
 * <p>What depends on the loader (the {@link Batch} the read hands on), not on how many keys a
 * read has: a bulk loader's background refreshes are coalesced per loader ({@link Coalescer}),
 * and a key of its read that is due for an inline refresh is loaded with the read's misses (one
 * loader call); a single key's loader refreshes its key on its own, in the background or
 * inline.
 */
final class AfterRead<V> {

  /** A read step's result for one key: the key's load request and what its step decided. */
  record Step<V>(LoadRequest<V> request, Decision.Action action) {}

  /** How many times a read reads a key again ({@link #afterNotLoaded}) before the key fails. */
  static final int MAX_REREADS = 3;

  private final LoadPipeline<V> loads;
  private final StatsCounter stats;
  private final boolean serveStaleOnError;
  private final RateLimitedLog staleOnErrorLog;

  AfterRead(CacheConfig<V> config, LoadPipeline<V> loads, StatsCounter stats) {
    this.loads = loads;
    this.stats = stats;
    this.serveStaleOnError = config.serveStaleOnError();
    this.staleOnErrorLog = new RateLimitedLog(Log.LOGGER, config.ticker());
  }

  /**
   * Consumes one read's step results: starts the background refreshes, the inline refreshes and
   * the loads of the misses (joining loads in flight), the misses with one loader call through
   * {@code on}.
   *
   * @param loader what the keys load with
   * @param on where a loader starts (see {@link LoadPipeline#misses}); unused if no key waits
   * @return per step, in order: {@code null} where the key's own entry answers now (a fresh hit,
   *     an entry served while it refreshes in the background, or one whose inline refresh another
   *     load is doing already), else the future of the key's answer, which never fails
   */
  List<CompletableFuture<Answer<V>>> consume(List<Step<V>> steps, Batch<V> loader,
      Executor on) {
    // Made when first needed: a read whose key refreshes in the background allocates no list
    // of answers.
    List<CompletableFuture<Answer<V>>> answers = null; // null: every key's entry answers
    List<LoadRequest<V>> toRefresh = null;
    List<LoadRequest<V>> toLoad = null;
    for (int i = 0; i < steps.size(); i++) {
      LoadRequest<V> request = steps.get(i).request();
      switch (steps.get(i).action()) {
        case FRESH -> { }
        case REFRESH_BACKGROUND, STALE -> toRefresh = added(toRefresh, request);
        case REFRESH_INLINE -> {
          if (loader.bulk()) { // loaded with the read's misses; the caller waits for it
            stats.increment(Counter.MISS);
            toLoad = added(toLoad, request);
          } else {
            CompletableFuture<Answer<V>> answer = refreshInline(request, loader, on);
            if (answer != null) {
              answers = answered(answers, steps.size(), i, answer);
            }
          }
        }
        default -> toLoad = added(toLoad, request);
      }
    }
    if (toRefresh != null) {
      loads.refreshInBackground(toRefresh, loader);
    }
    if (toLoad == null) {
      return answers == null ? Collections.nCopies(steps.size(), null) : answers;
    }
    List<CompletableFuture<Loaded<V>>> loaded = loads.misses(toLoad, loader, on);
    int next = 0; // the steps that load, in order, are toLoad's
    for (int i = 0; i < steps.size() && next < toLoad.size(); i++) {
      LoadRequest<V> request = steps.get(i).request();
      if (request == toLoad.get(next)) {
        answers = answered(answers, steps.size(), i, loaded.get(next++).handle((value, error) ->
            error != null ? staleOr(Failures.unwrap(error), request.stale())
                : value.wasLoaded() ? Answer.of(value) : Answer.notLoaded()));
      }
    }
    return answers;
  }

  private static <T> List<T> added(List<T> list, T element) {
    List<T> to = list == null ? new ArrayList<>() : list;
    to.add(element);
    return to;
  }

  /** {@code answers} (made with {@code size} nulls if {@code null}) with {@code answer} at {@code i}. */
  private static <T> List<T> answered(List<T> answers, int size, int i, T answer) {
    List<T> to = answers == null ? new ArrayList<>(Collections.nCopies(size, null)) : answers;
    to.set(i, answer);
    return to;
  }

  /**
   * A single key's inline refresh (PER: the reader waits for the reload of an entry that still
   * answers, {@link LoadRequest#stale}): {@code null} if another load is refreshing it (the
   * reader does not wait, counted as the hit it then is), else the future of the reload's value,
   * or of the current entry if the reload failed or did not load.
   */
  private CompletableFuture<Answer<V>> refreshInline(LoadRequest<V> request,
      Batch<V> loader, Executor on) {
    CompletableFuture<Loaded<V>> refresh = loads.refreshInline(request, loader, on);
    Entry<V> entry = request.stale();
    if (refresh == null) {
      stats.hit(Counter.HIT, Decision.Action.REFRESH_INLINE, entry);
      return null;
    }
    stats.increment(Counter.MISS); // the reader waits for the reload
    return refresh.handle((loaded, failure) ->
        failure == null && loaded.wasLoaded() ? Answer.of(loaded) : Answer.of(entry));
  }

  /**
   * The one rule for a key whose joined load ended without a value ({@link Answer.NotLoaded}: a
   * refresh refused or that lost the lease, another instance's load whose write did not come, a
   * fenced read whose fence was released or that waited for an earlier load), for {@code get},
   * {@code getAsync} and {@code getAll} alike: {@code null} while the read may read the key again
   * (it did {@code rereads} times, fewer than {@link #MAX_REREADS}), and it does; after that, the
   * answer of a failed load ({@link #staleOr}: the stale entry of {@code request}, the last read,
   * or a {@link CacheLoadException}).
   *
   * <p>Why read again, not fail or serve stale at once: the load ended for a reason that is not
   * the key's, and the store mostly holds the answer by then. The new read is a read like any
   * other: it sees what was written since, an invalidation that returned before it included, so
   * never the value that invalidation removed; and it joins or takes the key's one load (the
   * fleet lease), rather than loading beside another instance's. Why bounded: each read again
   * follows a change of the key or another instance's load, so more in one read is a key that
   * keeps being written, and the caller gets an answer instead of waiting on (a key is never
   * stuck). Why stale-or-fail at the bound, as for any failed load: the stale entry is the last
   * read's, so it too was read after any invalidation that returned.
   */
  Answer<V> afterNotLoaded(LoadRequest<V> request, int rereads) {
    return rereads < MAX_REREADS ? null : staleOr(new CacheLoadException("the key could not be"
        + " loaded: the load it joined ended without a value " + (MAX_REREADS + 1) + " times",
        null), request.stale());
  }

  /**
   * The one stale-on-error rule, for {@code get} and {@code getAll}: the answer of the stale entry
   * a failed load of the key had ({@code stale}, {@code null}: none), counted and logged, if
   * stale-on-error is on and the failure is a load's ({@link CacheLoadException}: the loader's, a
   * timeout, a remembered one; not a recursive load); otherwise the failure.
   */
  Answer<V> staleOr(Throwable failure, Entry<V> stale) {
    if (stale == null || !serveStaleOnError || !(failure instanceof CacheLoadException)) {
      return new Answer.Failed<>(failure);
    }
    stats.increment(Counter.STALE_ON_ERROR);
    staleOnErrorLog.warn("reloading an expired entry failed; serving the stale value",
        failure.getCause() == null ? failure : failure.getCause());
    return Answer.of(stale);
  }
}
