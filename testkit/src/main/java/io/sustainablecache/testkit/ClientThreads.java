package io.sustainablecache.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.Scheduler;
import io.sustainablecache.spi.CacheStore;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

/**
 * Runs test code on the threads that deliver a store's answers: a client's I/O thread (where
 * dependent actions of the store's futures run, and with them an application's callbacks and
 * Spring's reactive caching) and the shared scheduler's thread. Issue 24: nothing the library
 * exposes may wait there.
 */
public final class ClientThreads {

  /**
   * What the probe reads: enough keys (several requests) that the answer takes longer to come
   * than registering a dependent on its future takes (one key's answer can be back from a local
   * server before {@code gets} has returned).
   */
  private static final List<String> PROBE_KEYS = IntStream.range(0, 1_000)
      .mapToObj(i -> "completion-thread-probe-" + i).toList();

  private ClientThreads() {}

  /**
   * Runs {@code action} on the store's completion thread: in a dependent action registered on a
   * store future (a bulk read) as it is sent, which the client's I/O thread runs when the answer
   * arrives. If the answer came before the dependent was registered (so that it would run on this
   * thread), {@code action} is not run and another read is tried, at most 10 times; the thread it
   * runs on is asserted to be one the store names as a completion thread.
   *
   * @param store a store whose futures complete on a thread of their own (a real adapter)
   * @param action what to run there
   * @param <T> what it returns
   * @return what {@code action} returned
   * @throws AssertionError if it could not run there, or ran on a thread the store does not name
   */
  public static <T> T onCompletionThread(CacheStore store, Callable<T> action) {
    for (int attempt = 0; attempt < 10; attempt++) {
      CompletableFuture<Void> go = new CompletableFuture<>();
      AtomicReference<Thread> ran = new AtomicReference<>();
      Thread caller = Thread.currentThread();
      CompletableFuture<Optional<T>> result =
          go.thenCompose(ignored -> store.getsAll(PROBE_KEYS)).thenApply(found -> {
            if (Thread.currentThread() == caller) {
              return Optional.empty(); // answered before the dependent was registered: again
            }
            ran.set(Thread.currentThread());
            try {
              return Optional.ofNullable(action.call());
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          });
      go.complete(null);
      Optional<T> answer = result.orTimeout(30, TimeUnit.SECONDS).join();
      if (ran.get() != null) {
        assertThat(store.isCompletionThread(ran.get())).as("ran on " + ran.get().getName())
            .isTrue();
        return answer.orElse(null);
      }
    }
    throw new AssertionError("the store answered 10 reads before a dependent could be"
        + " registered");
  }

  /**
   * Runs {@code task} on the shared scheduler's thread ({@code Scheduler.systemScheduler()}) and
   * waits for it.
   *
   * @param task what to run there; what it throws is thrown here, wrapped
   */
  public static void onSchedulerThread(Runnable task) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    Scheduler.systemScheduler().schedule(() -> {
      try {
        task.run();
        done.complete(null);
      } catch (Throwable t) {
        done.completeExceptionally(t);
      }
    }, 0, TimeUnit.MILLISECONDS);
    done.orTimeout(30, TimeUnit.SECONDS).join();
  }
}
