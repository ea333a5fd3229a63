package io.sustainablecache.internal;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.CacheObserver;
import io.sustainablecache.KeyPolicy;
import io.sustainablecache.RefreshPolicy;
import io.sustainablecache.Scheduler;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.Ticker;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.random.RandomGenerator;

/**
 * A cache's configuration with every default resolved: what {@link SustainableCacheBuilder}
 * makes (in one place, {@code SustainableCacheBuilder.config}, from its {@code CacheSettings} rows
 * and its objects) and the engine reads. Built through {@link #builder}, one named setter per
 * component, never positionally, so a duration cannot land in its neighbour's place by being
 * listed in the wrong order. {@link Builder#build()} fails with {@link IllegalStateException} naming a
 * component that was not set (except the optional ones: the refresh executor, the coalescing
 * wait, the near cache's, and {@code invalidateAllBound}); values are not checked again here,
 * the builder's settings rows checked them.
 *
 * <p>Over 700 lines because each of its about forty components takes a field, an accessor and a
 * named setter of the {@link Builder}, each with its line of Javadoc; nothing else is here.
 *
 * <p><b>Not part of the supported API:</b> public for the API package only; it may change in any
 * release. <b>Thread-safety:</b> immutable (the entry keys' arrays are not copied and must not be
 * changed). <b>Nulls:</b> only the accessors documented as nullable return {@code null}.
 *
 * @param <V> the value type
 */
public final class CacheConfig<V> {

  private final CacheStore store;
  private final String namespace;
  private final Duration ttl;
  private final Duration grace;
  private final RefreshPolicy policy;
  private final ValueCodec<V> codec;
  private final Executor executor;
  private final int refreshThreads;
  private final int refreshQueueCapacity;
  private final InstantSource clock;
  private final RandomGenerator random;
  private final KeyPolicy keyPolicy;
  private final int maxValueSize;
  private final Duration failureBackoff;
  private final Duration maxFailureBackoff;
  private final boolean serveStaleOnError;
  private final Duration maxClockSkew;
  private final Duration loadTimeout;
  private final Duration noValueTtl;
  private final double ttlJitter;
  private final boolean fleetLease;
  private final int coalesceMaxBatchSize;
  private final Duration coalesceMaxWait;
  private final Duration closeTimeout;
  private final Duration fenceTimeout;
  private final Scheduler scheduler;
  private final long nearMaximumSize;
  private final boolean nearBoundedByBytes;
  private final Duration nearStaleness;
  private final double nearSampling;
  private final boolean nearCopy;
  private final Duration invalidateAllBound;
  private final List<byte[]> entryKeys;
  private final boolean failWritesWhenStoreDown;
  private final Ticker ticker;
  private final Duration storeProbeInterval;
  private final Duration outageReuse;
  private final RefreshMode refreshMode;
  private final CacheObserver observer;

  private CacheConfig(Builder<V> b) {
    this.store = required(b.store, "store");
    this.namespace = required(b.namespace, "namespace");
    this.ttl = required(b.ttl, "ttl");
    this.grace = required(b.grace, "grace");
    this.policy = required(b.policy, "policy");
    this.codec = required(b.codec, "codec");
    this.executor = b.executor;
    this.refreshThreads = required(b.refreshThreads, "refreshThreads");
    this.refreshQueueCapacity = required(b.refreshQueueCapacity, "refreshQueueCapacity");
    this.clock = required(b.clock, "clock");
    this.random = required(b.random, "random");
    this.keyPolicy = required(b.keyPolicy, "keyPolicy");
    this.maxValueSize = required(b.maxValueSize, "maxValueSize");
    this.failureBackoff = required(b.failureBackoff, "failureBackoff");
    this.maxFailureBackoff = required(b.maxFailureBackoff, "maxFailureBackoff");
    this.serveStaleOnError = required(b.serveStaleOnError, "serveStaleOnError");
    this.maxClockSkew = required(b.maxClockSkew, "maxClockSkew");
    this.loadTimeout = required(b.loadTimeout, "loadTimeout");
    this.noValueTtl = required(b.noValueTtl, "noValueTtl");
    this.ttlJitter = required(b.ttlJitter, "ttlJitter");
    this.fleetLease = required(b.fleetLease, "fleetLease");
    this.coalesceMaxBatchSize = required(b.coalesceMaxBatchSize, "coalesceMaxBatchSize");
    this.coalesceMaxWait = b.coalesceMaxWait;
    this.closeTimeout = required(b.closeTimeout, "closeTimeout");
    this.fenceTimeout = required(b.fenceTimeout, "fenceTimeout");
    this.scheduler = required(b.scheduler, "scheduler");
    this.nearMaximumSize = b.nearMaximumSize;
    this.nearBoundedByBytes = b.nearBoundedByBytes;
    this.nearStaleness = b.nearStaleness;
    this.nearSampling = b.nearSampling;
    this.nearCopy = b.nearCopy;
    this.invalidateAllBound = b.invalidateAllBound;
    this.entryKeys = required(b.entryKeys, "entryKeys");
    this.failWritesWhenStoreDown = required(b.failWritesWhenStoreDown, "failWritesWhenStoreDown");
    this.ticker = required(b.ticker, "ticker");
    this.storeProbeInterval = required(b.storeProbeInterval, "storeProbeInterval");
    this.outageReuse = required(b.outageReuse, "outageReuse");
    this.refreshMode = RefreshMode.of(policy);
    this.observer = b.observer;
  }

  private static <T> T required(T value, String name) {
    if (value == null) {
      throw new IllegalStateException("CacheConfig." + name + " was not set");
    }
    return value;
  }

  /**
   * Starts a configuration.
   *
   * @param <V> the value type
   * @return a new builder with nothing set
   */
  public static <V> Builder<V> builder() {
    return new Builder<>();
  }

  /** The store the cache reads and writes. */
  public CacheStore store() {
    return store;
  }

  /** The namespace; empty for none. */
  public String namespace() {
    return namespace;
  }

  /** The logical time to live. */
  public Duration ttl() {
    return ttl;
  }

  /** How long an item outlives its logical expiry on the server. */
  public Duration grace() {
    return grace;
  }

  /** The refresh policy; it also decides {@link #refreshMode()}. */
  public RefreshPolicy policy() {
    return policy;
  }

  /** The value codec. */
  public ValueCodec<V> codec() {
    return codec;
  }

  /** The caller's refresh executor, or {@code null} for one the cache owns. */
  public Executor executor() {
    return executor;
  }

  /** The threads of the refresh executor the cache owns. */
  public int refreshThreads() {
    return refreshThreads;
  }

  /** The queue of the refresh executor the cache owns. */
  public int refreshQueueCapacity() {
    return refreshQueueCapacity;
  }

  /** The wall clock: only for what is compared with other hosts' time. */
  public InstantSource clock() {
    return clock;
  }

  /** The random source of the refresh decisions and jitter. */
  public RandomGenerator random() {
    return random;
  }

  /** What happens to keys the store cannot hold. */
  public KeyPolicy keyPolicy() {
    return keyPolicy;
  }

  /** The largest encoded value written, bytes. */
  public int maxValueSize() {
    return maxValueSize;
  }

  /** The first back-off after a failed load. */
  public Duration failureBackoff() {
    return failureBackoff;
  }

  /** The longest back-off after repeated failed loads. */
  public Duration maxFailureBackoff() {
    return maxFailureBackoff;
  }

  /** Whether a failed reload answers with the stale value. */
  public boolean serveStaleOnError() {
    return serveStaleOnError;
  }

  /** The largest difference between hosts' wall clocks assumed. */
  public Duration maxClockSkew() {
    return maxClockSkew;
  }

  /** How long a load may run before its key is released. */
  public Duration loadTimeout() {
    return loadTimeout;
  }

  /** How long a key is cached as having no value. */
  public Duration noValueTtl() {
    return noValueTtl;
  }

  /** The share of the TTL by which written entries' expiry varies. */
  public double ttlJitter() {
    return ttlJitter;
  }

  /** Whether a miss takes the fleet lease before loading. */
  public boolean fleetLease() {
    return fleetLease;
  }

  /** The keys of one coalesced loader call at most (a loading cache's, a bulk refresh's). */
  public int coalesceMaxBatchSize() {
    return coalesceMaxBatchSize;
  }

  /** How long a coalesced batch waits at most; {@code null}: no bound. */
  public Duration coalesceMaxWait() {
    return coalesceMaxWait;
  }

  /** How long {@code close()} waits, per step. */
  public Duration closeTimeout() {
    return closeTimeout;
  }

  /** How long a writer's hold of a write fence lasts at most. */
  public Duration fenceTimeout() {
    return fenceTimeout;
  }

  /** The timers' scheduler. */
  public Scheduler scheduler() {
    return scheduler;
  }

  /** The near cache's entries at most (bytes, if {@code nearBoundedByBytes}); 0 without a near
   * cache. */
  public long nearMaximumSize() {
    return nearMaximumSize;
  }

  /** Whether the near cache is bounded by its entries' stored sizes. */
  public boolean nearBoundedByBytes() {
    return nearBoundedByBytes;
  }

  /** The near cache's bound; {@code null} without a near cache. */
  public Duration nearStaleness() {
    return nearStaleness;
  }

  /** The share of near hits checked against the store; 0 without a near cache. */
  public double nearSampling() {
    return nearSampling;
  }

  /** Whether a near hit decodes its own copy of the value from the stored bytes. */
  public boolean nearCopy() {
    return nearCopy;
  }

  /** Without a near cache, how soon the other instances see {@code invalidateAll} (the namespace's
   * generation polled every half of it); {@code null}: off. */
  public Duration invalidateAllBound() {
    return invalidateAllBound;
  }

  /** The keys of the entries' keyed tag, the current one first, then those still accepted on reads;
   * empty: entries carry a checksum only. */
  public List<byte[]> entryKeys() {
    return entryKeys;
  }

  /** Whether a change whose invalidation cannot reach the store throws (fails closed) instead of
   * being owed ({@link OwedInvalidations}). */
  public boolean failWritesWhenStoreDown() {
    return failWritesWhenStoreDown;
  }

  /** Monotonic nanoseconds: every duration and bound measured on this host. */
  public Ticker ticker() {
    return ticker;
  }

  /** How often a store node whose operations fail at once is probed; zero: no breakers ({@link
   * NodeBreakers}). */
  public Duration storeProbeInterval() {
    return storeProbeInterval;
  }

  /** How long a load may answer reads that failed on the store and began after it registered
   * ({@link KeyRegistry}); zero: only loads registered after the read began. */
  public Duration outageReuse() {
    return outageReuse;
  }

  /** Told when the slow steps begin and end; {@code null} for none. */
  public CacheObserver observer() {
    return observer;
  }

  /**
   * Where the policy's refreshes run, resolved from {@link #policy()}.
   *
   * @return the mode
   */
  RefreshMode refreshMode() {
    return refreshMode;
  }

  /**
   * A ticker's reading in whole milliseconds, the unit of the cache's local durations (load
   * timeouts, back-off windows, lease waits, refresh pauses). Like the ticker's, only differences
   * of two readings mean anything.
   */
  static long millis(Ticker ticker) {
    return Math.floorDiv(ticker.read(), 1_000_000L);
  }

  /**
   * The bound of the namespace's generation, which entries carry and {@code invalidateAll}
   * changes: the near cache's staleness, else {@code invalidateAllBound}; {@code null} for no
   * generation (entries without one, {@code invalidateAll} a prefix flush where the store has one).
   */
  Duration generationBound() {
    return nearStaleness != null ? nearStaleness : invalidateAllBound;
  }

  /**
   * How long the synchronous API waits for a load: its timeout plus a second's margin for the
   * timer. The near cache refuses a read or load that began longer ago than this (its fence
   * window) and the registry remembers a finished load for as long, so it is one rule.
   */
  Duration syncWait() {
    return loadTimeout.plusSeconds(1);
  }

  /**
   * This configuration over another store: how {@link DefaultSustainableCache} gives the classes
   * that write its {@link PendingWrites}, while the read path keeps the store itself.
   */
  CacheConfig<V> withStore(CacheStore other) {
    return new Builder<>(this).store(other).build();
  }

  /** The item's lifetime on the server: {@code ttl + grace}, milliseconds. */
  long lifetimeMillis() {
    return ttl.toMillis() + grace.toMillis();
  }

  /** The settings a reader of a log wants: namespace, durations, policy, codec, near cache. */
  @Override
  public String toString() {
    return "namespace=" + namespace + ", ttl=" + ttl + ", grace=" + grace + ", policy=" + policy
        + ", codec=" + codec + ", noValueTtl=" + noValueTtl + ", loadTimeout=" + loadTimeout
        + ", fleetLease=" + fleetLease
        + (nearMaximumSize == 0 ? "" : ", nearCache=" + nearMaximumSize
            + (nearBoundedByBytes ? "B" : "") + ":" + nearStaleness
            + (nearCopy ? ", nearCacheCopy=true" : ""))
        + (invalidateAllBound == null ? "" : ", invalidateAllBound=" + invalidateAllBound);
  }

  /**
   * Builds a {@link CacheConfig}, one named setter per component. Not thread-safe; each setter
   * replaces what it set before and returns this builder.
   *
   * @param <V> the value type
   */
  public static final class Builder<V> {

    private CacheStore store;
    private String namespace;
    private Duration ttl;
    private Duration grace;
    private RefreshPolicy policy;
    private ValueCodec<V> codec;
    private Executor executor;
    private Integer refreshThreads;
    private Integer refreshQueueCapacity;
    private InstantSource clock;
    private RandomGenerator random;
    private KeyPolicy keyPolicy;
    private Integer maxValueSize;
    private Duration failureBackoff;
    private Duration maxFailureBackoff;
    private Boolean serveStaleOnError;
    private Duration maxClockSkew;
    private Duration loadTimeout;
    private Duration noValueTtl;
    private Double ttlJitter;
    private Boolean fleetLease;
    private Integer coalesceMaxBatchSize;
    private Duration coalesceMaxWait;
    private Duration closeTimeout;
    private Duration fenceTimeout;
    private Scheduler scheduler;
    private Long nearMaximumSize = 0L;
    private Boolean nearBoundedByBytes = false;
    private Duration nearStaleness;
    private Double nearSampling = 0.0;
    private Boolean nearCopy = false;
    private Duration invalidateAllBound;
    private List<byte[]> entryKeys;
    private Boolean failWritesWhenStoreDown;
    private Ticker ticker;
    private Duration storeProbeInterval;
    private Duration outageReuse;
    private CacheObserver observer;

    private Builder() {}

    private Builder(CacheConfig<V> c) {
      this.store = c.store;
      this.namespace = c.namespace;
      this.ttl = c.ttl;
      this.grace = c.grace;
      this.policy = c.policy;
      this.codec = c.codec;
      this.executor = c.executor;
      this.refreshThreads = c.refreshThreads;
      this.refreshQueueCapacity = c.refreshQueueCapacity;
      this.clock = c.clock;
      this.random = c.random;
      this.keyPolicy = c.keyPolicy;
      this.maxValueSize = c.maxValueSize;
      this.failureBackoff = c.failureBackoff;
      this.maxFailureBackoff = c.maxFailureBackoff;
      this.serveStaleOnError = c.serveStaleOnError;
      this.maxClockSkew = c.maxClockSkew;
      this.loadTimeout = c.loadTimeout;
      this.noValueTtl = c.noValueTtl;
      this.ttlJitter = c.ttlJitter;
      this.fleetLease = c.fleetLease;
      this.coalesceMaxBatchSize = c.coalesceMaxBatchSize;
      this.coalesceMaxWait = c.coalesceMaxWait;
      this.closeTimeout = c.closeTimeout;
      this.fenceTimeout = c.fenceTimeout;
      this.scheduler = c.scheduler;
      this.nearMaximumSize = c.nearMaximumSize;
      this.nearBoundedByBytes = c.nearBoundedByBytes;
      this.nearStaleness = c.nearStaleness;
      this.nearSampling = c.nearSampling;
      this.nearCopy = c.nearCopy;
      this.invalidateAllBound = c.invalidateAllBound;
      this.entryKeys = c.entryKeys;
      this.failWritesWhenStoreDown = c.failWritesWhenStoreDown;
      this.ticker = c.ticker;
      this.storeProbeInterval = c.storeProbeInterval;
      this.outageReuse = c.outageReuse;
      this.observer = c.observer;
    }

    /** Sets {@link CacheConfig#store()}. */
    public Builder<V> store(CacheStore store) {
      this.store = store;
      return this;
    }

    /** Sets {@link CacheConfig#namespace()}. */
    public Builder<V> namespace(String namespace) {
      this.namespace = namespace;
      return this;
    }

    /** Sets {@link CacheConfig#ttl()}. */
    public Builder<V> ttl(Duration ttl) {
      this.ttl = ttl;
      return this;
    }

    /** Sets {@link CacheConfig#grace()}. */
    public Builder<V> grace(Duration grace) {
      this.grace = grace;
      return this;
    }

    /** Sets {@link CacheConfig#policy()}. */
    public Builder<V> policy(RefreshPolicy policy) {
      this.policy = policy;
      return this;
    }

    /** Sets {@link CacheConfig#codec()}. */
    public Builder<V> codec(ValueCodec<V> codec) {
      this.codec = codec;
      return this;
    }

    /** Sets {@link CacheConfig#executor()}. */
    public Builder<V> executor(Executor executor) {
      this.executor = executor;
      return this;
    }

    /** Sets {@link CacheConfig#refreshThreads()}. */
    public Builder<V> refreshThreads(int refreshThreads) {
      this.refreshThreads = refreshThreads;
      return this;
    }

    /** Sets {@link CacheConfig#refreshQueueCapacity()}. */
    public Builder<V> refreshQueueCapacity(int refreshQueueCapacity) {
      this.refreshQueueCapacity = refreshQueueCapacity;
      return this;
    }

    /** Sets {@link CacheConfig#clock()}. */
    public Builder<V> clock(InstantSource clock) {
      this.clock = clock;
      return this;
    }

    /** Sets {@link CacheConfig#random()}. */
    public Builder<V> random(RandomGenerator random) {
      this.random = random;
      return this;
    }

    /** Sets {@link CacheConfig#keyPolicy()}. */
    public Builder<V> keyPolicy(KeyPolicy keyPolicy) {
      this.keyPolicy = keyPolicy;
      return this;
    }

    /** Sets {@link CacheConfig#maxValueSize()}. */
    public Builder<V> maxValueSize(int maxValueSize) {
      this.maxValueSize = maxValueSize;
      return this;
    }

    /** Sets {@link CacheConfig#failureBackoff()}. */
    public Builder<V> failureBackoff(Duration failureBackoff) {
      this.failureBackoff = failureBackoff;
      return this;
    }

    /** Sets {@link CacheConfig#maxFailureBackoff()}. */
    public Builder<V> maxFailureBackoff(Duration maxFailureBackoff) {
      this.maxFailureBackoff = maxFailureBackoff;
      return this;
    }

    /** Sets {@link CacheConfig#serveStaleOnError()}. */
    public Builder<V> serveStaleOnError(boolean serveStaleOnError) {
      this.serveStaleOnError = serveStaleOnError;
      return this;
    }

    /** Sets {@link CacheConfig#maxClockSkew()}. */
    public Builder<V> maxClockSkew(Duration maxClockSkew) {
      this.maxClockSkew = maxClockSkew;
      return this;
    }

    /** Sets {@link CacheConfig#loadTimeout()}. */
    public Builder<V> loadTimeout(Duration loadTimeout) {
      this.loadTimeout = loadTimeout;
      return this;
    }

    /** Sets {@link CacheConfig#noValueTtl()}. */
    public Builder<V> noValueTtl(Duration noValueTtl) {
      this.noValueTtl = noValueTtl;
      return this;
    }

    /** Sets {@link CacheConfig#ttlJitter()}. */
    public Builder<V> ttlJitter(double ttlJitter) {
      this.ttlJitter = ttlJitter;
      return this;
    }

    /** Sets {@link CacheConfig#fleetLease()}. */
    public Builder<V> fleetLease(boolean fleetLease) {
      this.fleetLease = fleetLease;
      return this;
    }

    /** Sets {@link CacheConfig#coalesceMaxBatchSize()}. */
    public Builder<V> coalesceMaxBatchSize(int coalesceMaxBatchSize) {
      this.coalesceMaxBatchSize = coalesceMaxBatchSize;
      return this;
    }

    /** Sets {@link CacheConfig#coalesceMaxWait()}. */
    public Builder<V> coalesceMaxWait(Duration coalesceMaxWait) {
      this.coalesceMaxWait = coalesceMaxWait;
      return this;
    }

    /** Sets {@link CacheConfig#closeTimeout()}. */
    public Builder<V> closeTimeout(Duration closeTimeout) {
      this.closeTimeout = closeTimeout;
      return this;
    }

    /** Sets {@link CacheConfig#fenceTimeout()}. */
    public Builder<V> fenceTimeout(Duration fenceTimeout) {
      this.fenceTimeout = fenceTimeout;
      return this;
    }

    /** Sets {@link CacheConfig#scheduler()}. */
    public Builder<V> scheduler(Scheduler scheduler) {
      this.scheduler = scheduler;
      return this;
    }

    /** Sets {@link CacheConfig#nearMaximumSize()}. */
    public Builder<V> nearMaximumSize(long nearMaximumSize) {
      this.nearMaximumSize = nearMaximumSize;
      return this;
    }

    /** Sets {@link CacheConfig#nearBoundedByBytes()}. */
    public Builder<V> nearBoundedByBytes(boolean nearBoundedByBytes) {
      this.nearBoundedByBytes = nearBoundedByBytes;
      return this;
    }

    /** Sets {@link CacheConfig#nearStaleness()}. */
    public Builder<V> nearStaleness(Duration nearStaleness) {
      this.nearStaleness = nearStaleness;
      return this;
    }

    /** Sets {@link CacheConfig#nearSampling()}. */
    public Builder<V> nearSampling(double nearSampling) {
      this.nearSampling = nearSampling;
      return this;
    }

    /** Sets {@link CacheConfig#nearCopy()}. */
    public Builder<V> nearCopy(boolean nearCopy) {
      this.nearCopy = nearCopy;
      return this;
    }

    /** Sets {@link CacheConfig#invalidateAllBound()}. */
    public Builder<V> invalidateAllBound(Duration invalidateAllBound) {
      this.invalidateAllBound = invalidateAllBound;
      return this;
    }

    /** Sets {@link CacheConfig#entryKeys()}. */
    public Builder<V> entryKeys(List<byte[]> entryKeys) {
      this.entryKeys = entryKeys;
      return this;
    }

    /** Sets {@link CacheConfig#failWritesWhenStoreDown()}. */
    public Builder<V> failWritesWhenStoreDown(boolean failWritesWhenStoreDown) {
      this.failWritesWhenStoreDown = failWritesWhenStoreDown;
      return this;
    }

    /** Sets {@link CacheConfig#ticker()}. */
    public Builder<V> ticker(Ticker ticker) {
      this.ticker = ticker;
      return this;
    }

    /** Sets {@link CacheConfig#storeProbeInterval()}. */
    public Builder<V> storeProbeInterval(Duration storeProbeInterval) {
      this.storeProbeInterval = storeProbeInterval;
      return this;
    }

    /** Sets {@link CacheConfig#outageReuse()}. */
    public Builder<V> outageReuse(Duration outageReuse) {
      this.outageReuse = outageReuse;
      return this;
    }

    /** Sets {@link CacheConfig#observer()}; {@code null} for none. */
    public Builder<V> observer(CacheObserver observer) {
      this.observer = observer;
      return this;
    }

    /**
     * The configuration.
     *
     * @return a new immutable configuration
     * @throws IllegalStateException if a required component was not set
     */
    public CacheConfig<V> build() {
      return new CacheConfig<>(this);
    }
  }
}
