package io.sustainablecache;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Coordinates the loads of one key across the instances that share the store. Placeholder: the
 * lease is not taken yet; every instance loads on its own.
 */
final class FleetLease {

  boolean enabled() {
    return false;
  }

  CompletableFuture<Boolean> beforeRefresh(Flight<?> flight) {
    return CompletableFuture.completedFuture(true);
  }

  CompletableFuture<Boolean> beforeMiss(Flight<?> flight, Executor continuation) {
    return CompletableFuture.completedFuture(true);
  }

  void afterLoad(Flight<?> flight, boolean loaded) {}

  CompletableFuture<?> onInvalidate(Keys keys, String storeKey) {
    return CompletableFuture.completedFuture(null);
  }
}
