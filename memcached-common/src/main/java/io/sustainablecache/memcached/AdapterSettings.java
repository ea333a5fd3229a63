package io.sustainablecache.memcached;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.spi.StoreException;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Validation of the settings every store adapter's builder takes, so that all adapters accept
 * the same values and reject the others with the same messages.
 *
 * <p>For adapter authors. Stateless and thread-safe.
 */
public final class AdapterSettings {

  private static final Logger LOG = LoggerFactory.getLogger(AdapterSettings.class);

  /** The shortest operation timeout an adapter accepts: one millisecond. */
  public static final Duration MIN_OPERATION_TIMEOUT = Duration.ofMillis(1);

  /**
   * The longest operation timeout an adapter accepts: ten minutes. A cache read or write that
   * may take longer is no longer a cache; the bound also keeps deadline arithmetic far from
   * overflow.
   */
  public static final Duration MAX_OPERATION_TIMEOUT = Duration.ofMinutes(10);

  /**
   * How long a {@link CacheStoreFactory} waits, at most, for a new client to connect to its
   * servers before it hands the store out: two seconds. Clients connect in the background; an
   * operation issued before its connection is up fails at once (under {@code
   * FailureMode.Cancel}), so without the wait the first writes after start-up would be lost.
   */
  public static final Duration CONNECT_PATIENCE = Duration.ofSeconds(2);

  private AdapterSettings() {}

  /**
   * Waits until a new client is connected to all its servers, at most {@link
   * #CONNECT_PATIENCE}. A server that is down at start-up does not fail the start: the caller
   * hands the store out anyway, and its operations fail (as cache misses and skipped writes)
   * until the client connects; a warning says so.
   *
   * @param client names the client in the warning, e.g. {@code "spymemcached"}
   * @param connected how many of the servers the client is connected to now
   * @param servers how many servers the client was given
   * @return whether every server was connected in time; {@code false} also if the thread was
   *     interrupted (its interrupt status is kept)
   */
  public static boolean awaitConnected(String client, IntSupplier connected, int servers) {
    long deadline = System.nanoTime() + CONNECT_PATIENCE.toNanos();
    while (connected.getAsInt() < servers) {
      if (System.nanoTime() - deadline >= 0) {
        LOG.warn("the {} client is not connected to all its servers after {}; operations on the"
            + " others fail (as cache misses and skipped writes) until it is", client,
            CONNECT_PATIENCE);
        return false;
      }
      try {
        Thread.sleep(2);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return true;
  }

  /** A memcached client's {@code waitForQueues(timeout, unit)}. */
  @FunctionalInterface
  public interface Drain {
    /**
     * Waits until what the client had queued when called was answered, at most the timeout.
     *
     * @param timeout how long at most
     * @param unit the unit of {@code timeout}
     * @return whether the queues were drained in time
     */
    boolean waitForQueues(long timeout, TimeUnit unit);
  }

  /**
   * What an adapter's {@link CacheStoreFactory.OpenedStore#close()} runs: lets the client send
   * what it still has queued (a cache's last write-backs and lease releases, which nobody waits
   * for) and answer it, then shuts the client down. It waits at most {@code shutdownTimeout},
   * and at most twice {@code operationTimeout}: by then every operation the store issued before
   * the call was answered, or failed at its deadline and was cancelled (so the client never sends
   * it), and what is left to wait for is only the client's own barrier on a server that is down or
   * hung, which answers no sooner for waiting. A client that could not drain in time, was shut
   * down already, or a thread that was interrupted is logged at WARN and shut down all the same;
   * nothing is thrown.
   *
   * @param client names the client in the warning, e.g. {@code "spymemcached"}
   * @param shutdownTimeout how long to wait for the queues at most; zero shuts down at once
   * @param operationTimeout the store's and the client's operation timeout
   * @param drain the client's {@code waitForQueues}
   * @param shutdown the client's immediate {@code shutdown()}
   * @return the closing action
   */
  public static Runnable drainThenShutdown(String client, Duration shutdownTimeout,
      Duration operationTimeout, Drain drain, Runnable shutdown) {
    requireNonNull(client, "client");
    requireNonNull(shutdownTimeout, "shutdownTimeout");
    requireNonNull(operationTimeout, "operationTimeout");
    requireNonNull(drain, "drain");
    requireNonNull(shutdown, "shutdown");
    Duration twice = operationTimeout.multipliedBy(2);
    Duration timeout = twice.compareTo(shutdownTimeout) < 0 ? twice : shutdownTimeout;
    return () -> {
      try {
        if (!timeout.isZero() && !drain.waitForQueues(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
          LOG.warn("the {} client did not drain its queues in {} (a server down or hung); what"
              + " it still holds is dropped (keys load again; other instances may wait out a"
              + " fleet lease)", client, describe(timeout));
        }
      } catch (RuntimeException e) { // shut down already, or interrupted while waiting
        if (e.getCause() instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        LOG.warn("the {} client's queues could not be drained before its shutdown: {}", client,
            e.toString());
      } finally {
        shutdown.run();
      }
    };
  }

  /**
   * Checks an operation timeout: how long each operation may take before its future fails with
   * a {@link StoreException}.
   *
   * @param timeout the configured timeout
   * @return {@code timeout}, unchanged (it is used at nanosecond precision)
   * @throws NullPointerException with the message {@code "operationTimeout"} if {@code timeout}
   *     is {@code null}
   * @throws IllegalArgumentException if {@code timeout} is shorter than {@link
   *     #MIN_OPERATION_TIMEOUT} or longer than {@link #MAX_OPERATION_TIMEOUT}; the message names
   *     the value
   */
  public static Duration checkOperationTimeout(Duration timeout) {
    requireNonNull(timeout, "operationTimeout");
    if (timeout.compareTo(MIN_OPERATION_TIMEOUT) < 0
        || timeout.compareTo(MAX_OPERATION_TIMEOUT) > 0) {
      throw new IllegalArgumentException("operationTimeout must be between 1 ms and 10 min, was "
          + timeout);
    }
    return timeout;
  }

  /**
   * A store factory's operation timeout, after checking it and the maximum key length against the
   * adapter's limits, before the factory starts a client (its store's builder checks them again).
   *
   * @param settings the factory's settings
   * @param defaultTimeout the adapter's timeout when none is set
   * @param maxKeyLimit the adapter's limit in bytes for {@code settings.maxKeyLength()}
   * @return the timeout to use
   * @throws IllegalArgumentException as {@link #checkOperationTimeout} and {@link
   *     #checkMaxKeyLength} (a key length of 0 means the adapter's default)
   */
  public static Duration checkBeforeStart(CacheStoreFactory.Settings settings,
      Duration defaultTimeout, int maxKeyLimit) {
    Duration timeout = checkOperationTimeout(settings.operationTimeout().orElse(defaultTimeout));
    if (settings.maxKeyLength() > 0) {
      checkMaxKeyLength(settings.maxKeyLength(), maxKeyLimit);
    }
    return timeout;
  }

  /**
   * Shuts down a client that a store factory started before {@code failure} ended the start: a
   * failure of the shutdown itself is added to {@code failure} as suppressed, so the start's own
   * failure is the one thrown.
   *
   * @param failure what ended the start; never {@code null}
   * @param shutdown the client's shutdown
   */
  public static void shutDownAfter(Throwable failure, Runnable shutdown) {
    try {
      shutdown.run();
    } catch (RuntimeException e) {
      failure.addSuppressed(e);
    }
  }

  /**
   * Checks a maximum key length against the limit of the client or server behind an adapter.
   *
   * @param bytes the configured length in bytes
   * @param limit the adapter's own limit in bytes, positive
   * @return {@code bytes}
   * @throws IllegalArgumentException if {@code bytes} is outside 1 to {@code limit}; the message
   *     names the value and the limit
   */
  public static int checkMaxKeyLength(int bytes, int limit) {
    if (bytes < 1 || bytes > limit) {
      throw new IllegalArgumentException(
          "maxKeyLength must be between 1 and " + limit + " bytes, was " + bytes);
    }
    return bytes;
  }

  /**
   * Writes a duration in milliseconds, as timeout messages show it: {@code "700 ms"}, {@code
   * "1.5 ms"}.
   *
   * @param duration a non-negative duration; never {@code null}
   * @return the duration in milliseconds, without trailing zeros, followed by {@code " ms"}
   * @throws NullPointerException if {@code duration} is {@code null}
   */
  public static String describe(Duration duration) {
    long nanos = duration.getNano() % 1_000_000;
    if (nanos == 0 && duration.getSeconds() < Long.MAX_VALUE / 1_000) {
      return duration.toMillis() + " ms";
    }
    BigDecimal millis = BigDecimal.valueOf(duration.getSeconds()).scaleByPowerOfTen(3)
        .add(BigDecimal.valueOf(duration.getNano()).scaleByPowerOfTen(-6));
    return millis.stripTrailingZeros().toPlainString() + " ms";
  }
}
