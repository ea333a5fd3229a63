package io.sustainablecache.internal;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.BulkPeek;
import io.sustainablecache.CacheLoadException;
import io.sustainablecache.Ticker;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.PartialReadException;
import io.sustainablecache.spi.StoreException;
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
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * {@code getAll}: one bulk read for all keys, the read step per key, and the keys the step does
 * not answer outright handed together to {@link AfterRead}, the consumer a single key's read
 * uses too: one bulk loader call for all the keys this JVM must load (keys already loading are
 * joined), the keys found in their refresh window coalesced into bulk loader calls ({@link
 * Coalescer}), every load through the {@link LoadPipeline}. Thread-safe.
 */
final class BulkLoads<V> {

  private final Keys keys;
  private final ReadPath<V> reads;
  private final KeyRegistry registry;
  private final AfterRead<V> afterRead;
  private final Refresher refresher;
  private final CacheStore store;
  private final InstantSource clock;
  private final Ticker ticker;
  private final StatsCounter stats;
  private final long waitNanos;

  BulkLoads(CacheConfig<V> config, Keys keys, ReadPath<V> reads, KeyRegistry registry,
      AfterRead<V> afterRead, Refresher refresher, StatsCounter stats, long waitNanos) {
    this.keys = keys;
    this.reads = reads;
    this.registry = registry;
    this.afterRead = afterRead;
    this.refresher = refresher;
    this.store = config.store();
    this.clock = config.clock();
    this.ticker = config.ticker();
    this.stats = stats;
    this.waitNanos = waitNanos;
  }

  /** {@code getAll} with a {@link Batch} (a caller's bulk loader, or a loading cache's). */
  Map<String, V> getAll(Collection<String> keys, Batch<V> loader) {
    CallerRuns here = new CallerRuns(refresher.asExecutor());
    boolean mayWait = Waiting.allowed(store);
    CompletableFuture<Map<String, V>> result = run(keys, loader, here, here, mayWait, 0);
    // on a thread that may not wait, the loader queued here runs, and nothing is waited for
    return Waiting.await(result, mayWait ? waitNanos : 0, here, (how, failure) -> switch (how) {
      case FAILED -> Failures.rethrow(failure);
      case TIMED_OUT -> new CacheLoadException(mayWait ? "gave up waiting for a bulk load"
          : "keys are being loaded by another thread, and this thread delivers the store's"
          + " answers, so it does not wait", failure);
      case INTERRUPTED -> new CacheLoadException("interrupted while waiting for a bulk load",
          failure);
    });
  }

  /** {@code getAllAsync} with a {@link Batch} (see {@link #getAll}). */
  CompletableFuture<Map<String, V>> getAllAsync(Collection<String> keys, Batch<V> loader) {
    return run(keys, loader, LoadPipeline.DIRECT,
        reads.loaderExecutor(Thread.currentThread()), true, 0);
  }

  /**
   * @param continuation where the decisions run after the bulk read: the synchronous caller's
   *     thread (so that a recursive load is detected), or the thread that completed the read
   * @param loadOn where the bulk loader starts (see {@link LoadPipeline#misses})
   * @param readStore {@code false} for a synchronous call on a thread that may not wait (see
   *     {@link Waiting}): the keys the near cache does not answer are read as a failed read
   * @param rereads how many times these keys were read again after their loads ended without a
   *     value (see {@link AfterRead#afterNotLoaded})
   */
  private CompletableFuture<Map<String, V>> run(Collection<String> callerKeys,
      Batch<V> loader, Executor continuation, Executor loadOn, boolean readStore,
      int rereads) {
    Set<String> order = new LinkedHashSet<>();
    Map<String, V> values = new HashMap<>(); // the keys answered with a value
    List<AfterRead.Step<V>> steps = new ArrayList<>(); // what the consumer takes
    Map<String, String> storeKeys = fromNear(callerKeys, order, values, steps);
    if (storeKeys.isEmpty()) {
      afterRead.consume(steps, loader, loadOn); // refreshes only
      return CompletableFuture.completedFuture(result(order, values));
    }
    NearTier.Ticket ticket = reads.nearTicket();
    CompletableFuture<Map<String, V>> out = new CompletableFuture<>();
    long readMark = registry.readMark();
    CompletableFuture<Map<String, StoreItem>> read = readStore
        ? store.getsAll(new ArrayList<>(storeKeys.values()))
        : CompletableFuture.failedFuture(Waiting.notRead());
    read.whenCompleteAsync((items, error) -> {
      try {
        afterRead(out, order, storeKeys, values, steps, items, readMark, error, ticket, loader,
            continuation, loadOn, rereads);
      } catch (Throwable t) {
        out.completeExceptionally(t);
      }
    }, continuation);
    return out;
  }

  /**
   * The near cache's answers, with the read step: the caller's keys in {@code order} (duplicates
   * once), the keys the near cache answers with a value in {@code values}, the steps of those it
   * answers and that are due for a refresh in {@code steps} ({@code null}: a peek, which
   * refreshes nothing).
   *
   * @return the others, to read from the store: caller's key to store key, in order
   */
  private Map<String, String> fromNear(Collection<String> callerKeys, Set<String> order,
      Map<String, V> values, List<AfterRead.Step<V>> steps) {
    NearCache<V> near = reads.near();
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
          put(values, key, ReadPath.valueOf(answer));
          if (action != Decision.Action.FRESH && steps != null) {
            steps.add(new AfterRead.Step<>(LoadRequest.of(key, keys.storeKey(key),
                hit.entry(), LoadRequest.READ_OK), action));
          }
          continue;
        }
      }
      storeKeys.put(key, keys.storeKey(key));
    }
    return storeKeys;
  }

  /**
   * {@code peekAll}: the near cache's answers, one bulk read of the rest, and the read step per
   * key as {@code getIfPresent} takes it; nothing is loaded or refreshed. Waits for the read at
   * most the load timeout, and not at all on a thread that may not wait ({@link Waiting}): then,
   * as after a failed read, counted, the keys the near cache did not answer are misses and
   * nothing read is kept for {@link BulkPeek#putLoaded}.
   */
  PeekedKeys<V> peekAll(Collection<String> callerKeys, CallerWrites<V> writes) {
    Set<String> order = new LinkedHashSet<>();
    Map<String, V> values = new HashMap<>();
    Map<String, String> storeKeys = fromNear(callerKeys, order, values, null);
    Map<String, Optional<StoreItem>> read = new HashMap<>();
    if (!storeKeys.isEmpty()) {
      NearTier.Ticket ticket = reads.nearTicket();
      Map<String, StoreItem> items = null;
      FailedKeys failed = FailedKeys.NONE;
      try {
        if (!Waiting.allowed(store)) {
          throw Waiting.notRead();
        }
        items = reads.readAllNow(new ArrayList<>(storeKeys.values()));
      } catch (StoreException e) {
        failed = FailedKeys.of(e, storeKeys.size(), reads);
        items = failed.partial == null ? null : failed.partial.found();
      }
      long now = clock.millis();
      for (Map.Entry<String, String> key : storeKeys.entrySet()) {
        boolean readFailed = items == null || failed.contains(key.getValue());
        StoreItem item = readFailed ? null : items.get(key.getValue());
        Entry<V> entry = reads.entry(key.getValue(), item, now, ticket);
        Object answer = reads.peek(reads.step(entry, now), entry);
        if (answer != Answer.notCached()) {
          put(values, key.getKey(), ReadPath.valueOf(answer));
        }
        if (!readFailed) {
          read.put(key.getKey(), Optional.ofNullable(item));
        }
      }
    }
    return new PeekedKeys<>(Collections.unmodifiableMap(result(order, values)), read, writes);
  }

  /** The values, in the caller's order of the keys. */
  private Map<String, V> result(Set<String> order, Map<String, V> values) {
    Map<String, V> result = new LinkedHashMap<>();
    for (String key : order) {
      V value = values.get(key);
      if (value != null) {
        result.put(key, value);
      }
    }
    return result;
  }

  /** Records a key's value; {@code null} (absent) records nothing. */
  private static <V> void put(Map<String, V> values, String key, V value) {
    if (value != null) {
      values.put(key, value);
    }
  }

  /**
   * After the bulk read: the read step of each key read from the store, then the steps that do
   * not answer outright (with the near cache's refreshes, {@code steps}) to {@link AfterRead};
   * completes {@code out} once every key that waits has its answer. The keys whose joined loads
   * ended without a value are read again, together, by the rule a single key's read follows
   * ({@link AfterRead#afterNotLoaded}); a key that fails fails the call.
   */
  private void afterRead(CompletableFuture<Map<String, V>> out, Set<String> order,
      Map<String, String> storeKeys, Map<String, V> values, List<AfterRead.Step<V>> steps,
      Map<String, StoreItem> items, long readMark, Throwable readError, NearTier.Ticket ticket,
      Batch<V> loader, Executor continuation, Executor loadOn, int rereads) {
    FailedKeys failedKeys = FailedKeys.of(readError, storeKeys.size(), reads);
    if (failedKeys.partial != null) {
      items = failedKeys.partial.found();
    }
    long now = clock.millis();
    for (Map.Entry<String, String> key : storeKeys.entrySet()) {
      boolean readFailed = failedKeys.contains(key.getValue());
      StoreItem item = items == null || readFailed ? null : items.get(key.getValue());
      Entry<V> entry = reads.entry(key.getValue(), item, now, ticket);
      Decision.Action action = reads.step(entry, now);
      if (action == Decision.Action.FRESH || action == Decision.Action.REFRESH_BACKGROUND
          || action == Decision.Action.STALE) {
        put(values, key.getKey(), ReadPath.valueOf(ReadPath.answer(entry)));
      }
      if (action != Decision.Action.FRESH) {
        steps.add(new AfterRead.Step<>(LoadRequest.of(key.getKey(), key.getValue(), entry,
            LoadRequest.markOf(entry, readFailed, readMark)), action));
      }
    }
    List<CompletableFuture<Answer<V>>> answers =
        afterRead.consume(steps, loader, loadOn);
    List<CompletableFuture<?>> waits = new ArrayList<>();
    answers.forEach(answer -> {
      if (answer != null) {
        waits.add(answer);
      }
    });
    CompletableFuture.allOf(waits.toArray(new CompletableFuture<?>[0]))
        .whenComplete((ignored, error) -> {
          try {
            Throwable failure = null;
            List<String> again = new ArrayList<>(0);
            for (int i = 0; i < steps.size(); i++) {
              CompletableFuture<Answer<V>> pending = answers.get(i);
              if (pending == null) {
                continue; // answered by its entry
              }
              LoadRequest<V> wanted = steps.get(i).request();
              Answer<V> answer = pending.join();
              if (answer instanceof Answer.NotLoaded<V>) {
                answer = afterRead.afterNotLoaded(wanted, rereads);
                if (answer == null) {
                  again.add(wanted.key());
                  continue;
                }
              }
              if (answer instanceof Answer.Value<V> value) {
                values.put(wanted.key(), value.value());
              } else if (answer instanceof Answer.Failed<V> failed && failure == null) {
                failure = failed.cause();
              }
            }
            if (failure != null) {
              out.completeExceptionally(Failures.forCaller(failure));
              return;
            }
            if (!again.isEmpty()) {
              run(again, loader, continuation, loadOn, true, rereads + 1)
                  .whenComplete((found, reread) -> {
                    if (reread != null) {
                      out.completeExceptionally(reread);
                    } else {
                      values.putAll(found);
                      out.complete(result(order, values));
                    }
                  });
              return;
            }
            out.complete(result(order, values));
          } catch (Throwable t) {
            out.completeExceptionally(t);
          }
        });
  }

  /**
   * The keys a bulk read failed for: none, all of them, or those a {@link PartialReadException}
   * names (the others were read: its items). Counts and logs the failure once.
   */
  private record FailedKeys(boolean all, PartialReadException partial) {

    static final FailedKeys NONE = new FailedKeys(false, null);

    static FailedKeys of(Throwable readError, int keys, ReadPath<?> reads) {
      if (readError == null) {
        return NONE;
      }
      Throwable cause = Failures.unwrap(readError);
      if (cause instanceof PartialReadException partial) {
        reads.storeError("a bulk read failed for " + partial.failedKeys().size() + " of " + keys
            + " keys; treating those as misses", partial);
        return new FailedKeys(false, partial);
      }
      reads.storeError("a bulk read failed; treating every key as a miss", cause);
      return new FailedKeys(true, null);
    }

    boolean contains(String storeKey) {
      return all || (partial != null && partial.failedKeys().contains(storeKey));
    }
  }
}
