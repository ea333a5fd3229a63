package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
 *       <em>started</em>. {@link #get} answers only while {@code now - confirmedAt <= Δ};
 *       otherwise the caller reads the store.</li>
 *   <li><b>Insertion fence.</b> An entry read from the store enters only if no drop of its key
 *       (nor of everything) happened after its read began ({@link #ticket} at the start, {@link
 *       #offer} at the end), and only if the read began less than the fence window ago. A drop
 *       racing an insertion wins: the drop is recorded before it removes, the insertion checks
 *       again after it puts.</li>
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

  /** A drop of one key: the version it made, and when (to forget it after the fence window). */
  private record Drop(long version, long nanos) {}

  private static final long NEVER = Long.MIN_VALUE;

  private final NearLog log;
  private final EntryMap<E> entries;
  private final long stalenessNanos;
  private final long fenceWindowNanos;
  private final LongSupplier ticker;
  private final Events events;
  private final UnaryOperator<String> tierKeyOf;
  private final Generation generation;

  private final AtomicLong version = new AtomicLong();
  private final Map<String, Drop> drops = new ConcurrentHashMap<>();
  private volatile long allDroppedVersion;
  private volatile long confirmedAt = NEVER;
  private final AtomicReference<CompletableFuture<NearLog.Poll>> polling = new AtomicReference<>();

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
   * @param events told of failed polls and of what polls dropped
   */
  NearTier(NearLog log, EntryMap<E> entries, Duration staleness, Duration fenceWindow,
      LongSupplier ticker, UnaryOperator<String> tierKeyOf, Generation generation,
      Events events) {
    this.generation = requireNonNull(generation, "generation");
    this.tierKeyOf = requireNonNull(tierKeyOf, "tierKeyOf");
    this.events = requireNonNull(events, "events");
    this.log = requireNonNull(log, "log");
    this.entries = requireNonNull(entries, "entries");
    this.stalenessNanos = staleness.toNanos();
    this.fenceWindowNanos = fenceWindow.toNanos();
    this.ticker = requireNonNull(ticker, "ticker");
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
        || allDroppedVersion > ticket.version()) {
      return false;
    }
    Drop drop = drops.get(key);
    return drop == null || drop.version() <= ticket.version();
  }

  // ---------------------------------------------------------------------------------------------
  // Changes

  /** Drops a key: changed here, or named by the log. */
  void drop(String key) {
    drops.put(key, new Drop(version.incrementAndGet(), ticker.getAsLong()));
    entries.remove(key);
  }

  /** Drops everything: {@code invalidateAll} here, or a reset or new generation of the log. */
  void dropAll() {
    allDroppedVersion = version.incrementAndGet();
    entries.clear();
  }

  /**
   * Polls the log once and applies what it found; then the tier is confirmed from the moment
   * this poll started. A poll asked for while one runs is that poll. Fails with the store's
   * failure, applying nothing and confirming nothing.
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
        confirmedAt = started;
        forgetOldDrops();
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
      List<String> changed = ((NearLog.Poll.Changes) poll).keys();
      changed.forEach(storeKey -> drop(tierKeyOf.apply(storeKey)));
      if (!changed.isEmpty()) {
        events.invalidated(changed.size());
      }
    }
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

  /** Drops older than the fence window refuse nothing any more: every older ticket is refused. */
  private void forgetOldDrops() {
    long now = ticker.getAsLong();
    for (Iterator<Drop> it = drops.values().iterator(); it.hasNext(); ) {
      if (now - it.next().nanos() > fenceWindowNanos) {
        it.remove();
      }
    }
  }

  /** How many drops the fence remembers (for tests and statistics). */
  int rememberedDrops() {
    return drops.size();
  }

  // ---------------------------------------------------------------------------------------------
  // The polling schedule

  /**
   * Starts polling on {@code scheduler}: at once, then {@link #pollIntervalNanos} after each
   * poll ends, whether it succeeded or failed, until {@link #close}.
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
      scheduleNextPoll(pollIntervalNanos());
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
