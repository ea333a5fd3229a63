package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.CacheStore;
import java.time.Duration;
import java.time.InstantSource;
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

  /** The longest TTL accepted: memcached's absolute exptimes must stay meaningful. */
  public static final Duration MAX_TTL = Duration.ofDays(365);

  /**
   * The smallest grace period chosen by default: the server's one-second expiry tick plus a
   * margin for a refresh started at the logical expiry.
   */
  public static final Duration MIN_DEFAULT_GRACE = Duration.ofSeconds(2);

  /** Default number of background refresh threads when the cache owns its executor. */
  public static final int DEFAULT_REFRESH_THREADS = 4;

  /** Default capacity of the refresh queue when the cache owns its executor. */
  public static final int DEFAULT_REFRESH_QUEUE_CAPACITY = 1024;

  /** The longest namespace, in characters. */
  public static final int MAX_NAMESPACE_LENGTH = 64;

  /**
   * Default largest stored value (envelope included), in bytes: memcached's default 1 MiB item
   * size less 1 KiB for the key and the server's item header.
   */
  public static final int DEFAULT_MAX_VALUE_SIZE = 1024 * 1024 - 1024;

  /** Default base of the back-off between refresh attempts of a key whose refresh failed. */
  public static final Duration DEFAULT_REFRESH_BACKOFF = Duration.ofSeconds(1);

  /** Default bound on how far in the future an envelope's load time may lie. */
  public static final Duration DEFAULT_MAX_CLOCK_SKEW = Duration.ofSeconds(30);

  final CacheStore store;
  String namespace;
  Duration ttl;
  Duration grace;
  RefreshPolicy policy;
  ValueCodec<?> codec;
  Executor executor;
  int refreshThreads = -1;
  int refreshQueueCapacity = -1;
  InstantSource clock;
  RandomGenerator random;
  KeyPolicy keyPolicy;
  int maxValueSize = -1;
  Duration refreshBackoff;
  Boolean serveStaleOnError;
  Duration maxClockSkew;

  SustainableCacheBuilder(CacheStore store) {
    this.store = requireNonNull(store, "store");
  }

  /**
   * Prefixes every key with {@code namespace + ":"}, so several caches (or services) can share
   * a store; on ARCUS the namespace is the key prefix that per-prefix statistics and flushes use.
   * Default: no prefix.
   *
   * @param namespace 1 to {@value #MAX_NAMESPACE_LENGTH} characters of {@code [A-Za-z0-9_.+-]},
   *     not starting with {@code '-'} (the ARCUS prefix rules)
   * @return this builder
   * @throws IllegalArgumentException if the namespace is empty, too long or has other characters
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> namespace(String namespace) {
    requireNonNull(namespace, "namespace");
    checkUnset(this.namespace, "namespace");
    if (namespace.isEmpty() || namespace.length() > MAX_NAMESPACE_LENGTH) {
      throw new IllegalArgumentException("namespace must have 1 to " + MAX_NAMESPACE_LENGTH
          + " characters: \"" + namespace + "\" has " + namespace.length());
    }
    if (namespace.charAt(0) == '-') {
      throw new IllegalArgumentException(
          "namespace must not start with '-' (an ARCUS prefix rule): \"" + namespace + "\"");
    }
    for (int i = 0; i < namespace.length(); i++) {
      char c = namespace.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || c == '_' || c == '.' || c == '+' || c == '-';
      if (!ok) {
        throw new IllegalArgumentException("namespace may only contain [A-Za-z0-9_.+-]: \""
            + namespace + "\" has '" + c + "' at index " + i);
      }
    }
    this.namespace = namespace;
    return this;
  }

  /**
   * The logical time to live: how long a loaded value counts as fresh. Refreshes are decided
   * against it; the item lives on the server for {@code ttl + grace}. Required.
   *
   * @param ttl positive, at most {@link #MAX_TTL}; sub-second values are allowed
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> ttl(Duration ttl) {
    requireNonNull(ttl, "ttl");
    checkUnset(this.ttl, "ttl");
    if (ttl.toMillis() <= 0 || ttl.compareTo(MAX_TTL) > 0) {
      throw new IllegalArgumentException(
          "ttl must be at least 1 ms and at most " + MAX_TTL + ": " + ttl);
    }
    this.ttl = ttl;
    return this;
  }

  /**
   * How long past its logical expiry an item stays on the server. Within the grace period a
   * policy that serves stale values (SUS) returns the old value while it refreshes, including
   * when the loader or database is failing. The physical exptime sent to the server is {@code
   * ceil((ttl + grace) / 1 s) + 1} seconds, so the server's one-second tick never removes an
   * item before {@code ttl + grace} has passed. Default: {@code max(2 s, ttl / 10)}.
   *
   * @param grace zero or positive, at most {@link #MAX_TTL}
   * @return this builder
   * @throws IllegalArgumentException if negative or too long
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> grace(Duration grace) {
    requireNonNull(grace, "grace");
    checkUnset(this.grace, "grace");
    if (grace.isNegative() || grace.compareTo(MAX_TTL) > 0) {
      throw new IllegalArgumentException(
          "grace must be between 0 and " + MAX_TTL + ": " + grace);
    }
    this.grace = grace;
    return this;
  }

  /**
   * The refresh policy. Default: {@link RefreshPolicy#sustainable()}.
   *
   * @param policy the policy
   * @return this builder
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> refreshPolicy(RefreshPolicy policy) {
    requireNonNull(policy, "policy");
    checkUnset(this.policy, "refreshPolicy");
    this.policy = policy;
    return this;
  }

  /**
   * The value codec, which also fixes the cache's value type. Default: {@link
   * ValueCodec#bytes()}.
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
   * executor that silently discards work is tolerated (the key is released after {@code ttl +
   * grace}). Excludes {@link #refreshThreads} and {@link #refreshQueueCapacity}.
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
   * The number of threads of the refresh executor the cache creates and owns. Default: {@value
   * #DEFAULT_REFRESH_THREADS}. Size it by Little's law: hot keys refreshed per second times the
   * load time.
   *
   * @param threads 1 to 1024
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> refreshThreads(int threads) {
    if (refreshThreads != -1) {
      throw new IllegalStateException("refreshThreads was already set to " + refreshThreads);
    }
    if (threads < 1 || threads > 1024) {
      throw new IllegalArgumentException("refreshThreads must be in [1, 1024]: " + threads);
    }
    this.refreshThreads = threads;
    return this;
  }

  /**
   * The queue capacity of the refresh executor the cache creates and owns; refreshes beyond it
   * are rejected and counted. Default: {@value #DEFAULT_REFRESH_QUEUE_CAPACITY}.
   *
   * @param capacity 0 (hand-off only) to 1,000,000
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> refreshQueueCapacity(int capacity) {
    if (refreshQueueCapacity != -1) {
      throw new IllegalStateException(
          "refreshQueueCapacity was already set to " + refreshQueueCapacity);
    }
    if (capacity < 0 || capacity > 1_000_000) {
      throw new IllegalArgumentException(
          "refreshQueueCapacity must be in [0, 1000000]: " + capacity);
    }
    this.refreshQueueCapacity = capacity;
    return this;
  }

  /**
   * The wall clock used for envelope timestamps, expiry decisions and load-time measurement.
   * Envelopes are read by other hosts, so it must be epoch-based. Default: {@link
   * InstantSource#system()}.
   *
   * @param clock the clock
   * @return this builder
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> clock(InstantSource clock) {
    requireNonNull(clock, "clock");
    checkUnset(this.clock, "clock");
    this.clock = clock;
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
   * it is returned to its callers but not cached (counted in {@link
   * CacheStats#skippedWriteCount()}, one rate-limited log line); {@link SustainableCache#put}
   * rejects it. Keep it below the server's item size ({@code -I}, 1 MiB by default) minus the
   * key and the item header: a server that refuses an oversized item makes spymemcached and the
   * ARCUS client drop and re-open the connection, failing other requests meanwhile. Default:
   * {@value #DEFAULT_MAX_VALUE_SIZE}.
   *
   * @param bytes 17 (an empty payload) to 1 GiB
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> maxValueSize(int bytes) {
    if (maxValueSize != -1) {
      throw new IllegalStateException("maxValueSize was already set to " + maxValueSize);
    }
    if (bytes < 17 || bytes > 1 << 30) {
      throw new IllegalArgumentException("maxValueSize must be in [17, 1073741824]: " + bytes);
    }
    this.maxValueSize = bytes;
    return this;
  }

  /**
   * The base of the back-off after a background refresh of a key fails: the key is not refreshed
   * again for {@code base * 2^(failures - 1)}, capped at {@code max(base, ttl)}, each wait drawn
   * uniformly from 50 % to 150 % of that, so that a failing database sees at most one attempt per
   * key per window from each instance, and instances do not retry in step. Reads keep being
   * served (stale within the grace period) meanwhile. Default: 1 s.
   *
   * @param base positive, at most {@link #MAX_TTL}
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> refreshBackoff(Duration base) {
    requireNonNull(base, "base");
    checkUnset(this.refreshBackoff, "refreshBackoff");
    if (base.toMillis() <= 0 || base.compareTo(MAX_TTL) > 0) {
      throw new IllegalArgumentException(
          "refreshBackoff must be at least 1 ms and at most " + MAX_TTL + ": " + base);
    }
    this.refreshBackoff = base;
    return this;
  }

  /**
   * Whether a read of an entry past its logical expiry (but still on the server, within the grace
   * period) returns the stale value when reloading it fails, instead of throwing the loader's
   * exception. Applies to policies that reload expired entries on the caller's thread ({@code
   * none}, PER); SUS always serves stale values within the grace period and refreshes them in the
   * background. Counted in {@link CacheStats#staleOnErrorCount()}. A miss with nothing to fall
   * back on always throws. Default: {@code true}.
   *
   * @param enabled {@code false} to make every failed load reach the caller
   * @return this builder
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> serveStaleOnError(boolean enabled) {
    checkUnset(this.serveStaleOnError, "serveStaleOnError");
    this.serveStaleOnError = enabled;
    return this;
  }

  /**
   * How far in the future (by this host's clock) an envelope's load time may lie and still be
   * trusted. Envelope times are the writer's wall clock; a writer whose clock runs ahead produces
   * entries that look fresh for longer. An entry loaded more than this in the future is treated
   * as expired (refreshed, or reloaded), and a warning suggests checking clock synchronization.
   * Default: 30 s, far above NTP-synchronized skew.
   *
   * @param skew zero or positive, at most {@link #MAX_TTL}
   * @return this builder
   * @throws IllegalArgumentException if out of range
   * @throws IllegalStateException if already set
   */
  public SustainableCacheBuilder<V> maxClockSkew(Duration skew) {
    requireNonNull(skew, "skew");
    checkUnset(this.maxClockSkew, "maxClockSkew");
    if (skew.isNegative() || skew.compareTo(MAX_TTL) > 0) {
      throw new IllegalArgumentException(
          "maxClockSkew must be between 0 and " + MAX_TTL + ": " + skew);
    }
    this.maxClockSkew = skew;
    return this;
  }

  /**
   * Builds the cache.
   *
   * @return a new immutable, thread-safe cache; close it to stop its refresh executor
   * @throws IllegalStateException if {@link #ttl} was not set, or an executor was given together
   *     with thread or queue settings
   */
  @SuppressWarnings("unchecked")
  public SustainableCache<V> build() {
    if (ttl == null) {
      throw new IllegalStateException("ttl must be set");
    }
    if (executor != null && (refreshThreads != -1 || refreshQueueCapacity != -1)) {
      throw new IllegalStateException(
          "refreshExecutor cannot be combined with refreshThreads or refreshQueueCapacity");
    }
    return new DefaultSustainableCache<>(this, (ValueCodec<V>) codec());
  }

  // Resolved settings, read by DefaultSustainableCache.

  String resolvedNamespace() {
    return namespace == null ? "" : namespace;
  }

  Duration resolvedGrace() {
    if (grace != null) {
      return grace;
    }
    Duration tenth = ttl.dividedBy(10);
    return tenth.compareTo(MIN_DEFAULT_GRACE) > 0 ? tenth : MIN_DEFAULT_GRACE;
  }

  RefreshPolicy resolvedPolicy() {
    return policy == null ? RefreshPolicy.sustainable() : policy;
  }

  private ValueCodec<?> codec() {
    return codec == null ? ValueCodec.bytes() : codec;
  }

  InstantSource resolvedClock() {
    return clock == null ? InstantSource.system() : clock;
  }

  RandomGenerator resolvedRandom() {
    return random == null ? ThreadLocalRandomSource.INSTANCE : random;
  }

  int resolvedRefreshThreads() {
    return refreshThreads == -1 ? DEFAULT_REFRESH_THREADS : refreshThreads;
  }

  KeyPolicy resolvedKeyPolicy() {
    return keyPolicy == null ? KeyPolicy.REJECT : keyPolicy;
  }

  int resolvedMaxValueSize() {
    return maxValueSize == -1 ? DEFAULT_MAX_VALUE_SIZE : maxValueSize;
  }

  Duration resolvedRefreshBackoff() {
    return refreshBackoff == null ? DEFAULT_REFRESH_BACKOFF : refreshBackoff;
  }

  boolean resolvedServeStaleOnError() {
    return serveStaleOnError == null || serveStaleOnError;
  }

  Duration resolvedMaxClockSkew() {
    return maxClockSkew == null ? DEFAULT_MAX_CLOCK_SKEW : maxClockSkew;
  }

  int resolvedRefreshQueueCapacity() {
    return refreshQueueCapacity == -1 ? DEFAULT_REFRESH_QUEUE_CAPACITY : refreshQueueCapacity;
  }

  private static void checkUnset(Object current, String name) {
    if (current != null) {
      throw new IllegalStateException(name + " was already set to " + current);
    }
  }
}
