package io.sustainablecache.memcached;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The queue and thread behind {@link OperationDeadlines}: one per operation timeout, shared by
 * every store of the JVM (and class loader) with that timeout.
 *
 * <h2>How it works, and what it costs</h2>
 * Because every operation of an instance has the same timeout, deadlines arrive in the order the
 * operations started: a FIFO queue suffices (a {@link ConcurrentLinkedQueue}: one node per
 * operation, and waking the thread when the queue was idle). No timer task is scheduled per
 * operation.
 *
 * <p>One daemon thread per instance, named {@code sustainable-cache-deadlines-<timeout>}, walks
 * the queue: it drops completed operations, fails the oldest pending one when its deadline has
 * passed, and otherwise sleeps until that deadline, waking at least every 10 ms to check whether
 * it completed meanwhile: completed operations are released from the queue about 10 ms after the
 * oldest pending one completes, not at their own deadlines. (While an operation hangs, the ones
 * queued behind it stay reachable until it times out.) The thread
 * is started on demand and ends after about a second without pending operations, so an idle
 * application, or one that stopped using its stores, keeps no thread. Timeouts therefore fire at
 * their deadline plus scheduling jitter, never earlier. An operation that another thread started
 * a moment before it may be failed up to that moment late.
 *
 * <p>The thread runs dependent actions of the futures it fails (those registered without an
 * executor); they delay the next timeouts, so they should be short.
 *
 * <p>Thread-safe. Instances are never closed.
 */
final class DeadlineQueue {

  private static final Logger LOG = LoggerFactory.getLogger(OperationDeadlines.class);

  private static final ConcurrentHashMap<Duration, DeadlineQueue> SHARED =
      new ConcurrentHashMap<>();

  /** How long the thread stays without pending operations before it ends. */
  static final long IDLE_EXIT_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** How often the thread releases completed operations while one is still pending. */
  static final long SWEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  private static final int RUNNING = 0;
  private static final int PARKED = 1;
  private static final int STOPPED = 2;

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(DeadlineQueue.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Duration timeout;
  private final long timeoutNanos;
  private final String threadName;
  private final long idleExitNanos;
  private final long sweepNanos;

  /** The operations in the order their deadlines started; only the deadline thread removes. */
  private final ConcurrentLinkedQueue<PendingOperation<?>> queue = new ConcurrentLinkedQueue<>();

  /** {@link #RUNNING}, {@link #PARKED} or {@link #STOPPED}; accessed through {@link #STATE}. */
  private volatile int state = STOPPED;

  /** The current deadline thread, if any. */
  private volatile Thread thread;

  DeadlineQueue(Duration timeout, String threadName, long idleExitNanos, long sweepNanos) {
    this.timeout = AdapterSettings.checkOperationTimeout(timeout);
    this.timeoutNanos = timeout.toNanos();
    this.threadName = threadName;
    this.idleExitNanos = idleExitNanos;
    this.sweepNanos = sweepNanos;
  }

  /** The queue for a timeout, shared by every store of this JVM (and class loader). */
  static DeadlineQueue shared(Duration timeout) {
    AdapterSettings.checkOperationTimeout(timeout);
    return SHARED.computeIfAbsent(timeout, t -> new DeadlineQueue(t,
        "sustainable-cache-deadlines-" + AdapterSettings.describe(t).replace(" ", ""),
        IDLE_EXIT_NANOS, SWEEP_NANOS));
  }

  /** The timeout this queue enforces. */
  Duration timeout() {
    return timeout;
  }

  /** Whether a deadline thread is running (or about to run): for tests. */
  boolean hasThread() {
    return state != STOPPED;
  }

  /** Whether the deadline thread waits, without pending operations, for the next one: for tests. */
  boolean isIdle() {
    return state == PARKED;
  }

  /** The deadline threads' class, so that a thread can be recognized as one. */
  static final class DeadlineThread extends Thread {
    DeadlineThread(Runnable task, String name) {
      super(task, name);
    }
  }

  /** The current or last deadline thread, or {@code null}: for tests. */
  Thread thread() {
    return thread;
  }

  /**
   * Queues an operation whose deadline is the timeout from now. Called through {@link
   * OperationDeadlines} by {@link PendingOperation#startDeadline()}.
   */
  void register(PendingOperation<?> operation) {
    operation.deadlineNanos = System.nanoTime() + timeoutNanos;
    queue.add(operation);
    if (state != RUNNING) {
      wake();
    }
  }

  private void wake() {
    while (true) {
      int current = state;
      if (current == RUNNING) {
        return;
      }
      if (current == PARKED) {
        if (STATE.compareAndSet(this, PARKED, RUNNING)) {
          LockSupport.unpark(thread);
          return;
        }
      } else if (STATE.compareAndSet(this, STOPPED, RUNNING)) {
        startThread();
        return;
      }
    }
  }

  private void startThread() {
    Thread started = new DeadlineThread(this::run, threadName);
    started.setDaemon(true);
    thread = started;
    try {
      started.start();
    } catch (Throwable e) {
      state = STOPPED;
      throw e;
    }
  }

  private void run() {
    try {
      walk();
    } catch (Throwable e) {
      LOG.error("The deadline thread {} ended unexpectedly; the next operation starts another",
          threadName, e);
      state = STOPPED;
      throw e;
    }
  }

  /** The deadline thread's loop; returns when the thread has been idle long enough. */
  private void walk() {
    while (true) {
      PendingOperation<?> oldest = queue.peek();
      if (oldest == null) {
        if (idle()) {
          return;
        }
        continue;
      }
      // The operations queued behind the oldest one cannot time out before it, and cannot be
      // released before it either; wake up now and then to move on as soon as it completes.
      long wait = oldest.deadlineNanos - System.nanoTime();
      while (wait > 0 && !oldest.isDone()) {
        LockSupport.parkNanos(this, Math.min(wait, sweepNanos));
        wait = oldest.deadlineNanos - System.nanoTime();
      }
      if (!oldest.isDone()) {
        try {
          oldest.expire();
        } catch (RuntimeException e) {
          LOG.warn("{}: failing a timed-out operation threw", oldest.operationName(), e);
        }
      }
      queue.poll(); // the oldest: this thread is the only one that removes
    }
  }

  /**
   * The queue is empty: parks until a producer wakes the thread, and reports whether the thread
   * should end because nothing arrived for {@link #idleExitNanos}. A producer adds its operation
   * and then reads the state; this thread publishes {@code PARKED} and then looks at the queue:
   * one of the two sees the other's write (both are volatile), so an operation is never left
   * without a thread.
   */
  private boolean idle() {
    state = PARKED;
    if (!queue.isEmpty()) {
      STATE.compareAndSet(this, PARKED, RUNNING);
      return false;
    }
    long parkedAt = System.nanoTime();
    LockSupport.parkNanos(this, idleExitNanos);
    if (state == PARKED && queue.isEmpty() && System.nanoTime() - parkedAt >= idleExitNanos
        && STATE.compareAndSet(this, PARKED, STOPPED)) {
      return true;
    }
    STATE.compareAndSet(this, PARKED, RUNNING);
    return false;
  }
}
