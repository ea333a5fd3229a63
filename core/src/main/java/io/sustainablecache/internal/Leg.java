package io.sustainablecache.internal;

import io.sustainablecache.CacheObserver;
import java.util.concurrent.CompletableFuture;

/**
 * A flight the {@link LoadPipeline} runs, with the future of the caller that started it ({@code
 * null} for a refresh): a miss's own answer, which a load timeout does not fail while that
 * caller's own thread is inside the loader (a synchronous loader run by that very caller: it was
 * never waiting, and when the loader returns late it still hands its caller the value). A caller
 * whose flight's loader call runs on another thread (a batch of several callers' keys, a call on
 * a refresh thread) waits for it as a joined caller does: its load timeout fails it. A background
 * refresh's leg carries the refresh's span, with an observer: the parent of its lease's and its
 * load's spans.
 */
final class Leg<V> {
  private final Flight<V> flight;
  private final CompletableFuture<Loaded<V>> own;
  private final CacheObserver.Span refresh;

  Leg(Flight<V> flight, CompletableFuture<Loaded<V>> own) {
    this(flight, own, null);
  }

  /** A refresh's leg: nobody's own; {@code refresh}, its span, or {@code null}. */
  static <V> Leg<V> refresh(Flight<V> flight, CacheObserver.Span refresh) {
    return new Leg<>(flight, null, refresh);
  }

  private Leg(Flight<V> flight, CompletableFuture<Loaded<V>> own, CacheObserver.Span refresh) {
    this.flight = flight;
    this.own = own;
    this.refresh = refresh;
  }

  Flight<V> flight() {
    return flight;
  }

  CompletableFuture<Loaded<V>> own() {
    return own;
  }

  /** A background refresh's span ({@link CacheObserver.Kind#REFRESH}), or {@code null}. */
  CacheObserver.Span refresh() {
    return refresh;
  }
}
