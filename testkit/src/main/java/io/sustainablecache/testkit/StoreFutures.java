package io.sustainablecache.testkit;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Waits for the futures of a store in the contract suites, turning surprises into failures. */
final class StoreFutures {

  private StoreFutures() {}

  /**
   * Waits for a future that must succeed.
   *
   * @return its value
   * @throws AssertionError if it fails, is cancelled or does not complete within {@code bound}
   */
  static <T> T completed(CompletableFuture<T> future, Duration bound, String what) {
    try {
      return future.get(bound.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new AssertionError(what + " failed: " + e.getCause(), e.getCause());
    } catch (CancellationException e) {
      throw new AssertionError(what + " was cancelled", e);
    } catch (TimeoutException e) {
      throw new AssertionError(what + " did not complete within " + bound.toMillis() + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting for " + what, e);
    }
  }

  /**
   * Waits for a future that must fail.
   *
   * @return the exception it failed with (unwrapped)
   * @throws AssertionError if it succeeds or does not complete within {@code bound}
   */
  static Throwable failure(CompletableFuture<?> future, Duration bound, String what) {
    Object value;
    try {
      value = future.get(bound.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (CancellationException e) {
      return e;
    } catch (TimeoutException e) {
      throw new AssertionError(what + " did not complete within " + bound.toMillis() + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting for " + what, e);
    }
    throw new AssertionError(what + " was expected to fail, but completed with " + value);
  }
}
