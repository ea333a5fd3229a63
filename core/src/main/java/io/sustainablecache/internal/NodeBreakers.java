package io.sustainablecache.internal;

import io.sustainablecache.Ticker;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.PartialReadException;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.spi.StoreNodes;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Stops waiting for a node that does not answer (issue 31, part 1): a decorator of the cache's
 * store, below everything else, with one breaker per node of the store ({@link
 * CacheStore#nodes()}), or one for the whole store when it names no nodes. A bulk read that
 * fails for some keys only is a failure of their nodes; for the whole store's breaker it is a
 * success, the store having answered for the other keys.
 *
 * <p>After {@value #FAILURES_TO_OPEN} operations of a node have failed in a row (timed out, most
 * often: a hung server, a partition), the node's breaker opens: its operations fail at once with
 * a {@link StoreException} and are not sent, so reads of its keys go to the loader without
 * waiting an operation timeout each, and writes are skipped as after any store failure. Every
 * {@code probeInterval} the breaker probes the node with a read of its own ({@code gets} of the
 * key of the operation that found the probe due, which fails at once like the others): no caller
 * waits for a probe, and nothing a caller asked for is sent while the node is out (a probe that
 * fails puts the next one an interval after its failure). The first operation of the node that
 * succeeds (a probe, or a late answer) closes the breaker. A failure of an operation sent before
 * the breaker last closed does not count. The breakers of a store's nodes are shared by every
 * cache over that store instance (with the same ticker and probe interval; {@link Health}), so a
 * hung node costs the caches over one store two operation timeouts in all, not two each, and
 * they are served from the node again at most {@code probeInterval} plus a round trip after it
 * answers. Each cache counts the operations refused to it.
 *
 * <p>While every breaker is closed with no failure counted (the normal case), an operation is
 * sent without finding its node (which costs the adapters a look at their client's node list and
 * a hash of the key): its key is routed only if it fails, or if by the time it succeeds some
 * breaker counts a failure (a success ends a node's run of failures), to the node that key
 * belongs to then. So a healthy cache pays two volatile reads per operation here.
 *
 * <p>Time is the cache's {@link Ticker}; nothing here blocks or schedules. A failure takes the
 * breaker's lock. Thread-safe.
 */
final class NodeBreakers extends DelegatingStore {

  /** Failures in a row that open a node's breaker. */
  static final int FAILURES_TO_OPEN = 2;

  /** The id of the one breaker of a store that names no nodes. */
  static final String WHOLE_STORE = "store";

  private final StatsCounter stats;
  /** The breakers of the store's nodes, shared with every other cache over the same store. */
  private final Health health;
  /** The whole store's breaker; {@code null} for a store that names its nodes. */
  private final Breaker whole;
  /** The store's last node snapshot and its breakers by index; {@code null} without nodes. */
  private volatile Routing routing;

  private NodeBreakers(CacheStore store, Duration probeInterval, Ticker ticker,
      StatsCounter stats) {
    super(store);
    this.stats = stats;
    this.health = Health.of(store, ticker, probeInterval.toNanos());
    // the nodes known at start have their breakers from the start
    this.whole = routing() == null ? health.breaker(WHOLE_STORE) : null;
  }

  /**
   * The store guarded by breakers, or the store itself when {@code probeInterval} is zero (off).
   */
  static CacheStore of(CacheStore store, Duration probeInterval, Ticker ticker,
      StatsCounter stats) {
    return probeInterval.isZero() ? store : new NodeBreakers(store, probeInterval, ticker, stats);
  }

  /** How many sets of shared breakers the registry holds for {@code store}; for the tests. */
  static int sharedCount(CacheStore store) {
    return Health.count(store);
  }

  /**
   * The nodes whose breakers exist, each with whether its operations fail at once now (its
   * breaker is open); in the order they were first seen.
   */
  Map<String, Boolean> states() {
    Map<String, Boolean> states = new LinkedHashMap<>();
    synchronized (health.byId) {
      health.byId.forEach((id, breaker) -> states.put(id, breaker.open));
    }
    return states;
  }

  // -------------------------------------------------------------------------------------------
  // Routing

  /** A node snapshot and the breaker of each of its nodes. */
  private record Routing(StoreNodes nodes, Breaker[] breakers, StoreNodes guarded) {}

  /** The routing of the store's current snapshot, or {@code null} when it names no nodes. */
  private Routing routing() {
    Optional<StoreNodes> current = store.nodes();
    if (current.isEmpty()) {
      return null;
    }
    Routing known = routing;
    StoreNodes nodes = current.get();
    if (known != null && known.nodes == nodes) {
      return known;
    }
    List<String> ids = nodes.ids();
    Breaker[] breakers = new Breaker[ids.size()];
    CacheStore[] pinned = new CacheStore[ids.size()];
    for (int i = 0; i < breakers.length; i++) {
      breakers[i] = health.breaker(ids.get(i));
      pinned[i] = new Pinned(nodes.on(i), breakers[i]);
    }
    Routing made = new Routing(nodes, breakers, new GuardedNodes(nodes, pinned));
    routing = made;
    return made;
  }

  /** The breaker of a key's node: its node's, or the whole store's. */
  private Breaker breakerOf(Routing routing, String key) {
    if (routing == null) {
      return whole;
    }
    if (routing.breakers.length == 1) {
      return routing.breakers[0]; // the store's current list has one node: no key to hash
    }
    int node = routing.nodes.nodeOf(key);
    // A key the snapshot no longer routes: the client's list changed since; no breaker holds it.
    return node < 0 ? null : routing.breakers[node];
  }

  private <T> CompletableFuture<T> guarded(String key, Supplier<CompletableFuture<T>> operation) {
    if (health.troubled.get() != 0) {
      return guarded(breakerOf(routing(), key), operation, () -> store.gets(key));
    }
    long sentIn = health.closes.get();
    return reported(operation.get(), failure -> {
      if (failure != null || health.troubled.get() != 0) {
        Breaker breaker = breakerOf(routing(), key);
        if (breaker != null) {
          breaker.completed(sentIn, failure);
        }
      }
    });
  }

  /**
   * Sends {@code operation} if {@code breaker} admits it, else fails at once; {@code probe} reads
   * the operation's key on the same node, sent instead when the breaker's probe is due.
   */
  private <T> CompletableFuture<T> guarded(Breaker breaker,
      Supplier<CompletableFuture<T>> operation, Supplier<? extends CompletableFuture<?>> probe) {
    if (breaker == null) {
      return operation.get();
    }
    long sentIn = health.closes.get();
    if (!breaker.admit(health.ticker.read(), probe)) {
      stats.increment(Counter.STORE_REJECTED);
      return CompletableFuture.failedFuture(breaker.refusal());
    }
    return reported(operation.get(), failure -> breaker.completed(sentIn, failure));
  }

  /**
   * A future that completes as {@code sent} does, after {@code report} has seen the outcome: so
   * that what the caller does next (a load's write-back after a probe's answer) meets the
   * breaker as the answer left it. Cancelling it cancels {@code sent}.
   */
  private static <T> CompletableFuture<T> reported(CompletableFuture<T> sent,
      java.util.function.Consumer<Throwable> report) {
    CompletableFuture<T> result = new CompletableFuture<>() {
      @Override
      public boolean cancel(boolean mayInterruptIfRunning) {
        sent.cancel(mayInterruptIfRunning);
        return super.cancel(mayInterruptIfRunning);
      }
    };
    // handle, not whenComplete: the stage whenComplete returns would wrap a failure in a
    // CompletionException (a stack walk) that nobody reads
    sent.handle((value, failure) -> {
      report.accept(failure);
      if (failure != null) {
        result.completeExceptionally(failure);
      } else {
        result.complete(value);
      }
      return null;
    });
    return result;
  }

  // -------------------------------------------------------------------------------------------
  // The store

  @Override
  public CompletableFuture<Optional<StoreItem>> gets(String key) {
    return guarded(key, () -> store.gets(key));
  }

  /**
   * Reads the keys of nodes whose breakers admit them with one {@code getsAll}; the keys of the
   * others fail (a {@link PartialReadException} when some key was read), as a dead node's do.
   */
  @Override
  public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
    if (keys.isEmpty()) {
      return store.getsAll(keys);
    }
    long sentIn = health.closes.get();
    if (health.troubled.get() == 0) {
      return reported(store.getsAll(keys), failure -> {
        if (failure != null || health.troubled.get() != 0) {
          Routing routing = routing();
          Map<String, Breaker> sentKeys = new HashMap<>();
          for (String key : keys) {
            Breaker breaker = breakerOf(routing, key);
            if (breaker != null) {
              sentKeys.put(key, breaker);
            }
          }
          report(sentKeys, sentIn, failure);
        }
      });
    }
    Routing routing = routing();
    long now = health.ticker.read();
    Set<Breaker> admitted = new HashSet<>();
    Map<String, Breaker> sentKeys = new LinkedHashMap<>();
    Set<String> refused = new LinkedHashSet<>();
    Breaker refusing = null;
    List<String> unrouted = new ArrayList<>();
    for (String key : keys) {
      Breaker breaker = breakerOf(routing, key);
      if (breaker == null) {
        unrouted.add(key);
        continue;
      }
      boolean sent = admitted.contains(breaker);
      if (!sent && breaker != refusing) {
        sent = breaker.admit(now, () -> store.gets(key));
        if (sent) {
          admitted.add(breaker);
        }
      }
      if (!sent) {
        refusing = breaker;
        refused.add(key);
        stats.increment(Counter.STORE_REJECTED);
      } else {
        sentKeys.put(key, breaker);
      }
    }
    if (refused.isEmpty()) {
      return record(store.getsAll(keys), sentKeys, sentIn);
    }
    if (sentKeys.isEmpty() && unrouted.isEmpty()) {
      return CompletableFuture.failedFuture(refusing.refusal());
    }
    List<String> sent = new ArrayList<>(sentKeys.keySet());
    sent.addAll(unrouted);
    StoreException refusal = refusing.refusal();
    return record(store.getsAll(sent), sentKeys, sentIn).handle((found, failure) -> {
      Map<String, StoreItem> read = found;
      Set<String> failed = new LinkedHashSet<>(refused);
      if (failure != null) {
        Throwable cause = Failures.unwrap(failure);
        if (!(cause instanceof PartialReadException partial)) {
          throw cause instanceof StoreException store ? store
              : new StoreException("getsAll failed", cause);
        }
        read = partial.found();
        failed.addAll(partial.failedKeys());
      }
      throw new PartialReadException("getsAll failed for " + failed.size() + " of " + keys.size()
          + " keys: " + refusal.getMessage(), refusal, read, failed);
    });
  }

  /** Tells each node's breaker how its part of a bulk read went, and returns the read. */
  private CompletableFuture<Map<String, StoreItem>> record(
      CompletableFuture<Map<String, StoreItem>> read, Map<String, Breaker> sentKeys,
      long sentIn) {
    return reported(read, failure -> report(sentKeys, sentIn, failure));
  }

  /**
   * Tells the breaker of each key sent in one bulk read, sent in {@code sentIn}, how its node's
   * part went: failed if any of its keys did (every key, for a failure that is not partial). The
   * one breaker of a store that names no nodes stands for all of its servers: a read that failed
   * for some of the keys sent only, the store answering for the others, is its success
   * (docs/failures.md).
   */
  private void report(Map<String, Breaker> sentKeys, long sentIn, Throwable failure) {
    Set<Breaker> failedNodes = new HashSet<>();
    if (failure != null && Failures.unwrap(failure) instanceof PartialReadException partial) {
      Collection<String> failedKeys = partial.failedKeys();
      boolean answered = whole != null
          && sentKeys.keySet().stream().anyMatch(key -> !failedKeys.contains(key));
      for (String key : failedKeys) {
        Breaker breaker = sentKeys.get(key);
        if (breaker != null && !(breaker == whole && answered)) {
          failedNodes.add(breaker);
        }
      }
    } else if (failure != null) {
      failedNodes.addAll(sentKeys.values());
    }
    for (Breaker breaker : new HashSet<>(sentKeys.values())) {
      breaker.completed(sentIn, failedNodes.contains(breaker) ? failure : null);
    }
  }

  @Override
  public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
    return guarded(key, () -> store.add(key, value, exptime));
  }

  @Override
  public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
    return guarded(key, () -> store.set(key, value, exptime));
  }

  @Override
  public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
      int exptime) {
    return guarded(key, () -> store.cas(key, casToken, value, exptime));
  }

  @Override
  public CompletableFuture<Boolean> delete(String key) {
    return guarded(key, () -> store.delete(key));
  }

  @Override
  public CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
    return guarded(key, () -> store.incr(key, delta, initial, exptime));
  }

  // flushPrefix, sent to every node, is forwarded unguarded (DelegatingStore): a node whose
  // breaker is open fails it as the client does.

  /** The store's nodes, each node's own store guarded by that node's breaker. */
  @Override
  public Optional<StoreNodes> nodes() {
    Routing current = routing();
    return current == null ? Optional.empty() : Optional.of(current.guarded);
  }

  // -------------------------------------------------------------------------------------------
  // One node

  /** A node snapshot whose per-node stores go through the nodes' breakers. */
  private record GuardedNodes(StoreNodes nodes, CacheStore[] pinned) implements StoreNodes {
    @Override
    public List<String> ids() {
      return nodes.ids();
    }

    @Override
    public int nodeOf(String key) {
      return nodes.nodeOf(key);
    }

    @Override
    public CacheStore on(int node) {
      if (node < 0 || node >= pinned.length) {
        throw new IndexOutOfBoundsException(node);
      }
      return pinned[node];
    }
  }

  /** One node's store (the near cache's log on it) behind that node's breaker. */
  private final class Pinned implements CacheStore {
    private final CacheStore node;
    private final Breaker breaker;

    Pinned(CacheStore node, Breaker breaker) {
      this.node = node;
      this.breaker = breaker;
    }

    /** {@code operation} on {@code key} through the breaker, which probes with a read of it. */
    private <T> CompletableFuture<T> keyed(String key, Supplier<CompletableFuture<T>> operation) {
      return guarded(breaker, operation, () -> node.gets(key));
    }

    @Override
    public CompletableFuture<Optional<StoreItem>> gets(String key) {
      return keyed(key, () -> node.gets(key));
    }

    @Override
    public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
      return keys.isEmpty() ? node.getsAll(keys)
          : guarded(breaker, () -> node.getsAll(keys), () -> node.gets(keys.iterator().next()));
    }

    @Override
    public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
      return keyed(key, () -> node.add(key, value, exptime));
    }

    @Override
    public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
      return keyed(key, () -> node.set(key, value, exptime));
    }

    @Override
    public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
        int exptime) {
      return keyed(key, () -> node.cas(key, casToken, value, exptime));
    }

    @Override
    public CompletableFuture<Boolean> delete(String key) {
      return keyed(key, () -> node.delete(key));
    }

    @Override
    public CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
      return keyed(key, () -> node.incr(key, delta, initial, exptime));
    }

    @Override
    public boolean hasCounters() {
      return node.hasCounters();
    }

    @Override
    public boolean isCompletionThread(Thread thread) {
      return node.isCompletionThread(thread);
    }

    @Override
    public int maxKeyLength() {
      return node.maxKeyLength();
    }
  }

  /**
   * One node's breaker. Closed: operations are sent, failures in a row counted. Open: operations
   * fail at once, except one probe per probe interval. Any success closes it.
   */
  private static final class Breaker {
    private final Health health;
    private final String node;
    private final String refusalMessage;
    /** Read without the lock on every operation; written under it. */
    private volatile boolean open;
    /** Failures in a row; read without the lock by a success, written under it. */
    private volatile int failures;
    /** The value of {@code closes} when it last closed; guarded by this. */
    private long closedAt;
    /** When the next probe may go, ticker nanos; guarded by this. */
    private long nextProbe;

    Breaker(Health health, String node) {
      this.health = health;
      this.node = node;
      this.refusalMessage = "store node " + node + " did not answer its last " + FAILURES_TO_OPEN
          + " operations; failed at once, not sent, until it answers a probe";
    }

    /**
     * Whether an operation starting now is sent, not failed at once; when the breaker is open
     * and its probe due, sends {@code probe} (its answer is the breaker's).
     */
    boolean admit(long now, Supplier<? extends CompletableFuture<?>> probe) {
      if (!open) {
        return true;
      }
      long sentIn = health.closes.get();
      synchronized (this) {
        if (!open) {
          return true;
        }
        if (now - nextProbe < 0) {
          return false;
        }
        nextProbe = now + health.probeNanos;
      }
      CompletableFuture<?> sent;
      try {
        sent = probe.get();
      } catch (RuntimeException thrown) { // a store that throws instead of failing its future
        sent = CompletableFuture.failedFuture(thrown);
      }
      sent.handle((value, failure) -> {
        completed(sentIn, failure);
        return null;
      });
      return false;
    }

    /** An operation sent in {@code sentIn} completed, with {@code failure} or without. */
    void completed(long sentIn, Throwable failure) {
      boolean storeFailure = failure != null && Failures.unwrap(failure) instanceof StoreException;
      if (!storeFailure) {
        if (failure == null && (open || failures != 0)) {
          closed();
        }
        return; // a cancelled operation says nothing about the node
      }
      synchronized (this) {
        if (sentIn < closedAt) {
          return;
        }
        if (open) { // a probe failed: the next one an interval from now, one probe at a time
          long next = health.ticker.read() + health.probeNanos;
          if (next - nextProbe > 0) {
            nextProbe = next;
          }
          return;
        }
        if (failures++ == 0) {
          health.troubled.incrementAndGet();
        }
        if (failures >= FAILURES_TO_OPEN) {
          open = true;
          nextProbe = health.ticker.read() + health.probeNanos;
          Log.LOGGER.warn("Store node {} failed {} operations in a row (last: {}); its operations"
              + " fail at once, so reads of its keys load without waiting, until it answers a"
              + " probe (a read the cache sends every {} ms)", node, failures,
              Failures.unwrap(failure).getMessage(), health.probeNanos / 1_000_000);
        }
      }
    }

    private void closed() {
      boolean reopened;
      synchronized (this) {
        reopened = open;
        if (failures != 0) {
          failures = 0;
          health.troubled.decrementAndGet();
        }
        if (open) {
          open = false;
          closedAt = health.closes.incrementAndGet();
        }
      }
      if (reopened) {
        Log.LOGGER.info("Store node {} answers again; its operations are sent again", node);
      }
    }

    StoreException refusal() {
      return new Refusal(refusalMessage);
    }
  }

  /**
   * The breakers of one store's nodes and what they count, shared by every cache over that store
   * instance with the same ticker and probe interval (each Hibernate region and each Spring cache
   * is a cache): so a node that stops answering costs the application its first two timeouts
   * once, not once per cache, and is logged once. Holds the store weakly (the registry's key),
   * and the registry holds it weakly: the caches that use it keep it. Thread-safe.
   */
  private static final class Health {
    /**
     * Every store's, by store, each held weakly: a health no cache uses any more (its caches
     * closed and collected, say each with a ticker of its own) is dropped. Guarded by itself.
     */
    private static final Map<CacheStore, List<WeakReference<Health>>> OF_STORES =
        new WeakHashMap<>();

    private final WeakReference<CacheStore> store;
    private final Ticker ticker;
    private final long probeNanos;
    /**
     * Every breaker made so far, by node id in the order first seen; the whole store's under
     * {@link #WHOLE_STORE}. Guarded by itself: changed only when the node list changes.
     */
    private final Map<String, Breaker> byId = new LinkedHashMap<>();
    /**
     * The breakers that are open or count a failure: while none, operations are sent unrouted.
     */
    private final AtomicInteger troubled = new AtomicInteger();
    /**
     * How many times a breaker closed after it was open. An operation is sent in the value it
     * read before it was sent; a failure of one sent before its breaker last closed does not
     * count.
     */
    private final AtomicLong closes = new AtomicLong();

    private Health(CacheStore store, Ticker ticker, long probeNanos) {
      this.store = new WeakReference<>(store);
      this.ticker = ticker;
      this.probeNanos = probeNanos;
    }

    /** The health of {@code store}'s nodes, made on the first call for that store. */
    static Health of(CacheStore store, Ticker ticker, long probeNanos) {
      synchronized (OF_STORES) {
        List<WeakReference<Health>> known =
            OF_STORES.computeIfAbsent(store, s -> new ArrayList<>(1));
        for (Iterator<WeakReference<Health>> each = known.iterator(); each.hasNext(); ) {
          Health health = each.next().get();
          if (health == null) {
            each.remove();
          } else if (health.store.get() == store && health.ticker == ticker // the same store,
              && health.probeNanos == probeNanos) { // not an equal one
            return health;
          }
        }
        Health made = new Health(store, ticker, probeNanos);
        known.add(new WeakReference<>(made));
        return made;
      }
    }

    /** How many healths of {@code store} the registry holds now, pruning those collected. */
    static int count(CacheStore store) {
      synchronized (OF_STORES) {
        List<WeakReference<Health>> known = OF_STORES.get(store);
        if (known == null) {
          return 0;
        }
        known.removeIf(health -> health.get() == null);
        return known.size();
      }
    }

    /** The breaker of the node {@code id}, made on first use. */
    Breaker breaker(String id) {
      synchronized (byId) {
        return byId.computeIfAbsent(id, node -> new Breaker(this, node));
      }
    }
  }

  /**
   * An operation an open breaker failed at once. Without a stack trace, which every refused
   * operation would otherwise pay for with a walk through its caller's frames (Hibernate's are
   * deep); its message says where it came from.
   */
  private static final class Refusal extends StoreException {
    private static final long serialVersionUID = 1L;

    Refusal(String message) {
      super(message);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }
}
