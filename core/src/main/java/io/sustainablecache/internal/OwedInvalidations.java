package io.sustainablecache.internal;

import io.sustainablecache.Scheduler;
import io.sustainablecache.Ticker;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.spi.StoreNodes;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The invalidations this instance owes the store (issue 31, part 2): keys whose change committed
 * (an {@code invalidate}, a {@code put}, a write fence's commit) while the store could not take
 * their invalidation, so the store may still hold what the change replaced. The one place this
 * state lives, and the one gate where it is enforced: a decorator of the cache's store that every
 * read of a key passes (the read path, {@code getAll}, the fleet lease's re-reads, the near
 * cache's checks, {@code putLoaded} and the write fence's reads). A read of a key owed first
 * invalidates it ({@link Payer}: a tombstone, or a standing fence's prior dropped); only once that
 * landed does the read go to the store, and if it fails the read fails, so the caller loads and
 * nothing is cached. So this instance never serves an owed key from the store, and other instances
 * see the invalidation as soon as the store takes it: a drain on the scheduler retries every owed
 * key (one probe per node, then the rest of that node's keys), 100 ms after the first debt,
 * backing off to {@link #MAX_RETRY_MILLIS}.
 *
 * <p>Bounded: at most {@link #MAX_KEYS} keys, and owed at most {@link #MAX_AGE_NANOS}. Past
 * either, where the cache has a generation (a near cache or {@code invalidateAllBound}), every
 * key is owed at once as a new generation of the namespace ({@code invalidateAll}); until that
 * landed, every read of a key of the namespace on this instance is gated by it. Without a
 * generation, past {@link #MAX_KEYS} a new debt is refused ({@link #owe} returns {@code false}:
 * the caller fails, as with {@code failWritesWhenStoreDown}); age alone never drops a key.
 *
 * <p>Not in the {@link KeyRegistry}: a registry record is dropped by every {@code detach} (which
 * each write begins with, before its store write fails) and swept by time, where a debt must
 * outlive both; and the registry is not on the store reads of {@code putLoaded}, the lease or the
 * fence, which this gate is. The cache's own keys (the near cache's log, generations, leases:
 * {@link Keys#INTERNAL_MARK}) are never owed or gated.
 *
 * <p>Thread-safe. The hit path pays one volatile read while nothing is owed.
 */
final class OwedInvalidations extends DelegatingStore {

  /** The most keys owed at once (a key and its record, about 150 bytes each with the key). */
  static final int MAX_KEYS = 10_000;

  /** How long a key may be owed before the namespace's generation is owed instead: 1 min. */
  static final long MAX_AGE_NANOS = TimeUnit.MINUTES.toNanos(1);

  /** The drain's first delay after a debt, and its first retry's; doubled up to the cap. */
  static final long FIRST_RETRY_MILLIS = 100;

  /** The longest pause between two drains while something is owed. */
  static final long MAX_RETRY_MILLIS = 1_000;

  /** Keys paid at once by the drain, per node, once its probe succeeded. */
  private static final int BATCH = 256;

  /** Invalidates one owed key in the store; only {@link WriteFences#payOwed} implements it. */
  interface Payer {
    /**
     * Invalidates {@code storeKey} through {@code direct} (the store without this gate).
     *
     * @return completes when the invalidation landed (and was recorded in the near cache's log),
     *     fails if it did not
     */
    CompletableFuture<Void> pay(CacheStore direct, String storeKey);
  }

  /** A key's debt: since when (ticker) and the payment in flight, if any. */
  private static final class Debt {
    final long sinceTick;
    CompletableFuture<Void> paying; // guarded by this

    Debt(long sinceTick) {
      this.sinceTick = sinceTick;
    }
  }

  private final Ticker ticker;
  private final Scheduler scheduler;
  private final StatsCounter stats;
  private final RateLimitedLog log;
  private final ConcurrentHashMap<String, Debt> owed = new ConcurrentHashMap<>();
  /** The number of keys in {@link #owed}: the gate's one volatile read while nothing is owed. */
  private final AtomicInteger count = new AtomicInteger();
  /** A new generation owed ({@code null}: none), with its payment in flight. */
  private volatile Debt generation;
  private final AtomicBoolean drainScheduled = new AtomicBoolean();
  private volatile boolean closed;
  private volatile long retryMillis = FIRST_RETRY_MILLIS;
  private volatile Payer payer;
  /** Writes a new generation of the namespace; {@code null}: the cache has none. */
  private volatile Supplier<CompletableFuture<Void>> newGeneration;
  /** Counts a payment for close(); identity until {@link #payWith}. */
  private volatile java.util.function.UnaryOperator<CompletableFuture<Void>> track = f -> f;

  OwedInvalidations(CacheStore store, Ticker ticker, Scheduler scheduler, StatsCounter stats) {
    super(store);
    this.ticker = ticker;
    this.scheduler = scheduler;
    this.stats = stats;
    this.log = new RateLimitedLog(Log.LOGGER, ticker);
  }

  /**
   * How debts are paid, set once when the cache is built: {@code payer} for a key, {@code
   * newGeneration} for the namespace ({@code null}: no generation), {@code pending} counts each
   * payment for {@code close()}.
   */
  void payWith(Payer payer, Supplier<CompletableFuture<Void>> newGeneration,
      PendingWrites pending) {
    this.payer = payer;
    this.newGeneration = newGeneration;
    this.track = pending::track;
  }

  /**
   * Remembers that {@code storeKey}'s invalidation is owed: its change committed, and the store
   * did not take the invalidation. From the return on, this instance reads the key from the store
   * only after invalidating it there. Counted as a write committed unprotected.
   *
   * @return {@code false} if the key cannot be owed ({@link #MAX_KEYS} reached and no generation
   *     to fall back on): the caller must fail
   */
  boolean owe(String storeKey) {
    if (generation == null) {
      boolean[] added = new boolean[1];
      boolean[] refused = new boolean[1];
      owed.compute(storeKey, (key, debt) -> {
        if (debt == null && count.get() >= MAX_KEYS && newGeneration == null) {
          refused[0] = true;
          return null;
        }
        added[0] = debt == null;
        // a payment in flight may have read the key before this change committed: a new debt
        // (its completion removes only its own); otherwise the older debt covers this one
        return debt == null || debt.paying != null
            ? new Debt(debt == null ? ticker.read() : debt.sinceTick) : debt;
      });
      if (refused[0]) {
        return false;
      }
      if (added[0]) {
        stats.increment(Counter.INVALIDATION_OWED);
        if (count.incrementAndGet() > MAX_KEYS) {
          oweGeneration("more than " + MAX_KEYS + " keys owed");
        }
      }
    }
    stats.increment(Counter.UNPROTECTED_WRITE);
    scheduleDrain(FIRST_RETRY_MILLIS);
    return true;
  }

  /**
   * Stops the drain ({@code close()}): what is still owed is not paid (logged at WARN with the
   * number; other instances may serve those keys' old entries until their TTL).
   */
  void close() {
    closed = true;
    int left = owed();
    if (left > 0) {
      Log.LOGGER.warn("cache closed owing the store {} invalidation(s) it could not write (the"
          + " store down since): other instances may serve those keys' old entries until their"
          + " TTL", left);
    }
  }

  /**
   * The key's debt now, to hand to {@link #settledBy} once a change of the key issued after this
   * call landed; {@code null} if nothing is owed for it.
   */
  Object debtOf(String storeKey) {
    return count.get() == 0 ? null : owed.get(storeKey);
  }

  /**
   * A caller's change of the key ({@code put}, {@code invalidate}) issued when the key's debt was
   * {@code debt} landed, with its record: it replaced whatever the store held before, which is
   * what the debt was about, so the debt is settled (unless the key was owed again since).
   */
  void settledBy(String storeKey, Object debt) {
    if (debt != null && owed.remove(storeKey, debt)) {
      paid();
    }
  }

  /** Whether {@link #owe} would accept {@code storeKey} now. */
  boolean canOwe(String storeKey) {
    return generation != null || newGeneration != null || count.get() < MAX_KEYS
        || owed.containsKey(storeKey);
  }

  /** The number of keys owed now, and 1 more while a new generation is owed; for tests. */
  int owed() {
    return count.get() + (generation == null ? 0 : 1);
  }

  /** Owes a new generation instead of the keys, which it covers (their debts are dropped). */
  private void oweGeneration(String why) {
    synchronized (this) {
      if (generation != null) {
        return;
      }
      generation = new Debt(ticker.read());
    }
    stats.increment(Counter.GENERATION_OWED);
    log.warn("invalidations owed to the store: " + why + "; owing a new generation of the"
        + " namespace instead (every entry a miss once it lands)");
    for (String key : new ArrayList<>(owed.keySet())) {
      if (owed.remove(key) != null) {
        paid();
      }
    }
  }

  private void paid() {
    count.decrementAndGet();
    stats.increment(Counter.INVALIDATION_PAID);
  }

  // ---------------------------------------------------------------------------------------------
  // Paying

  /**
   * The payment {@code storeKey} waits for before it may be read ({@code null}: nothing owed for
   * it): the one in flight, or one started now.
   */
  private CompletableFuture<Void> paymentFor(String storeKey) {
    if (count.get() == 0 && generation == null || storeKey.indexOf(Keys.INTERNAL_MARK) >= 0) {
      return null;
    }
    Debt owedGeneration = generation;
    if (owedGeneration != null) {
      return pay(owedGeneration, null);
    }
    Debt debt = owed.get(storeKey);
    return debt == null ? null : pay(debt, storeKey);
  }

  /** Starts (or joins) the payment of a debt: a key's, or with {@code storeKey} null the generation's. */
  private CompletableFuture<Void> pay(Debt debt, String storeKey) {
    CompletableFuture<Void> payment;
    synchronized (debt) {
      if (debt.paying != null) {
        return debt.paying;
      }
      payment = new CompletableFuture<>();
      debt.paying = payment;
    }
    CompletableFuture<Void> work;
    try {
      work = track.apply(storeKey == null ? newGeneration.get() : payer.pay(store, storeKey));
    } catch (RuntimeException e) {
      work = CompletableFuture.failedFuture(e);
    }
    work.whenComplete((done, failure) -> {
      if (failure == null) {
        settle(debt, storeKey);
        payment.complete(null);
      } else {
        synchronized (debt) {
          debt.paying = null; // the next read or drain tries again
        }
        payment.completeExceptionally(new StoreException("the invalidation this instance owes"
            + " the store for " + (storeKey == null ? "the namespace (a new generation)"
            : "key " + storeKey) + " could not be written yet, so the key is not read from the"
            + " store", Failures.unwrap(failure)));
      }
    });
    return payment;
  }

  private void settle(Debt debt, String storeKey) {
    if (storeKey == null) {
      synchronized (this) {
        if (generation == debt) {
          generation = null;
        }
      }
    } else if (owed.remove(storeKey, debt)) {
      paid();
    }
  }

  /**
   * Schedules a drain {@code delayMillis} from now unless one is scheduled. The drain never
   * waits: it issues payments and schedules the next drain when they completed.
   */
  private void scheduleDrain(long delayMillis) {
    if (closed || !drainScheduled.compareAndSet(false, true)) {
      return;
    }
    try {
      scheduler.schedule(this::drain, delayMillis, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) { // the scheduler shut down: reads still pay
      drainScheduled.set(false);
    }
  }

  /**
   * One round: the generation if owed, else per node one key as a probe and, if it was paid, the
   * node's other keys, {@link #BATCH} at a time. Then, while anything is owed, the next round
   * after the retry delay (reset by a round that paid something, doubled by one that did not).
   */
  private void drain() {
    drainScheduled.set(false);
    if (closed || count.get() == 0 && generation == null) {
      retryMillis = FIRST_RETRY_MILLIS;
      return;
    }
    if (generation == null && newGeneration != null && oldestAge() > MAX_AGE_NANOS) {
      oweGeneration("keys owed longer than " + TimeUnit.NANOSECONDS.toSeconds(MAX_AGE_NANOS)
          + " s");
    }
    long before = count.get() + (generation == null ? 0 : 1L);
    CompletableFuture<Void> round;
    Debt owedGeneration = generation;
    if (owedGeneration != null) {
      round = pay(owedGeneration, null).handle((done, failure) -> null);
    } else {
      List<CompletableFuture<Void>> nodes = new ArrayList<>();
      for (List<String> keys : byNode().values()) {
        nodes.add(probeThenRest(keys));
      }
      round = CompletableFuture.allOf(nodes.toArray(new CompletableFuture<?>[0]));
    }
    round.whenComplete((done, failure) -> {
      long after = count.get() + (generation == null ? 0 : 1L);
      if (after == 0) {
        retryMillis = FIRST_RETRY_MILLIS;
        return;
      }
      retryMillis = after < before ? FIRST_RETRY_MILLIS
          : Math.min(MAX_RETRY_MILLIS, retryMillis * 2);
      scheduleDrain(retryMillis);
    });
  }

  private long oldestAge() {
    long now = ticker.read();
    long oldest = 0;
    for (Debt debt : owed.values()) {
      oldest = Math.max(oldest, now - debt.sinceTick);
    }
    return oldest;
  }

  /** The keys owed, by the node the store routes each to (one group without nodes). */
  private Map<Integer, List<String>> byNode() {
    StoreNodes nodes = store.nodes().orElse(null);
    Map<Integer, List<String>> byNode = new LinkedHashMap<>();
    for (String key : owed.keySet()) {
      int node = nodes == null ? 0 : nodes.nodeOf(key);
      byNode.computeIfAbsent(node, n -> new ArrayList<>()).add(key);
    }
    return byNode;
  }

  /** Pays one node's first key; if that landed, the rest, {@link #BATCH} at a time. */
  private CompletableFuture<Void> probeThenRest(List<String> keys) {
    CompletableFuture<Void> probe = payKey(keys.get(0));
    return probe.thenCompose(paid -> batches(keys, 1)).handle((done, failure) -> null);
  }

  private CompletableFuture<Void> batches(List<String> keys, int from) {
    if (from >= keys.size()) {
      return CompletableFuture.completedFuture(null);
    }
    int to = Math.min(keys.size(), from + BATCH);
    List<CompletableFuture<Void>> batch = new ArrayList<>(to - from);
    for (int i = from; i < to; i++) {
      batch.add(payKey(keys.get(i)).handle((done, failure) -> null));
    }
    return CompletableFuture.allOf(batch.toArray(new CompletableFuture<?>[0]))
        .thenCompose(done -> batches(keys, to));
  }

  private CompletableFuture<Void> payKey(String storeKey) {
    Debt debt = owed.get(storeKey);
    return debt == null ? CompletableFuture.completedFuture(null) : pay(debt, storeKey);
  }

  // ---------------------------------------------------------------------------------------------
  // The store: reads of owed keys wait for their payment, the rest forwarded

  @Override
  public CompletableFuture<Optional<StoreItem>> gets(String key) {
    CompletableFuture<Void> payment = paymentFor(key);
    return payment == null ? store.gets(key) : payment.thenCompose(paid -> store.gets(key));
  }

  /**
   * Reads the keys after paying the debts of those owed; a key whose payment failed is left out
   * of the answer (read as nothing: its load's write is an {@code add}, which an old entry still
   * there refuses).
   */
  @Override
  public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
    if (count.get() == 0 && generation == null) {
      return store.getsAll(keys);
    }
    Map<String, CompletableFuture<Void>> payments = new HashMap<>();
    for (String key : keys) {
      CompletableFuture<Void> payment = paymentFor(key);
      if (payment != null) {
        payments.put(key, payment);
      }
    }
    if (payments.isEmpty()) {
      return store.getsAll(keys);
    }
    CompletableFuture<?>[] all = payments.values().stream()
        .map(p -> p.handle((done, failure) -> null)).toArray(CompletableFuture<?>[]::new);
    return CompletableFuture.allOf(all).thenCompose(done -> store.getsAll(keys))
        .thenApply(items -> {
          Map<String, StoreItem> answered = null;
          for (Map.Entry<String, CompletableFuture<Void>> p : payments.entrySet()) {
            if (p.getValue().isCompletedExceptionally() && items.containsKey(p.getKey())) {
              if (answered == null) {
                answered = new HashMap<>(items);
              }
              answered.remove(p.getKey());
            }
          }
          return answered == null ? items : answered;
        });
  }
}
