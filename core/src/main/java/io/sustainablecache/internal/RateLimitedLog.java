package io.sustainablecache.internal;

import io.sustainablecache.Ticker;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * Logs a recurring warning at most once per interval, with the number of occurrences suppressed
 * since, so that a store outage at thousands of requests per second produces a handful of lines.
 *
 * <p>The WARN line names the exception types only: messages of client and loader exceptions may
 * contain keys (and loader exceptions even values), which are logged at DEBUG level only, with
 * the full exception. Thread-safe.
 */
final class RateLimitedLog {

  private static final long INTERVAL_NANOS = 10_000_000_000L;

  private final Logger log;
  private final Ticker ticker;
  private final AtomicLong nextAllowedNanos = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong suppressed = new AtomicLong();

  /** A log whose interval is measured on {@code ticker} (the cache's). */
  RateLimitedLog(Logger log, Ticker ticker) {
    this.log = log;
    this.ticker = ticker;
  }

  /** Logs {@code message} at WARN, at most once per interval; otherwise at DEBUG. */
  void warn(String message) {
    if (allowed()) {
      long skipped = suppressed.getAndSet(0);
      if (skipped > 0) {
        log.warn("{} ({} similar warnings suppressed in the last 10 s)", message, skipped);
      } else {
        log.warn(message);
      }
    } else {
      suppressed.incrementAndGet();
      log.debug(message);
    }
  }

  /**
   * Logs {@code message} and the types of {@code error} at WARN, at most once per interval, and
   * the full exception at DEBUG.
   */
  void warn(String message, Throwable error) {
    if (allowed()) {
      long skipped = suppressed.getAndSet(0);
      if (skipped > 0) {
        log.warn("{}: {} ({} similar warnings suppressed in the last 10 s; details at DEBUG)",
            message, types(error), skipped);
      } else {
        log.warn("{}: {} (details at DEBUG)", message, types(error));
      }
      log.debug(message, error);
    } else {
      suppressed.incrementAndGet();
      log.debug(message, error);
    }
  }

  private boolean allowed() {
    long now = ticker.read();
    long next = nextAllowedNanos.get();
    return (next == Long.MIN_VALUE || now - next >= 0)
        && nextAllowedNanos.compareAndSet(next, now + INTERVAL_NANOS);
  }

  /** The exception's type and its causes' types, e.g. {@code StoreException <- TimeoutException}. */
  static String types(Throwable error) {
    StringBuilder b = new StringBuilder(error.getClass().getSimpleName());
    Throwable cause = error.getCause();
    for (int depth = 0; cause != null && depth < 4; depth++, cause = cause.getCause()) {
      b.append(" <- ").append(cause.getClass().getSimpleName());
    }
    return b.toString();
  }
}
