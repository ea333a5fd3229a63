package io.sustainablecache.internal;

import io.sustainablecache.Scheduler;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreException;

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
 */
final class Waiting {

  private Waiting() {}

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
