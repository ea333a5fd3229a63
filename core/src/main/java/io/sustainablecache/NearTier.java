package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;

/**
 * The near tier of one cache: entries of hot keys held in this JVM and served without a store
 * round trip only while the namespace's invalidation log ({@link NearLog}) confirms them
 * ({@code docs/near-cache.md} states the bound and argues it). It owns the three rules of that
 * argument:
 * <ul>
 *   <li><b>Confirmation.</b> {@link #poll} applies one poll of the log (dropping the keys it
 *       names, or everything) and then sets {@code confirmedAt} to the time the poll
 *       <em>started</em>. A poll that ended at a record counted but not yet written ({@link
 *       NearLog.Poll.Partial}) applied every record the previous poll counted, no more: it sets
 *       {@code confirmedAt} to the time the <em>previous</em> successful poll started. The log
 *       lets at most one poll in a row stop short of what the poll before it counted (the next
 *       resets if it finds such a record still missing), so a writer that always has a record in
 *       flight delays confirmation by one poll and cannot keep the tier unconfirmed. {@link #get}
 *       answers only while {@code now - confirmedAt <= Δ}; otherwise the caller reads the
 *       store.</li>
 *   <li><b>Insertion fence.</b> An entry read from the store enters only if no drop of its key
 *       (nor of everything) happened after its read began ({@link #ticket} at the start, {@link
 *       #offer} at the end), and only if the read began less than the fence window ago. A drop
 *       racing an insertion wins: the drop is recorded before it removes, the insertion checks
 *       again after it puts. The fence remembers drops in a fixed number of stripes ({@link
 *       #fenceStripes}), each holding the last version of a drop of any key hashed to it: its
 *       memory is a constant, whatever the number of keys dropped, and a collision only refuses
 *       an insertion (a near miss), never lets one in.</li>
 *   <li><b>Local changes</b> ({@link #drop}, {@link #dropAll}) go through the same fence, so a
 *       read of this JVM that began before its own {@code invalidate} cannot put the old value
 *       back either.</li>
 * </ul>
 * It also keeps the namespace's {@link Generation}: a poll that found another generation sets it
 * and then drops everything (in that order, so that a read that began after the drop judges
 * entries by the new generation, and one that began before is refused by the fence).
 *
 * <p>Time is a monotonic ticker in nanoseconds (no cross-host clock is involved). Thread-safe.
 *
 * @param <E> the entries (decoded values with their envelope's times)
 */
final class NearTier<E> {

  /** The bounded map that holds the entries; Caffeine in production. Thread-safe. */
  interface EntryMap<E> {
    E get(String key);

    void put(String key, E entry);

    /** Removes the key's entry if it is {@code entry}. */
    void remove(String key, E entry);

    void remove(String key);

    void clear();
  }

  /** What the tier tells its cache of, for its counters. Called on the polling threads. */
  interface Events {
    /** A scheduled poll failed. */
    void pollFailed(Throwable failure);

    /** A poll dropped keys the log named. */
    default void invalidated(int keys) {}

    /** A poll dropped everything (it could not confirm every change, or a new generation). */
    default void reset() {}

    /** A poll found another generation; called after it was set and the tier dropped. */
    default void newGeneration() {}
  }

  /** The version and start time of a store read, taken when it begins. */
  record Ticket(long version, long startedNanos) {}

  /** The fewest and the most stripes of the insertion fence ({@link #fenceStripes}). */
  static final int MIN_FENCE_STRIPES = 1 << 10;

  static final int MAX_FENCE_STRIPES = 1 << 16;

  private static final long NEVER = Long.MIN_VALUE;

  /**
   * The records a poll aims to find: the next poll comes after the time this many take at the
   * rate the last one found, when that is sooner than half the bound, so that a storm of changes
   * is read in polls of about this many records ({@link #delayAfter}), well within the log's
   * slots.
   */
  static final int CATCH_UP_RECORDS = NearLog.SLOTS / 8;

  private final NearLog log;
  private final EntryMap<E> entries;
  private final long stalenessNanos;
  private final long fenceWindowNanos;
  private final LongSupplier ticker;
  private final Events events;
  private final UnaryOperator<String> tierKeyOf;
  private final Generation generation;

  private final AtomicLong version = new AtomicLong();
  /** Per stripe, the highest version of a drop of a key hashed to it (0: none). */
  private final AtomicLongArray droppedVersions;
  private final int stripeShift;
  /** The highest version of a drop of everything (0: none). */
  private final AtomicLong allDroppedVersion = new AtomicLong();
  private volatile long confirmedAt = NEVER;
  private final AtomicReference<CompletableFuture<NearLog.Poll>> polling = new AtomicReference<>();

  /** The last applied poll's sequence and start: changed only as a poll completes. */
  private long lastSequence;
  private long lastPollStarted = NEVER;
  private volatile long nextPollDelayNanos;

  /** Guards the polling schedule. */
  private final Object schedule = new Object();
  private Scheduler scheduler;
  private Future<?> nextPoll;
  private boolean closed;

  /**
   * Creates a tier.
   *
   * @param log the namespace's log
   * @param entries the map
   * @param staleness {@code Δ}, the bound
   * @param fenceWindow at least the longest a store read and load may take (the load timeout):
   *     an entry whose read began longer ago is not inserted
   * @param ticker monotonic time in nanoseconds ({@code System::nanoTime})
   * @param tierKeyOf the key this tier holds a store key's entry under (the log records store
   *     keys)
   * @param generation the namespace's generation, which this tier's polls set
   * @param maximumSize the map's bound (entries, or bytes), from which the fence's number of
   *     stripes is derived ({@link #fenceStripes})
   * @param events told of failed polls and of what polls dropped
   */
  NearTier(NearLog log, EntryMap<E> entries, Duration staleness, Duration fenceWindow,
      LongSupplier ticker, UnaryOperator<String> tierKeyOf, Generation generation,
      long maximumSize, Events events) {
    this.generation = requireNonNull(generation, "generation");
    this.tierKeyOf = requireNonNull(tierKeyOf, "tierKeyOf");
    this.events = requireNonNull(events, "events");
    this.log = requireNonNull(log, "log");
    this.entries = requireNonNull(entries, "entries");
    this.stalenessNanos = staleness.toNanos();
    this.fenceWindowNanos = fenceWindow.toNanos();
    this.ticker = requireNonNull(ticker, "ticker");
    int stripes = fenceStripes(maximumSize);
    this.droppedVersions = new AtomicLongArray(stripes);
    this.stripeShift = Integer.SIZE - Integer.numberOfTrailingZeros(stripes);
  }

  /**
   * The insertion fence's stripes for a map bounded by {@code maximumSize}: that rounded up to a
   * power of two, at least {@link #MIN_FENCE_STRIPES} and at most {@link #MAX_FENCE_STRIPES} (8
   * bytes each: 512 KiB at most). More stripes make a collision (a drop of another key that
   * refuses an insertion begun before it) rarer; the chance for one insertion is about the
   * drops during its read divided by the stripes.
   */
  static int fenceStripes(long maximumSize) {
    long size = Math.max(MIN_FENCE_STRIPES, Math.min(MAX_FENCE_STRIPES, maximumSize));
    return Integer.highestOneBit((int) size - 1) << 1;
  }

  /** The key's stripe: the top bits of its hash times 2<sup>32</sup>/φ (visible for tests). */
  int stripe(String key) {
    return (key.hashCode() * 0x9E3779B9) >>> stripeShift;
  }

  // ---------------------------------------------------------------------------------------------
  // Reads

  /** The entry of a key if the tier holds one and is confirmed now; else {@code null}. */
  E get(String key) {
    return confirmed() ? entries.get(key) : null;
  }

  /** Whether the last applied poll started within {@code Δ}: the serving rule. */
  boolean confirmed() {
    long at = confirmedAt;
    return at != NEVER && ticker.getAsLong() - at <= stalenessNanos;
  }

  /** The namespace's generation as this tier last set it ({@link Generation#UNKNOWN} before). */
  long generation() {
    return generation.current();
  }

  /** Taken when a store read (or load) whose result may enter the tier begins. */
  Ticket ticket() {
    return new Ticket(version.get(), ticker.getAsLong());
  }

  /**
   * Puts an entry read (or loaded) since {@code ticket}, unless the fence refuses it.
   *
   * @return whether it entered
   */
  boolean offer(String key, E entry, Ticket ticket) {
    if (!admits(key, ticket)) {
      return false;
    }
    entries.put(key, entry);
    if (!admits(key, ticket)) { // a drop recorded meanwhile; it may have run before the put
      entries.remove(key, entry);
      return false;
    }
    return true;
  }

  private boolean admits(String key, Ticket ticket) {
    if (ticker.getAsLong() - ticket.startedNanos() > fenceWindowNanos
        || allDroppedVersion.get() > ticket.version()) {
      return false;
    }
    return droppedVersions.get(stripe(key)) <= ticket.version();
  }

  // ---------------------------------------------------------------------------------------------
  // Changes

  /**
   * Drops a key: changed here, or named by the log. The key's stripe keeps the highest version
   * of its drops, so a drop that took its version first but records it last does not lower it.
   */
  void drop(String key) {
    droppedVersions.accumulateAndGet(stripe(key), version.incrementAndGet(), Math::max);
    entries.remove(key);
  }

  /**
   * Drops everything: {@code invalidateAll} here, or a reset or new generation of the log. Keeps
   * the highest version of such drops, as {@link #drop} does per stripe: two concurrent calls
   * (a poll's reset and a local {@code invalidateAll}) cannot lower it.
   */
  void dropAll() {
    allDroppedVersion.accumulateAndGet(version.incrementAndGet(), Math::max);
    entries.clear();
  }

  /**
   * Polls the log once and applies what it found; then the tier is confirmed from the moment
   * this poll started, or, if it ended at a record not yet written, from the moment the previous
   * successful poll started (every record that one counted is applied). A poll asked for while
   * one runs is that poll. Fails with the store's failure, applying nothing and confirming
   * nothing.
   */
  CompletableFuture<NearLog.Poll> poll() {
    CompletableFuture<NearLog.Poll> mine = new CompletableFuture<>();
    CompletableFuture<NearLog.Poll> other = polling.compareAndExchange(null, mine);
    if (other != null) {
      return other;
    }
    long started = ticker.getAsLong();
    log.poll().whenComplete((poll, failure) -> {
      if (poll != null) {
        apply(poll);
        // lastPollStarted: the previous successful poll's, never older than confirmedAt
        confirmedAt = poll instanceof NearLog.Poll.Partial ? lastPollStarted : started;
        nextPollDelayNanos = delayAfter(poll, started);
      }
      polling.set(null);
      if (failure != null) {
        mine.completeExceptionally(failure);
      } else {
        mine.complete(poll);
      }
    });
    return mine;
  }

  private void apply(NearLog.Poll poll) {
    boolean first = !generation.known();
    boolean newGeneration = poll.generation() != generation.current();
    if (newGeneration) {
      generation.set(poll.generation()); // before the drop: see the class comment
    }
    if (newGeneration || poll instanceof NearLog.Poll.Reset) {
      dropAll();
      events.reset();
      if (newGeneration && !first) {
        events.newGeneration();
      }
    } else {
      List<String> changed = poll instanceof NearLog.Poll.Partial partial ? partial.keys()
          : ((NearLog.Poll.Changes) poll).keys();
      changed.forEach(storeKey -> drop(tierKeyOf.apply(storeKey)));
      if (!changed.isEmpty()) {
        events.invalidated(changed.size());
      }
    }
  }

  /**
   * The time from the end of a poll to the next: {@link #pollIntervalNanos}, or the time {@link
   * #CATCH_UP_RECORDS} records take at the rate this poll found if that is shorter (above
   * {@code CATCH_UP_RECORDS / interval}, 1,024 records/s with a bound of 1 s); an eighth of the
   * interval after a poll that ended at a missing record (most often one whose writer has not
   * yet written it: time for that write to land before the next poll, which resets if it, or
   * another record this poll counted, is still missing).
   */
  private long delayAfter(NearLog.Poll poll, long started) {
    long sequence = NearLog.sequenceOf(poll);
    long records = sequence - lastSequence;
    long window = started - lastPollStarted;
    boolean known = lastPollStarted != NEVER && window > 0 && records >= 0;
    lastSequence = sequence;
    lastPollStarted = started;
    long delay = pollIntervalNanos();
    if (known && records > 0) { // the time CATCH_UP_RECORDS take at the rate this poll found
      delay = Math.min(delay, (long) ((double) window * CATCH_UP_RECORDS / records));
    }
    return poll instanceof NearLog.Poll.Partial ? pollIntervalNanos() / 8 : delay;
  }

  /**
   * A poll that starts after this call: waits for the poll running now, if any, then polls.
   * Fails as {@link #poll} does.
   */
  CompletableFuture<NearLog.Poll> pollFromNow() {
    CompletableFuture<NearLog.Poll> running = polling.get();
    return running == null ? poll()
        : running.handle((poll, failure) -> null).thenCompose(ignored -> poll());
  }

  /** How many drop versions the fence keeps, whatever was dropped: its stripes (for tests). */
  int fenceSize() {
    return droppedVersions.length();
  }

  // ---------------------------------------------------------------------------------------------
  // The polling schedule

  /**
   * Starts polling on {@code scheduler}: at once, then {@link #pollIntervalNanos} after each
   * poll ends, whether it succeeded or failed, until {@link #close}; sooner after a poll that
   * found many records or ended at a missing one ({@link #delayAfter}).
   */
  void start(Scheduler scheduler) {
    synchronized (schedule) {
      if (this.scheduler != null) {
        throw new IllegalStateException("already started");
      }
      this.scheduler = requireNonNull(scheduler, "scheduler");
    }
    scheduleNextPoll(0);
  }

  private void scheduleNextPoll(long delayNanos) {
    synchronized (schedule) {
      if (!closed) {
        nextPoll = scheduler.schedule(this::pollAndContinue, delayNanos, TimeUnit.NANOSECONDS);
      }
    }
  }

  private void pollAndContinue() {
    CompletableFuture<NearLog.Poll> poll;
    try {
      poll = poll();
    } catch (RuntimeException e) {
      poll = CompletableFuture.failedFuture(e);
    }
    poll.whenComplete((found, failure) -> {
      if (failure != null) {
        events.pollFailed(EntryWriter.unwrap(failure));
      }
      scheduleNextPoll(failure != null ? pollIntervalNanos() : nextPollDelayNanos);
    });
  }

  /** Stops polling; the tier stops serving once its last confirmation is older than the bound. */
  void close() {
    synchronized (schedule) {
      closed = true;
      if (nextPoll != null) {
        nextPoll.cancel(false);
      }
    }
  }

  /** The time between two polls: half the bound, so that one late poll still keeps it. */
  long pollIntervalNanos() {
    return stalenessNanos / 2;
  }
}
