package io.sustainablecache.internal;

import io.sustainablecache.CacheLoadException;

/**
 * How a failed load reaches a caller, written once for {@code get}, {@code getAll} and their
 * asynchronous forms, so that they cannot drift apart (they did: an {@link Error} inside a
 * remembered failure was rethrown by {@code getAll} and wrapped by {@code get}). Stateless.
 *
 * <p>The rule, for the failure of a load a caller waited for:
 * <ul>
 *   <li>a {@link CacheLoadException} whose cause is an {@link Error} thrown by a loader call this
 *       caller shared: that {@code Error}, as it is;</li>
 *   <li>a {@linkplain Backoff.RememberedFailure remembered failure} (the key backs off; no loader
 *       was called for this caller): a {@link CacheLoadException}, whatever its cause, an {@code
 *       Error} included: the caller did not share the call that threw it;</li>
 *   <li>any other {@link CacheLoadException}: a new one with the same message and cause (each
 *       caller its own instance, with its own stack);</li>
 *   <li>any other {@link RuntimeException} or {@link Error} (a recursive load's {@link
 *       IllegalStateException}, say): as it is;</li>
 *   <li>anything else: wrapped in a {@link CacheLoadException}.</li>
 * </ul>
 */
final class Failures {

  private Failures() {}

  /**
   * The failure a {@link java.util.concurrent.CompletionException} wraps (nested ones too), or
   * {@code failure} itself: how every stage's failure is read before it is judged.
   */
  static Throwable unwrap(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof java.util.concurrent.CompletionException
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  /**
   * The failure of a future that completed exceptionally, as {@link
   * java.util.concurrent.CompletableFuture#get} reports it (a {@link
   * java.util.concurrent.CancellationException} thrown, a {@link
   * java.util.concurrent.CompletionException} unwrapped), without the {@link
   * java.util.concurrent.ExecutionException} that {@code get} creates, nor the {@code
   * CompletionException} a dependent stage would: each walks the caller's stack (Hibernate's is
   * deep), which every operation a store node's breaker refused paid.
   */
  static Throwable failureOf(java.util.concurrent.CompletableFuture<?> failed) {
    Throwable thrown = failed.handle((value, failure) -> failure).join();
    if (thrown instanceof java.util.concurrent.CancellationException cancelled) {
      throw cancelled;
    }
    return unwrap(thrown);
  }

  /**
   * The exception a caller gets for {@code failure} (a {@link
   * java.util.concurrent.CompletionException} is unwrapped first); never {@code null}.
   */
  static Throwable forCaller(Throwable failure) {
    Throwable cause = unwrap(failure);
    if (cause instanceof Backoff.RememberedFailure remembered) { // still one: idempotent
      return new Backoff.RememberedFailure(remembered.getMessage(), remembered.getCause());
    }
    if (cause instanceof CacheLoadException loadFailure) {
      if (loadFailure.getCause() instanceof Error error) {
        return error;
      }
      return new CacheLoadException(loadFailure.getMessage(), loadFailure.getCause());
    }
    if (cause instanceof RuntimeException || cause instanceof Error) {
      return cause;
    }
    return new CacheLoadException("the load failed", cause);
  }

  /**
   * {@link #forCaller} for a synchronous caller: throws it if it is an {@link Error}, else returns
   * it to be thrown ({@code throw Failures.rethrow(cause)}).
   */
  static RuntimeException rethrow(Throwable failure) {
    Throwable forCaller = forCaller(failure);
    if (forCaller instanceof Error error) {
      throw error;
    }
    return (RuntimeException) forCaller;
  }
}
