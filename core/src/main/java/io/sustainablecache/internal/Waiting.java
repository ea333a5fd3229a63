package io.sustainablecache.internal;

import io.sustainablecache.Scheduler;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;

/**
 * The one decision whether a synchronous method of the cache may wait on the current thread. It
 * may not on a thread that delivers the answers it would wait for: a thread the store names as
 * one of its {@linkplain CacheStore#isCompletionThread completion threads} (a memcached client's
 * I/O thread, the adapters' deadline threads) or the {@linkplain Scheduler#systemScheduler()
 * shared scheduler}'s thread. Waiting there would stall every other operation of the client (or
 * every cache's timers) until the wait timed out, and the answer could only come after it.
 *
 * <p>On such a thread every wait of the synchronous API has no patience: a read answers from the
 * near cache or, without reading the store, as a read that failed (a miss: a loader runs on this
 * thread and its value is not written; a peek answers nothing); a write is issued and not
 * awaited; {@code close()} does not wait for running refreshes. See {@link SustainableCache}.
 *
 * <p>Where a thread may wait, it waits one way: {@link #await}, bounded, with each caller saying
 * what a wait that ended without the value means to it.
 */
final class Waiting {

  private Waiting() {}

  /** How a bounded wait ended without the future's value. */
  enum Unfinished { FAILED, TIMED_OUT, INTERRUPTED }

  /**
   * The one bounded wait: the value of {@code future}, waiting at most {@code nanos} for it,
   * blocked ({@code here} is {@code null}) or running the tasks {@code here} queues meanwhile
   * ({@link CallerRuns#drive}). A wait that ends without the value, interrupted (the thread's
   * interrupt flag is then set again), timed out or failed, is what {@code onEnd} makes of it:
   * given how it ended and the failure (the future's own, not its {@link ExecutionException};
   * the {@link TimeoutException}; the {@link InterruptedException}), it returns the exception to
   * throw, throws (an {@link Error}, say), or returns {@code null}: then so does this.
   */
  static <T> T await(CompletableFuture<T> future, long nanos, CallerRuns here,
      BiFunction<Unfinished, Throwable, RuntimeException> onEnd) {
    Unfinished how;
    Throwable failure;
    if (here == null && future.isCompletedExceptionally()) { // a refusal, say: no wait
      how = Unfinished.FAILED;
      failure = Failures.failureOf(future);
    } else {
      try {
        return here == null ? future.get(nanos, TimeUnit.NANOSECONDS) : here.drive(future, nanos);
      } catch (ExecutionException e) {
        how = Unfinished.FAILED;
        failure = e.getCause();
      } catch (TimeoutException e) {
        how = Unfinished.TIMED_OUT;
        failure = e;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        how = Unfinished.INTERRUPTED;
        failure = e;
      }
    }
    RuntimeException thrown = onEnd.apply(how, failure);
    if (thrown != null) {
      throw thrown;
    }
    return null;
  }

  /** Whether the current thread may wait for the store's answers. */
  static boolean allowed(CacheStore store) {
    Thread thread = Thread.currentThread();
    return !SystemScheduler.isSchedulerThread(thread) && !store.isCompletionThread(thread);
  }

  /** What a synchronous read gets instead of a store read it could not wait for. */
  static StoreException notRead() {
    return new StoreException("not read: this thread (" + Thread.currentThread().getName()
        + ") delivers the store's answers, so a synchronous call made on it does not wait for"
        + " them (see SustainableCache, \"Calls on the store's threads\")");
  }
}
