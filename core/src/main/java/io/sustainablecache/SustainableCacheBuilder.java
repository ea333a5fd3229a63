package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.internal.CacheConfig;
import io.sustainablecache.internal.Engine;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.random.RandomGenerator;

/**
 * Configures and builds a {@link SustainableCache}. Obtain one from {@link
 * SustainableCache#builder(CacheStore)}.
 *
 * <p>Every setter validates its argument at once ({@link IllegalArgumentException} naming the
 * value, {@link NullPointerException} for {@code null}) and may be called once ({@link
 * IllegalStateException} on a second call). {@link #ttl} is required. {@link #build()} checks
 * combinations and returns an immutable, thread-safe cache; the builder itself is not
 * thread-safe and may be reused to build further caches.
 *
 * @param <V> the value type, fixed by {@link #codec}
 */
public final class SustainableCacheBuilder<V> {

  // Why this class is over 700 lines: three fifths of it is the Javadoc of the settings users
  // write (unit, range, default, what each changes), the one place users read them; the code is
  // a setter per setting, each one line into CacheSettings, and build()'s checks of combinations.

  private final CacheStore store;
  /** The settings set so far: each setter adds its row ({@link CacheSettings#adding}). */
  private CacheSettings settings = CacheSettings.empty();
  // The objects, which are not settings; null until set.
  private String namespace;
  private ValueCodec<?> codec;
  private Executor executor;
  private InstantSource clock;
  private Ticker ticker;
  private RandomGenerator random;
  private KeyPolicy keyPolicy;
  private Scheduler scheduler;
  private CacheObserver observer;
  /** The entry keys, the current one first; empty until {@link #entryKey} is called. */
  private List<byte[]> entryKeys = List.of();

  /** The least length of an {@link #entryKey}, bytes: 128 bits. */
  static final int MIN_ENTRY_KEY_BYTES = 16;

  SustainableCacheBuilder(CacheStore store) {
    this.store = requireNonNull(store, "store");
  }

  /**
   * Applies every setting that {@code settings} sets, as if each builder method of the same name
   * were called; settings it leaves absent keep their defaults (or what this builder sets). Use
   * it to keep a cache's settings in one value, parsed from configuration ({@link
   * CacheSettings#parse}) or merged over defaults ({@link CacheSettings#withDefaults}).
   *
   * @param settings the settings
   * @return this builder
   * @throws NullPointerException if {@code settings} is {@code null}
   * @throws IllegalStateException if a setting it sets was already set on this builder
   */
  public SustainableCacheBuilder<V> settings(CacheSettings settings) {
    requireNonNull(settings, "settings");
    this.settings = this.settings.adding(settings);
    return this;
  }

  /**
   * Prefixes every key with {@code namespace + ":"}, so several caches (or services) can share
   * a store; on ARCUS the namespace is the key prefix that per-prefix statistics and flushes use.
   * Default: no prefix. {@link Namespaces#derive} makes a valid one of any name.
   *
   * @param namespace 1 to 64 characters of {@code [A-Za-z0-9_.+-]},
   *     not starting with {@code '-'} (the ARCUS prefix rules)
   * @return this builder
   * @throws IllegalArgumentException if the namespace is empty, too long or has other characters
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> namespace(String namespace) {
    requireNonNull(namespace, "namespace");
    checkUnset(this.namespace, "namespace");
    Namespaces.check(namespace);
    this.namespace = namespace;
    return this;
  }

  /**
   * The logical time to live: how long a loaded value counts as fresh. Refreshes are decided
   * against it; the item lives on the server for {@code ttl + grace}. Required.
   *
   * @param ttl positive, at most 365 days; sub-second values are allowed
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> ttl(Duration ttl) {
    return set(CacheSettings.TTL, ttl);
  }

  /**
   * How long past its logical expiry an item stays on the server. Within the grace period a
   * policy that serves stale values (SUS) returns the old value while it refreshes, including
   * when the loader or database is failing. The physical exptime sent to the server is {@code
   * ceil((ttl + grace) / 1 s) + 1} seconds, so the server's one-second tick never removes an
   * item before {@code ttl + grace} has passed. Default: {@code max(2 s, ttl / 10)}.
   *
   * @param grace zero or positive, at most 365 days
   * @return this builder
   * @throws IllegalArgumentException if negative or too long
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> grace(Duration grace) {
    return set(CacheSettings.GRACE, grace);
  }

  /**
   * The refresh policy. Default: {@link RefreshPolicy#sustainable()}.
   *
   * @param policy the policy
   * @return this builder
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> refreshPolicy(RefreshPolicy policy) {
    return set(CacheSettings.REFRESH_POLICY, policy);
  }

  /**
   * The value codec, which also fixes the cache's value type. Default: {@link
   * ValueCodec#bytes()}, which is why {@link SustainableCache#builder} returns a builder of {@code
   * byte[]}. This method returns this same builder retyped (as Caffeine's {@code weigher} does),
   * so keep using the returned reference and not one of the old type.
   *
   * @param codec the codec; must not deserialize untrusted bytes unsafely
   * @param <V1> the new value type
   * @return this builder, retyped
   * @throws IllegalStateException if already set
   */
  @SuppressWarnings("unchecked")
  public <V1> SustainableCacheBuilder<V1> codec(ValueCodec<V1> codec) {
    requireNonNull(codec, "codec");
    checkUnset(this.codec, "codec");
    this.codec = codec;
    return (SustainableCacheBuilder<V1>) this;
  }

  /**
   * Runs background refreshes on a caller-owned executor, which the cache never shuts down. It
   * should be bounded and reject when full: a rejected refresh is counted and dropped, and an
   * executor that silently discards work is tolerated (the key is released after {@link
   * #loadTimeout}). Excludes {@link #refreshThreads} and {@link #refreshQueueCapacity}.
   *
   * @param executor the executor
   * @return this builder
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> refreshExecutor(Executor executor) {
    requireNonNull(executor, "executor");
    checkUnset(this.executor, "refreshExecutor");
    this.executor = executor;
    return this;
  }

  /**
   * The number of threads of the refresh executor the cache creates and owns. Default: 4. Size it by Little's law: hot keys refreshed per second times the
   * load time.
   *
   * @param threads 1 to 1024
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> refreshThreads(int threads) {
    return set(CacheSettings.REFRESH_THREADS, threads);
  }

  /**
   * The queue capacity of the refresh executor the cache creates and owns; refreshes beyond it
   * are rejected and counted. Default: 1024.
   *
   * @param capacity 0 (hand-off only) to 1,000,000
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> refreshQueueCapacity(int capacity) {
    return set(CacheSettings.REFRESH_QUEUE_CAPACITY, capacity);
  }

  /**
   * The wall clock, for what is compared with other hosts' time: envelope timestamps (an entry's
   * load time and logical expiry), tombstones, fleet-lease ends and failure markers. Envelopes
   * are read by other hosts, so it must be epoch-based. It measures no duration and no bound on
   * this host (that is the {@link #ticker}'s job), so a clock that steps back or jumps ahead moves
   * expiry decisions but never stretches the near cache's bound, a load timeout or a back-off.
   * Default: {@link InstantSource#system()}.
   *
   * @param clock the clock
   * @return this builder
   * @throws NullPointerException if {@code clock} is {@code null}
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> clock(InstantSource clock) {
    requireNonNull(clock, "clock");
    checkUnset(this.clock, "clock");
    this.clock = clock;
    return this;
  }

  /**
   * The monotonic time source for every duration and bound measured on this host: the near
   * cache's staleness bound and fence window, load times, the load timeout, failure back-off
   * windows, fleet-lease waits and polls, refresh pauses, rate-limited logs, and the delays given
   * to the {@link #scheduler}. Separate from the {@link #clock}, as Caffeine separates its {@code
   * Ticker} from wall time, so that a wall clock that is set (stepped back by NTP, say) cannot
   * stretch a bound. Inject one with the {@link #clock} and the {@link #scheduler} to run the
   * cache in simulated time. Default: {@link Ticker#systemTicker()}, whatever clock is set.
   *
   * @param ticker the ticker, nanoseconds
   * @return this builder
   * @throws NullPointerException if {@code ticker} is {@code null}
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> ticker(Ticker ticker) {
    requireNonNull(ticker, "ticker");
    checkUnset(this.ticker, "ticker");
    this.ticker = ticker;
    return this;
  }

  /**
   * The random source of the refresh decision. It is called concurrently from request threads,
   * so it must be thread-safe (e.g. {@link java.util.Random}); a seeded one makes decisions
   * reproducible in tests. Default: a thread-local generator.
   *
   * @param random the random source
   * @return this builder
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> random(RandomGenerator random) {
    requireNonNull(random, "random");
    checkUnset(this.random, "random");
    this.random = random;
    return this;
  }

  /**
   * What to do with keys memcached cannot hold as they are (too long, spaces, control or
   * non-ASCII characters). Default: {@link KeyPolicy#REJECT}.
   *
   * @param policy the policy
   * @return this builder
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> keyPolicy(KeyPolicy policy) {
    requireNonNull(policy, "policy");
    checkUnset(this.keyPolicy, "keyPolicy");
    this.keyPolicy = policy;
    return this;
  }

  /**
   * The largest value the cache writes, in bytes, envelope header included. A loaded value above
   * it is returned to its callers but not cached (counted in {@code
   * skipped_write}, one rate-limited log line); {@link SustainableCache#put}
   * rejects it. Keep it below the server's item size ({@code -I}, 1 MiB by default) minus the
   * key and the item header: a server that refuses an oversized item makes spymemcached and the
   * ARCUS client drop and re-open the connection, failing other requests meanwhile. Default:
   * 1 MiB - 1 KiB (1047552).
   *
   * @param bytes 21 (the envelope around a one-byte payload) to 1 GiB
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> maxValueSize(int bytes) {
    return set(CacheSettings.MAX_VALUE_SIZE, bytes);
  }

  /**
   * The base of the back-off after a load of a key fails, whether a caller's load or a background
   * refresh: the key is not loaded again in this JVM for {@code base * 2^(failures - 1)}, capped
   * at the TTL but at most 30 s (see {@link #failureBackoff(Duration, Duration)}), each wait
   * drawn uniformly from 50 %
   * to 150 % of that (and at most the cap) so that
   * instances sharing a failing database do not retry in step. Meanwhile reads of the key get the
   * stale value where one is within its grace period, and otherwise fail at once with a {@link
   * CacheLoadException} that carries the remembered failure as its cause (counted in {@code
   * failure_remembered}), so a failing database sees about one query per key per
   * window from each instance instead of one per request. A successful load, or {@link
   * SustainableCache#invalidate}, forgets the failures. {@link Duration#ZERO} turns the
   * back-off off: every miss calls the loader. Default: 1 s.
   *
   * @param base zero or positive, at most 365 days
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> failureBackoff(Duration base) {
    return set(CacheSettings.FAILURE_BACKOFF,
        new SettingText.FailureBackoff(requireNonNull(base, "base"), null));
  }

  /**
   * {@link #failureBackoff(Duration)} with its cap: no back-off window, jitter included, is longer
   * than {@code max}, in this JVM or across the fleet (another instance's failure marker is
   * honoured for at most {@code max} too), so a key is tried again at most {@code max} after the
   * database recovers. Default cap: the TTL, at most 30 s (and at least the base).
   *
   * @param base zero or positive, at most 365 days
   * @param max at least {@code base}, at most 365 days
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> failureBackoff(Duration base, Duration max) {
    return set(CacheSettings.FAILURE_BACKOFF, new SettingText.FailureBackoff(
        requireNonNull(base, "base"), requireNonNull(max, "max")));
  }

  /**
   * Whether a read of an entry past its logical expiry (but still on the server, within the grace
   * period) returns the stale value when reloading it fails, instead of throwing the loader's
   * exception. Applies to policies that reload expired entries on the caller's thread ({@code
   * none}, PER); SUS always serves stale values within the grace period and refreshes them in the
   * background. Counted in {@code stale_on_error}. A miss with nothing to fall
   * back on always throws. Default: {@code true}.
   *
   * @param enabled {@code false} to make every failed load reach the caller
   * @return this builder
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> serveStaleOnError(boolean enabled) {
    return set(CacheSettings.SERVE_STALE_ON_ERROR, enabled);
  }

  /**
   * Whether a change whose invalidation cannot reach the store fails, as it did before this
   * setting existed. By default ({@code false}) it does not: {@link SustainableCache#invalidate},
   * {@link SustainableCache#put}, {@link SustainableCache#fence} and the fence's {@link
   * WriteFence#beforeCommit()} return normally when the store fails or does not answer, so the
   * database transaction commits; the key is remembered (at most 10,000 keys; past that, or after
   * a minute, a new generation of the namespace where the cache has one: a near cache or {@code
   * invalidateAllBound}) and invalidated as soon as the store takes it, before this instance reads
   * the key from the store again. Other instances may serve the old entry until then (see {@code
   * docs/design.md}, "Writes when the store is down"); if this instance dies before the store
   * answers again, until the old entry's logical expiry (its TTL) plus one refresh. Counted in
   * {@code unprotected_write}.
   *
   * <p>{@code true}: such a change throws {@link io.sustainablecache.spi.StoreException} (a fence
   * or {@code beforeCommit()} before the commit, so the transaction rolls back), and no read is
   * ever served a value older than a committed change once the call returned (but for a write
   * fence's commit window after a release that did not land: at most 100 ms after {@code
   * beforeCommit()} plus the clock skew, see {@link WriteFence}).
   *
   * @param enabled {@code true} to fail such writes
   * @return this builder
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> failWritesWhenStoreDown(boolean enabled) {
    return set(CacheSettings.FAIL_WRITES_WHEN_STORE_DOWN, enabled);
  }

  /**
   * How far in the future (by this host's clock) an envelope's load time may lie and still be
   * trusted. Envelope times are the writer's wall clock; a writer whose clock runs ahead produces
   * entries that look fresh for longer. An entry loaded more than this in the future is treated
   * as expired (refreshed, or reloaded), and a warning suggests checking clock synchronization.
   * Default: 30 s, far above NTP-synchronized skew.
   *
   * @param skew zero or positive, at most 365 days
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> maxClockSkew(Duration skew) {
    return set(CacheSettings.MAX_CLOCK_SKEW, skew);
  }

  /**
   * How long a load may take before it releases its key. A loader (or an asynchronous stage)
   * still running after this is abandoned: the callers waiting for it fail with a {@link
   * CacheLoadException} (counted in {@code load_timeout}), the next caller of the
   * key starts a new load, and the abandoned load's result is never written. The thread running a
   * synchronous loader is not interrupted. It also bounds how long a refresh executor that
   * silently drops tasks can keep a key marked "refreshing". Default: 30 s.
   *
   * @param timeout at least 1 ms, at most 1 day
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> loadTimeout(Duration timeout) {
    return set(CacheSettings.LOAD_TIMEOUT, timeout);
  }

  /**
   * How long "no value" is cached for a key whose loader returned {@code null} (or left the key
   * out of a bulk result): negative caching, so that requests for ids that do not exist stop
   * reaching the database. Such entries are refreshed like values, under the same policy, with
   * this as their TTL. {@link Duration#ZERO} caches nothing: every read of such a key calls the
   * loader. Default: the {@link #ttl}.
   *
   * @param noValueTtl zero or positive, at most 365 days
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> noValueTtl(Duration noValueTtl) {
    return set(CacheSettings.NO_VALUE_TTL, noValueTtl);
  }

  /**
   * Spreads the logical expiry of entries loaded together: each load's TTL is shortened by a
   * random share of up to {@code fraction} of it (drawn from the cache's random source), so that
   * thousands of keys warmed by one batch job do not all expire, and reload, in the same second.
   * Default: 0 (every entry lives exactly its TTL).
   *
   * @param fraction in {@code [0, 0.5]}
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> ttlJitter(double fraction) {
    return set(CacheSettings.TTL_JITTER, fraction);
  }

  /**
   * Whether instances sharing the store coordinate their loads through a short lease: before a
   * refresh or a miss loads, the instance {@code add}s a lease key next to the item (whose value
   * names the instance, with an exptime covering the measured load time). Only the holder loads;
   * the other instances keep serving the current value (refreshes) or wait a bounded time for the
   * holder's write (misses), then load themselves. A plain hit never touches the lease. A holder
   * that dies delays the key by at most its lease. {@link SustainableCache#invalidate} removes
   * the lease. Default: on for {@link RefreshPolicy#sustainable() SUS}, off otherwise.
   *
   * @param enabled whether to take leases
   * @return this builder
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> fleetLease(boolean enabled) {
    return set(CacheSettings.FLEET_LEASE, enabled);
  }

  /**
   * Bounds how loads are coalesced into calls of a bulk loader: a loading cache's ({@link
   * #build(BulkLoader)}, {@link #buildAsync}) concurrent misses and refreshes of different keys,
   * and the background refreshes decided by {@link SustainableCache#getAll} with one loader
   * (calls that pass the same loader instance, kept in a field, share batches). At most {@code
   * maxBatchSize} keys per call; keys arriving while a call of the loader runs form the next
   * batch, which starts when a running call is over or when it is full. A key of an idle loader
   * loads at once. Default: 100 keys, a batch waits for the running call (at most the load
   * timeout); see {@link #coalesce(int, Duration)} to bound that wait.
   *
   * @param maxBatchSize 1 to 100,000
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> coalesce(int maxBatchSize) {
    return set(CacheSettings.COALESCE, new SettingText.Coalesce(maxBatchSize, null));
  }

  /**
   * As {@link #coalesce(int)}, and a batch forming while a call runs starts at the latest {@code
   * maxWait} after its first key joined it, even if the running call is not over: the longest a
   * miss waits for another call before its own starts.
   *
   * @param maxBatchSize 1 to 100,000
   * @param maxWait 1 ms to 1 day
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> coalesce(int maxBatchSize, Duration maxWait) {
    return set(CacheSettings.COALESCE,
        new SettingText.Coalesce(maxBatchSize, requireNonNull(maxWait, "maxWait")));
  }

  /**
   * How long {@link SustainableCache#close()} waits for running refreshes before it interrupts the
   * executor the cache owns, then once more for the interrupted ones to stop, and then for the
   * store to answer the writes and lease releases the cache issued (so {@code close()} returns
   * within three times this; with nothing running or in flight, at once). Default: 5 s.
   *
   * @param timeout zero (interrupt at once) to 1 day
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> closeTimeout(Duration timeout) {
    return set(CacheSettings.CLOSE_TIMEOUT, timeout);
  }

  /**
   * How long a write fence stands at most ({@link SustainableCache#fence}): the server expires it
   * this long after a writer last placed it, so a writer that dies inside its transaction leaves
   * no stuck key. While it stands, reads of the key load from the loader and cache nothing. It
   * must exceed the longest transaction that changes a cached key: a fence that expires before
   * its transaction commits lets loads cache the data from before the change until the writer's
   * {@link WriteFence#committed()} replaces it. Default: 30 s, longer than an OLTP transaction
   * should hold a row lock (a dead writer costs that long of uncached loads of its keys, each
   * instance's concurrent readers sharing one load at a time). A load that runs longer than this
   * is returned but not cached ({@code skipped_write}): a fence never released
   * must not be outlived by a load that read its key before it. Set the same value on every
   * instance of a namespace.
   *
   * @param timeout 1 s to 1 day (the server's expiry has a one-second granularity)
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> fenceTimeout(Duration timeout) {
    return set(CacheSettings.FENCE_TIMEOUT, timeout);
  }

  /**
   * How a store node that stopped answering is treated: after two of its operations failed in a row
   * (timed out, typically: a hung server or a partition), its operations fail at once, without
   * being sent, so reads of its keys go to the loader at once instead of waiting an operation
   * timeout each; every {@code interval} the breaker sends a read of its own to the node as a
   * probe (no caller waits for it), and the first operation that succeeds makes the node's
   * operations go out again. One breaker per node where the store
   * names its nodes ({@link io.sustainablecache.spi.CacheStore#nodes()}: the memcached adapters
   * with {@code FailureMode.Cancel}), else one for the whole store. The caches built over one
   * store instance with the same ticker and interval share its breakers, so a node's first two
   * timeouts are paid once, not by every cache. Default: 500 ms (the node is used again at most
   * 500 ms plus a round trip after it answers). {@link Duration#ZERO} turns the breakers off:
   * every operation waits for the store up to its operation timeout.
   *
   * @param interval zero to 1 minute
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> storeProbeInterval(Duration interval) {
    return set(CacheSettings.STORE_PROBE_INTERVAL, interval);
  }

  /**
   * How long the database is protected from reads that fail on the store (a node down, hung or
   * failing fast behind its {@linkplain #storeProbeInterval breaker}): such a read of a key joins,
   * or takes the value of, this instance's load of that key registered less than {@code reuse}
   * before the read began, instead of loading again. So while the store is down, the loader runs
   * at most about once per {@code reuse} per key per instance (with the 50 ms default: at most
   * 20 loads per second per hot key), and a read that failed on the store returns a value its
   * loader read at most {@code reuse} before the read began, and never one loaded before a
   * {@code put}, {@code invalidate} or {@code invalidateAll} on this instance that returned
   * before the read began (they end the reuse of the key's load at once); a change made on
   * another instance is seen at most {@code reuse} later. Default 50 ms. Reads that do not fail on the store
   * are not affected. {@link Duration#ZERO}: a failed read shares only loads registered after it
   * began (one load per key per load time). With a near cache, its staleness bound is used when
   * it is longer.
   *
   * @param reuse zero to 10 s
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> outageReuse(Duration reuse) {
    return set(CacheSettings.OUTAGE_REUSE, reuse);
  }

  /**
   * The scheduler of the cache's timed work: load timeouts, the polls of an instance waiting for
   * another instance's load, refresh batch flushes, forgetting old failures. Its delays are
   * durations, as on the {@link #ticker}: inject one that follows a simulated ticker to run the
   * cache in virtual time. Default: {@link
   * Scheduler#systemScheduler()}.
   *
   * @param scheduler the scheduler
   * @return this builder
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> scheduler(Scheduler scheduler) {
    requireNonNull(scheduler, "scheduler");
    checkUnset(this.scheduler, "scheduler");
    this.scheduler = scheduler;
    return this;
  }

  /**
   * Told when the cache's slow steps begin and end, as spans: loader calls, background refreshes,
   * fleet leases and write fences ({@link CacheObserver}), for tracing. A read answered from the
   * cache begins none, and without an observer the cache does no work for them. What the
   * observer throws is logged and never fails a read. {@code
   * SustainableCacheObservations.observer(registry)} of {@code sustainable-cache-micrometer}
   * reports them to Micrometer's {@code ObservationRegistry} (Spring Boot's auto-configuration
   * sets it when the application has one). Default: none.
   *
   * @param observer the observer
   * @return this builder
   * @throws NullPointerException if {@code observer} is {@code null}
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> observer(CacheObserver observer) {
    requireNonNull(observer, "observer");
    checkUnset(this.observer, "observer");
    this.observer = observer;
    return this;
  }

  /**
   * Keeps decoded entries of the most used keys in this JVM, in front of the store: a near cache.
   * A near hit makes no round trip; the refresh decision still runs on it (a refresh is loaded
   * and written as usual, under the fleet lease). <b>The bound:</b> once {@link
   * SustainableCache#invalidate} or {@link SustainableCache#put} has returned on any instance of
   * the namespace, no instance serves the previous value from its near cache later than {@code
   * staleness} after that return, even when invalidation records are lost: each instance polls
   * the namespace's invalidation log in the store every {@code staleness / 2} and stops serving
   * near entries while it cannot confirm them ({@code docs/near-cache.md}). Every instance that
   * writes the namespace must have the near cache on (it writes the log). Needs a {@link
   * #namespace}, {@code com.github.ben-manes.caffeine:caffeine} on the classpath (an optional
   * dependency) and a store with {@link io.sustainablecache.spi.CacheStore#incr counters}.
   * Default: off.
   *
   * <p>{@code getAll} answers the keys the near cache holds without the store and reads the
   * others in one multi-get. Near hits return the same value instance to every caller, and the
   * caller whose read put it there holds it too: one caller's change of a mutable value (a
   * {@code List}, an array, a bean) is what the next near hit returns, on this instance only,
   * and the sampling below cannot see it. Treat values as immutable, or turn on {@link
   * #nearCacheCopy}.
   *
   * <p>{@link SustainableCache#invalidateAll} starts a new <em>generation</em> of the namespace,
   * on plain memcached as on ARCUS (no prefix flush): every entry carries its generation (8 bytes
   * more per entry), and entries of another one are misses. So entries written without a near
   * cache are misses for a cache with one, and an instance without one ignores generations:
   * turn the near cache on for every instance of a namespace at once (or with a new namespace;
   * each side of a mixed fleet logs a warning). {@link #build} polls the log once, waiting at
   * most {@code staleness}; until a poll has succeeded, every read misses and loads are not
   * written.
   *
   * <p>One near hit in a thousand is also read from the store in the background and compared:
   * a near value the store had replaced more than {@code staleness} earlier (by the replacing
   * entry's write time, the writer's clock) is counted ({@code near_stale_sample})
   * and logged. {@link #nearCache(long, Duration, double)} sets that share.
   *
   * @param maximumSize the most entries held, 1 to 100,000,000 (Caffeine's W-TinyLFU decides
   *     which)
   * @param staleness the bound, 10 ms to 1 h; about 1 s is a good start
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> nearCache(long maximumSize, Duration staleness) {
    return near(maximumSize, false, staleness, null);
  }

  private SustainableCacheBuilder<V> near(long maximum, boolean bytes, Duration staleness,
      Double sampling) {
    return set(CacheSettings.NEAR_CACHE, new SettingText.NearCache(maximum, bytes,
        requireNonNull(staleness, "staleness"), sampling));
  }

  /**
   * A near cache ({@link #nearCache(long, Duration)}) bounded by bytes instead of entries: the
   * stored sizes of its entries (the bytes the store holds for each, envelope included) add up
   * to at most {@code maximumBytes}. The heap they take is larger: decoded values and the objects
   * around each entry (370 bytes per entry for a 100-character value stored in 124 bytes,
   * measured in docs/near-cache.md), so size it at about a third of the heap you give it.
   *
   * @param maximumBytes the most stored bytes held, 1 KiB to 1 TiB
   * @param staleness the bound, 10 ms to 1 h
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if a near cache was already set
   */
  public SustainableCacheBuilder<V> nearCacheBytes(long maximumBytes, Duration staleness) {
    return near(maximumBytes, true, staleness, null);
  }

  /**
   * {@link #nearCacheBytes(long, Duration)} with the share of near hits checked against the
   * store, as in {@link #nearCache(long, Duration, double)}.
   *
   * @param maximumBytes the most stored bytes held, 1 KiB to 1 TiB
   * @param staleness the bound, 10 ms to 1 h
   * @param sampling 0 to 1
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if a near cache was already set
   */
  public SustainableCacheBuilder<V> nearCacheBytes(long maximumBytes, Duration staleness,
      double sampling) {
    return near(maximumBytes, true, staleness, sampling);
  }

  /**
   * {@link #nearCache(long, Duration)} with the share of near hits checked against the store
   * (default 0.001; 0 checks none, 1 every one: a store read per near hit).
   *
   * @param maximumSize the most entries held, 1 to 100,000,000
   * @param staleness the bound, 10 ms to 1 h
   * @param sampling 0 to 1
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> nearCache(long maximumSize, Duration staleness,
      double sampling) {
    return near(maximumSize, false, staleness, sampling);
  }

  /**
   * Whether every near hit returns its own copy of the value, decoded from the stored bytes the
   * near cache keeps with the entry: no caller ever gets an instance the near cache holds or
   * another caller got from it, so mutable values are safe to change. Costs a decode per near
   * hit (the codec's, as on a store hit, without the round trip; measured in {@code
   * docs/jmh.md}) and the stored bytes' heap per entry. A caller whose read loaded the value gets
   * the instance the loader returned, shared with the callers that joined that same load in this
   * JVM (concurrent misses, and reads that failed on the store and took its value), as without
   * a near cache. Default: {@code false}.
   *
   * @param copy {@code true} to decode a copy on every near hit
   * @return this builder
   * @throws IllegalStateException if already set; {@link #build} throws it if {@code copy} is
   *     {@code true} without a near cache
   */
  public SustainableCacheBuilder<V> nearCacheCopy(boolean copy) {
    return set(CacheSettings.NEAR_CACHE_COPY, copy);
  }

  /**
   * How soon the other instances see {@link SustainableCache#invalidateAll} on a cache without a
   * near cache, which by default works on every store (plain memcached has no prefix flush) as a
   * new <em>generation</em> of the namespace, the near cache's own mechanism without its tier:
   * every entry carries the namespace's generation (8 bytes more per entry), an entry of another
   * generation is a miss whose CAS token fences out older loads, and a load that began before
   * {@code invalidateAll} is not written after this instance learned of it. This instance sees
   * its own {@code invalidateAll} when the call returns; the other instances read the generation
   * every {@code bound / 2} (one {@code gets} of one key per store node, whatever the traffic)
   * and see it within {@code bound} while those reads succeed. A hit costs no extra round trip:
   * the generation is compared in memory. {@link #build} reads the generation once, waiting at
   * most {@code bound}; until a read has succeeded, every read misses, loads are not written and
   * writes throw (with a log per store node, the keys of a node whose generation is unknown).
   * With a {@link #nearCache} the near cache's staleness bounds {@code invalidateAll} and this
   * setting is not used.
   *
   * <p>Default: 1 s for a cache with a {@link #namespace} over a store with {@link
   * io.sustainablecache.spi.CacheStore#incr counters} (both adapters); a cache without either
   * has no generation, and its {@code invalidateAll} is the store's prefix flush (ARCUS's {@code
   * flush_prefix}) or refused. Set explicitly, the bound needs both.
   *
   * <p><b>Zero turns the generation off</b>, for a namespace shared with instances that write
   * entries without one (entries with a generation are misses for them, and the reverse; each
   * side logs a warning when it reads the other's): {@code invalidateAll} is then ARCUS's {@code
   * flush_prefix}, which fences no load in flight, or, on plain memcached, throws {@link
   * UnsupportedOperationException}.
   *
   * @param bound 10 ms to 1 h, or zero for no generation
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> invalidateAllBound(Duration bound) {
    return set(CacheSettings.INVALIDATE_ALL_BOUND, bound);
  }

  /**
   * Signs every entry with a secret key, so that whoever can write to memcached (which has no
   * authentication) but does not hold the key cannot make an entry this cache reads: each entry
   * carries an HMAC-SHA256 tag (its first 16 bytes, so 16 bytes more per item) of its header and
   * payload, and a read accepts only entries whose tag the current key or one of {@code
   * previousKeys} gives; any other entry (one without a tag, a forged or changed one, one of
   * another key) is a miss counted in {@code corrupt_entry}, which the next load
   * overwrites.
   *
   * <p><b>What it does not protect:</b> it does not hide values (they are not encrypted); it does
   * not stop a writer from <em>replaying</em> a genuine entry of the same key written earlier under
   * an accepted key (an old value until that entry's logical expiry, or a cached absence), from
   * deleting entries or making them misses, or from changing the keys that carry no entry: fleet
   * leases (a planted one delays loads by a bounded time), invalidation logs and generation
   * counters (a changed one makes entries misses). Keys live in your JVMs' memory and
   * configuration. See {@code docs/design.md}, "The envelope".
   *
   * <p>Rotation: set the new key as {@code key} and the old one in {@code previousKeys} on every
   * instance of the namespace; once every entry written under the old key has expired (its TTL
   * and grace), remove it. Every instance of a namespace needs the same keys: entries of a cache
   * without a key are misses here and the reverse.
   *
   * @param key the current key: at least 16 bytes of a secret (32 random bytes are a good
   *     choice); copied
   * @param previousKeys keys still accepted on reads, each at least 16 bytes; copied
   * @return this builder
   * @throws NullPointerException if a key or {@code previousKeys} is {@code null}
   * @throws IllegalArgumentException if a key is shorter than 16 bytes
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> entryKey(byte[] key, byte[]... previousKeys) {
    requireNonNull(previousKeys, "previousKeys");
    if (!entryKeys.isEmpty()) {
      throw new IllegalStateException("entryKey was already set");
    }
    List<byte[]> keys = new ArrayList<>(1 + previousKeys.length);
    keys.add(checkedEntryKey(key, "entryKey"));
    for (byte[] previous : previousKeys) {
      keys.add(checkedEntryKey(previous, "a previous entry key"));
    }
    entryKeys = List.copyOf(keys);
    return this;
  }

  private static byte[] checkedEntryKey(byte[] key, String what) {
    requireNonNull(key, what);
    if (key.length < MIN_ENTRY_KEY_BYTES) {
      throw new IllegalArgumentException(what + " must be at least " + MIN_ENTRY_KEY_BYTES
          + " bytes (128 bits) of a secret: " + key.length + " bytes given");
    }
    return key.clone();
  }

  /**
   * Builds the cache.
   *
   * @return a new immutable, thread-safe cache; close it to stop its refresh executor
   * @throws IllegalStateException if {@link #ttl} was not set, an executor was given together
   *     with thread or queue settings, a near cache without Caffeine on the classpath or
   *     without a {@link #namespace}, or {@link #nearCacheCopy} without a near cache, or a
   *     non-zero {@link #invalidateAllBound} set without a namespace or over a store without
   *     counters
   */
  public SustainableCache<V> build() {
    check();
    return Engine.cache(config());
  }

  /**
   * Builds a loading cache: {@link LoadingSustainableCache#get(String) get(key)}, {@code
   * getAsync(key)} and {@code getAll(keys)} load with {@code loader}, and concurrent misses of
   * different keys, from any thread, {@code getAll} and background refreshes alike, are coalesced
   * into few calls of it (see {@link #coalesce(int)}). Each key of a call is leased and fenced as a
   * single key's load is; a key the loader leaves out is cached as "no value".
   *
   * @param loader the bulk loader, called on the thread of the miss that starts a batch (a miss
   *     of an idle cache, or the one that fills a batch), or on a refresh thread for a batch that
   *     starts later; it must not call the cache for a key it is loading
   * @return a new immutable, thread-safe loading cache; close it to stop its refresh executor
   * @throws NullPointerException if {@code loader} is {@code null}
   * @throws IllegalStateException as {@link #build()}
   */
  public LoadingSustainableCache<V> build(BulkLoader<? extends V> loader) {
    requireNonNull(loader, "loader");
    return buildAsync(keys -> CompletableFuture.completedFuture(loader.loadAll(keys)));
  }

  /**
   * As {@link #build(BulkLoader)}, with an asynchronous bulk loader: called on the thread of the
   * miss that starts a batch (an asynchronous caller's while it is still in the call, else a
   * refresh thread), or on a refresh thread for a batch that starts later; the batch is over when
   * its stage completes.
   *
   * @param loader the asynchronous bulk loader
   * @return a new immutable, thread-safe loading cache; close it to stop its refresh executor
   * @throws NullPointerException if {@code loader} is {@code null}
   * @throws IllegalStateException as {@link #build()}
   */
  public LoadingSustainableCache<V> buildAsync(AsyncBulkLoader<? extends V> loader) {
    requireNonNull(loader, "loader");
    check();
    return Engine.loadingCache(config(), loader);
  }

  @SuppressWarnings("unchecked")
  private CacheConfig<V> config() {
    return config((ValueCodec<V>) resolvedCodec());
  }

  /** The rules that relate settings to each other and to the builder's objects. */
  private void check() {
    if (!settings.isSet(CacheSettings.TTL)) {
      throw new IllegalStateException("ttl must be set");
    }
    if (executor != null && (settings.isSet(CacheSettings.REFRESH_THREADS)
        || settings.isSet(CacheSettings.REFRESH_QUEUE_CAPACITY))) {
      throw new IllegalStateException(
          "refreshExecutor cannot be combined with refreshThreads or refreshQueueCapacity");
    }
    boolean near = settings.isSet(CacheSettings.NEAR_CACHE);
    if (settings.resolved(CacheSettings.NEAR_CACHE_COPY) && !near) {
      throw new IllegalStateException("nearCacheCopy(true) needs a near cache: set nearCache or"
          + " nearCacheBytes");
    }
    if (near && !Engine.nearCacheAvailable()) {
      throw new IllegalStateException("nearCache needs Caffeine on the classpath: add"
          + " com.github.ben-manes.caffeine:caffeine (the core's optional dependency)");
    }
    if (near && !store.hasCounters()) {
      throw new IllegalStateException("nearCache needs a store with counters (CacheStore.incr);"
          + " " + store.getClass().getName() + " has none (CacheStore.hasCounters)");
    }
    if (near && namespace == null) {
      throw new IllegalStateException("nearCache needs a namespace (SustainableCacheBuilder"
          + ".namespace): its invalidation log lives under the namespace's prefix; without one"
          + " the log's keys have no valid ARCUS prefix (the ARCUS client and server refuse"
          + " them, so the cache would never serve near), and the cache's keys could be another"
          + " namespace's items, changed past that namespace's log");
    }
    // The default generation is used only where it can be (invalidateAllBound()); a bound set
    // explicitly must be.
    boolean boundSet = settings.isSet(CacheSettings.INVALIDATE_ALL_BOUND)
        && !settings.resolved(CacheSettings.INVALIDATE_ALL_BOUND).isZero();
    if (boundSet && !near && !store.hasCounters()) {
      throw new IllegalStateException("invalidateAllBound needs a store with counters"
          + " (CacheStore.incr); " + store.getClass().getName() + " has none"
          + " (CacheStore.hasCounters)");
    }
    if (boundSet && namespace == null) {
      throw new IllegalStateException("invalidateAllBound needs a namespace"
          + " (SustainableCacheBuilder.namespace): the generation lives under the namespace's"
          + " prefix, and without one the cache's keys could be another namespace's items");
    }
  }

  /**
   * The bound of the namespace's generation without a near cache ({@link #invalidateAllBound}),
   * {@code null} for none: none when set to zero; by default (1 s) only for a cache with a
   * namespace over a store with counters, the others keep the prefix flush ({@link #check}
   * refuses a bound set explicitly without them).
   */
  private Duration invalidateAllBound() {
    Duration bound = settings.resolved(CacheSettings.INVALIDATE_ALL_BOUND);
    boolean usable = settings.isSet(CacheSettings.INVALIDATE_ALL_BOUND)
        || (namespace != null && store.hasCounters());
    return bound.isZero() || !usable ? null : bound;
  }

  /**
   * The cache's configuration: each setting as its row of {@link CacheSettings} resolves it (the
   * set value, or the row's default), each of this builder's objects as given or, if {@code
   * null}, its default. The one place a configuration is made.
   */
  <T> CacheConfig<T> config(ValueCodec<T> codec) {
    SettingText.FailureBackoff backoff = settings.resolved(CacheSettings.FAILURE_BACKOFF);
    SettingText.Coalesce coalesce = settings.resolved(CacheSettings.COALESCE);
    SettingText.NearCache near = settings.resolved(CacheSettings.NEAR_CACHE);
    return CacheConfig.<T>builder()
        .store(store)
        .namespace(namespace == null ? "" : namespace)
        .ttl(settings.resolved(CacheSettings.TTL))
        .grace(settings.resolved(CacheSettings.GRACE))
        .policy(settings.resolved(CacheSettings.REFRESH_POLICY))
        .codec(codec)
        .executor(executor)
        .refreshThreads(settings.resolved(CacheSettings.REFRESH_THREADS))
        .refreshQueueCapacity(settings.resolved(CacheSettings.REFRESH_QUEUE_CAPACITY))
        .clock(clock == null ? InstantSource.system() : clock)
        .random(random == null ? ThreadLocalRandomSource.INSTANCE : random)
        .keyPolicy(keyPolicy == null ? KeyPolicy.REJECT : keyPolicy)
        .maxValueSize(settings.resolved(CacheSettings.MAX_VALUE_SIZE))
        .failureBackoff(backoff.base())
        .maxFailureBackoff(backoff.max())
        .serveStaleOnError(settings.resolved(CacheSettings.SERVE_STALE_ON_ERROR))
        .maxClockSkew(settings.resolved(CacheSettings.MAX_CLOCK_SKEW))
        .loadTimeout(settings.resolved(CacheSettings.LOAD_TIMEOUT))
        .noValueTtl(settings.resolved(CacheSettings.NO_VALUE_TTL))
        .ttlJitter(settings.resolved(CacheSettings.TTL_JITTER))
        .fleetLease(settings.resolved(CacheSettings.FLEET_LEASE))
        .coalesceMaxBatchSize(coalesce.maxBatchSize())
        .coalesceMaxWait(coalesce.maxWait())
        .closeTimeout(settings.resolved(CacheSettings.CLOSE_TIMEOUT))
        .fenceTimeout(settings.resolved(CacheSettings.FENCE_TIMEOUT))
        .scheduler(scheduler == null ? Scheduler.systemScheduler() : scheduler)
        .nearMaximumSize(near == null ? 0 : near.maximumSize())
        .nearBoundedByBytes(near != null && near.bytes())
        .nearStaleness(near == null ? null : near.staleness())
        .nearSampling(near == null ? 0 : near.sampling())
        .nearCopy(settings.resolved(CacheSettings.NEAR_CACHE_COPY))
        .invalidateAllBound(invalidateAllBound())
        .entryKeys(entryKeys)
        .failWritesWhenStoreDown(settings.resolved(CacheSettings.FAIL_WRITES_WHEN_STORE_DOWN))
        .ticker(ticker == null ? Ticker.systemTicker() : ticker)
        .storeProbeInterval(settings.resolved(CacheSettings.STORE_PROBE_INTERVAL))
        .outageReuse(settings.resolved(CacheSettings.OUTAGE_REUSE))
        .observer(observer)
        .build();
  }

  /** Adds a setting through its row: the row's check, and at most once. */
  private <T> SustainableCacheBuilder<V> set(CacheSettings.Setting<T> setting, T value) {
    settings = settings.adding(setting, value);
    return this;
  }

  private ValueCodec<?> resolvedCodec() {
    return codec == null ? ValueCodec.bytes() : codec;
  }

  private static void checkUnset(Object current, String name) {
    if (current != null) {
      throw new IllegalStateException(name + " was already set to " + current);
    }
  }
}
