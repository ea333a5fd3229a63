package io.sustainablecache.memcached;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.StoreException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * Turns what a client library throws or reports into the one {@link StoreException} of the SPI,
 * with messages that name the operation and never a key or a value, so that every adapter fails
 * the same way:
 * <ul>
 *   <li>{@code "<client> <operation> timed out after <n> ms"} when the operation timeout
 *       passed;</li>
 *   <li>{@code "<client> <operation> failed: <reason>"} for everything else.</li>
 * </ul>
 *
 * <p>For adapter authors. Stateless and thread-safe.
 */
public final class StoreFailures {

  private StoreFailures() {}

  /**
   * The failure of an operation whose timeout passed.
   *
   * @param name the operation
   * @param timeout the operation timeout
   * @return {@code "<name> timed out after <timeout> ms"}, without a cause
   * @throws NullPointerException if an argument is {@code null}
   */
  public static StoreException timedOut(OperationName name, Duration timeout) {
    requireNonNull(name, "name");
    return new StoreException(name + " timed out after " + AdapterSettings.describe(timeout));
  }

  /**
   * A failure the adapter describes itself, for example a refused key or an unexpected answer of
   * the server.
   *
   * @param name the operation
   * @param reason what went wrong, without the key or the value
   * @param cause the client's exception, may be {@code null}
   * @return {@code "<name> failed: <reason>"}
   * @throws NullPointerException if {@code name} or {@code reason} is {@code null}
   */
  public static StoreException failed(OperationName name, String reason, Throwable cause) {
    requireNonNull(name, "name");
    requireNonNull(reason, "reason");
    return new StoreException(name + " failed: " + reason, cause);
  }

  /**
   * Maps an exception the client threw when the operation was submitted or completed:
   * <ul>
   *   <li>{@link CompletionException} and {@link ExecutionException} are unwrapped;</li>
   *   <li>a {@link StoreException} is returned as it is;</li>
   *   <li>an {@link InterruptedException} restores the current thread's interrupt flag;</li>
   *   <li>the message of an {@link IllegalArgumentException} is left out, because clients name
   *       the rejected key in it; the exception stays the cause;</li>
   *   <li>the {@link IllegalStateException}s of spymemcached-derived clients are described in
   *       plain words (shut down, queue full, interrupted while enqueueing), because their
   *       messages name the client's operation object;</li>
   *   <li>anything else contributes its message, or its class name if it has none.</li>
   * </ul>
   *
   * @param name the operation
   * @param failure what the client threw
   * @return a {@link StoreException} with {@code failure} (unwrapped) as its cause
   * @throws NullPointerException if an argument is {@code null}
   */
  public static StoreException of(OperationName name, Throwable failure) {
    requireNonNull(name, "name");
    Throwable cause = requireNonNull(failure, "failure");
    while ((cause instanceof CompletionException || cause instanceof ExecutionException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause instanceof StoreException store) {
      return store;
    }
    if (cause instanceof InterruptedException) {
      Thread.currentThread().interrupt();
      return new StoreException(name + " was interrupted", cause);
    }
    if (cause instanceof TimeoutException) {
      return new StoreException(name + " timed out: " + describe(cause), cause);
    }
    return failed(name, describe(cause), cause);
  }

  /**
   * Describes an exception for a message: its message, without keys where the client is known
   * to put them there, or its class name when it has no message.
   *
   * @param failure the exception; never {@code null}
   * @return a short description
   */
  public static String describe(Throwable failure) {
    String message = failure.getMessage();
    if (failure instanceof IllegalArgumentException) {
      return "the client refused the key or an argument (" + failure.getClass().getName() + ")";
    }
    if (failure instanceof CancellationException) {
      return message == null || message.isBlank() ? "cancelled" : "cancelled: " + message;
    }
    if (failure instanceof IllegalStateException && message != null) {
      if (message.startsWith("Shutting down")) {
        return "the client is shut down";
      }
      if (message.startsWith("Timed out waiting to add")) {
        return "the client's operation queue is full";
      }
      if (message.startsWith("Interrupted while waiting to add")) {
        return "the calling thread was interrupted while the client enqueued the operation";
      }
    }
    return message == null || message.isBlank() ? failure.getClass().getName() : message;
  }
}
