package io.sustainablecache;

import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * Logs a recurring warning at most once per interval, with the number of occurrences suppressed
 * since, so that a store outage at thousands of requests per second produces a handful of lines.
 * Suppressed occurrences are logged at debug level. Thread-safe.
 */
final class RateLimitedLog {

  private static final long INTERVAL_NANOS = 10_000_000_000L;

  private final Logger log;
  private final AtomicLong nextAllowedNanos = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong suppressed = new AtomicLong();

  RateLimitedLog(Logger log) {
    this.log = log;
  }

  void warn(String message, Throwable error) {
    long now = System.nanoTime();
    long next = nextAllowedNanos.get();
    if ((next == Long.MIN_VALUE || now - next >= 0)
        && nextAllowedNanos.compareAndSet(next, now + INTERVAL_NANOS)) {
      long skipped = suppressed.getAndSet(0);
      if (skipped > 0) {
        log.warn("{} ({} similar warnings suppressed in the last 10 s): {}", message, skipped,
            error.toString());
      } else {
        log.warn("{}: {}", message, error.toString());
      }
      log.debug("cause", error);
    } else {
      suppressed.incrementAndGet();
      log.debug(message, error);
    }
  }
}
