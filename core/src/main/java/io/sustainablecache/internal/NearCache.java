package io.sustainablecache.internal;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.RefreshPolicy;
import io.sustainablecache.Ticker;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.spi.StoreNodes;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * The near cache of one cache ({@code docs/near-cache.md}): its {@link NearTier} of decoded
 * entries, the namespace's {@link NearLog}, and what the rest of the cache asks of them. The read
 * path takes near hits and offers what it read from the store; a load's write and the caller's
 * writes drop the key here and record the change for the other instances. Thread-safe.
 */
final class NearCache<V> {

  private static final String CAFFEINE = "com.github.benmanes.caffeine.cache.Caffeine";

  /**
   * How long, in ticker nanoseconds, a reading of the clock serves near hits ({@link #millis}):
   * 1 ms, the clock's own resolution.
   */
  static final long CLOCK_READING_NANOS = 1_000_000L;

  private final NearTier<NearEntry<V>> tier;
  private final Keys keys;
  private final CacheStore store;
  private final EntryReader<V> reader;
  private final RandomGenerator random;
  private final double sampling;
  private final long stalenessMillis;
  private final Ticker ticker;
  private final InstantSource clock;
  private final RefreshPolicy policy;
  private final RefreshMode mode;
  /** The last reading of the clock and the ticker's reading just before it ({@link #millis}). */
  private volatile ClockReading clockReading;
  /** At most one refresh per entry per this many ticker nanoseconds: half the bound. */
  private final long refreshPauseNanos;
  private final int maxValueSize;
  private final RateLimitedLog staleSamples;
  private final StatsCounter stats;
  private final RateLimitedLog recordFailures;
  private final RateLimitedLog pollFailures;
  private final RateLimitedLog copyFailures;
  private final ValueCodec<V> codec;
  /** Whether a near hit decodes its own copy of the value ({@code nearCacheCopy}). */
  private final boolean copy;
  /** Whether this holds entries (a near cache), or the namespace's generation only. */
  private final boolean holdsEntries;

  private NearCache(NearTier<NearEntry<V>> tier, Keys keys, CacheConfig<V> config,
      EntryReader<V> reader, StatsCounter stats, boolean holdsEntries) {
    this.holdsEntries = holdsEntries;
    this.staleSamples = new RateLimitedLog(Log.LOGGER, config.ticker());
    this.recordFailures = new RateLimitedLog(Log.LOGGER, config.ticker());
    this.pollFailures = new RateLimitedLog(Log.LOGGER, config.ticker());
    this.copyFailures = new RateLimitedLog(Log.LOGGER, config.ticker());
    this.keys = keys;
    this.store = config.store();
    this.reader = reader;
    this.random = config.random();
    this.sampling = config.nearSampling();
    this.stalenessMillis = config.generationBound().toMillis();
    this.ticker = config.ticker();
    this.clock = config.clock();
    this.policy = config.policy();
    this.mode = config.refreshMode();
    long tick = ticker.read();
    this.clockReading = new ClockReading(clock.millis(), tick);
    this.refreshPauseNanos = Math.max(1, config.generationBound().toNanos() / 2);
    this.maxValueSize = config.maxValueSize();
    this.tier = tier;
    this.stats = stats;
    this.codec = config.codec();
    this.copy = config.nearCopy();
  }

  /** Whether Caffeine, the core's optional dependency, is on the classpath. */
  static boolean caffeinePresent() {
    try {
      Class.forName(CAFFEINE, false, NearCache.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /**
   * The near cache the configuration asks for, polling already; {@code null} for none ({@code
   * generation == null}). Without a near cache but with {@code invalidateAllBound}, the
   * namespace's generation alone ({@link #holdsEntries} false): its logs read and record
   * generations only ({@link NearLog#generationOnly}), it holds no entry and records no key, and
   * serves {@link #invalidateAll} and {@link #close} only. {@code newGeneration} runs when a poll
   * found another generation.
   */
  static <V> NearCache<V> of(CacheConfig<V> config, Keys keys, EntryReader<V> reader,
      StatsCounter stats, Generation generation, Runnable newGeneration) {
    if (generation == null) {
      return null;
    }
    boolean holdsEntries = config.nearMaximumSize() != 0;
    RateLimitedLog mixedLayouts = new RateLimitedLog(Log.LOGGER, config.ticker());
    Layouts layouts = new Layouts(config.store(), keys, config.random(), holdsEntries,
        () -> mixedLayouts.warn(
        "another instance records this namespace's changes in the other near-log layout (one"
        + " log per node, or the single log): neither sees the other's changes, and their near"
        + " caches may serve replaced values past the bound; give every instance of a namespace"
        + " the same store settings (FailureMode.Cancel or not; one server or several), or"
        + " upgrade them all at once"));
    // A read or load that began longer ago than the synchronous API waits for one is refused.
    Duration fenceWindow = config.syncWait();
    AtomicReference<NearCache<V>> near = new AtomicReference<>();
    NearTier.Events events = new NearTier.Events() {
      @Override
      public void pollFailed(Throwable failure) {
        near.get().pollFailed(failure);
      }

      @Override
      public void invalidated(int count) {
        stats.add(Counter.NEAR_INVALIDATION, count);
      }

      @Override
      public void reset() {
        if (holdsEntries) {
          stats.increment(Counter.NEAR_RESET);
        }
      }

      @Override
      public void newGeneration() {
        newGeneration.run();
      }
    };
    NearTier.EntryMap<NearEntry<V>> entries = holdsEntries
        ? CaffeineEntries.bounded(config.nearMaximumSize(),
            config.nearBoundedByBytes() ? NearEntry::storedBytes : null,
            () -> stats.increment(Counter.NEAR_EVICTION))
        : new NoEntries<>();
    NearTier<NearEntry<V>> tier = new NearTier<>(layouts, layouts.get(), entries,
        NearEntry::node, config.generationBound(), fenceWindow, config.ticker()::read,
        keys::nearKeyOf, generation, config.nearMaximumSize(), events);
    near.set(new NearCache<>(tier, keys, config, reader, stats, holdsEntries));
    // Built on a thread that may not wait (Waiting), the first poll is not awaited.
    near.get().firstPoll(Waiting.allowed(config.store()) ? config.generationBound()
        : Duration.ZERO);
    tier.start(config.scheduler());
    return near.get();
  }

  /** The map of a generation-only near cache: it never holds an entry. */
  private static final class NoEntries<E> implements NearTier.EntryMap<E> {
    @Override
    public E get(String key) {
      return null;
    }

    @Override
    public void put(String key, E entry) {
      throw new IllegalStateException("a generation-only near cache holds no entry");
    }

    @Override
    public void remove(String key, E entry) {}

    @Override
    public void remove(String key) {}

    @Override
    public void removeIf(Predicate<E> filter) {}

    @Override
    public void clear() {}
  }

  /**
   * The logs of a namespace: one per node when the store offers two nodes or more ({@link
   * CacheStore#nodes()}), re-derived when the store offers another snapshot of its nodes; else
   * (no nodes offered, or one) the namespace's single log, so that a single server keeps the items
   * it always had. Thread-safe.
   *
   * <p>Another snapshot, not other ids: a node the client dropped and added again between two
   * polls (ARCUS: a dead node's znode deleted, then the restarted server's created) has its old
   * id (the address and the position) but is another connection of the client, and the per-node
   * stores of the old snapshot still send to the one dropped. Kept on ids alone, the layout's log
   * of that node was read through the dropped connection for ever: every poll of it failed, and
   * each such poll, due exactly when the node's breaker allowed its next probe, took the probe, so
   * the breaker never closed and the node's keys were never cached again (the restarted ARCUS
   * node of {@code ClusterContract}'s kill-and-restart test, uncached for more than 20 s once in
   * CI). The adapters return the same snapshot while their client's list is unchanged.
   */
  private static final class Layouts implements Supplier<NearTier.Layout> {
    private final CacheStore store;
    private final Keys keys;
    private final RandomGenerator random;
    private final Runnable otherLayoutWrites;
    /** Whether the logs record keys (a near cache), or generations only. */
    private final boolean recordsKeys;
    private NearTier.Layout current;
    /** The snapshot {@link #current} was derived from; {@code null}: none, or the single log. */
    private StoreNodes source;

    Layouts(CacheStore store, Keys keys, RandomGenerator random, boolean recordsKeys,
        Runnable otherLayoutWrites) {
      this.recordsKeys = recordsKeys;
      this.store = store;
      this.keys = keys;
      this.random = random;
      this.otherLayoutWrites = otherLayoutWrites;
    }

    @Override
    public synchronized NearTier.Layout get() {
      StoreNodes nodes = store.nodes().filter(offered -> offered.ids().size() > 1).orElse(null);
      if (current != null && (nodes == null ? current.logs().size() == 1
          && current.ids().equals(NearTier.Layout.SINGLE) : source == nodes)) {
        return current;
      }
      source = nodes;
      if (nodes == null) {
        current = NearTier.Layout.single(log(store, NearLog.SINGLE));
      } else {
        List<NearLog> logs = new ArrayList<>(nodes.ids().size());
        for (int i = 0; i < nodes.ids().size(); i++) {
          logs.add(log(nodes.on(i), NearLog.PER_NODE));
        }
        current = new NearTier.Layout(nodes.ids(), List.copyOf(logs), nodes::nodeOf);
      }
      return current;
    }

    private NearLog log(CacheStore on, String name) {
      return recordsKeys ? new NearLog(on, keys, name, random, otherLayoutWrites)
          : NearLog.generationOnly(on, keys, name, random);
    }
  }

  /**
   * Polls once on the building thread, waiting at most {@code patience} (the bound): until a poll succeeds, the
   * generation is unknown, every read misses and loads write nothing (see {@link Generation}).
   */
  private void firstPoll(Duration patience) {
    CompletableFuture<NearLog.Poll> poll = tier.poll();
    if (patience.isZero()) {
      return; // its outcome reaches the tier all the same
    }
    Waiting.await(poll, patience.toNanos(), null, (how, failure) -> {
      if (how != Waiting.Unfinished.INTERRUPTED) {
        pollFailed(failure);
      }
      return null;
    });
  }

  private void pollFailed(Throwable failure) {
    stats.increment(Counter.NEAR_POLL_FAILURE);
    pollFailures.warn(holdsEntries ? "the near cache could not poll its invalidation log; it"
        + " serves nothing once its last confirmation is older than its bound"
        : "the cache could not read its namespace's generation (invalidateAllBound); until it"
        + " can, another instance's invalidateAll does not reach it", Failures.unwrap(failure));
  }

  /**
   * Whether this is a near cache, holding entries; {@code false} for the namespace's generation
   * alone, which the read path and the writes never ask for entries or records.
   */
  boolean holdsEntries() {
    return holdsEntries;
  }

  /**
   * A servable entry of a caller's key, or {@code null}: read the store. Allocates nothing for a
   * plain key ({@link Keys#nearKey}). Checks the key as {@link Keys#storeKey} does, but not on a
   * hit of a plain key: the tier is looked up under the key as it is first, and an entry held
   * under a plain key ({@link NearEntry#plainKey}) answers at once, since that key was checked
   * when its entry entered (only this cache's own store keys enter, under {@link
   * Keys#nearKeyOf}); otherwise (nothing held, or a hashed key's entry held under a store key
   * equal to this caller's key) the key is checked and looked up under its near key.
   */
  NearEntry<V> get(String key) {
    return get(key, ticker.read());
  }

  /** {@link #get} at {@code tick}, a reading of the {@link #tick ticker} taken just before. */
  NearEntry<V> get(String key, long tick) {
    NearEntry<V> held = tier.get(requireNonNull(key, "key"), tick);
    if (held != null && held.plainKey()) {
      return held;
    }
    String nearKey = keys.nearKey(key); // throws for a key the store cannot take
    return held == null && nearKey.equals(key) ? null : tier.get(nearKey, tick);
  }

  /** The ticker's reading now, in nanoseconds: a near hit's one reading of time. */
  long tick() {
    return ticker.read();
  }

  /**
   * The clock's time, epoch milliseconds, at {@code tick} (a {@link #tick} just taken), for a
   * near hit's refresh decision: the last reading of the clock, read again when it is {@link
   * #CLOCK_READING_NANOS} or more older than {@code tick} (a reading newer than {@code tick},
   * another thread's, serves as it is). So a near hit reads the ticker once and the clock once per
   * millisecond, not twice per hit; the decision's time is the clock's to within its resolution,
   * and a step of the clock reaches near hits within a millisecond of the ticker. Thread-safe:
   * racing readers may each read the clock, the last one's reading stays.
   */
  long millis(long tick) {
    ClockReading last = clockReading;
    if (tick - last.tick() < CLOCK_READING_NANOS) {
      return last.millis();
    }
    long millis = clock.millis();
    clockReading = new ClockReading(millis, tick);
    return millis;
  }

  /** A reading of the clock ({@code millis}) and the ticker's reading just before it. */
  private record ClockReading(long millis, long tick) {}

  /**
   * What a near hit of {@code key} answers: the entry's value ({@link Answer#absent()} for a
   * cached absence), or, with {@code nearCacheCopy}, a copy of it decoded from the stored bytes;
   * {@code null} if that decode failed (then the key is dropped here, counted as corrupt, and the
   * caller reads the store).
   */
  Object answer(String key, NearEntry<V> hit) {
    Entry<V> entry = hit.entry();
    byte[] bytes = hit.copyFrom();
    if (bytes == null || entry.kind() != Entry.Kind.VALUE) {
      return ReadPath.answer(entry);
    }
    V value;
    try {
      value = codec.decode(bytes, Envelope.payloadOffset(bytes), Envelope.payloadLength(bytes));
    } catch (RuntimeException e) {
      value = null;
    }
    if (value == null) {
      tier.drop(keys.nearKey(key));
      stats.increment(Counter.CORRUPT_ENTRY);
      copyFailures.warn(codec + " could not decode a copy of a near entry's value (decoding"
          + " what it encoded failed); reading the store");
    }
    return value;
  }

  /**
   * Whether a near hit now that calls for a refresh may start one: at most one per entry per half
   * bound ({@link NearEntry}), measured on the ticker.
   */
  boolean mayRefresh(NearEntry<V> hit) {
    return hit.claimRefresh(ticker.read(), refreshPauseNanos);
  }

  /**
   * Checks a near hit against the store, for a share of them: read in the background, counted as
   * stale if the store had replaced the served entry more than the bound before {@code now} (by
   * the replacing entry's write time). Costs nothing on the near hit but one random draw.
   */
  void sample(String key, Entry<V> served, long now) {
    if (sampling == 0 || random.nextDouble() >= sampling) {
      return;
    }
    stats.increment(Counter.NEAR_SAMPLE);
    String storeKey = keys.storeKey(key);
    store.gets(storeKey).whenComplete((item, failure) -> {
      if (failure != null || item.isEmpty()) {
        return; // nothing to compare with (a store error, or the item evicted or expired)
      }
      Entry<V> current = reader.read(storeKey, item.get(), now);
      boolean replaced = served.casToken() == Entry.NO_CAS // written here: token unknown
          ? current.fetchedAt() != served.fetchedAt() || current.kind() != served.kind()
          : current.casToken() != served.casToken();
      if (replaced && now - current.fetchedAt() > stalenessMillis) {
        stats.increment(Counter.NEAR_STALE_SAMPLE);
        staleSamples.warn("the near cache served a value the store had replaced "
            + (now - current.fetchedAt()) + " ms earlier, more than its bound of "
            + stalenessMillis + " ms: a change that did not go through its log, or hosts' clocks"
            + " apart by more than the bound");
      }
    });
  }

  /** The near tier's entry of {@code entry}, held under {@code key} ({@link Keys#nearKeyOf}). */
  private NearEntry<V> nearEntry(String key, Entry<V> entry, int storedBytes, byte[] copyFrom,
      int node) {
    return new NearEntry<>(entry, storedBytes, copyFrom, node,
        Decision.freshUntil(entry, mode, policy), !keys.isHashedNearKey(key));
  }

  /** Taken before a store read whose entry may be {@link #offer}ed. */
  NearTier.Ticket ticket() {
    return tier.ticket();
  }

  /**
   * Offers what a store read since {@code ticket} found ({@code item} decoded as {@code entry}):
   * values and cached absences only, and no item larger than {@code maxValueSize} (written by an
   * instance with a larger limit): the near tier holds only what this instance could write.
   */
  void offer(String storeKey, StoreItem item, Entry<V> entry, NearTier.Ticket ticket) {
    // a fence's prior is never held near: the bound's log records no strip of it before a commit
    if (entry != null && entry.cached() && item.value().length <= maxValueSize) {
      int node = tier.nodeOf(storeKey);
      if (node >= 0) {
        String key = keys.nearKeyOf(storeKey);
        tier.offer(key,
            nearEntry(key, entry, item.value().length, copy ? item.value() : null, node), ticket);
      }
    }
  }

  /**
   * A load is about to write the key: drops it here and returns the ticket the entry written
   * enters with ({@link #written}).
   */
  NearTier.Ticket writing(String storeKey) {
    tier.drop(keys.nearKeyOf(storeKey));
    return tier.ticket();
  }

  /**
   * A load's write of the key landed (or may have: it failed in flight, {@code entry == null}):
   * holds the entry written, unless a drop of the key or of everything (or another generation)
   * came since the ticket {@link #writing} took before the write was issued; records the change
   * for the other instances. A record that fails is counted and logged; the other instances then
   * keep their copy until its own expiry.
   *
   * <p>Holding the entry at once is safe: a conditional write lands only if no change of the key
   * landed since the read the load started from, and a change that lands after it reaches this
   * tier through the log, whose drop refuses or removes the entry, however late this runs.
   *
   * @param generation the generation the entry was written in
   * @param stored what was written (never modified)
   */
  void written(String storeKey, Entry<V> entry, byte[] stored, long generation,
      NearTier.Ticket ticket) {
    String key = keys.nearKeyOf(storeKey);
    if (entry == null) {
      tier.drop(key);
    } else if (tier.generation(storeKey) == generation) { // set before the drop of a change
      int node = tier.nodeOf(storeKey);
      if (node >= 0) {
        tier.offer(key, nearEntry(key, entry, stored.length, copy ? stored : null, node), ticket);
      }
    }
    tier.record(storeKey).whenComplete((done, failure) -> {
      if (failure != null) {
        stats.increment(Counter.NEAR_RECORD_FAILURE);
        recordFailures.warn("the near cache's log could not record a refreshed key; other"
            + " instances keep serving their copy until it expires", Failures.unwrap(failure));
      }
    });
  }

  /**
   * A caller's write or invalidation of the key landed: records it, then drops the key here.
   * The future fails if the record did (the caller must learn that the bound does not hold).
   */
  CompletableFuture<Void> changedByCaller(String storeKey) {
    return tier.record(storeKey)
        .whenComplete((done, failure) -> tier.drop(keys.nearKeyOf(storeKey)));
  }

  /**
   * {@code invalidateAll}: records a new generation, then polls (a poll that starts after the
   * record), which sets it here and drops everything. Fails if the record or the poll did; then
   * everything is dropped here, and this instance may read entries of the old generation until a
   * poll succeeds.
   */
  CompletableFuture<Void> invalidateAll() {
    return tier.recordAll().thenCompose(recorded -> tier.pollFromNow())
        .whenComplete((done, failure) -> {
          if (failure != null) {
            tier.dropAll();
          }
        }).thenApply(done -> null);
  }

  /** Drops the key here only (a caller's write that failed, and so may have landed or not). */
  void forget(String storeKey) {
    tier.drop(keys.nearKeyOf(storeKey));
  }

  /** Stops polling; nothing is served once the last confirmation is older than the bound. */
  void close() {
    tier.close();
  }
}
