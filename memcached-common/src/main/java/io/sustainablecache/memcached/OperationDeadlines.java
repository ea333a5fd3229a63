package io.sustainablecache.memcached;

import io.sustainablecache.spi.StoreException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A store's operation timeout and its bound on pending operations, for {@link
 * PendingOperation}s: each fails with a timeout {@link StoreException} once the timeout has
 * passed since its {@link PendingOperation#startDeadline() deadline started}, unless it
 * completed before; and while {@link #maxPending()} operations of the store are pending, a new
 * one fails at once instead of being sent.
 *
 * <p>For adapter authors: a store creates its instance with {@link #forTimeout} when it is built
 * and passes it to every {@link PendingOperation} it creates.
 *
 * <h2>The pending bound</h2>
 * When a server freezes (a {@code SIGSTOP}, a full disk, a dead host whose connection is not
 * closed), its operations stay pending until their timeout, and callers who do not wait for their
 * answers (a flood of {@code getAsync}) pile them up, each with the client's own objects, until
 * the heap runs out. With the bound, operations beyond it fail at once, which the cache treats as a read that failed (a
 * miss) or a write that was skipped, until the pending ones time out or are answered.
 *
 * <h2>Threads</h2>
 * Deadlines are enforced by one daemon thread per timeout value, shared by every store of the JVM
 * (and class loader) with that timeout, named {@code sustainable-cache-deadlines-<timeout>}. It
 * fails an operation at its deadline plus scheduling jitter, never earlier, runs dependent
 * actions of the futures it fails (those registered without an executor), and ends after about a
 * second without pending operations. The pending bound is per instance, that is per store.
 *
 * <p>Thread-safe.
 */
public final class OperationDeadlines {

  /**
   * The pending bound of {@link #forTimeout(Duration)}: 16,384 operations, the default length
   * of the memcached clients' own operation queue. A healthy store has a few pending operations
   * (a round trip of 100 µs at 100,000 operations per second is 10).
   */
  public static final int DEFAULT_MAX_PENDING = 16_384;

  private final DeadlineQueue queue;
  private final int maxPending;
  private final AtomicInteger pending = new AtomicInteger();

  OperationDeadlines(DeadlineQueue queue, int maxPending) {
    this.queue = queue;
    this.maxPending = maxPending;
  }

  /** An instance with a queue and thread of its own: for tests. */
  OperationDeadlines(Duration timeout, String threadName, long idleExitNanos, long sweepNanos) {
    this(new DeadlineQueue(timeout, threadName, idleExitNanos, sweepNanos), DEFAULT_MAX_PENDING);
  }

  /**
   * Whether {@code thread} is a deadline thread, of any timeout: one of the threads that complete
   * the stores' futures, for {@link io.sustainablecache.spi.CacheStore#isCompletionThread}.
   *
   * @param thread a thread; never {@code null}
   * @return whether it fails operations at their deadline
   */
  public static boolean isDeadlineThread(Thread thread) {
    return thread instanceof DeadlineQueue.DeadlineThread;
  }

  /**
   * Creates a store's instance for its operation timeout, with the {@linkplain
   * #DEFAULT_MAX_PENDING default pending bound}.
   *
   * @param timeout an operation timeout accepted by {@link
   *     AdapterSettings#checkOperationTimeout}
   * @return a new instance; its deadlines thread is shared with every instance of the timeout
   * @throws NullPointerException if {@code timeout} is {@code null}
   * @throws IllegalArgumentException if {@code timeout} is out of range
   */
  public static OperationDeadlines forTimeout(Duration timeout) {
    return forTimeout(timeout, DEFAULT_MAX_PENDING);
  }

  /**
   * Creates a store's instance for its operation timeout and pending bound.
   *
   * @param timeout an operation timeout accepted by {@link
   *     AdapterSettings#checkOperationTimeout}
   * @param maxPending how many operations of the store may be pending at once, at least 1
   * @return a new instance; its deadlines thread is shared with every instance of the timeout
   * @throws NullPointerException if {@code timeout} is {@code null}
   * @throws IllegalArgumentException if {@code timeout} or {@code maxPending} is out of range
   */
  public static OperationDeadlines forTimeout(Duration timeout, int maxPending) {
    if (maxPending < 1) {
      throw new IllegalArgumentException("maxPending must be at least 1, was " + maxPending);
    }
    return new OperationDeadlines(DeadlineQueue.shared(timeout), maxPending);
  }

  /**
   * The timeout this instance enforces.
   *
   * @return a positive duration
   */
  public Duration timeout() {
    return queue.timeout();
  }

  /**
   * How many operations may be pending at once.
   *
   * @return at least 1
   */
  public int maxPending() {
    return maxPending;
  }

  /**
   * How many operations are pending now: started and not completed.
   *
   * @return zero or more
   */
  public int pending() {
    return pending.get();
  }

  @Override
  public String toString() {
    return "OperationDeadlines[timeout=" + AdapterSettings.describe(timeout()) + ", maxPending="
        + maxPending + "]";
  }

  /** Takes a pending slot, unless all are taken. */
  boolean admit() {
    if (pending.incrementAndGet() > maxPending) {
      pending.decrementAndGet();
      return false;
    }
    return true;
  }

  /** Gives a pending slot back. */
  void release() {
    pending.decrementAndGet();
  }

  void register(PendingOperation<?> operation) {
    queue.register(operation);
  }

  boolean hasThread() {
    return queue.hasThread();
  }

  boolean isIdle() {
    return queue.isIdle();
  }

  Thread thread() {
    return queue.thread();
  }
}
