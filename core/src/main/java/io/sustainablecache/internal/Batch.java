package io.sustainablecache.internal;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.AsyncBulkLoader;
import io.sustainablecache.AsyncLoader;
import io.sustainablecache.BulkLoader;
import io.sustainablecache.Loader;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A loader as the {@link LoadPipeline} calls it, handed explicitly from the read paths ({@link
 * ReadPath}, {@link BulkLoads}) through {@link AfterRead}: one call ({@link #calls}) for the keys
 * of a batch, and how its flights start ({@link Kind}). A read makes its batch only when it loads
 * or refreshes (a hit makes none); a loading cache's is made once, with the cache. (A class, not a
 * record: identity is all it needs, and a record's generated {@code equals} is costly under the
 * model checker.)
 */
final class Batch<V> {

  /** How a loader's flights start. */
  enum Kind {
    /**
     * A single key's loader, called as a bulk loader of one key (its {@code null}, no value, is the
     * key left out): a miss loads at once, a background refresh on its own refresh thread.
     */
    ONE,
    /**
     * A caller's bulk loader ({@code getAll}): its misses load at once (a per-call loader never
     * joins a batch); its background refreshes, from every call with the same loader instance, are
     * coalesced ({@link Coalescer}).
     */
    BULK,
    /** A loading cache's bulk loader: its misses and its refreshes alike are coalesced. */
    LOADING
  }

  private final AsyncBulkLoader<? extends V> calls;
  private final Kind kind;
  /**
   * What the {@link Coalescer} groups this batch's flights by: the caller's loader instance, or
   * for a loading cache this batch itself.
   */
  private final Object group;

  private Batch(AsyncBulkLoader<? extends V> calls, Kind kind, Object group) {
    this.calls = calls;
    this.kind = kind;
    this.group = group == null ? this : group;
  }

  AsyncBulkLoader<? extends V> calls() {
    return calls;
  }

  Kind kind() {
    return kind;
  }

  /** Whether the loader is a bulk loader (counted as a bulk load), not a single key's. */
  boolean bulk() {
    return kind != Kind.ONE;
  }

  Object group() {
    return group;
  }

  /** A single key's asynchronous loader as a batch of one. */
  static <V> Batch<V> ofOne(AsyncLoader<? extends V> loader) {
    return new Batch<V>(keys -> {
      String key = keys.iterator().next();
      CompletionStage<? extends V> stage =
          requireNonNull(loader.load(key), "the loader returned a null stage");
      return stage.thenApply(value -> value == null ? Map.of() : Map.of(key, value));
    }, Kind.ONE, loader);
  }

  /** A single key's synchronous loader as a batch of one: it runs inside the call. */
  static <V> Batch<V> ofOneSync(Loader<? extends V> loader) {
    return new Batch<V>(keys -> {
      String key = keys.iterator().next();
      V value = loader.load(key);
      return CompletableFuture.completedFuture(value == null ? Map.of() : Map.of(key, value));
    }, Kind.ONE, loader);
  }

  /** A caller's asynchronous bulk loader. */
  static <V> Batch<V> ofBulk(AsyncBulkLoader<? extends V> loader) {
    return new Batch<>(loader, Kind.BULK, loader);
  }

  /** A caller's synchronous bulk loader: it runs inside the call, on its thread. */
  static <V> Batch<V> ofBulkSync(BulkLoader<? extends V> loader) {
    return new Batch<V>(keys -> CompletableFuture.completedFuture(loader.loadAll(keys)),
        Kind.BULK, loader);
  }

  /**
   * A loading cache's bulk loader ({@code calls}: what {@link LoadPipeline#loading} wraps), the
   * group of its own in the coalescer.
   */
  static <V> Batch<V> loading(AsyncBulkLoader<? extends V> calls) {
    return new Batch<>(calls, Kind.LOADING, null);
  }
}
