package io.sustainablecache.internal;

import io.sustainablecache.CacheObserver.Kind;
import io.sustainablecache.Scheduler;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.Ticker;
import io.sustainablecache.WriteFence;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;

/**
 * Write fences around database transactions ({@link SustainableCache#fence}, {@link WriteFence}):
 * placing one, marking it committing before the commit, and replacing it after the transaction
 * ended. The protocol is in {@code docs/design.md}, "Writes inside database transactions".
 * Thread-safe.
 *
 * <p>A fence is an envelope of its own kind under the key ({@link Holds}): its holders, each with
 * an id and its own end ({@code fenceTimeout} after that writer placed it), whether more than one
 * writer ever held it, and its <em>prior</em>, the value or absence it replaced. Placing reads the
 * key and swaps the fence in with {@code cas} (or {@code add}): a writer joins a fence that stands
 * (one more holder, its own end; the others' ends unchanged), or starts one that carries what the
 * key held as its prior. Until a holder commits, the prior is the database's committed data, and
 * reads answer with it; {@link Fence#beforeCommit} marks the fence committing, after which reads
 * answer with the prior only within {@link #COMMIT_WINDOW_MILLIS} of the mark (the commit and
 * the release follow at once), and any later change of the fence drops it: at most one committing
 * window per fence, and no change ever brings a prior back.
 * Like a tombstone, a fence changes the item's token, so no load that read the key before can
 * write. Every change of a fence drops the holders whose end has passed by this writer's clock
 * (writers that died: a live one completes before its end, since {@code fenceTimeout} exceeds
 * the longest transaction), so a dead writer never holds the key longer than its own end,
 * whatever other writers do. Releasing reads the key again: the fence loses this holder, or, with
 * its last live holder, becomes a tombstone (or the committed value, if it was never shared); a
 * fence this writer no longer holds (its end passed and another stands) is left to its holders,
 * marked shared and without its prior after a commit; anything else after a commit is replaced
 * by a tombstone (the fence expired: loads may have cached what the transaction changed).
 *
 * <p>Why this class is over 700 lines: about a fifth is documentation, and it holds one
 * protocol whose parts share this instance's state of a key's holds (the holds it ended, its
 * owed releases and their retries): the fence's envelope ({@link Holds}, its format and the
 * rules that drop ended holders), placing, and each writer's {@link Fence} (before-commit,
 * release, payment of what it owes). Split, each part would reach into the others' maps, and
 * the argument in {@code docs/design.md} would be spread over three files.
 */
final class WriteFences<V> {

  /**
   * How long after a fence was marked committing ({@link Fence#beforeCommit}) reads still answer
   * with its prior, milliseconds, by the fence's time (the mark's): the writer's commit and its
   * release (two round trips) normally land well within it, and until the writer's call returns
   * a read is concurrent with the write. It is also how long a release that fails, or never comes
   * (a writer killed after its commit), leaves the prior readable (plus the clock skew between
   * the writer's and the reader's hosts); after it, reads load, fenced, until the fence goes.
   */
  static final long COMMIT_WINDOW_MILLIS = 100;

  /** Read-and-swap attempts before placing over a key that keeps changing. */
  private static final int ATTEMPTS = 4;

  /** The first retry's delay of a release that failed on the store; doubled up to the cap. */
  private static final long FIRST_RETRY_MILLIS = 100;

  private static final long MAX_RETRY_MILLIS = 5_000;

  /**
   * Whether new fences carry a prior; off only to measure the fence of the release before (every
   * read under a fence loads): the lab's {@code --tx} comparison. Not a supported setting.
   */
  static final boolean CARRY_PRIOR =
      !Boolean.getBoolean("io.sustainablecache.internal.fenceWithoutPrior");

  /** How many holds this JVM took: part of every holder's id. */
  private static final AtomicLong HOLDS = new AtomicLong();

  private final CacheStore store;
  /** What close() waits for: a release counts, retries included, until it is done or given up. */
  private final PendingWrites pending;
  private final Keys keys;
  private final InstantSource clock;
  private final Ticker ticker;
  private final Scheduler scheduler;
  private final RandomGenerator random;
  private final EntryWriter<V> writer;
  private final CallerWrites<V> writes;
  private final KeyRegistry registry;
  private final FleetLease<V> lease;
  private final StatsCounter stats;
  private final long fenceMillis;
  /** How far in the future a holder's end may lie before it is taken for planted. */
  private final long plantedMillis;
  private final long waitNanos;
  private final String cacheName;
  private final RateLimitedLog releaseLog;
  /** The spans of placing, {@code beforeCommit()} and releasing, on the writer's thread. */
  private final Spans spans;
  /**
   * This JVM's holds whose transaction ended ({@code committed()}, {@code rolledBack()}) and
   * whose release did not land (it is retried on its back-off): per store key, the holder's id
   * and its {@link Ended} release. The next change of the key's fence from this JVM (a join, an
   * owed invalidation's payment) drops them, as their releases would, so that a hold whose release
   * failed during an outage, or whose placement landed after it was given up, does not keep the
   * key fenced (every read a load, nothing cached) until its back-off comes round after the
   * store answers again.
   */
  private final ConcurrentHashMap<String, ConcurrentHashMap<Long, Ended>> ended =
      new ConcurrentHashMap<>();

  /**
   * The releases whose retry waits on its back-off: {@link #close()} runs each at once instead
   * (a store that failed once may answer now), and a release that fails after {@code close()}
   * gives up, so that {@code close()} waits for one more round trip, not for a back-off that a
   * dead store would stretch to {@code fenceTimeout}.
   */
  private final Set<Retry> retries = ConcurrentHashMap.newKeySet();
  private volatile boolean closing;

  WriteFences(CacheConfig<V> config, PendingWrites pending, Keys keys, EntryWriter<V> writer,
      CallerWrites<V> writes, KeyRegistry registry, FleetLease<V> lease, StatsCounter stats,
      long waitNanos, Spans spans) {
    this.spans = spans;
    this.store = config.store();
    this.pending = pending;
    this.keys = keys;
    this.clock = config.clock();
    this.ticker = config.ticker();
    this.scheduler = config.scheduler();
    this.random = config.random();
    this.writer = writer;
    this.writes = writes;
    this.registry = registry;
    this.lease = lease;
    this.stats = stats;
    this.fenceMillis = config.fenceTimeout().toMillis();
    this.plantedMillis = fenceMillis + config.maxClockSkew().toMillis();
    this.waitNanos = waitNanos;
    this.cacheName = config.namespace().isEmpty() ? "(no namespace)" : config.namespace();
    this.releaseLog = new RateLimitedLog(Log.LOGGER, config.ticker());
  }

  /** Places the fence of {@code key} and waits for it: see {@link SustainableCache#fence}. */
  WriteFence<V> fence(String key) {
    return spans.around(Kind.FENCE, key, () -> hold(key),
        fence -> fence.unprotected ? "unprotected" : "placed");
  }

  /** Places the fence of {@code key}: this writer's hold on it (its {@code unprotected} said). */
  private Fence hold(String key) {
    String storeKey = keys.storeKey(key);
    requireMayWait("fence(" + key + ")");
    registry.detach(storeKey);
    long startTick = ticker.read();
    long holder = newId();
    CompletableFuture<Boolean> placed =
        writes.landed(storeKey, place(storeKey, holder, 0, null), "fence").thenCompose(done -> {
          // loads this JVM started while the fence was on its way read the key before it landed
          registry.detach(storeKey);
          return writes.recorded(storeKey, "fence").thenApply(recorded -> done);
        });
    CompletableFuture<?> released = lease.onInvalidate(storeKey);
    boolean unplaced = false;
    try {
      writes.finish(storeKey, placed, "fence", null);
    } catch (StoreException e) {
      // the store failed or did not answer: by default the transaction goes on, and its commit
      // owes the key's invalidation (CallerWrites#owe); failing closed, it does not begin
      try {
        writes.refuseUnlessOwing(storeKey, "fence", e);
      } catch (StoreException refused) {
        // the placement may land all the same (sent before a hang): released as a rollback,
        // in the background, so that this hold ends as a caller's would (see #ended)
        new Fence(key, storeKey, holder, startTick, true).rolledBack();
        throw refused;
      }
      unplaced = true;
    }
    writes.awaitQuietly(released);
    stats.increment(Counter.FENCE);
    return new Fence(key, storeKey, holder, startTick, unplaced);
  }

  /**
   * Pays an invalidation this instance owes the store ({@link OwedInvalidations.Payer}): reads
   * the key through {@code direct} (the store past the gate) and makes sure no read can be
   * answered with what it held before: a fence that stands keeps standing, without its prior (its
   * holders release it after their commits), less this JVM's holds whose transactions ended and
   * whose releases did not land ({@link #ended}; with none left, a tombstone); anything else is replaced by a tombstone ({@code
   * cas}, or {@code add} over nothing; after {@link #ATTEMPTS} lost swaps it fails, and
   * the drain tries again). Then this JVM's loads of the key are voided and the change recorded in the near
   * cache's log; completes when all that landed, fails if any step failed.
   */
  CompletableFuture<Void> payOwed(CacheStore direct, String storeKey) {
    return payOwed(direct, storeKey, 0).thenCompose(changed -> {
      registry.detach(storeKey);
      return writes.recorded(storeKey, "an owed invalidation");
    });
  }

  private CompletableFuture<Boolean> payOwed(CacheStore direct, String storeKey, int attempt) {
    long now = clock.millis();
    byte[] tombstone = writer.tombstone(storeKey, now);
    int tombstoneExptime = writer.tombstoneExptime(now);
    if (attempt == ATTEMPTS) { // the key keeps changing: someone writes it; the next drain
      return CompletableFuture.failedFuture(new StoreException("key " + storeKey + " kept"
          + " changing while its owed invalidation was paid (" + ATTEMPTS + " attempts)"));
    }
    return direct.gets(storeKey).thenCompose(found -> {
      StoreItem item = found.orElse(null);
      byte[] fence = item == null ? null : fenceOf(item);
      CompletableFuture<Boolean> paid;
      if (fence != null) {
        Holds standing = Holds.of(fence);
        Holds holds = withoutEnded(storeKey, standing);
        if (holds != standing) { // this JVM's ended holds: released here, as their releases would
          Holds left = holds.live(now, plantedMillis).withoutPrior().notCommitting();
          paid = (left.isEmpty()
              ? stored(direct.cas(storeKey, item.casToken(), tombstone, tombstoneExptime))
              : stored(direct.cas(storeKey, item.casToken(), encode(storeKey, now, left),
                  exptime(left.until(), now))))
              .thenApply(done -> released(storeKey, standing, holds, done));
        } else {
          paid = holds.prior() == null ? CompletableFuture.completedFuture(true)
              : stored(direct.cas(storeKey, item.casToken(),
                  encode(storeKey, now, holds.withoutPrior()), exptime(holds.until(), now)));
        }
      } else {
        paid = item == null ? direct.add(storeKey, tombstone, tombstoneExptime)
            : stored(direct.cas(storeKey, item.casToken(), tombstone, tombstoneExptime));
      }
      return paid.thenCompose(done -> done ? CompletableFuture.completedFuture(true)
          : payOwed(direct, storeKey, attempt + 1));
    });
  }

  private static CompletableFuture<Boolean> stored(CompletableFuture<CasOutcome> cas) {
    return cas.thenApply(outcome -> outcome == CasOutcome.STORED);
  }

  private void requireMayWait(String call) {
    if (!Waiting.allowed(store)) {
      throw new IllegalStateException(call + " waits for the store, and this thread ("
          + Thread.currentThread().getName() + ") delivers the store's answers: fence the key"
          + " from the transaction's own thread");
    }
  }

  /**
   * Reads the key and swaps a fence held by {@code holder} in: joins the fence that stands, or
   * starts one carrying what the key held as its prior; after {@link #ATTEMPTS} reads that lost
   * their swap, writes one unconditionally, shared and without a prior (what it replaces is not
   * known): the last fence read with this holder added, so that its holders still hold it (one
   * that left meanwhile is then held until its end, the safe side), or a new one.
   *
   * @param lastSeen the fence the previous attempt read, or {@code null}
   */
  private CompletableFuture<Boolean> place(String storeKey, long holder, int attempt,
      Holds lastSeen) {
    if (attempt == ATTEMPTS) {
      long now = clock.millis();
      Holds set = (lastSeen == null ? Holds.NONE : lastSeen.live(now, plantedMillis))
          .with(holder, now + fenceMillis).withoutPrior();
      return store.set(storeKey, encode(storeKey, now, set), exptime(set.until(), now))
          .thenApply(done -> true);
    }
    return store.gets(storeKey).thenCompose(found -> {
      StoreItem item = found.orElse(null);
      byte[] standing = item == null ? null : fenceOf(item);
      long at = clock.millis();
      if (standing != null) {
        Holds read = Holds.of(standing);
        Holds mine = withoutEnded(storeKey, read); // this JVM's ended holds leave, released
        Holds held = (mine != read && committedAmong(storeKey, read, mine)
            ? mine.withoutPrior() : mine).live(at, plantedMillis);
        Holds joined = held.with(holder, at + fenceMillis);
        CompletableFuture<CasOutcome> cas = store.cas(storeKey, item.casToken(),
            encode(storeKey, at, joined), exptime(joined.until(), at));
        if (mine != read) {
          cas = cas.thenApply(outcome -> {
            released(storeKey, read, mine, outcome == CasOutcome.STORED);
            return outcome;
          });
        }
        return swapped(cas, storeKey, holder, attempt, held);
      }
      Holds fresh = Holds.first(holder, at + fenceMillis,
          item == null || !CARRY_PRIOR ? null : priorOf(item));
      byte[] bytes = encode(storeKey, at, fresh);
      int exptime = exptime(fresh.until(), at);
      if (item == null) {
        return store.add(storeKey, bytes, exptime).thenCompose(added -> added
            ? CompletableFuture.completedFuture(true) : place(storeKey, holder, attempt + 1, null));
      }
      return swapped(store.cas(storeKey, item.casToken(), bytes, exptime), storeKey, holder,
          attempt, null);
    });
  }

  private CompletableFuture<Boolean> swapped(CompletableFuture<CasOutcome> cas, String storeKey,
      long holder, int attempt, Holds standing) {
    return cas.thenCompose(outcome -> outcome == CasOutcome.STORED
        ? CompletableFuture.completedFuture(true)
        : place(storeKey, holder, attempt + 1, standing));
  }

  /**
   * {@code holds} without this JVM's ended holds of the key ({@link #ended}); the same instance
   * if it has none.
   */
  private Holds withoutEnded(String storeKey, Holds holds) {
    Map<Long, Ended> mine = ended.get(storeKey);
    if (mine == null || mine.isEmpty()) {
      return holds;
    }
    return holds.filterIds(id -> !mine.containsKey(id));
  }

  /** Whether a hold in {@code read} but not in {@code left} is an ended hold that committed. */
  private boolean committedAmong(String storeKey, Holds read, Holds left) {
    Map<Long, Ended> mine = ended.get(storeKey);
    if (mine == null) {
      return true; // forgotten meanwhile: the safe side
    }
    for (long id : read.ids()) {
      Ended hold = mine.get(id);
      if (!left.holds(id) && (hold == null || hold.committed())) {
        return true;
      }
    }
    return false;
  }

  /**
   * After a swap that left out the ended holds of {@code read} that {@code left} lacks: if it
   * stored, they are released, and their retries end. Returns {@code stored}.
   */
  private boolean released(String storeKey, Holds read, Holds left, boolean stored) {
    if (stored) {
      for (long id : read.ids()) {
        if (!left.holds(id)) {
          forgetEnded(storeKey, id);
        }
      }
      registry.detach(storeKey);
    }
    return stored;
  }

  /**
   * The cache is closing: every release waiting for its retry is retried now, and a release that
   * fails from now on is not retried (its fence stands until this writer's hold ends, at most
   * {@code fenceTimeout} after it was placed, as after a release given up). Idempotent.
   */
  void close() {
    closing = true;
    retries.forEach(Retry::run);
  }

  /** A release's retry, run once: by the scheduler after its back-off, or by {@link #close()}. */
  private final class Retry implements Runnable {
    private final AtomicBoolean claimed = new AtomicBoolean();
    private final Runnable attempt;

    Retry(Runnable attempt) {
      this.attempt = attempt;
    }

    @Override
    public void run() {
      if (claimed.compareAndSet(false, true)) {
        retries.remove(this);
        attempt.run();
      }
    }
  }

  /** Forgets an ended hold, released: its retries end, and {@code close()} no longer waits. */
  private void forgetEnded(String storeKey, long holder) {
    Ended[] forgotten = new Ended[1];
    ended.computeIfPresent(storeKey, (k, holds) -> {
      forgotten[0] = holds.remove(holder);
      return holds.isEmpty() ? null : holds;
    });
    if (forgotten[0] != null) {
      forgotten[0].done().complete(null);
    }
  }

  private boolean isEnded(String storeKey, long holder) {
    Map<Long, Ended> holds = ended.get(storeKey);
    return holds != null && holds.containsKey(holder);
  }

  private byte[] encode(String storeKey, long now, Holds holds) {
    return writer.fence(storeKey, now, holds.shared(), holds.committing(), holds.ids(),
        holds.untils(), holds.prior());
  }

  /**
   * A new holder's id: the random source's, mixed with a count of this JVM's holds so that ids
   * differ whatever the source (an injected one may repeat itself). Never 0.
   */
  private long newId() {
    long id = random.nextLong() ^ (HOLDS.incrementAndGet() * 0x9E3779B97F4A7C15L);
    return id == 0 ? 1 : id;
  }

  /** The fence an item holds, or {@code null} if it holds none (foreign bytes included). */
  private byte[] fenceOf(StoreItem item) {
    byte[] bytes = item.value();
    return writer.seal().isValid(bytes) && Envelope.kind(bytes) == Envelope.KIND_FENCE
        ? bytes : null;
  }

  /**
   * What a new fence carries as its prior: the item if it is a value or an absence this version
   * reads (whether this cache would answer with it is judged when it is read), else nothing.
   */
  private byte[] priorOf(StoreItem item) {
    byte[] bytes = item.value();
    if (!writer.seal().isValid(bytes)) {
      return null;
    }
    byte kind = Envelope.kind(bytes);
    return kind == Envelope.KIND_VALUE || kind == Envelope.KIND_ABSENT ? bytes : null;
  }

  private static int exptime(long untilMillis, long nowMillis) {
    return Exptime.of(Math.max(0, untilMillis - nowMillis), nowMillis);
  }

  /**
   * A fence's content: its holders (ids and ends, epoch ms by their writers' clocks), whether more
   * than one writer ever held it, and its prior ({@code null}: none). Immutable.
   */
  record Holds(boolean shared, boolean committing, long[] ids, long[] untils, byte[] prior) {

    static final Holds NONE = new Holds(false, false, new long[0], new long[0], null);

    static Holds of(byte[] fence) {
      int n = Envelope.fenceHolders(fence);
      long[] ids = new long[n];
      long[] untils = new long[n];
      for (int i = 0; i < n; i++) {
        ids[i] = Envelope.fenceHolderId(fence, i);
        untils[i] = Envelope.fenceHolderUntil(fence, i);
      }
      return new Holds(Envelope.fenceShared(fence), Envelope.fenceCommitting(fence), ids, untils,
          Envelope.fencePrior(fence));
    }

    static Holds first(long id, long until, byte[] prior) {
      return new Holds(false, false, new long[] {id}, new long[] {until}, prior);
    }

    boolean isEmpty() {
      return ids.length == 0;
    }

    boolean holds(long id) {
      for (long held : ids) {
        if (held == id) {
          return true;
        }
      }
      return false;
    }

    /** The latest end, epoch ms. */
    long until() {
      long until = 0;
      for (long end : untils) {
        until = Math.max(until, end);
      }
      return until;
    }

    /**
     * The holders still alive at {@code now}: an end that passed is a writer that died, one more
     * than {@code plantedMillis} ahead a planted claim (read as a miss by every reader).
     */
    Holds live(long now, long plantedMillis) {
      return filter(i -> untils[i] >= now && untils[i] - now <= plantedMillis);
    }

    Holds without(long id) {
      return filter(i -> ids[i] != id);
    }

    /** The holders whose id passes {@code keep}; this instance if all do. */
    Holds filterIds(java.util.function.LongPredicate keep) {
      return filter(i -> keep.test(ids[i]));
    }

    /**
     * One holder more, and shared (a fence that stands had holders, alive or not, whose commits
     * may come before or after this one's). A fence that records the most holders it can (only
     * planted ones do: no key has 255 transactions open at once) first loses the one whose end
     * comes first; should that be a live writer, it is still protected while the fence stands,
     * and its release finds a fence it does not hold, which it leaves to its holders. Not
     * committing: the new holder's transaction has just begun; and without the prior if the
     * fence was committing (its committer may have committed).
     */
    Holds with(long id, long until) {
      if (holds(id)) { // a swap that landed, though its answer was lost: this hold, renewed
        return without(id).with(id, until);
      }
      if (ids.length == Envelope.MAX_FENCE_HOLDERS) {
        int first = 0;
        for (int i = 1; i < untils.length; i++) {
          first = untils[i] < untils[first] ? i : first;
        }
        int dropped = first;
        return filter(i -> i != dropped).with(id, until);
      }
      int n = ids.length;
      long[] moreIds = java.util.Arrays.copyOf(ids, n + 1);
      long[] moreUntils = java.util.Arrays.copyOf(untils, n + 1);
      moreIds[n] = id;
      moreUntils[n] = until;
      return new Holds(true, false, moreIds, moreUntils, committing ? null : prior);
    }

    Holds withoutPrior() {
      return prior == null ? this : new Holds(shared, committing, ids, untils, null);
    }

    Holds sharedWithoutPrior() {
      return new Holds(true, committing, ids, untils, null);
    }

    /** Marked committing, its prior kept for the commit window: {@code beforeCommit()}. */
    Holds marked() {
      return new Holds(shared, true, ids, untils, prior);
    }

    /**
     * Not marked committing: what a release leaves to the other holders (whose transactions may
     * still be open), without the prior if it was marked (its committer may have committed).
     */
    Holds notCommitting() {
      return committing ? new Holds(shared, false, ids, untils, null) : this;
    }

    private Holds filter(java.util.function.IntPredicate keep) {
      int kept = 0;
      long[] keptIds = new long[ids.length];
      long[] keptUntils = new long[ids.length];
      for (int i = 0; i < ids.length; i++) {
        if (keep.test(i)) {
          keptIds[kept] = ids[i];
          keptUntils[kept++] = untils[i];
        }
      }
      return kept == ids.length ? this : new Holds(shared, committing,
          java.util.Arrays.copyOf(keptIds, kept), java.util.Arrays.copyOf(keptUntils, kept),
          prior);
    }
  }

  /** A hold whose transaction ended and whose release is retried: how, and its completion. */
  private record Ended(boolean committed, CompletableFuture<Void> done) {}

  /** How a transaction ended. */
  private enum Outcome { COMMITTED, ROLLED_BACK }

  /** One writer's hold on a key's fence. */
  private final class Fence implements WriteFence<V> {

    private final String key;
    private final String storeKey;
    /** This writer's id among the fence's holders. */
    private final long holder;
    /** When the fence was placed, on the ticker: its release is retried until it expired. */
    private final long placedTick;
    /**
     * Whether the fence may not stand: its placing failed, or its prior may still be answered
     * ({@link #beforeCommit} failed). Then a commit owes the key's invalidation.
     */
    private volatile boolean unprotected;
    private final AtomicBoolean completed = new AtomicBoolean();

    Fence(String key, String storeKey, long holder, long placedTick, boolean unplaced) {
      this.key = key;
      this.storeKey = storeKey;
      this.holder = holder;
      this.placedTick = placedTick;
      this.unprotected = unplaced;
    }

    @Override
    public String key() {
      return key;
    }

    @Override
    public void beforeCommit() {
      spans.around(Kind.FENCE_BEFORE_COMMIT, key, () -> {
        markCommitting();
        return this;
      }, fence -> fence.unprotected ? "unprotected" : "success");
    }

    private void markCommitting() {
      if (completed.get()) {
        throw new IllegalStateException("the fence of " + key + " was completed already");
      }
      requireMayWait("beforeCommit() of the fence of " + key);
      if (unprotected) {
        return; // never placed: the commit owes the key's invalidation
      }
      Boolean marked = Waiting.await(mark(0), waitNanos, null, (how, failure) -> {
        if (how == Waiting.Unfinished.INTERRUPTED) {
          return new StoreException("interrupted while the fence of " + key + " was marked"
              + " committing", failure);
        }
        stats.increment(Counter.STORE_ERROR);
        writes.refuseUnlessOwing(storeKey, "beforeCommit", new StoreException("the write fence"
            + " of key " + key + " could not be marked committing before the commit, so reads"
            + " could still be answered with the value it replaced after the commit; do not"
            + " commit",
            Failures.unwrap(failure)));
        unprotected = true; // the commit owes the key's invalidation
        return null;
      });
      if (Boolean.FALSE.equals(marked)) {
        throw new StoreException("the write fence of key " + key + " kept changing while it was"
            + " marked committing (" + ATTEMPTS + " attempts)");
      }
    }

    /**
     * Reads the key and, if its fence carries a prior, marks it committing ({@link Holds#marked}:
     * readers answer with the prior for {@link #COMMIT_WINDOW_MILLIS} from now), if this writer
     * holds it and no holder marked it before; otherwise swaps in the fence without its prior (a
     * holder marked it already, and may have committed; or this writer's hold ended, and its
     * commit changes the data the prior carries). {@code true} once no fence with a prior stands
     * but this writer's mark; a fence without a prior needs no mark (no change adds one);
     * {@code false} if every attempt lost its swap.
     */
    private CompletableFuture<Boolean> mark(int attempt) {
      if (attempt == ATTEMPTS) {
        return CompletableFuture.completedFuture(false);
      }
      return store.gets(storeKey).thenCompose(found -> {
        StoreItem item = found.orElse(null);
        byte[] fence = item == null ? null : fenceOf(item);
        Holds holds = fence == null ? null : Holds.of(fence);
        if (holds == null || holds.prior() == null) {
          return CompletableFuture.completedFuture(true);
        }
        long now = clock.millis();
        Holds next = holds.holds(holder) && !holds.committing() ? holds.marked()
            : holds.withoutPrior();
        return stored(store.cas(storeKey, item.casToken(), encode(storeKey, now, next),
            exptime(holds.until(), now)))
            .thenCompose(done -> done ? CompletableFuture.completedFuture(true)
                : mark(attempt + 1));
      });
    }

    @Override
    public void committed() {
      complete(Outcome.COMMITTED, null);
    }

    @Override
    public void committed(V value) {
      if (value == null) {
        throw new NullPointerException("value");
      }
      byte[] bytes;
      try {
        bytes = writer.encodePut(storeKey, value, clock.millis());
      } catch (RuntimeException unencodable) { // too large, or the codec failed
        complete(Outcome.COMMITTED, null);
        throw unencodable;
      }
      complete(Outcome.COMMITTED, bytes);
    }

    @Override
    public void rolledBack() {
      complete(Outcome.ROLLED_BACK, null);
    }

    private void complete(Outcome outcome, byte[] value) {
      spans.around(Kind.FENCE_RELEASE, key, () -> {
        end(outcome, value);
        return outcome;
      }, ended -> ended == Outcome.COMMITTED ? "committed" : "rolled.back");
    }

    private void end(Outcome outcome, byte[] value) {
      if (!completed.compareAndSet(false, true)) {
        throw new IllegalStateException("the fence of " + key + " was completed already");
      }
      if (unprotected && outcome == Outcome.COMMITTED) {
        // owed before anything else, so that no read here is answered from the store before it
        // is paid; the release still runs (a fence may have landed unseen), without being awaited
        writes.oweAfterCommit(storeKey, "the commit of a write fence");
      }
      // This JVM's loads of the key that started under the fence, or before the commit, may
      // have read the old row, and a read that fails on the store could share them (within the
      // near cache's bound): voided here, before the release is sent, whether it lands, fails or
      // leaves the fence to another holder. Not after it landed: a load registered from here on
      // began after the transaction ended (this runs after it), so it reads the row as
      // committed, and the first reader's reload after the release landed is the write's one
      // load; voided, the next reader loads the row again (1.6 loads per write in
      // TransactionalWriteLoadsIT, 2026-11-30; ReadDuringWriteBackTest).
      registry.detach(storeKey);
      CompletableFuture<Void> first = new CompletableFuture<>();
      CompletableFuture<Void> done = new CompletableFuture<>();
      done.whenComplete((nothing, failure) -> forgetEnded(storeKey, holder));
      pending.track(done);
      attempt(outcome, value, 0, 0, first, done);
      if (!unprotected) {
        awaitFirst(first);
      }
    }

    /**
     * One attempt of the release; {@code first} completes when the release is done or its first
     * failure scheduled a retry, whichever comes first; {@code done} when the release is done or
     * given up.
     */
    private void attempt(Outcome outcome, byte[] value, int conflicts, int failures,
        CompletableFuture<Void> first, CompletableFuture<Void> done) {
      CompletableFuture<Boolean> attempt;
      try {
        attempt = release(outcome, value, conflicts + 1 == ATTEMPTS);
      } catch (RuntimeException e) {
        attempt = CompletableFuture.failedFuture(e);
      }
      attempt.whenComplete((released, failure) -> {
        if (failure == null && released) {
          first.complete(null);
          done.complete(null);
        } else if (failure == null && conflicts + 1 < ATTEMPTS) {
          // the key changed meanwhile
          attempt(outcome, value, conflicts + 1, failures, first, done);
        } else {
          retryLater(outcome, value, failures, failure, first, done);
        }
      });
    }

    private void retryLater(Outcome outcome, byte[] value, int failures, Throwable failure,
        CompletableFuture<Void> first, CompletableFuture<Void> done) {
      first.complete(null); // the caller goes on: the fence stands meanwhile
      long elapsed = TimeUnit.NANOSECONDS.toMillis(ticker.read() - placedTick);
      long delay = Math.min(MAX_RETRY_MILLIS, FIRST_RETRY_MILLIS << Math.min(failures, 16));
      if (failure != null) {
        stats.increment(Counter.STORE_ERROR);
      }
      if (elapsed + delay >= fenceMillis || closing) {
        stats.increment(Counter.FENCE_RELEASE_FAILURE);
        Instant until = Instant.ofEpochMilli(clock.millis() + Math.max(0, fenceMillis - elapsed));
        releaseLog.warn("cache " + cacheName + ": the write fence of key " + key + " could not be"
            + " replaced after " + (failures + 1) + " attempts" + (closing ? " (the cache was"
            + " closed: not retried)" : "") + "; this writer's hold ends at the latest " + until
            + ": until then reads of the key load from the loader and cache nothing",
            failure == null ? null : Failures.unwrap(failure));
        done.complete(null);
        return;
      }
      if (failures == 0) {
        // ended, not released: the next change of the fence from this JVM releases it too
        ended.compute(storeKey, (k, holds) -> {
          ConcurrentHashMap<Long, Ended> mine =
              holds == null ? new ConcurrentHashMap<>() : holds;
          mine.put(holder, new Ended(outcome == Outcome.COMMITTED, done));
          return mine;
        });
      } else if (!isEnded(storeKey, holder)) {
        done.complete(null); // released by a join or a payment meanwhile
        return;
      }
      Retry retry = new Retry(() -> {
        if (isEnded(storeKey, holder)) {
          attempt(outcome, value, 0, failures + 1, first, done);
        } else {
          done.complete(null); // released by a join or a payment meanwhile
        }
      });
      retries.add(retry);
      try {
        scheduler.schedule(retry, delay, TimeUnit.MILLISECONDS);
        if (closing) {
          retry.run(); // close() may have gone over the retries before this one was among them
        }
      } catch (RejectedExecutionException e) {
        retries.remove(retry);
        done.complete(null);
        stats.increment(Counter.FENCE_RELEASE_FAILURE);
        releaseLog.warn("cache " + cacheName + ": the write fence of key " + key + " could not be"
            + " replaced, and its retry could not be scheduled; it stands until it expires", e);
      }
    }

    /**
     * Reads the key and replaces this writer's hold on the fence; {@code true} once done (or
     * nothing to do), {@code false} if the key changed between the read and the write.
     *
     * @param lastAttempt whether this is the last attempt before a retry later: a fence that
     *     expired before the commit is then replaced unconditionally
     */
    private CompletableFuture<Boolean> release(Outcome outcome, byte[] value,
        boolean lastAttempt) {
      return store.gets(storeKey).thenCompose(found -> {
        StoreItem item = found.orElse(null);
        byte[] fence = item == null ? null : fenceOf(item);
        long now = clock.millis();
        if (fence != null) {
          Holds holds = Holds.of(fence);
          if (holds.holds(holder)) {
            Holds others = holds.without(holder).live(now, plantedMillis);
            if (!others.isEmpty()) { // the others release it; a commit ends the prior
              Holds left = (outcome == Outcome.COMMITTED ? others.withoutPrior() : others)
                  .notCommitting();
              return stored(store.cas(storeKey, item.casToken(), encode(storeKey, now, left),
                  exptime(left.until(), now)));
            }
            // the last live holder (the others' ends passed: writers that died)
            byte[] last = outcome == Outcome.COMMITTED && value != null && !holds.shared()
                ? value : writer.tombstone(storeKey, now);
            int exptime = last == value ? writer.putExptime(value) : writer.tombstoneExptime(now);
            return stored(store.cas(storeKey, item.casToken(), last, exptime))
                .thenCompose(stored -> stored ? changed()
                    : CompletableFuture.completedFuture(false));
          }
          if (outcome == Outcome.COMMITTED && (!holds.shared() || holds.prior() != null)) {
            // another writer's fence (this hold's end passed): left to its holders, but marked
            // shared, so that its last holder does not write its value over this commit, which
            // the database may have ordered after that writer's, and without the prior, which
            // this commit changed
            return stored(store.cas(storeKey, item.casToken(),
                encode(storeKey, now, holds.sharedWithoutPrior()), exptime(holds.until(), now)));
          }
          // another writer's fence, shared and without a prior already; or nothing changed
          return CompletableFuture.completedFuture(true);
        }
        if (outcome == Outcome.ROLLED_BACK) {
          return CompletableFuture.completedFuture(true); // nothing changed in the database
        }
        // the fence expired before the commit: what loads cached meanwhile may predate it.
        // Conditional on the read, so that another transaction's fence placed since is left to
        // its holders (the next attempt reads it); unconditional if the key keeps changing
        byte[] tombstone = writer.tombstone(storeKey, now);
        int exptime = writer.tombstoneExptime(now);
        CompletableFuture<Boolean> replaced = lastAttempt
            ? store.set(storeKey, tombstone, exptime).thenApply(set -> true)
            : item == null ? store.add(storeKey, tombstone, exptime)
            : stored(store.cas(storeKey, item.casToken(), tombstone, exptime));
        return replaced.thenCompose(
            done -> done ? changed() : CompletableFuture.completedFuture(false));
      });
    }

    /**
     * After the fence was replaced: records the change in the near cache's log (this JVM's loads
     * of the key were voided before the release was sent: {@link #end}). A failed record is
     * counted and otherwise ignored: the fence's own record made every near cache drop the key,
     * and none held it since.
     */
    private CompletableFuture<Boolean> changed() {
      stats.increment(Counter.INVALIDATION);
      return writes.recorded(storeKey, "the fence's release").handle((done, failure) -> true);
    }

    /** Waits for the release's first attempt, if this thread may wait, at most the timeout. */
    private void awaitFirst(CompletableFuture<Void> first) {
      if (first.isDone() || !Waiting.allowed(store)) {
        return;
      }
      // unanswered or failed, the release goes on in the background; the fence stands meanwhile
      Waiting.await(first, waitNanos, null, (how, failure) -> null);
    }

    @Override
    public String toString() {
      return "WriteFence{" + key + "}";
    }
  }
}
