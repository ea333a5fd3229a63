package io.sustainablecache.internal;

import io.sustainablecache.CacheLoadException;
import java.util.random.RandomGenerator;

/**
 * The failure back-off of a key: after its {@code n}-th failed load in a row, no load of the key
 * in this JVM for {@code base × 2^(n−1)}, drawn from 50 to 150 % of that with the injected random
 * source (so that instances sharing a failing database do not retry in step) and never longer
 * than the cap; and the exception a miss gets meanwhile. {@link KeyRegistry} keeps the records;
 * this decides their times. Immutable and thread-safe.
 */
final class Backoff {

  private final long baseMillis;
  private final long capMillis;
  private final RandomGenerator random;

  Backoff(CacheConfig<?> config) {
    this.baseMillis = config.failureBackoff().toMillis();
    this.capMillis = Math.max(baseMillis, config.maxFailureBackoff().toMillis());
    this.random = config.random();
  }

  /** Whether failures back off at all ({@code failureBackoff} is not zero). */
  boolean enabled() {
    return baseMillis != 0;
  }

  /**
   * The record after a failed load. If the load held the fleet lease, this instance keeps it for
   * the whole back-off, past {@code notBefore} in whole seconds (the server's unit), so that the
   * other instances do not load the key before this one may again (see {@link
   * FleetLease#release}).
   *
   * @param previous the key's record, or {@code null} after a success
   * @param now the wall clock, epoch milliseconds: for the lease and the marker other hosts read
   * @param tick the ticker, milliseconds: for this instance's own back-off
   */
  KeyRegistry.Failure next(KeyRegistry.Failure previous, Throwable cause, long now, long tick,
      Flight<?> flight) {
    int count = previous == null ? 1 : previous.count() + 1;
    long window = window(count);
    long wait = Math.max(1, Math.min(capMillis, (long) (window * (0.5 + random.nextDouble()))));
    long notBefore = tick + wait;
    long leaseUntil = flight.leaseHeld()
        ? Math.max(flight.leaseUntil(), now + (wait / 1000 + 1) * 1000) : 0;
    return new KeyRegistry.Failure(count, notBefore, now + wait, cause, notBefore + capMillis,
        leaseUntil);
  }

  /**
   * The record of another instance's failure, learnt from its fleet-lease marker: {@code count}
   * failures (at least the key's own), no load before {@code notBefore} but at most the cap from
   * now (the time comes from another host, or from a planted value). The wait left by the
   * marker's wall clock is then measured on the ticker.
   *
   * @param previous the key's own record, or {@code null}
   * @param notBefore the marker's end, epoch milliseconds of another host's wall clock
   * @param now the wall clock, epoch milliseconds
   * @param tick the ticker, milliseconds
   */
  KeyRegistry.Failure remembered(KeyRegistry.Failure previous, int count, long notBefore,
      Throwable cause, long now, long tick) {
    long wait = Math.max(0, Math.min(notBefore - now, capMillis));
    int counted = Math.max(Math.max(1, count), previous == null ? 0 : previous.count());
    return new KeyRegistry.Failure(counted, tick + wait, now + wait, cause,
        tick + wait + capMillis, 0);
  }

  /** The back-off window after {@code count} failures in a row: the base doubled, up to the cap. */
  private long window(int count) {
    long window = baseMillis;
    for (int i = 1; i < count && window < capMillis; i++) {
      window = Math.min(capMillis, window * 2);
    }
    return window;
  }

  /**
   * The longest back-off {@link #next} draws after {@code count} failures in a row: 150 % of the
   * window, at most the cap, at least 1 ms. A failure marker of that count written by an
   * instance configured as this one never announces a longer wait.
   */
  long longestWait(int count) {
    return Math.max(1, Math.min(capMillis, window(count) * 3 / 2));
  }

  /**
   * The failure a miss gets, without loading, while its key backs off after {@code failure}.
   *
   * @param tick the ticker now, milliseconds
   */
  static RememberedFailure exception(KeyRegistry.Failure failure, long tick) {
    return new RememberedFailure("the key's last " + (failure.count() == 1 ? "load"
        : failure.count() + " loads") + " failed; it is not loaded again for another "
        + Math.max(0, failure.notBefore() - tick) + " ms (failureBackoff)", failure.cause());
  }

  /** The failure a miss gets, without loading, while its key backs off after failures. */
  static final class RememberedFailure extends CacheLoadException {
    private static final long serialVersionUID = 1L;

    RememberedFailure(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
