package io.sustainablecache.internal;

import io.sustainablecache.CacheLoadException;
import io.sustainablecache.Scheduler;
import io.sustainablecache.Ticker;
import io.sustainablecache.internal.LeaseValues.FailureMarker;
import io.sustainablecache.internal.LeaseValues.Lease;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.PartialReadException;
import io.sustainablecache.spi.StoreItem;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;

/**
 * Coordinates the loads of one key across the instances that share the store, with a lease: a
 * separate item ({@link Keys#leaseKey}) that an instance {@code add}s before it loads. Only the
 * winner loads.
 * <ul>
 *   <li><b>Refresh:</b> the losers do nothing: they keep serving the current value and read the
 *       winner's value once it is written.</li>
 *   <li><b>Miss:</b> the losers poll the item (on the {@link Scheduler}) for the winner's write,
 *       a bounded time related to the measured load time; if nothing appears they load
 *       themselves. A lease never makes a caller wait longer than one load plus that bound.</li>
 *   <li><b>Failure:</b> a holder whose load failed keeps the lease while its key backs off,
 *       rewritten as a {@link FailureMarker}: the fleet loads a failing key about once per
 *       back-off window, and the losers' misses fail at once with that failure (remembered
 *       locally as well, so they back off too) instead of waiting. Anyone who can write to the
 *       server can plant a marker, so another instance's marker is honoured at most the longest
 *       back-off of its failure count, from when this instance first saw it. That can end just
 *       as the holder's back-off ends, so the holder retries only after rewriting its marker as
 *       a holder value (compare-and-set): the others then judge the retry as any holder's load
 *       (a miss waits for its write or its next marker) and do not load beside it.</li>
 * </ul>
 * The lease's exptime covers the expected load (twice the measured load time, at least one
 * server tick), so a holder that dies delays the key by at most that. The winner deletes the
 * lease once it has issued its write; {@code invalidate} deletes it too (the holder's write fails
 * its compare-and-set against the tombstone anyway). A store error while taking a lease lets the
 * instance load (fail open): a duplicate load is better than none. Plain hits never touch the
 * lease. The lease is a protocol over the store that returns values: each method returns a
 * {@link LeaseStep} that the {@link LoadPipeline} acts on. It never completes a flight and writes
 * neither the flight nor the {@link KeyRegistry}: what this instance knows of the key's lease
 * comes in as a {@link KeyRegistry.LeaseKnowledge} the pipeline read, and what the lease took
 * goes out in the step (the lease held, until when; a failure marker seen), which the pipeline
 * records on the flight and in the registry. Thread-safe.
 *
 * <p>Why this class is over 700 lines: a third of it is documentation, and it is one protocol
 * whose steps read and write the same lease item: taking it (add, contest, take over), waiting
 * for its holder (the polls), and judging another instance's failure marker under it. Split,
 * each part would need the others' rules for what a lease value means.
 */
final class FleetLease<V> {

  private static final Logger log = Log.LOGGER;

  /** Added to twice the expected load time for the wait of a miss that lost the lease. */
  private static final long WAIT_MARGIN_MILLIS = 200;

  private static final long MIN_POLL_MILLIS = 5;

  private final boolean enabled;
  private final CacheStore store;
  private final Keys keys;
  private final EntryReader<V> reader;
  private final Scheduler scheduler;
  private final InstantSource clock;
  private final Ticker ticker;
  private final StatsCounter stats;
  private final LoadTimes loadTimes;
  private final long loadTimeoutMillis;
  private final LeaseValues values;
  private final Backoff backoff;
  private final long skewMillis;
  private final RateLimitedLog storeErrorLog;
  private final RateLimitedLog invalidLeaseLog;
  private final RateLimitedLog outlivedMarkerLog;

  FleetLease(CacheConfig<V> config, Keys keys, EntryReader<V> reader, StatsCounter stats,
      LoadTimes loadTimes, RateLimitedLog storeErrorLog) {
    this.loadTimes = loadTimes;
    this.enabled = config.fleetLease();
    this.store = config.store();
    this.keys = keys;
    this.reader = reader;
    this.scheduler = config.scheduler();
    this.clock = config.clock();
    this.ticker = config.ticker();
    this.invalidLeaseLog = new RateLimitedLog(log, ticker);
    this.outlivedMarkerLog = new RateLimitedLog(log, ticker);
    this.stats = stats;
    this.loadTimeoutMillis = config.loadTimeout().toMillis();
    this.storeErrorLog = storeErrorLog;
    this.skewMillis = config.maxClockSkew().toMillis();
    this.backoff = new Backoff(config);
    // An identity, not part of any decision: drawn once, not from the injected random source.
    byte[] owner = (ProcessHandle.current().pid() + "-"
        + Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong()))
        .getBytes(StandardCharsets.US_ASCII);
    // a holder's deadline lies at most one lease (at most the load timeout) and a tick ahead; a
    // marker's at most the longest back-off of its failure count (at most the cap) and a tick
    this.values = new LeaseValues(owner, skewMillis, loadTimeoutMillis + 2_000 + skewMillis,
        count -> backoff.longestWait(count) + 2_000 + skewMillis);
  }

  boolean enabled() {
    return enabled;
  }

  /**
   * Takes the key's lease before a refresh loads.
   *
   * @param memo what this instance knows of the key's lease (the pipeline read it)
   * @return a future of the step: load (this instance holds the lease, or the store failed),
   *     lost (another instance holds it), or another instance's fresh write; never failing
   */
  CompletableFuture<LeaseStep<V>> beforeRefresh(Flight<V> flight,
      KeyRegistry.LeaseKnowledge memo, Rereads rereads) {
    return acquire(flight, memo, rereads).thenApply(taken -> {
      if (taken.written() != null) {
        return new LeaseStep.Written<V>(taken.writtenValue(), taken.heldUntil());
      }
      if (!taken.won()) {
        // remembered past the lease's longest life, to recognise a takeover
        return new LeaseStep.Lost<V>(4 * leaseMillis(flight) + 2_000, taken.seen());
      }
      return taken.loads();
    });
  }

  /**
   * Takes the key's lease before a miss loads; if another instance holds it, answers at once
   * with that instance's failure (see {@link #readLostLease}), or with {@link
   * LeaseStep.WaitForPeer}: its future completes once that instance's write appears, or it fails,
   * or the bounded wait ends (polls run on the scheduler and complete on whatever thread answered
   * last: callers continue on their own executor). So a batch of misses loads the keys it won at
   * once, while it waits for the others.
   *
   * @param memo what this instance knows of the key's lease (the pipeline read it)
   * @return a future of the step: load now, another instance's fresh write or failure, wait for
   *     the holder, or skip (the flight was completed meanwhile); never failing
   */
  CompletableFuture<LeaseStep<V>> beforeMiss(Flight<V> flight,
      KeyRegistry.LeaseKnowledge memo, Rereads rereads) {
    return acquire(flight, memo, rereads).thenApply(taken -> {
      LeaseStep<V> step = stepOf(flight, taken);
      if (step != null) {
        return step;
      }
      KeyRegistry.Sighting seen = taken.seen() != null ? taken.seen() : memo.seen();
      // wait for the holder's write
      long expected = expectedLoadMillis(flight);
      long waitMillis = Math.min(loadTimeoutMillis / 2, 2 * expected + WAIT_MARGIN_MILLIS);
      long pollMillis = Math.max(MIN_POLL_MILLIS, expected / 4);
      long now = CacheConfig.millis(ticker);
      return new LeaseStep.WaitForPeer<>(new CompletableFuture<>(), now, now + waitMillis,
          pollMillis, seen);
    });
  }

  /**
   * After the load of a flight that held the lease ({@link Flight#leaseHeld}; its write issued,
   * or its failure recorded), once, when the pipeline ends it: releases the lease, except that a
   * failed load whose key now backs off ({@code failure}, the record its {@link KeyRegistry#end}
   * made) keeps it for the whole back-off, rewritten as a {@link FailureMarker} with an exptime
   * that covers the back-off: the other instances do not load the key meanwhile, and their
   * misses fail fast with this failure instead of waiting for a write that will not come (see
   * {@link #beforeMiss}). This instance may load under it again once its back-off ends (see
   * {@link KeyRegistry.LeaseKnowledge#heldUntil}), rewriting it as a holder value first (see
   * {@link #acquire}).
   */
  void release(Flight<V> flight, KeyRegistry.Failure failure) {
    long now = clock.millis();
    if (failure != null && failure.leaseUntil() <= now) {
      failure = null;
    }
    String leaseKey = keys.leaseKey(flight.storeKey);
    if (failure == null) {
      store.delete(leaseKey);
      return;
    }
    // dropped by the server between exptime - 1 and exptime s from now, not before leaseUntil
    int exptime = (int) ((failure.leaseUntil() - now + 999) / 1000) + 1;
    store.set(leaseKey, values.failureMarker(failure, flight.casToken), exptime)
        .exceptionally(error -> {
      stats.increment(Counter.STORE_ERROR);
      storeErrorLog.warn("marking a fleet lease as failed failed; other instances may retry the"
          + " failing load before this one's back-off ends", Failures.unwrap(error));
      return null;
    });
  }

  /**
   * The re-read of a batch's items after their leases' {@code add}s: one {@code getsAll}, sent by
   * {@link #send} once every {@code add} of the batch was sent, so that it is pipelined behind
   * them (see {@link #won}). {@code null} where a flight re-reads its item alone.
   */
  static final class Rereads {
    private final CompletableFuture<Map<String, StoreItem>> items = new CompletableFuture<>();
    /** The keys the read failed for when it read others ({@link PartialReadException}). */
    private volatile PartialReadException partial;

    /** A flight's item: fails as the read did for its key, if it did. */
    CompletableFuture<Optional<StoreItem>> itemOf(String storeKey) {
      return items.thenCompose(found -> {
        PartialReadException failed = partial;
        return failed != null && failed.failedKeys().contains(storeKey)
            ? CompletableFuture.failedFuture(failed)
            : CompletableFuture.completedFuture(Optional.ofNullable(found.get(storeKey)));
      });
    }
  }

  /**
   * Sends a batch's re-read ({@link Rereads}) of {@code flights}' items. A read that failed for
   * some keys only fails their flights' re-reads; the others get what was read.
   */
  void send(Rereads rereads, List<Flight<V>> flights) {
    List<String> storeKeys = new ArrayList<>(flights.size());
    flights.forEach(flight -> storeKeys.add(flight.storeKey));
    store.getsAll(storeKeys).whenComplete((items, error) -> {
      if (error == null) {
        rereads.items.complete(items);
      } else if (Failures.unwrap(error) instanceof PartialReadException partial) {
        rereads.partial = partial;
        rereads.items.complete(partial.found());
      } else {
        rereads.items.completeExceptionally(error);
      }
    });
  }

  /** {@code invalidate}: voids every instance's lease on the key. */
  CompletableFuture<?> onInvalidate(String storeKey) {
    if (!enabled) {
      return CompletableFuture.completedFuture(null);
    }
    return store.delete(keys.leaseKey(storeKey));
  }

  /**
   * Takes the lease: {@code add}s this instance's holder value; if the key holds a lease already,
   * reads it, and takes it over (compare-and-set) if it is this instance's own failure marker (it
   * loads under it again), or not a lease any instance may still hold: lapsed (its holder's
   * deadline, or its failure marker's back-off, ended more than {@code maxClockSkew} ago),
   * invalid (not a lease value, or one claiming longer than any lease lasts, or a marker claiming
   * a longer back-off than its failure count gives: planted or corrupt; counted), or outlived
   * (another instance's marker this instance has seen for the longest back-off of its failure
   * count, whatever end it claims; counted too if it still claims a back-off in force, which no
   * instance configured as this one writes). While this instance still holds the lease from
   * a failed load ({@link KeyRegistry.LeaseKnowledge#heldUntil}) it skips the {@code add} and
   * starts with the read: its marker is normally there. Taking over its own marker rewrites it as
   * a holder value, so the other instances judge the retry as any holder (they wait for its write
   * or its next marker) rather than by how long they have honoured the marker. A winner reads the
   * item once more: if another instance wrote the key since this instance's read, it releases the
   * lease at once and that value is what was taken: nothing is loaded. A store failure lets the
   * instance load without the lease (fail open).
   *
   * @return a future of what was taken: won (load), or lost (with the holder's failure marker if
   *     it is in force); never failing
   */
  private CompletableFuture<Taken> acquire(Flight<V> flight, KeyRegistry.LeaseKnowledge memo,
      Rereads rereads) {
    long now = clock.millis();
    Claim claim = claim(flight, now);
    CompletableFuture<Taken> taken;
    if (memo.heldUntil() > now) {
      // ours, kept after a failed load: read it (normally our marker) instead of adding; gone
      // (expired, or deleted by an invalidate): add as anyone would
      taken = store.gets(claim.leaseKey()).thenCompose(current -> current.isPresent()
          ? contest(flight, memo, claim, current.get()) : add(flight, memo, claim, null));
    } else {
      taken = add(flight, memo, claim, rereads);
    }
    return taken.exceptionally(error -> failedOpen(error, null));
  }

  /**
   * What taking the lease decided for {@code flight}: another instance's write, a load (holding
   * the lease, or without it when the store failed), skip (the flight completed meanwhile), the
   * holder's failure in force; or {@code null}: lost to a holder that is loading, wait for its
   * write.
   */
  private LeaseStep<V> stepOf(Flight<V> flight, Taken taken) {
    if (taken.written() != null) {
      return new LeaseStep.Written<V>(taken.writtenValue(), taken.heldUntil());
    }
    if (taken.won()) {
      return taken.loads();
    }
    if (flight.completed()) { // timed out, or voided and answered, meanwhile
      return LeaseStep.<V>skip(taken.seen()); // a marker met is seen all the same
    }
    return taken.marked() ? readLostLease(flight, taken.seen()) : null;
  }

  /** This instance's claim to the lease of {@code flight}'s key, made at {@code now}. */
  private Claim claim(Flight<V> flight, long now) {
    long leaseMillis = leaseMillis(flight);
    int exptime = (int) ((leaseMillis + 999) / 1000) + 1;
    // The server drops it between exptime - 1 and exptime seconds from now: until the later
    // bound this instance still regards it as its own (at worst a duplicate load).
    long until = now + exptime * 1000L;
    return new Claim(keys.leaseKey(flight.storeKey), values.holder(until), exptime, until, now);
  }

  /**
   * A poll of a waiting miss found neither a value nor a lease: it takes the lease as a miss
   * does ({@code add}, the item read again behind it), and is decided as a miss is ({@link
   * #stepOf}): won, it loads (or takes the value the re-read found: the holder wrote and released
   * between the poll's two reads); the store failing, it loads without the lease; lost to another
   * miss that took it first, it waits on (rather than for its deadline: after a memcached hang,
   * every reader would wait that long at once).
   */
  private void takeOver(Flight<V> flight, LeaseStep.WaitForPeer<V> wait) {
    Claim claim = claim(flight, clock.millis());
    add(flight, KeyRegistry.LeaseKnowledge.of(0, 0, 0, wait.seen()), claim, null)
        .exceptionally(error -> failedOpen(error, null))
        .thenAccept(taken -> {
          LeaseStep<V> step = stepOf(flight, taken);
          if (step == null) {
            wait.takingOver().set(false); // another miss holds it now: wait for its write
          } else if (!wait.decided().complete(step) && step.heldUntil() != 0) {
            // the wait ended meanwhile (its deadline, or its flight completed): the lease taken
            // for it would stand with nobody to release it
            store.delete(claim.leaseKey());
          }
        });
  }

  /**
   * Taking the lease failed on the store: the instance loads without it (fail open), unless the
   * item read again with the {@code add} ({@code written}, or {@code null}) shows another write
   * since the flight's read. The lease key hashes apart from the item's, so its node may be dead
   * while the item's answers; a read that was answered late (the client busy with the dead node)
   * with the entry as it was before this instance's own refresh wrote would otherwise refresh the
   * key a second time.
   */
  private Taken failedOpen(Throwable error, Loaded<V> written) {
    stats.increment(Counter.STORE_ERROR);
    storeErrorLog.warn("taking a fleet lease failed; loading without it",
        Failures.unwrap(error));
    return written == null ? Taken.WON : new Taken(false, 0, null, false, written);
  }

  /**
   * This instance's holder value for the lease ({@code value}, ending at {@code until} by this
   * host's clock, with {@code exptime} in seconds), computed at {@code now}.
   */
  private record Claim(String leaseKey, byte[] value, int exptime, long until, long now) {}

  /**
   * {@code add}s the claim, and reads the item in the same round trip (pipelined behind the
   * {@code add}: see {@link #won}): its own {@code gets}, or, for a batch ({@code rereads}), the
   * batch's one {@code getsAll} sent behind all of the batch's {@code add}s; if the key holds a
   * lease already, reads and contests it.
   */
  private CompletableFuture<Taken> add(Flight<V> flight, KeyRegistry.LeaseKnowledge memo,
      Claim claim, Rereads rereads) {
    CompletableFuture<Boolean> add = store.add(claim.leaseKey(), claim.value(), claim.exptime());
    CompletableFuture<Optional<StoreItem>> reread = rereads == null ? store.gets(flight.storeKey)
        : rereads.itemOf(flight.storeKey);
    return add.handle((added, error) -> {
      if (error != null) { // fail open, unless the re-read found another write
        return reread.handle((item, readError) -> failedOpen(error,
            readError == null && item.isPresent() ? written(flight, item.get()) : null));
      }
      if (added) {
        return won(flight, claim.until(), reread);
      }
      return store.gets(claim.leaseKey()).thenCompose(current -> {
        if (current.isEmpty()) { // released since our add: as lost, the holder wrote
          stats.increment(Counter.LEASE_LOST);
          return CompletableFuture.completedFuture(Taken.LOST);
        }
        return contest(flight, memo, claim, current.get());
      });
    }).thenCompose(Function.identity());
  }

  /**
   * Judges the lease {@code current} holds and loses to it, or takes it over with {@code cas}.
   * Another instance's failure marker is judged against {@code memo}'s sighting of it (or seen
   * now for the first time); the loss carries that sighting for the pipeline to record. A
   * takeover carries none: a marker taken over was outlived, so it was seen before.
   */
  private CompletableFuture<Taken> contest(Flight<V> flight, KeyRegistry.LeaseKnowledge memo,
      Claim claim, StoreItem current) {
    Lease lease = values.judge(current.value(), claim.now());
    // this instance's own failure marker: taken over below, so the retry is seen as a holder
    boolean own = lease.marker() != null && values.mine(lease.marker());
    // another instance's marker (in force or ending): honoured for a bounded time only
    KeyRegistry.Sighting seen = !own && lease.marker() != null
        ? sight(lease.marker(), memo.seen()) : null;
    boolean outlived = seen != null && honouredFor(seen) <= 0;
    if (!own && !outlived && (lease.state() == Lease.State.HELD
        || lease.state() == Lease.State.MARKED || lease.state() == Lease.State.MARK_ENDING)) {
      stats.increment(Counter.LEASE_LOST);
      return CompletableFuture.completedFuture(
          Taken.lost(seen, lease.state() == Lease.State.MARKED));
    }
    if (outlived && lease.state() != Lease.State.MARKED) {
      // its back-off ended by this host's clock too and its holder has not retried: an ordinary
      // takeover (a fleet whose failing key nobody on the holder asked for), not worth a warning
      log.debug("taking over another instance's failure marker whose back-off ended");
    } else if (outlived) {
      stats.increment(Counter.LEASE_INVALID);
      outlivedMarkerLog.warn("a fleet lease key still held another instance's failure marker"
          + " still in force after the longest back-off of its failure count, counted from"
          + " when this instance first saw it: planted, or written by an instance with a longer"
          + " failureBackoff; taking it over");
    } else if (lease.state() == Lease.State.INVALID) {
      stats.increment(Counter.LEASE_INVALID);
      invalidLeaseLog.warn("a fleet lease key held a value that is no lease this version"
          + " wrote, or one bounded beyond any lease's life; taking it over");
    }
    return store.cas(claim.leaseKey(), current.casToken(), claim.value(), claim.exptime())
        .thenCompose(outcome -> {
          if (outcome == CasOutcome.STORED) {
            return won(flight, claim.until(), store.gets(flight.storeKey));
          }
          stats.increment(Counter.LEASE_LOST);
          return CompletableFuture.completedFuture(Taken.lost(seen, false));
        });
  }

  /**
   * This instance holds the lease until {@code until}; {@code reread} is the item read again
   * after the lease was taken: if another instance wrote it since this instance's first read,
   * that value is taken and the lease released at once.
   *
   * <p>After an {@code add}, that read is issued together with the {@code add}, not after its
   * answer: a cold miss waits for two sequential round trips before its loader runs (the read,
   * then the {@code add} with the re-read), not three. It is safe: on one connection memcached
   * answers requests in the order they were sent, so the re-read sees the server as it is after
   * the {@code add}; a holder issues its write before it deletes its lease, so if the {@code add}
   * found the lease gone, the re-read finds the holder's write. A client that spreads the two
   * requests over connections may read before the {@code add}: a write landing in between is then
   * missed, and this instance loads once more; its write is conditional on the token of its first
   * read and fails against the newer item, so it costs a duplicate load, never a wrong value.
   */
  private CompletableFuture<Taken> won(Flight<V> flight, long until,
      CompletableFuture<Optional<StoreItem>> reread) {
    return reread.handle((item, error) -> {
      Loaded<V> written = error == null && item.isPresent() ? written(flight, item.get()) : null;
      if (written != null) {
        // another instance wrote since our read: nothing to load; the flight's end releases the
        // lease at once
        stats.increment(Counter.LEASE_LOST);
        return new Taken(false, until, null, false, written);
      }
      stats.increment(Counter.LEASE_WON);
      // the pipeline tells the registry (a takeover, if it lost it before)
      return new Taken(true, until, null, false, null);
    });
  }

  /**
   * What taking the lease ended in: won ({@code heldUntil} not 0: this instance holds the lease;
   * 0: the store failed, load without it); lost (with the other instance's failure marker as
   * judged, {@code seen}, if it held one; {@code marked}: in force); or won and to be released at
   * once because another instance wrote the key meanwhile ({@code written}).
   */
  private record Taken(boolean won, long heldUntil, KeyRegistry.Sighting seen, boolean marked,
      Loaded<?> written) {
    /** Load without the lease: taking it failed on the store (fail open). */
    static final Taken WON = new Taken(true, 0, null, false, null);
    static final Taken LOST = new Taken(false, 0, null, false, null);

    static Taken lost(KeyRegistry.Sighting seen, boolean marked) {
      return seen == null ? LOST : new Taken(false, 0, seen, marked, null);
    }

    /** The step of a won lease: load, holding it (a win) or not (fail open). */
    <V> LeaseStep<V> loads() {
      return heldUntil == 0 ? LeaseStep.load() : new LeaseStep.Load<>(true, heldUntil);
    }

    @SuppressWarnings("unchecked")
    <V> Loaded<V> writtenValue() {
      return (Loaded<V>) written;
    }
  }

  /**
   * Misses that lost their leases ({@link LeaseStep.WaitForPeer}, a batch's together) poll for the
   * holders' writes: every {@code pollMillis} until their deadlines (ticker ms: waits on this
   * host), one read of all their items (a {@code getsAll}; a {@code gets} for one key), and, for
   * those still without a value, one read of their leases. A holder's write is that miss's step
   * ({@link LeaseStep.Written}); a failure marker (the holder's load failed and its key backs off)
   * is one at once ({@link LeaseStep.Failed}); a flight completed meanwhile skips; a poll that
   * finds neither a value nor a lease takes the lease ({@link #takeOver}); at its deadline a miss
   * loads itself. Never fails: a store error reads as "nothing yet", a scheduler that refuses, or
   * anything thrown, loads.
   */
  void awaitPeers(List<Flight<V>> flights, List<LeaseStep.WaitForPeer<V>> waits) {
    List<Integer> open = new ArrayList<>(flights.size());
    long now = CacheConfig.millis(ticker);
    long delay = Long.MAX_VALUE;
    for (int i = 0; i < flights.size(); i++) {
      LeaseStep.WaitForPeer<V> wait = waits.get(i);
      if (wait.decided().isDone()) {
        continue;
      }
      if (flights.get(i).completed()) { // invalidated and completed elsewhere, or timed out
        wait.decided().complete(LeaseStep.skip());
      } else if (now >= wait.deadline()) {
        wait.decided().complete(LeaseStep.load()); // no write in time: load ourselves
      } else {
        open.add(i);
        delay = Math.min(delay, Math.min(pollDelay(wait, now), wait.deadline() - now));
      }
    }
    if (open.isEmpty()) {
      return;
    }
    try {
      scheduler.schedule(() -> pollOnce(flights, waits, open), delay, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      open.forEach(i -> waits.get(i).decided().complete(LeaseStep.load()));
    }
  }

  /**
   * How long a wait sleeps before its next poll: as long as it has waited, between {@link
   * #MIN_POLL_MILLIS} and its {@code pollMillis} (a quarter of the expected load). So a holder's
   * write is seen within about half the time waited even when the expected load time is this
   * instance's guess ({@link LoadTimes#DEFAULT_MILLIS}, 1 s, until it loads once itself: an
   * instance that keeps losing the lease never does), at a few more reads of a slow load's key.
   */
  private static long pollDelay(LeaseStep.WaitForPeer<?> wait, long now) {
    return Math.max(MIN_POLL_MILLIS, Math.min(wait.pollMillis(), now - wait.begun()));
  }

  /** One poll of {@link #awaitPeers}: the items, then the leases of those still waiting. */
  private void pollOnce(List<Flight<V>> flights, List<LeaseStep.WaitForPeer<V>> waits,
      List<Integer> open) {
    List<String> storeKeys = new ArrayList<>(open.size());
    open.forEach(i -> storeKeys.add(flights.get(i).storeKey));
    readAll(storeKeys).whenComplete((read, error) -> {
      try {
        // a read that failed for some keys only: the others' items (the failed ones wait on)
        Map<String, StoreItem> items = found(read, error);
        List<Integer> still = new ArrayList<>(open.size());
        for (int i : open) {
          Flight<V> flight = flights.get(i);
          StoreItem item = items != null ? items.get(flight.storeKey) : null;
          Loaded<V> written = item == null ? null : written(flight, item);
          if (written != null) {
            waits.get(i).decided().complete(new LeaseStep.Written<>(written, 0));
          } else {
            still.add(i);
          }
        }
        if (still.isEmpty()) {
          return;
        }
        List<String> leaseKeys = new ArrayList<>(still.size());
        still.forEach(i -> leaseKeys.add(keys.leaseKey(flights.get(i).storeKey)));
        readAll(leaseKeys).whenComplete((leasesRead, leaseError) -> {
          try {
            Map<String, StoreItem> leases = found(leasesRead, leaseError);
            for (int i : still) {
              LeaseStep.WaitForPeer<V> wait = waits.get(i);
              StoreItem current = leases != null
                  ? leases.get(keys.leaseKey(flights.get(i).storeKey)) : null;
              if (current == null && leases != null) {
                // no value and no lease: the holder released it without writing (its write
                // kept out by a change, or failed), or a change deleted it, or the holder wrote
                // and released between this poll's two reads: take the lease
                if (wait.takingOver().compareAndSet(false, true)) {
                  takeOver(flights.get(i), wait);
                }
                continue;
              }
              LeaseStep<V> step = current == null ? null
                  : readLease(flights.get(i), current, wait.seen());
              if (step != null) { // the holder failed meanwhile
                wait.decided().complete(step);
              }
            }
            awaitPeers(flights, waits);
          } catch (Throwable t) {
            still.forEach(i -> waits.get(i).decided().complete(LeaseStep.load()));
          }
        });
      } catch (Throwable t) {
        open.forEach(i -> waits.get(i).decided().complete(LeaseStep.load()));
      }
    });
  }

  /**
   * What a read of items found: all it read, or, if it failed for some keys only ({@link
   * PartialReadException}), the others' items; {@code null} if it failed.
   */
  private static Map<String, StoreItem> found(Map<String, StoreItem> read, Throwable error) {
    return error == null ? read : Failures.unwrap(error) instanceof PartialReadException partial
        ? partial.found() : null;
  }

  /** Reads items: a {@code getsAll}, or a {@code gets} for one key (as a single miss did). */
  private CompletableFuture<Map<String, StoreItem>> readAll(List<String> storeKeys) {
    if (storeKeys.size() == 1) {
      String key = storeKeys.get(0);
      return store.gets(key).thenApply(item -> item.isPresent() ? Map.of(key, item.get())
          : Map.of());
    }
    return store.getsAll(storeKeys);
  }

  /**
   * Judges the lease a waiting miss read ({@code current}; {@code known}: the marker known when
   * the wait began): a failure marker in force that applies to the miss (see {@link
   * #readLostLease}) is this instance's own (a lease it holds: it loads under it again, a failure
   * marks it anew, a success deletes it) or another instance's, read by {@link #readLostLease};
   * anything else (a holder, a lapsed or invalid value) means wait ({@code null}).
   */
  private LeaseStep<V> readLease(Flight<V> flight, StoreItem current,
      KeyRegistry.Sighting known) {
    Lease lease = values.judge(current.value(), clock.millis());
    if (lease.state() != Lease.State.MARKED || !appliesTo(flight, lease.marker())) {
      return null;
    }
    if (values.mine(lease.marker())) {
      return new LeaseStep.Load<>(false, clock.millis());
    }
    return readLostLease(flight, sight(lease.marker(), known));
  }

  /**
   * Reads another instance's failure marker in force under the lease a miss lost, as judged
   * ({@code seen}). A marker applies if it is about the item version this miss read (or the item
   * is absent: it left the server, nothing newer was written); one about another version is a
   * leftover (an {@code invalidate}'s tombstone or a {@code put} came since, even if the marker
   * landed after the invalidation deleted the lease), and the miss waits as for any holder
   * ({@code null}). A marker that applies is that failure at once ({@link LeaseStep.Failed}: the
   * pipeline ends the flight with it, and the registry remembers it, so this instance backs off
   * too, counting on from the marker's failures), unless this instance has honoured it for the
   * longest back-off of its failure count (outlived: wait, and the next miss takes it over).
   * Never reads the item: values only come from the polls.
   */
  private LeaseStep<V> readLostLease(Flight<V> flight, KeyRegistry.Sighting seen) {
    FailureMarker marker = seen.marker();
    if (!appliesTo(flight, marker)) {
      return null;
    }
    long now = clock.millis();
    long honoured = honouredFor(seen);
    if (honoured <= 0) { // outlived (taken over by the next miss): wait, then load
      return null;
    }
    CacheLoadException cause = new CacheLoadException("another instance's load of this key"
        + " failed; it holds the fleet lease while the key backs off", null);
    return new LeaseStep.Failed<>(new Ending.PeerFailed(marker.failures(),
        Math.min(marker.notBefore(), now + honoured), cause, now), seen);
  }

  /** Whether a failure marker is about the item version {@code flight} read (or none). */
  private static boolean appliesTo(Flight<?> flight, FailureMarker marker) {
    return flight.casToken == Entry.NO_CAS || flight.casToken == marker.itemCasToken();
  }

  /**
   * Another instance's failure marker as this instance has seen it: the sighting it knew ({@code
   * known}, or {@code null}) if that is the same marker, else first seen now (ticker ms),
   * remembered while the marker can still be in force (its end lies at most the longest back-off
   * of its failure count + a tick + the skew after now, and it counts for the skew after its end).
   */
  private KeyRegistry.Sighting sight(FailureMarker marker, KeyRegistry.Sighting known) {
    if (known != null && known.marker().sameAs(marker)) {
      return known;
    }
    long tick = CacheConfig.millis(ticker);
    return new KeyRegistry.Sighting(marker, tick,
        tick + backoff.longestWait(marker.failures()) + 2_000 + 2 * skewMillis);
  }

  /**
   * How much longer this instance honours another instance's failure marker, milliseconds: the
   * longest back-off its failure count allows ({@link Backoff#longestWait}), counted on the
   * ticker from when this instance first saw that marker ({@code seen}), whatever end the marker
   * claims (another host's clock, or a planted value). Zero or less once outlived.
   */
  private long honouredFor(KeyRegistry.Sighting seen) {
    return seen.seenAt() + backoff.longestWait(seen.marker().failures())
        - CacheConfig.millis(ticker);
  }

  /** Another instance's fresh write, if the item is one; {@code null} otherwise. */
  private Loaded<V> written(Flight<V> flight, StoreItem item) {
    if (item.casToken() == flight.casToken) {
      return null; // unchanged since our read
    }
    long now = clock.millis();
    Entry<V> entry = reader.read(flight.storeKey, item, now);
    if (!entry.answers() || now >= entry.expiresAt()) {
      return null;
    }
    // delivered to the flight's callers, never written again: no generation
    return new Loaded<>(entry.value(), entry.fetchedAt(), entry.loadMillis(), Generation.UNKNOWN);
  }

  private long leaseMillis(Flight<V> flight) {
    return Math.min(loadTimeoutMillis, Math.max(1_000, 2 * expectedLoadMillis(flight)));
  }

  private long expectedLoadMillis(Flight<V> flight) {
    long expected = flight.expectedLoadMillis();
    return expected >= 0 ? expected : loadTimes.meanMillis();
  }
}
