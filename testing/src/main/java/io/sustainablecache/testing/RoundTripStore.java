package io.sustainablecache.testing;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Counts the store round trips a caller waits for, over a real store. While {@link #measure}
 * runs, every operation is sent to the store at once, but its answer is held until the measured
 * thread has been blocked for 1 ms (it waits for an answer): then every operation sent so far is
 * answered together, once the store has answered them all, and that is one round trip. Operations
 * sent without waiting for each other (pipelined) are one round trip; an operation sent after
 * another's answer (a read, then a write) is the next, however fast the store. So the count does
 * not depend on the network's latency or the machine's load (a thread blocked briefly for another
 * reason, a lock, is not taken for a wait), and each measured round trip costs at least 1 ms.
 * Also counts operations, single-key reads and bulk reads.
 *
 * <p>While measuring, the call's operations are those the measured thread sends and those that
 * the answers it is given send; others (the caches' background polls of their logs) pass through,
 * neither counted nor held. Outside {@link #measure}, operations pass through, counted, except
 * those of the caches' scheduler thread (their polls).
 *
 * <p>Thread-safe; one {@link #measure} at a time.
 */
public final class RoundTripStore extends ForwardingStore {

  /** The thread of the caches' timers, whose polls are not counted or held. */
  private static final String SCHEDULER = "sustainable-cache-scheduler";
  /** How long the measured thread must have been blocked before held answers are given. */
  private static final long BLOCKED_NANOS = 1_000_000;

  private final AtomicInteger operations = new AtomicInteger();
  private final AtomicInteger singleReads = new AtomicInteger();
  private final AtomicInteger bulkReads = new AtomicInteger();
  private final AtomicInteger roundTrips = new AtomicInteger();
  private final List<Held<?>> held = new ArrayList<>();
  private volatile Thread measured;
  /** The thread that gives held answers (and runs what they complete), while measuring. */
  private volatile Thread answering;

  /**
   * Counts the round trips to {@code store}.
   *
   * @param store the store operations reach; never {@code null}
   */
  public RoundTripStore(CacheStore store) {
    super(store);
  }

  /** The round trips the last {@link #measure}s waited for, since {@link #reset}. */
  public int roundTrips() {
    return roundTrips.get();
  }

  /** The operations counted since {@link #reset}. */
  public int operations() {
    return operations.get();
  }

  /** The single-key reads ({@code gets}) counted since {@link #reset}. */
  public int singleReads() {
    return singleReads.get();
  }

  /** The bulk reads ({@code getsAll}) counted since {@link #reset}. */
  public int bulkReads() {
    return bulkReads.get();
  }

  /** Zeroes the counts. */
  public void reset() {
    operations.set(0);
    singleReads.set(0);
    bulkReads.set(0);
    roundTrips.set(0);
  }

  /**
   * Runs {@code work} on this thread with the answers held as the class describes, and returns
   * what it returns; answers everything held when it ends.
   *
   * @param work the call to measure; never {@code null}
   * @param <T> its result type
   * @return what {@code work} returns
   */
  public <T> T measure(Supplier<T> work) {
    answering = new Thread(this::answer, "round-trips");
    measured = Thread.currentThread();
    answering.setDaemon(true);
    answering.start();
    try {
      return work.get();
    } finally {
      measured = null;
      answering.interrupt();
      try {
        answering.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      release(); // anything sent last and not awaited
    }
  }

  /** Gives the held answers whenever the measured thread has been blocked long enough. */
  private void answer() {
    long blockedSince = 0;
    while (!Thread.currentThread().isInterrupted()) {
      Thread thread = measured;
      boolean blocked = thread != null && switch (thread.getState()) {
        case WAITING, TIMED_WAITING, BLOCKED -> true;
        default -> false;
      };
      long now = System.nanoTime();
      if (!blocked || pending() == 0) {
        blockedSince = 0;
      } else if (blockedSince == 0) {
        blockedSince = now;
      } else if (now - blockedSince >= BLOCKED_NANOS) {
        if (release() > 0) {
          roundTrips.incrementAndGet();
        }
        blockedSince = 0;
      }
      LockSupport.parkNanos(200_000);
    }
  }

  private synchronized int pending() {
    return held.size();
  }

  /** Waits for the store's answers to everything held, then gives them; returns how many. */
  private int release() {
    List<Held<?>> round;
    synchronized (this) {
      round = new ArrayList<>(held);
      held.clear();
    }
    for (Held<?> one : round) {
      one.sent.handle((value, failure) -> null).join();
    }
    round.forEach(Held::give);
    return round.size();
  }

  private <T> CompletableFuture<T> op(Supplier<CompletableFuture<T>> op) {
    return op(op, null);
  }

  /** Sends the operation, counted (also in {@code kind}, if not {@code null}) if the call's. */
  private <T> CompletableFuture<T> op(Supplier<CompletableFuture<T>> op, AtomicInteger kind) {
    Thread thread = Thread.currentThread();
    Thread caller = measured;
    if (caller == null ? thread.getName().equals(SCHEDULER)
        : thread != caller && thread != answering) {
      return op.get(); // the regions' polls of their logs, not the call's
    }
    operations.incrementAndGet();
    if (kind != null) {
      kind.incrementAndGet();
    }
    if (caller == null) {
      return op.get();
    }
    Held<T> one = new Held<>(op.get());
    synchronized (this) {
      held.add(one);
    }
    return one.answer;
  }

  /** An operation sent, and the answer its caller gets when it is given. */
  private static final class Held<T> {
    final CompletableFuture<T> sent;
    final CompletableFuture<T> answer = new CompletableFuture<>();

    Held(CompletableFuture<T> sent) {
      this.sent = sent;
    }

    void give() {
      sent.whenComplete((value, failure) -> {
        if (failure != null) {
          answer.completeExceptionally(failure);
        } else {
          answer.complete(value);
        }
      });
    }
  }

  @Override
  public CompletableFuture<Optional<StoreItem>> gets(String key) {
    return op(() -> delegate().gets(key), singleReads);
  }

  @Override
  public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
    return op(() -> delegate().getsAll(keys), bulkReads);
  }

  @Override
  public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
    return op(() -> delegate().add(key, value, exptime));
  }

  @Override
  public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
    return op(() -> delegate().set(key, value, exptime));
  }

  @Override
  public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
      int exptime) {
    return op(() -> delegate().cas(key, casToken, value, exptime));
  }

  @Override
  public CompletableFuture<Boolean> delete(String key) {
    return op(() -> delegate().delete(key));
  }

  @Override
  public CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
    return op(() -> delegate().incr(key, delta, initial, exptime));
  }
}
