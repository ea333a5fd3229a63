package io.sustainablecache.internal;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.AsyncBulkLoader;
import io.sustainablecache.AsyncLoader;
import io.sustainablecache.BulkLoader;
import io.sustainablecache.BulkPeek;
import io.sustainablecache.CacheLoadException;
import io.sustainablecache.CacheStats;
import io.sustainablecache.Loader;
import io.sustainablecache.Lookup;
import io.sustainablecache.ReadStart;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.WriteFence;
import io.sustainablecache.spi.CacheStore;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The {@link SustainableCache} implementation: a facade. Reads go through the {@link ReadPath}
 * (single keys) and {@link BulkLoads} ({@code getAll}), which share one read step; loads, single
 * and bulk, through the one {@link LoadPipeline}; per-key state lives in the {@link KeyRegistry}; decoding in the
 * {@link EntryReader}; writing in the {@link EntryWriter}; the caller's own writes ({@code put},
 * {@code invalidate}) in {@link CallerWrites}. Extended only by {@link
 * DefaultLoadingSustainableCache}.
 */
class DefaultSustainableCache<V> implements SustainableCache<V> {

  private final CacheConfig<V> config;
  private final StatsCounter stats = new StatsCounter();
  private final KeyRegistry registry;
  private final Refresher refresher;
  private final ReadPath<V> reads;
  private final BulkLoads<V> bulk;
  private final LoadPipeline<V> loads;
  private final CallerWrites<V> writes;
  private final WriteFences<V> fences;
  /** The breakers of the store's nodes; {@code null} when turned off. */
  private final NodeBreakers breakers;
  /** The store work this cache issued and has not seen answered, which {@link #close} awaits. */
  private final PendingWrites pending;
  /** The invalidations this instance owes the store: the gate of every store read. */
  private final OwedInvalidations owed;
  /** The near cache; {@code null} without one. */
  private final NearCache<V> near;
  /**
   * The namespace's generation: the near cache, or without one the generation alone ({@code
   * invalidateAllBound}); {@code null} for neither.
   */
  private final NearCache<V> generations;

  /**
   * A cache with this configuration, made by {@link Engine#cache} for {@link
   * SustainableCacheBuilder#build()} (which checks the configuration first).
   *
   * @param settings the resolved configuration
   */
  DefaultSustainableCache(CacheConfig<V> settings) {
    // Every class below sees the store through the nodes' breakers: a node that stopped
    // answering fails its operations at once, for reads and writes alike. Above them, every read
    // of a key passes the invalidations this instance owes the store (issue 31), the read path
    // included, and the invalidations it pays go through the breakers too.
    CacheStore guarded = NodeBreakers.of(settings.store(), settings.storeProbeInterval(),
        settings.ticker(), stats);
    this.breakers = guarded instanceof NodeBreakers b ? b : null;
    OwedInvalidations owed = new OwedInvalidations(guarded, settings.ticker(),
        settings.scheduler(), stats);
    this.owed = owed;
    CacheConfig<V> config = settings.withStore(owed);
    this.config = config;
    Keys keys = new Keys(config.namespace(), config.store().maxKeyLength(), config.keyPolicy());
    long waitNanos = config.syncWait().toNanos();
    RateLimitedLog storeErrorLog = new RateLimitedLog(Log.LOGGER, config.ticker());
    Generation generation = config.generationBound() == null ? null
        : new Generation(config.ticker()::read, config.generationBound());
    EntrySeal seal = EntrySeal.of(config.entryKeys());
    EntryReader<V> reader = new EntryReader<>(config, stats, generation, seal);
    this.registry = new KeyRegistry(config, stats);
    // The classes that write see the store through the count of pending writes, which close()
    // waits for; the read path (ReadPath, BulkLoads, EntryReader) keeps the store itself, so a
    // hit pays nothing for the count.
    this.pending = new PendingWrites(config.store());
    CacheConfig<V> writing = config.withStore(pending);
    // A new generation (another instance's invalidateAll) voids this JVM's loads in flight, as
    // this instance's own invalidateAll does: reads that begin after it do not join them.
    this.generations = NearCache.of(writing, keys, reader, stats, generation,
        registry::detachAll);
    this.near = generations != null && generations.holdsEntries() ? generations : null;
    EntryWriter<V> writer = new EntryWriter<>(writing, stats, storeErrorLog, near, generation,
        seal);
    this.refresher = new Refresher(config);
    LoadTimes loadTimes = new LoadTimes();
    FleetLease<V> lease = new FleetLease<>(writing, keys, reader, stats, loadTimes,
        storeErrorLog);
    Spans spans = new Spans(config);
    this.loads = new LoadPipeline<>(config, registry, writer, refresher, lease, pending, stats,
        loadTimes, waitNanos, spans);
    AfterRead<V> afterRead = new AfterRead<>(config, loads, stats);
    this.reads = new ReadPath<>(config, keys, reader, loads, afterRead, refresher, stats,
        storeErrorLog, waitNanos, near);
    this.bulk = new BulkLoads<>(config, keys, reads, registry, afterRead, refresher, stats,
        waitNanos);
    this.writes = new CallerWrites<>(writing, pending, owed, keys, reads, reader, writer, registry,
        lease, stats, waitNanos, near, generations);
    this.fences = new WriteFences<>(writing, pending, keys, writer, writes, registry, lease,
        stats, waitNanos, spans);
    NearCache<V> namespace = generations;
    owed.payWith(fences::payOwed, namespace == null ? null
        : () -> namespace.invalidateAll().thenRun(registry::detachAll), pending);
  }

  // ---------------------------------------------------------------------------------------------
  // Reads

  @Override
  public V get(String key, Loader<? extends V> loader) {
    return valueOrThrow(reads.read(key, requireNonNull(loader, "loader"), Batch::ofOneSync));
  }

  @Override
  public Optional<V> find(String key, Loader<? extends V> loader) {
    return optional(reads.read(key, requireNonNull(loader, "loader"), Batch::ofOneSync));
  }

  @Override
  public CompletableFuture<V> getAsync(String key, AsyncLoader<? extends V> loader) {
    return reads.readAsync(key, requireNonNull(loader, "loader"), Batch::ofOne)
        .thenApply(this::valueOrThrow);
  }

  @Override
  public CompletableFuture<Optional<V>> findAsync(String key, AsyncLoader<? extends V> loader) {
    return reads.readAsync(key, requireNonNull(loader, "loader"), Batch::ofOne)
        .thenApply(this::optional);
  }

  @Override
  public Optional<V> getIfPresent(String key) {
    return optional(reads.read(key, null, null));
  }

  @Override
  public CompletableFuture<Optional<V>> getIfPresentAsync(String key) {
    return reads.readAsync(key, null, null).thenApply(this::optional);
  }

  @Override
  public Lookup<V> lookup(String key) {
    return cached(reads.read(key, null, null));
  }

  @Override
  public CompletableFuture<Lookup<V>> lookupAsync(String key) {
    return reads.readAsync(key, null, null).thenApply(this::cached);
  }

  @Override
  public Map<String, V> getAllIfPresent(Collection<String> keys) {
    return peekAll(keys).values();
  }

  @Override
  public BulkPeek<V> peekAll(Collection<String> keys) {
    return bulk.peekAll(requireNonNull(keys, "keys"), writes);
  }

  @Override
  public Map<String, V> getAll(Collection<String> keys, BulkLoader<? extends V> loader) {
    requireNonNull(keys, "keys");
    requireNonNull(loader, "loader");
    return bulk.getAll(keys, Batch.ofBulkSync(loader));
  }

  @Override
  public CompletableFuture<Map<String, V>> getAllAsync(Collection<String> keys,
      AsyncBulkLoader<? extends V> loader) {
    requireNonNull(keys, "keys");
    requireNonNull(loader, "loader");
    return bulk.getAllAsync(keys, Batch.ofBulk(loader));
  }

  // ---------------------------------------------------------------------------------------------
  // Writes

  @Override
  public void put(String key, V value) {
    writes.put(key, requireNonNull(value, "value"));
  }

  @Override
  public void putNoValue(String key) {
    writes.putNoValue(key);
  }

  @Override
  public Optional<V> putIfAbsent(String key, V value) {
    return writes.putIfAbsent(key, requireNonNull(value, "value"));
  }

  @Override
  public boolean putLoaded(String key, V value, Instant readStart) {
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    return writes.putLoaded(key, value, ReadStart.at(requireNonNull(readStart, "readStart")));
  }

  @Override
  public boolean putLoaded(String key, V value, ReadStart readStart) {
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    return writes.putLoaded(key, value, requireNonNull(readStart, "readStart"));
  }

  @Override
  public void invalidate(String key) {
    writes.invalidate(key);
  }

  @Override
  public void invalidateAll() {
    writes.invalidateAll();
  }

  @Override
  public WriteFence<V> fence(String key) {
    return fences.fence(key);
  }

  // ---------------------------------------------------------------------------------------------

  @Override
  public CacheStats stats() {
    return stats.snapshot();
  }

  @Override
  public void close() {
    owed.close();
    if (generations != null) {
      generations.close();
    }
    refresher.close(); // first: the refreshes it waits for issue writes too
    fences.close(); // releases waiting out a back-off after a store failure: retried now, once
    if (!Waiting.allowed(config.store())) {
      return; // the writes are answered on this very thread, once it returns
    }
    long unfinished = pending.drain(config.closeTimeout(), config.scheduler());
    if (unfinished > 0) {
      stats.add(Counter.UNFINISHED_AT_CLOSE, unfinished);
      Log.LOGGER.warn("cache {}: close() stopped waiting after closeTimeout ({}) with {} store"
          + " write(s) or lease release(s) still unanswered; shutting the client down now may"
          + " drop them (nothing stale is served: the keys load again, and other instances may"
          + " wait out a fleet lease)", config.namespace().isEmpty() ? "(no namespace)"
          : config.namespace(), config.closeTimeout(), unfinished);
    }
  }

  @Override
  public Map<String, Boolean> storeNodeStates() {
    return breakers == null ? Map.of() : breakers.states();
  }

  @Override
  public String toString() {
    return "SustainableCache{" + config + "}";
  }

  /** The number of keys with per-key state (loads in flight, failures); for tests. */
  int registeredKeyCount() {
    return registry.size();
  }

  KeyRegistry registry() {
    return registry;
  }

  /** The writes and chains issued and not answered yet; for tests. */
  long pendingWrites() {
    return pending.pending();
  }

  final ReadPath<V> reads() {
    return reads;
  }

  final BulkLoads<V> bulk() {
    return bulk;
  }

  final LoadPipeline<V> pipeline() {
    return loads;
  }

  // A read's answer is the value, or one of the shared answers without data (see Answer).

  @SuppressWarnings("unchecked")
  final V valueOrThrow(Object answer) {
    if (answer == Answer.absent()) {
      throw new CacheLoadException("the key has no value: its loader found none (cached as"
          + " \"no value\" for noValueTtl); use find() for keys that may not exist", null);
    }
    return (V) answer;
  }

  @SuppressWarnings("unchecked")
  final Optional<V> optional(Object answer) {
    return answer == Answer.absent() || answer == Answer.notCached() ? Optional.empty()
        : Optional.of((V) answer);
  }

  /** A peek's answer as the typed result {@link SustainableCache#lookup} returns. */
  @SuppressWarnings("unchecked")
  private Lookup<V> cached(Object answer) {
    if (answer == Answer.notCached()) {
      return new Lookup.NotCached<>();
    }
    return answer == Answer.absent() ? new Lookup.NoValue<>() : new Lookup.Hit<>((V) answer);
  }
}
