package io.sustainablecache.internal;

import io.sustainablecache.Scheduler;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.Ticker;
import io.sustainablecache.WriteFence;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;

/**
 * Write fences around database transactions ({@link SustainableCache#fence}, {@link WriteFence}):
 * placing one, and replacing it after the transaction ended. The protocol is in {@code
 * docs/design.md}, "Writes inside database transactions". Thread-safe.
 *
 * <p>A fence is an envelope of its own kind under the key, carrying an id, how many writers hold
 * it, and whether more than one ever did. Placing reads the key and swaps the fence in with
 * {@code cas} (or {@code add}): a writer joins a fence that stands (one more holder), or starts
 * one with a new id. Like a tombstone, it changes the item's token, so no load that read the key
 * before can write; unlike one, a read that finds it loads without caching. Releasing reads the
 * key again: the fence of this writer's id loses a holder, or, with its last holder, becomes a
 * tombstone (or the committed value, if it was never shared); a fence of another id (this one
 * expired and a new one stands) is left to its holders; anything else after a commit is
 * replaced by a tombstone (the fence expired: loads may have cached what the transaction
 * changed).
 */
final class WriteFences<V> {

  /** Read-and-swap attempts before placing over a key that keeps changing. */
  private static final int ATTEMPTS = 4;

  /** The first retry's delay of a release that failed on the store; doubled up to the cap. */
  private static final long FIRST_RETRY_MILLIS = 100;

  private static final long MAX_RETRY_MILLIS = 5_000;

  /** How many fences this JVM started: part of every new fence's id. */
  private static final AtomicLong FENCES = new AtomicLong();

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
  private final long waitNanos;
  private final String cacheName;
  private final RateLimitedLog releaseLog;

  WriteFences(CacheConfig<V> config, PendingWrites pending, Keys keys, EntryWriter<V> writer,
      CallerWrites<V> writes, KeyRegistry registry, FleetLease<V> lease, StatsCounter stats,
      long waitNanos) {
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
    this.waitNanos = waitNanos;
    this.cacheName = config.namespace().isEmpty() ? "(no namespace)" : config.namespace();
    this.releaseLog = new RateLimitedLog(Log.LOGGER, config.ticker());
  }

  /** Places the fence of {@code key} and waits for it: see {@link SustainableCache#fence}. */
  WriteFence<V> fence(String key) {
    String storeKey = keys.storeKey(key);
    if (!Waiting.allowed(store)) {
      throw new IllegalStateException("fence(" + key + ") waits for the store, and this thread ("
          + Thread.currentThread().getName() + ") delivers the store's answers: fence the key"
          + " from the transaction's own thread");
    }
    registry.detach(storeKey);
    long startTick = ticker.read();
    CompletableFuture<Long> placed = writes.landed(storeKey, place(storeKey, 0, null), "fence")
        .thenCompose(id -> {
          // loads this JVM started while the fence was on its way read the key before it landed
          registry.detach(storeKey);
          return writes.recorded(storeKey, "fence").thenApply(recorded -> id);
        });
    CompletableFuture<?> released = lease.onInvalidate(storeKey);
    long id = writes.finish(storeKey, placed, "fence", null);
    writes.awaitQuietly(released);
    stats.increment(Counter.FENCE);
    return new Fence(key, storeKey, id, startTick);
  }

  /**
   * Reads the key and swaps a fence in: joins the fence that stands, or starts one; after
   * {@link #ATTEMPTS} reads that lost their swap, writes one unconditionally, shared (the fence it
   * replaced may have had holders, so its last release writes a tombstone): the last fence read,
   * with one holder more, so that its holders still hold it (a holder that left meanwhile is
   * counted once too often, and the fence then stands until it expires), or a new one.
   *
   * @param lastSeen the fence the previous attempt read, or {@code null}
   * @return the id of the fence placed
   */
  private CompletableFuture<Long> place(String storeKey, int attempt, byte[] lastSeen) {
    long now = clock.millis();
    long until = now + fenceMillis;
    if (attempt == ATTEMPTS) {
      long id = lastSeen == null ? newId() : Envelope.fenceId(lastSeen);
      int holders = lastSeen == null ? 1 : oneMore(Envelope.fenceHolders(lastSeen));
      return store.set(storeKey, writer.fence(storeKey, now, until, id, holders, true),
          exptime(until, now))
          .thenApply(done -> id);
    }
    return store.gets(storeKey).thenCompose(found -> {
      StoreItem item = found.orElse(null);
      byte[] standing = item == null ? null : fenceOf(item);
      long at = clock.millis();
      if (standing != null) {
        long id = Envelope.fenceId(standing);
        // this joiner's deadline is the latest (a planted fence's claim is not extended)
        long joinedUntil = at + fenceMillis;
        byte[] joined = writer.fence(storeKey, at, joinedUntil, id,
            oneMore(Envelope.fenceHolders(standing)), true);
        return swapped(store.cas(storeKey, item.casToken(), joined, exptime(joinedUntil, at)),
            storeKey, attempt, id, standing);
      }
      long id = newId();
      byte[] fresh = writer.fence(storeKey, at, at + fenceMillis, id, 1, false);
      int exptime = exptime(at + fenceMillis, at);
      if (item == null) {
        return store.add(storeKey, fresh, exptime).thenCompose(added -> added
            ? CompletableFuture.completedFuture(id) : place(storeKey, attempt + 1, null));
      }
      return swapped(store.cas(storeKey, item.casToken(), fresh, exptime), storeKey, attempt, id,
          null);
    });
  }

  /**
   * One holder more, saturating: a planted fence may claim the most holders an envelope carries,
   * and its count must not wrap (the fence then stands until it expires, as with any count that
   * never reaches zero).
   */
  private static int oneMore(int holders) {
    return holders == Integer.MAX_VALUE ? holders : holders + 1;
  }

  private CompletableFuture<Long> swapped(CompletableFuture<CasOutcome> cas, String storeKey,
      int attempt, long id, byte[] standing) {
    return cas.thenCompose(outcome -> outcome == CasOutcome.STORED
        ? CompletableFuture.completedFuture(id) : place(storeKey, attempt + 1, standing));
  }

  /**
   * A new fence's id: the random source's, mixed with a count of this JVM's fences so that ids
   * differ whatever the source (an injected one may repeat itself). Never 0.
   */
  private long newId() {
    long id = random.nextLong() ^ (FENCES.incrementAndGet() * 0x9E3779B97F4A7C15L);
    return id == 0 ? 1 : id;
  }

  /** The fence an item holds, or {@code null} if it holds none (foreign bytes included). */
  private static byte[] fenceOf(StoreItem item) {
    byte[] bytes = item.value();
    return Envelope.isValid(bytes) && Envelope.kind(bytes) == Envelope.KIND_FENCE ? bytes : null;
  }

  private static int exptime(long untilMillis, long nowMillis) {
    return Exptime.of(Math.max(0, untilMillis - nowMillis), nowMillis);
  }

  /** How a transaction ended. */
  private enum Outcome { COMMITTED, ROLLED_BACK }

  /** One writer's hold on a key's fence. */
  private final class Fence implements WriteFence<V> {

    private final String key;
    private final String storeKey;
    private final long id;
    /** When the fence was placed, on the ticker: its release is retried until it expired. */
    private final long placedTick;
    private final AtomicBoolean completed = new AtomicBoolean();

    Fence(String key, String storeKey, long id, long placedTick) {
      this.key = key;
      this.storeKey = storeKey;
      this.id = id;
      this.placedTick = placedTick;
    }

    @Override
    public String key() {
      return key;
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
      if (!completed.compareAndSet(false, true)) {
        throw new IllegalStateException("the fence of " + key + " was completed already");
      }
      CompletableFuture<Void> first = new CompletableFuture<>();
      CompletableFuture<Void> done = new CompletableFuture<>();
      pending.track(done);
      attempt(outcome, value, 0, 0, first, done);
      awaitFirst(first);
      if (outcome == Outcome.COMMITTED) {
        // this JVM's loads registered before the commit may have read the old row; a release
        // that failed, is on its way or left the fence to another holder did not void them, and
        // a read that fails on the store could share them (within the near cache's bound)
        registry.detach(storeKey);
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
      if (elapsed + delay >= fenceMillis) {
        stats.increment(Counter.FENCE_RELEASE_FAILURE);
        Instant until = Instant.ofEpochMilli(clock.millis() + Math.max(0, fenceMillis - elapsed));
        releaseLog.warn("cache " + cacheName + ": the write fence of key " + key + " could not be"
            + " replaced after " + (failures + 1) + " attempts; it stands until it expires, at the"
            + " latest " + until + ": until then reads of the key load from the loader and cache"
            + " nothing", failure == null ? null : EntryWriter.unwrap(failure));
        done.complete(null);
        return;
      }
      try {
        scheduler.schedule(() -> attempt(outcome, value, 0, failures + 1, first, done), delay,
            TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
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
        if (fence != null && Envelope.fenceId(fence) == id) {
          int holders = Envelope.fenceHolders(fence);
          if (holders > 1) { // the others release it
            long until = Envelope.expiresAt(fence);
            byte[] fewer =
                writer.fence(storeKey, Math.min(now, until), until, id, holders - 1, true);
            return stored(store.cas(storeKey, item.casToken(), fewer, exptime(until, now)));
          }
          byte[] last = outcome == Outcome.COMMITTED && value != null
              && !Envelope.fenceShared(fence) ? value : writer.tombstone(storeKey, now);
          int exptime = last == value ? writer.putExptime(value) : writer.tombstoneExptime(now);
          return stored(store.cas(storeKey, item.casToken(), last, exptime))
              .thenCompose(stored -> stored ? changed() : CompletableFuture.completedFuture(false));
        }
        if (fence != null && outcome == Outcome.COMMITTED && !Envelope.fenceShared(fence)) {
          // another writer's fence (this one expired): left to its holders, but marked shared,
          // so that its last holder does not write its value over this commit, which the
          // database may have ordered after that writer's
          long until = Envelope.expiresAt(fence);
          byte[] shared = writer.fence(storeKey, Math.min(now, until), until,
              Envelope.fenceId(fence), Envelope.fenceHolders(fence), true);
          return stored(store.cas(storeKey, item.casToken(), shared, exptime(until, now)));
        }
        if (fence != null || outcome == Outcome.ROLLED_BACK) {
          // another writer's fence (this one expired), or nothing changed in the database
          return CompletableFuture.completedFuture(true);
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

    private CompletableFuture<Boolean> stored(CompletableFuture<CasOutcome> cas) {
      return cas.thenApply(outcome -> outcome == CasOutcome.STORED);
    }

    /**
     * After the fence was replaced: voids this JVM's loads of the key (they started under the
     * fence) and records the change in the near cache's log. A failed record is counted and
     * otherwise ignored: the fence's own record made every near cache drop the key, and none
     * held it since.
     */
    private CompletableFuture<Boolean> changed() {
      registry.detach(storeKey);
      stats.increment(Counter.INVALIDATION);
      return writes.recorded(storeKey, "the fence's release").handle((done, failure) -> true);
    }

    /** Waits for the release's first attempt, if this thread may wait, at most the timeout. */
    private void awaitFirst(CompletableFuture<Void> first) {
      if (first.isDone() || !Waiting.allowed(store)) {
        return;
      }
      try {
        first.get(waitNanos, TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException e) {
        // the release goes on in the background; the fence stands meanwhile
      }
    }

    @Override
    public String toString() {
      return "WriteFence{" + key + "}";
    }
  }
}
