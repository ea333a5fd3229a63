package io.sustainablecache.testing;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A {@link CacheStore} that forwards to another one (usually an {@link InMemoryStore}) and lets a
 * test script failures and delays per kind of operation, to reproduce what a real server and
 * network do between two operations:
 * <ul>
 *   <li>{@link #fail} — the next operations of a kind complete exceptionally with a {@link
 *       StoreException} without reaching the store (a server that is down);</li>
 *   <li>{@link #holdRequests} — operations of a kind are not applied until released: the
 *       request is "still on the wire" and reaches the store at {@link Hold#release()} (an
 *       operation that timed out on the client but is applied by the server later);</li>
 *   <li>{@link #holdResponses} — operations are applied at once but their futures complete only
 *       at release (a slow answer).</li>
 * </ul>
 * Thread-safe. Operation counts are kept per kind.
 */
public final class ScriptedStore implements CacheStore {

  /** The kinds of operation. */
  public enum Op { GETS, GETS_ALL, ADD, SET, CAS, DELETE, FLUSH_PREFIX, INCR }

  private final CacheStore delegate;
  private final Map<Op, Integer> failures = new EnumMap<>(Op.class);
  private final Map<Op, Hold> holds = new EnumMap<>(Op.class);
  private final Map<Op, AtomicLong> counts = new EnumMap<>(Op.class);

  private ScriptedStore(CacheStore delegate) {
    this.delegate = delegate;
    for (Op op : Op.values()) {
      counts.put(op, new AtomicLong());
    }
  }

  /**
   * Wraps a store.
   *
   * @param delegate the store operations reach; never {@code null}
   * @return a new scripted store with no script
   */
  public static ScriptedStore over(CacheStore delegate) {
    return new ScriptedStore(requireNonNull(delegate, "delegate"));
  }

  /**
   * Makes the next {@code times} operations of a kind fail ({@link Integer#MAX_VALUE}: all,
   * until {@link #heal}).
   *
   * @param op the kind
   * @param times how many
   * @return this store
   */
  public synchronized ScriptedStore fail(Op op, int times) {
    failures.put(op, times);
    return this;
  }

  /**
   * Stops failing every kind of operation.
   *
   * @return this store
   */
  public synchronized ScriptedStore heal() {
    failures.clear();
    return this;
  }

  /**
   * Holds operations of a kind from now on: they reach the store only when released.
   *
   * @param op the kind
   * @return the hold, to release them
   */
  public synchronized Hold holdRequests(Op op) {
    Hold hold = new Hold(true);
    holds.put(op, hold);
    return hold;
  }

  /**
   * Holds the answers of operations of a kind from now on: they are applied at once, their
   * futures complete when released.
   *
   * @param op the kind
   * @return the hold, to release them
   */
  public synchronized Hold holdResponses(Op op) {
    Hold hold = new Hold(false);
    holds.put(op, hold);
    return hold;
  }

  /**
   * How many operations of a kind were issued (held and failed ones included).
   *
   * @param op the kind
   * @return a non-negative count
   */
  public long count(Op op) {
    return counts.get(op).get();
  }

  @Override
  public CompletableFuture<Optional<StoreItem>> gets(String key) {
    return run(Op.GETS, () -> delegate.gets(key));
  }

  @Override
  public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
    return run(Op.GETS_ALL, () -> delegate.getsAll(keys));
  }

  @Override
  public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
    return run(Op.ADD, () -> delegate.add(key, value, exptime));
  }

  @Override
  public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
    return run(Op.SET, () -> delegate.set(key, value, exptime));
  }

  @Override
  public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
      int exptime) {
    return run(Op.CAS, () -> delegate.cas(key, casToken, value, exptime));
  }

  @Override
  public CompletableFuture<Boolean> delete(String key) {
    return run(Op.DELETE, () -> delegate.delete(key));
  }

  @Override
  public CompletableFuture<Void> flushPrefix(String prefix) {
    return run(Op.FLUSH_PREFIX, () -> delegate.flushPrefix(prefix));
  }

  @Override
  public CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
    return run(Op.INCR, () -> delegate.incr(key, delta, initial, exptime));
  }

  /**
   * {@inheritDoc} The delegate's answer.
   *
   * @return {@inheritDoc}
   */
  @Override
  public boolean hasCounters() {
    return delegate.hasCounters();
  }

  @Override
  public int maxKeyLength() {
    return delegate.maxKeyLength();
  }

  private <T> CompletableFuture<T> run(Op op, Supplier<CompletableFuture<T>> operation) {
    counts.get(op).incrementAndGet();
    Hold hold;
    synchronized (this) {
      Integer left = failures.get(op);
      if (left != null && left > 0) {
        if (left != Integer.MAX_VALUE) {
          failures.put(op, left - 1);
        }
        return CompletableFuture.failedFuture(
            new StoreException("scripted failure of " + op));
      }
      hold = holds.get(op);
    }
    if (hold == null) {
      return operation.get();
    }
    return hold.add(operation);
  }

  /** Operations of one kind waiting for {@link #release()}. Thread-safe. */
  public static final class Hold {
    private final boolean requests;
    private final List<Runnable> waiting = new ArrayList<>();
    private boolean released;

    private Hold(boolean requests) {
      this.requests = requests;
    }

    private synchronized <T> CompletableFuture<T> add(Supplier<CompletableFuture<T>> op) {
      if (released) {
        return op.get();
      }
      CompletableFuture<T> answer = new CompletableFuture<>();
      if (requests) {
        waiting.add(() -> op.get().whenComplete((v, e) -> complete(answer, v, e)));
      } else {
        CompletableFuture<T> applied = op.get();
        waiting.add(() -> applied.whenComplete((v, e) -> complete(answer, v, e)));
      }
      return answer;
    }

    private static <T> void complete(CompletableFuture<T> answer, T value, Throwable error) {
      if (error != null) {
        answer.completeExceptionally(error);
      } else {
        answer.complete(value);
      }
    }

    /**
     * The number of operations waiting.
     *
     * @return a non-negative count
     */
    public synchronized int waiting() {
      return waiting.size();
    }

    /** Lets every waiting operation through, and every later one pass at once. */
    public void release() {
      List<Runnable> due;
      synchronized (this) {
        released = true;
        due = new ArrayList<>(waiting);
        waiting.clear();
      }
      due.forEach(Runnable::run);
    }
  }
}
