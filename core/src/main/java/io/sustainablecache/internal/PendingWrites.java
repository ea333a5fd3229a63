package io.sustainablecache.internal;

import io.sustainablecache.Scheduler;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.spi.StoreNodes;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The one count of the store work this cache issued and has not seen answered, which {@link
 * DefaultSustainableCache#close()} waits for ({@link #drain}): every write sent through this
 * store ({@code add}, {@code set}, {@code cas}, {@code delete}, {@code incr}, {@code
 * flushPrefix}: a load's write-back, a caller's {@code put} or invalidation, the fleet lease's
 * {@code add}, {@code delete} and failure marker, a write fence and its release, a near-cache log
 * record), and the few chains that begin with a read and write after it, which their owners
 * register whole ({@link #track}: a fence's release with its retries, a caller's write nobody
 * awaits, {@code putLoaded} of a bulk peek, a load's write handed to the refresh executor).
 *
 * <p>A decorator of the cache's store for the classes that write ({@link EntryWriter}, {@link
 * FleetLease}, {@link CallerWrites}, {@link WriteFences}, {@link NearCache}); the read path
 * ({@link ReadPath}, {@link BulkLoads}) holds the undecorated store, so a hit pays nothing for
 * this. Reads ({@code gets}, {@code getsAll}) are forwarded as they are and not counted.
 *
 * <p>A write stays counted until the future this store returned for it has completed <em>and</em>
 * run the dependent actions registered on it without an executor: a write those actions issue
 * (the {@code add} after a {@code cas} found nothing, the lease's {@code delete} after a
 * write-back, the next step of a chain) is counted before the one that triggered it is not, so
 * the count never reads 0 between two steps of one chain. Thread-safe; one atomic increment and
 * decrement per write.
 */
final class PendingWrites extends DelegatingStore {

  private final AtomicLong pending = new AtomicLong();
  /** Threads waiting in {@link #drain}: only then does the count reaching 0 notify. */
  private final AtomicLong waiters = new AtomicLong();
  private final Object idle = new Object();

  PendingWrites(CacheStore store) {
    super(store);
  }

  /** The number of writes and chains issued and not finished yet; for tests and the log. */
  long pending() {
    return pending.get();
  }

  /**
   * Counts {@code work} until it completes, and until the dependent actions registered on the
   * returned future without an executor have run.
   *
   * @return a future completing as {@code work} does
   */
  <T> CompletableFuture<T> track(CompletableFuture<T> work) {
    pending.incrementAndGet();
    CompletableFuture<T> out = new CompletableFuture<>();
    try {
      work.whenComplete((value, failure) -> {
        try {
          if (failure != null) {
            out.completeExceptionally(failure);
          } else {
            out.complete(value);
          }
        } finally {
          finished();
        }
      });
    } catch (RuntimeException | Error e) { // a foreign future's whenComplete threw
      finished();
      throw e;
    }
    return out;
  }

  private void finished() {
    if (pending.decrementAndGet() == 0 && waiters.get() > 0) {
      synchronized (idle) {
        idle.notifyAll();
      }
    }
  }

  /**
   * Waits until nothing is pending, at most {@code timeout}: the timeout runs on {@code
   * scheduler} (so on the cache's ticker when one is injected), backed by a wall-clock bound of
   * the same length for a scheduler that never runs it. Writes issued while it waits are waited
   * for as well. Returns at once if the thread is interrupted (keeping its interrupt status).
   *
   * @return how many writes and chains were still pending when it stopped waiting: 0 if the
   *     store answered them all in time
   */
  long drain(Duration timeout, Scheduler scheduler) {
    if (pending.get() == 0) {
      return 0;
    }
    boolean[] timedOut = new boolean[1];
    Future<?> timer = null;
    waiters.incrementAndGet();
    try {
      try {
        timer = scheduler.schedule(() -> {
          synchronized (idle) {
            timedOut[0] = true;
            idle.notifyAll();
          }
        }, timeout.toNanos(), TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        // a scheduler shut down: the wall-clock bound alone
      }
      long wallDeadline = System.nanoTime() + timeout.toNanos();
      synchronized (idle) {
        while (pending.get() > 0 && !timedOut[0]) {
          long left = wallDeadline - System.nanoTime();
          if (left <= 0) {
            break;
          }
          idle.wait(TimeUnit.NANOSECONDS.toMillis(left) + 1);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      waiters.decrementAndGet();
      if (timer != null) {
        timer.cancel(false);
      }
    }
    return Math.max(0, pending.get());
  }

  private <T> CompletableFuture<T> write(Supplier<CompletableFuture<T>> operation) {
    return track(operation.get());
  }

  // ---------------------------------------------------------------------------------------------
  // The store: writes counted, the rest forwarded

  @Override
  public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
    return write(() -> store.add(key, value, exptime));
  }

  @Override
  public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
    return write(() -> store.set(key, value, exptime));
  }

  @Override
  public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
      int exptime) {
    return write(() -> store.cas(key, casToken, value, exptime));
  }

  @Override
  public CompletableFuture<Boolean> delete(String key) {
    return write(() -> store.delete(key));
  }

  @Override
  public CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
    return write(() -> store.incr(key, delta, initial, exptime));
  }

  @Override
  public CompletableFuture<Void> flushPrefix(String prefix) {
    return write(() -> store.flushPrefix(prefix));
  }
}
