package io.sustainablecache.internal;

import java.util.concurrent.CompletableFuture;

/**
 * A flight the {@link LoadPipeline} runs, with the future of the caller that started it ({@code
 * null} for a refresh): a miss's own answer, which a load timeout does not fail while that
 * caller's own thread is inside the loader (a synchronous loader run by that very caller: it was
 * never waiting, and when the loader returns late it still hands its caller the value). A caller
 * whose flight's loader call runs on another thread (a batch of several callers' keys, a call on
 * a refresh thread) waits for it as a joined caller does: its load timeout fails it.
 */
final class Leg<V> {
  private final Flight<V> flight;
  private final CompletableFuture<Loaded<V>> own;

  Leg(Flight<V> flight, CompletableFuture<Loaded<V>> own) {
    this.flight = flight;
    this.own = own;
  }

  Flight<V> flight() {
    return flight;
  }

  CompletableFuture<Loaded<V>> own() {
    return own;
  }
}
