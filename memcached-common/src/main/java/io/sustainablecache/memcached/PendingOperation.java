package io.sustainablecache.memcached;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.StoreException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The future of one store operation that a client library runs asynchronously: the {@link
 * CompletableFuture} an adapter returns, which also carries the operation's deadline so that it
 * always completes within the adapter's operation timeout.
 *
 * <p>For adapter authors. An adapter subclasses it once per kind of operation, typically as the
 * client's completion callback as well, so that an operation costs one object besides the
 * client's own:
 * <ol>
 *   <li>create it, hand it the client's operation handle (whatever {@link #abandon} needs),
 *       then call {@link #startDeadline()};</li>
 *   <li>submit the operation to the client; if the client refuses it, {@link #fail(Throwable)};
 *   </li>
 *   <li>when the client reports the outcome, {@link #succeed} or {@link #fail(String,
 *       Throwable)};</li>
 *   <li>if the {@linkplain OperationDeadlines deadline} passes first, the future fails with
 *       {@code "<client> <operation> timed out after <n> ms"} and {@link #abandon}{@code (true)}
 *       lets the adapter cancel the client's operation; a later answer of the client is
 *       ignored.</li>
 * </ol>
 * {@link #cancel(boolean) Cancelling} the future also calls {@link #abandon}{@code (false)}, so
 * that the client can drop the operation if it has not been sent yet.
 *
 * <p><b>Threads.</b> The first completion wins: the client's callback thread, the deadline thread
 * and a cancelling thread may race, and only the winner's outcome is seen. Dependent actions
 * that were registered without an executor run on the winning thread, which for a client
 * callback is usually the client's I/O thread. Thread-safe.
 *
 * @param <T> the result type
 */
public abstract class PendingOperation<T> extends CompletableFuture<T> {

  private static final Logger LOG = LoggerFactory.getLogger(PendingOperation.class);

  private final OperationName name;
  private final OperationDeadlines deadlines;

  /** When the operation times out, in {@link System#nanoTime()}; set once by {@link #startDeadline}. */
  long deadlineNanos;

  private boolean started;

  /** Whether this operation holds one of its store's pending slots; see {@link #startDeadline}. */
  private volatile boolean admitted;

  /**
   * Creates a pending operation whose deadline has not started yet.
   *
   * @param name names the operation in exception messages
   * @param deadlines enforces the operation timeout
   * @throws NullPointerException if an argument is {@code null}
   */
  protected PendingOperation(OperationName name, OperationDeadlines deadlines) {
    this.name = requireNonNull(name, "name");
    this.deadlines = requireNonNull(deadlines, "deadlines");
  }

  /**
   * Starts the operation timeout: unless the future completes earlier, it fails with a timeout
   * {@link StoreException} once the timeout has passed. Call it once, after every field that
   * {@link #abandon} reads has been set, and before handing the operation to the client (which
   * may complete it at once). A call on a completed future does nothing.
   *
   * <p>If the store already has {@link OperationDeadlines#maxPending()} operations pending, the
   * future fails at once with a {@link StoreException} instead, and the adapter must not hand the
   * operation to the client: check {@link #isDone()} after this call.
   *
   * @throws IllegalStateException if called twice
   */
  protected final void startDeadline() {
    if (started) {
      throw new IllegalStateException(name + ": the deadline was already started");
    }
    started = true;
    if (isDone()) {
      return; // failed already (an invalid key, say): nothing to time out
    }
    if (!deadlines.admit()) {
      completeExceptionally(StoreFailures.failed(name, deadlines.maxPending()
          + " operations of this store are pending already (the server is slow or"
          + " unreachable); not sent", null));
      return;
    }
    admitted = true;
    deadlines.register(this);
  }

  /**
   * Completes the future and gives its pending slot back; see {@link CompletableFuture#complete}.
   */
  @Override
  public boolean complete(T value) {
    boolean completed = super.complete(value);
    if (completed) {
      released();
    }
    return completed;
  }

  /**
   * Fails the future and gives its pending slot back; see {@link
   * CompletableFuture#completeExceptionally}.
   */
  @Override
  public boolean completeExceptionally(Throwable failure) {
    boolean completed = super.completeExceptionally(failure);
    if (completed) {
      released();
    }
    return completed;
  }

  private void released() {
    if (admitted) {
      admitted = false;
      deadlines.release();
    }
  }

  /**
   * Completes the future with the operation's result, unless it is already complete.
   *
   * @param value the result, may be {@code null} where the result type allows it
   * @return {@code true} if this call completed the future
   */
  protected final boolean succeed(T value) {
    return complete(value);
  }

  /**
   * Fails the future with a {@link StoreException} that the adapter describes, unless it is
   * already complete.
   *
   * @param reason what went wrong, without the key or the value
   * @param cause the client's exception, may be {@code null}
   * @return {@code true} if this call completed the future
   */
  protected final boolean fail(String reason, Throwable cause) {
    return !isDone() && completeExceptionally(StoreFailures.failed(name, reason, cause));
  }

  /**
   * Fails the future with the {@link StoreException} that {@link StoreFailures#of} makes of an
   * exception of the client, unless it is already complete.
   *
   * @param clientFailure what the client threw or reported
   * @return {@code true} if this call completed the future
   */
  protected final boolean fail(Throwable clientFailure) {
    return !isDone() && completeExceptionally(StoreFailures.of(name, clientFailure));
  }

  /**
   * Gives up the client's operation after the future completed without it: called at most once,
   * when the deadline passed ({@code timedOut}) or when the future was {@linkplain #cancel
   * cancelled}. Typically it cancels the client's operation, so that the client drops it if it
   * has not been sent yet, and tells the client about the timeout. It runs on the deadline
   * thread or on the cancelling thread, must not block, and may be called before the client has
   * seen the operation. An exception it throws is logged and otherwise ignored.
   *
   * @param timedOut {@code true} after a timeout, {@code false} after a cancellation
   */
  protected abstract void abandon(boolean timedOut);

  /**
   * The operation's name, as exception messages show it.
   *
   * @return the name; never {@code null}
   */
  public final OperationName operationName() {
    return name;
  }

  /**
   * Cancels the future, if it is not complete yet, and then {@linkplain #abandon abandons} the
   * client's operation. Cancelling is a hint: an operation already sent may still be applied by
   * the server. It never corrupts the client's connection.
   *
   * @param mayInterruptIfRunning ignored, as by {@link CompletableFuture}
   * @return {@code true} if the future is now cancelled (by this call or an earlier one), as
   *     {@link CompletableFuture#cancel} answers
   */
  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    // The same outcome as CompletableFuture.cancel, but only the call that completes the future
    // abandons the operation (CompletableFuture.cancel also answers true when it was cancelled
    // before). Like it, nothing is made for a future already complete: the cache cancels every
    // read it stopped waiting for, answered or not, and a CancellationException's stack walk
    // through the caller's frames was paid by every synchronous store read.
    if (isDone()) {
      return isCancelled();
    }
    boolean cancelled = completeExceptionally(new CancellationException());
    if (cancelled) {
      abandonQuietly(false);
    }
    return cancelled || isCancelled();
  }

  /** Called by the deadline thread once the deadline has passed. */
  final void expire() {
    if (!isDone() && completeExceptionally(StoreFailures.timedOut(name, deadlines.timeout()))) {
      abandonQuietly(true);
    }
  }

  private void abandonQuietly(boolean timedOut) {
    try {
      abandon(timedOut);
    } catch (RuntimeException e) {
      LOG.warn("{}: cannot abandon the client's operation after a {}", name,
          timedOut ? "timeout" : "cancellation", e);
    }
  }
}
