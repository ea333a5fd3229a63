package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The declarative settings of a cache, as one immutable value: what {@link
 * SustainableCacheBuilder#settings} applies, what Spring's cache manager keeps per cache name and
 * what a configuration file states as a spec string ({@link #parse}), in the manner of Caffeine's
 * {@code CaffeineSpec}. Each setting is either set or absent; an absent setting leaves the
 * builder's default. Objects that are not settings (the store, the codec, executors, the clock)
 * stay on the builder.
 *
 * <pre>{@code
 * CacheSettings defaults = CacheSettings.parse("ttl=10m, grace=1m, fleet-lease=true");
 * CacheSettings products = CacheSettings.builder().ttl(Duration.ofMinutes(2)).build()
 *     .withDefaults(defaults);                        // ttl 2 min, grace 1 min, the lease on
 * SustainableCache<Product> cache = SustainableCache.builder(store)
 *     .namespace("product").settings(products).codec(codec).build();
 * }</pre>
 *
 * <h2>The spec format</h2>
 * Comma-separated {@code key=value} pairs, whitespace ignored; each key at most once. Durations
 * are a number with a unit ({@code 500ms}, {@code 30s}, {@code 10m}, {@code 2h}, {@code 1d}) or
 * ISO-8601 ({@code PT10M}). The keys, each the builder method of the same name:
 * <table>
 *   <caption>Spec keys</caption>
 *   <tr><th>key</th><th>value</th></tr>
 *   <tr><td>{@code ttl}, {@code grace}, {@code absent-ttl}, {@code load-timeout},
 *       {@code max-clock-skew}, {@code close-timeout}, {@code fence-timeout}, {@code
 *       invalidate-all-bound}</td><td>a duration</td></tr>
 *   <tr><td>{@code refresh-policy}</td><td>{@code sustainable}, {@code
 *       sustainable:<beta>:<ttlFraction>}, {@code xfetch:<beta>} or {@code none}</td></tr>
 *   <tr><td>{@code fleet-lease}, {@code serve-stale-on-error}, {@code
 *       near-cache-copy}</td><td>{@code true} or {@code false}</td></tr>
 *   <tr><td>{@code refresh-threads}, {@code refresh-queue-capacity}, {@code
 *       max-value-size}</td><td>an integer</td></tr>
 *   <tr><td>{@code ttl-jitter}</td><td>a fraction, 0 to 0.5</td></tr>
 *   <tr><td>{@code failure-backoff}</td><td>a duration (the base), or {@code
 *       <base>:<max>}</td></tr>
 *   <tr><td>{@code refresh-batch}</td><td>{@code <maxKeys>:<maxDelay>}</td></tr>
 *   <tr><td>{@code near-cache}</td><td>{@code <maximumSize>:<staleness>[:<sampling>]}; the size in
 *       entries, or in stored bytes with a unit ({@code 64MiB:1s})</td></tr>
 * </table>
 * {@link #toString()} writes the same format, so {@code parse(s.toString()).equals(s)}.
 *
 * <p>Immutable and thread-safe. Every value is checked when it is set, with the builder's own
 * rules and messages ({@link IllegalArgumentException}); rules that relate two settings (such as
 * a failure back-off cap below the base) are checked when the cache is built.
 */
public final class CacheSettings {

  /** The settings by spec key, in spec order: one line each, the only list of them. */
  private static final Map<String, Setting<?>> SETTINGS = new LinkedHashMap<>();
  /** The same settings by {@linkplain #normalized normalized} key. */
  private static final Map<String, Setting<?>> BY_NAME = new HashMap<>();

  static {
    duration("ttl", s -> s.ttl, (b, v) -> b.ttl = v, SustainableCacheBuilder::ttl);
    duration("grace", s -> s.grace, (b, v) -> b.grace = v, SustainableCacheBuilder::grace);
    add("refresh-policy", s -> s.refreshPolicy, (b, v) -> b.refreshPolicy = v,
        SettingText::policy, SettingText::format,
        SustainableCacheBuilder::refreshPolicy);
    bool("fleet-lease", s -> s.fleetLease, (b, v) -> b.fleetLease = v,
        SustainableCacheBuilder::fleetLease);
    duration("absent-ttl", s -> s.absentTtl, (b, v) -> b.absentTtl = v,
        SustainableCacheBuilder::absentTtl);
    duration("load-timeout", s -> s.loadTimeout, (b, v) -> b.loadTimeout = v,
        SustainableCacheBuilder::loadTimeout);
    integer("refresh-threads", s -> s.refreshThreads, (b, v) -> b.refreshThreads = v,
        SustainableCacheBuilder::refreshThreads);
    integer("refresh-queue-capacity", s -> s.refreshQueueCapacity,
        (b, v) -> b.refreshQueueCapacity = v, SustainableCacheBuilder::refreshQueueCapacity);
    add("failure-backoff", s -> s.failureBackoff, (b, v) -> b.failureBackoff = v,
        SettingText.FailureBackoff::parse, SettingText.FailureBackoff::toString, (b, v) -> {
          if (v.max() == null) {
            b.failureBackoff(v.base());
          } else {
            b.failureBackoff(v.base(), v.max());
          }
        });
    bool("serve-stale-on-error", s -> s.serveStaleOnError, (b, v) -> b.serveStaleOnError = v,
        SustainableCacheBuilder::serveStaleOnError);
    duration("max-clock-skew", s -> s.maxClockSkew, (b, v) -> b.maxClockSkew = v,
        SustainableCacheBuilder::maxClockSkew);
    add("ttl-jitter", s -> s.ttlJitter, (b, v) -> b.ttlJitter = v,
        text -> SettingText.number(text, Double::valueOf), String::valueOf,
        SustainableCacheBuilder::ttlJitter);
    integer("max-value-size", s -> s.maxValueSize, (b, v) -> b.maxValueSize = v,
        SustainableCacheBuilder::maxValueSize);
    add("refresh-batch", s -> s.refreshBatch, (b, v) -> b.refreshBatch = v,
        SettingText.RefreshBatch::parse, SettingText.RefreshBatch::toString,
        (b, v) -> b.refreshBatch(v.maxKeys(), v.maxDelay()));
    duration("close-timeout", s -> s.closeTimeout, (b, v) -> b.closeTimeout = v,
        SustainableCacheBuilder::closeTimeout);
    duration("fence-timeout", s -> s.fenceTimeout, (b, v) -> b.fenceTimeout = v,
        SustainableCacheBuilder::fenceTimeout);
    add("near-cache", s -> s.nearCache, (b, v) -> b.nearCache = v,
        SettingText.NearCache::parse, SettingText.NearCache::toString,
        (b, v) -> {
          if (v.bytes()) {
            if (v.sampling() == null) {
              b.nearCacheBytes(v.maximumSize(), v.staleness());
            } else {
              b.nearCacheBytes(v.maximumSize(), v.staleness(), v.sampling());
            }
          } else if (v.sampling() == null) {
            b.nearCache(v.maximumSize(), v.staleness());
          } else {
            b.nearCache(v.maximumSize(), v.staleness(), v.sampling());
          }
        });
    bool("near-cache-copy", s -> s.nearCacheCopy, (b, v) -> b.nearCacheCopy = v,
        SustainableCacheBuilder::nearCacheCopy);
    duration("invalidate-all-bound", s -> s.invalidateAllBound,
        (b, v) -> b.invalidateAllBound = v, SustainableCacheBuilder::invalidateAllBound);
  }

  private static final CacheSettings EMPTY = new CacheSettings();

  private Duration ttl;
  private Duration grace;
  private RefreshPolicy refreshPolicy;
  private Boolean fleetLease;
  private Duration absentTtl;
  private Duration loadTimeout;
  private Integer refreshThreads;
  private Integer refreshQueueCapacity;
  private SettingText.FailureBackoff failureBackoff;
  private Boolean serveStaleOnError;
  private Duration maxClockSkew;
  private Double ttlJitter;
  private Integer maxValueSize;
  private SettingText.RefreshBatch refreshBatch;
  private Duration closeTimeout;
  private Duration fenceTimeout;
  private SettingText.NearCache nearCache;
  private Boolean nearCacheCopy;
  private Duration invalidateAllBound;

  private CacheSettings() {}

  /**
   * No setting set: every builder default applies.
   *
   * @return the empty settings
   */
  public static CacheSettings empty() {
    return EMPTY;
  }

  /**
   * Starts a new value.
   *
   * @return a builder with nothing set
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Parses a spec ({@linkplain CacheSettings the format}).
   *
   * @param spec for example {@code "ttl=10m, grace=1m, refresh-policy=sustainable"}; empty for
   *     no setting
   * @return the settings
   * @throws NullPointerException if {@code spec} is {@code null}
   * @throws IllegalArgumentException naming the pair at fault: an unknown key, a key given twice,
   *     a value that does not parse or is out of range
   */
  public static CacheSettings parse(String spec) {
    requireNonNull(spec, "spec");
    Map<String, String> pairs = new LinkedHashMap<>();
    if (!spec.isBlank()) {
      for (String pair : spec.split(",", -1)) {
        String trimmed = pair.strip();
        if (trimmed.isEmpty()) {
          throw new IllegalArgumentException(
              "empty pair in the cache settings spec \"" + spec + "\"");
        }
        int eq = trimmed.indexOf('=');
        String key = (eq < 0 ? trimmed : trimmed.substring(0, eq)).strip();
        if (eq < 0) {
          throw new IllegalArgumentException("'" + key + "' has no value (" + key + "=...)");
        }
        if (pairs.putIfAbsent(key, trimmed.substring(eq + 1).strip()) != null) {
          throw new IllegalArgumentException("'" + key + "' is given twice");
        }
      }
    }
    return from(pairs);
  }

  /**
   * Reads settings from key-value pairs, as Spring Boot binds them from {@code
   * sustainable-cache.settings.*}: the keys and values of the {@linkplain CacheSettings spec
   * format}. A key matches ignoring case, {@code '-'} and {@code '_'} ({@code refresh-policy},
   * {@code refreshPolicy} and {@code REFRESH_POLICY} are one key).
   *
   * @param pairs the settings by key; values are trimmed
   * @return the settings
   * @throws NullPointerException if {@code pairs}, a key or a value is {@code null}
   * @throws IllegalArgumentException naming the pair at fault, as {@link #parse}
   */
  public static CacheSettings from(Map<String, String> pairs) {
    requireNonNull(pairs, "pairs");
    Builder builder = new Builder();
    Set<String> seen = new HashSet<>();
    pairs.forEach((key, value) -> {
      requireNonNull(key, "key");
      requireNonNull(value, key);
      Setting<?> setting = BY_NAME.get(normalized(key));
      if (setting == null) {
        throw new IllegalArgumentException("unknown key '" + key + "' in the cache settings;"
            + " the keys are " + String.join(", ", SETTINGS.keySet()));
      }
      if (!seen.add(setting.key)) {
        throw new IllegalArgumentException("'" + key + "' is given twice");
      }
      setting.parseInto(builder, value.strip());
    });
    return builder.build();
  }

  /**
   * The keys of the spec format, in the order {@link #toString()} writes them.
   *
   * @return an unmodifiable list, e.g. {@code ttl, grace, refresh-policy, ...}
   */
  public static List<String> keys() {
    return List.copyOf(SETTINGS.keySet());
  }

  private static String normalized(String key) {
    return key.replace("-", "").replace("_", "").toLowerCase(Locale.ROOT);
  }

  /**
   * A builder holding these settings, to change some of them.
   *
   * @return a new builder
   */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.copy(this);
    return b;
  }

  /**
   * These settings, with each absent one taken from {@code defaults}.
   *
   * @param defaults the settings under these
   * @return the merged settings
   * @throws NullPointerException if {@code defaults} is {@code null}
   */
  public CacheSettings withDefaults(CacheSettings defaults) {
    requireNonNull(defaults, "defaults");
    Builder b = defaults.toBuilder();
    for (Setting<?> setting : SETTINGS.values()) {
      setting.copyIfSet(this, b.s);
    }
    return b.build();
  }

  /** Applies the set settings to a cache builder; called by {@link SustainableCacheBuilder}. */
  void applyTo(SustainableCacheBuilder<?> builder) {
    for (Setting<?> setting : SETTINGS.values()) {
      setting.applyTo(this, builder);
    }
  }

  /**
   * Whether no setting is set.
   *
   * @return {@code true} for {@link #empty()}
   */
  public boolean isEmpty() {
    return equals(EMPTY);
  }

  /** Returns the time a value is fresh ({@link SustainableCacheBuilder#ttl}), if set. */
  public Optional<Duration> ttl() {
    return Optional.ofNullable(ttl);
  }

  /** Returns how long a value stays after its TTL ({@link SustainableCacheBuilder#grace}). */
  public Optional<Duration> grace() {
    return Optional.ofNullable(grace);
  }

  /** Returns the refresh policy ({@link SustainableCacheBuilder#refreshPolicy}), if set. */
  public Optional<RefreshPolicy> refreshPolicy() {
    return Optional.ofNullable(refreshPolicy);
  }

  /** Returns whether the fleet lease is on ({@link SustainableCacheBuilder#fleetLease}). */
  public Optional<Boolean> fleetLease() {
    return Optional.ofNullable(fleetLease);
  }

  /** Returns the TTL of a cached absence ({@link SustainableCacheBuilder#absentTtl}). */
  public Optional<Duration> absentTtl() {
    return Optional.ofNullable(absentTtl);
  }

  /** Returns the load timeout ({@link SustainableCacheBuilder#loadTimeout}), if set. */
  public Optional<Duration> loadTimeout() {
    return Optional.ofNullable(loadTimeout);
  }

  /** Returns the refresh threads ({@link SustainableCacheBuilder#refreshThreads}), if set. */
  public Optional<Integer> refreshThreads() {
    return Optional.ofNullable(refreshThreads);
  }

  /** Returns the refresh queue ({@link SustainableCacheBuilder#refreshQueueCapacity}). */
  public Optional<Integer> refreshQueueCapacity() {
    return Optional.ofNullable(refreshQueueCapacity);
  }

  /** Returns the failure back-off base ({@link SustainableCacheBuilder#failureBackoff}). */
  public Optional<Duration> failureBackoff() {
    return Optional.ofNullable(failureBackoff).map(SettingText.FailureBackoff::base);
  }

  /** Returns the failure back-off cap, if set with the base. */
  public Optional<Duration> maxFailureBackoff() {
    return Optional.ofNullable(failureBackoff).map(SettingText.FailureBackoff::max);
  }

  /** Returns whether stale values answer failed refreshes ({@code serveStaleOnError}). */
  public Optional<Boolean> serveStaleOnError() {
    return Optional.ofNullable(serveStaleOnError);
  }

  /** Returns the tolerated clock skew ({@link SustainableCacheBuilder#maxClockSkew}). */
  public Optional<Duration> maxClockSkew() {
    return Optional.ofNullable(maxClockSkew);
  }

  /** Returns the TTL jitter fraction ({@link SustainableCacheBuilder#ttlJitter}), if set. */
  public Optional<Double> ttlJitter() {
    return Optional.ofNullable(ttlJitter);
  }

  /** Returns the largest stored value ({@link SustainableCacheBuilder#maxValueSize}). */
  public Optional<Integer> maxValueSize() {
    return Optional.ofNullable(maxValueSize);
  }

  /** Returns the refresh batch's key limit ({@link SustainableCacheBuilder#refreshBatch}). */
  public Optional<Integer> refreshBatchSize() {
    return Optional.ofNullable(refreshBatch).map(SettingText.RefreshBatch::maxKeys);
  }

  /** Returns the refresh batch's delay ({@link SustainableCacheBuilder#refreshBatch}). */
  public Optional<Duration> refreshBatchDelay() {
    return Optional.ofNullable(refreshBatch).map(SettingText.RefreshBatch::maxDelay);
  }

  /** Returns how long close waits ({@link SustainableCacheBuilder#closeTimeout}), if set. */
  public Optional<Duration> closeTimeout() {
    return Optional.ofNullable(closeTimeout);
  }

  /** Returns how long a write fence stands at most ({@link SustainableCacheBuilder#fenceTimeout}). */
  public Optional<Duration> fenceTimeout() {
    return Optional.ofNullable(fenceTimeout);
  }

  /**
   * Returns how soon the other instances see {@code invalidateAll} without a near cache ({@link
   * SustainableCacheBuilder#invalidateAllBound}), if set.
   */
  public Optional<Duration> invalidateAllBound() {
    return Optional.ofNullable(invalidateAllBound);
  }

  /**
   * Returns the near cache's size in entries ({@link SustainableCacheBuilder#nearCache}), if set
   * and bounded by entries.
   */
  public Optional<Long> nearCacheMaximumSize() {
    return Optional.ofNullable(nearCache).filter(n -> !n.bytes())
        .map(SettingText.NearCache::maximumSize);
  }

  /**
   * Returns the near cache's size in stored bytes ({@link
   * SustainableCacheBuilder#nearCacheBytes}), if set and bounded by bytes.
   */
  public Optional<Long> nearCacheMaximumBytes() {
    return Optional.ofNullable(nearCache).filter(SettingText.NearCache::bytes)
        .map(SettingText.NearCache::maximumSize);
  }

  /** Returns the near cache's bound ({@link SustainableCacheBuilder#nearCache}), if set. */
  public Optional<Duration> nearCacheStaleness() {
    return Optional.ofNullable(nearCache).map(SettingText.NearCache::staleness);
  }

  /** Returns the near cache's sampling ({@link SustainableCacheBuilder#nearCache}), if set. */
  public Optional<Double> nearCacheSampling() {
    return Optional.ofNullable(nearCache).map(SettingText.NearCache::sampling);
  }

  /**
   * Returns whether near hits decode a copy of the value ({@link
   * SustainableCacheBuilder#nearCacheCopy}), if set.
   */
  public Optional<Boolean> nearCacheCopy() {
    return Optional.ofNullable(nearCacheCopy);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CacheSettings other && toString().equals(other.toString());
  }

  @Override
  public int hashCode() {
    return toString().hashCode();
  }

  /**
   * The set settings as a spec, which {@link #parse} reads back to an equal value.
   *
   * @return for example {@code "ttl=PT10M, fleet-lease=true"}; empty when nothing is set
   */
  @Override
  public String toString() {
    StringBuilder out = new StringBuilder();
    for (Setting<?> setting : SETTINGS.values()) {
      String value = setting.format(this);
      if (value != null) {
        out.append(out.length() == 0 ? "" : ", ").append(setting.key).append('=').append(value);
      }
    }
    return out.toString();
  }

  // -------------------------------------------------------------------------------------------

  /**
   * Builds a {@link CacheSettings}. Each method checks its value with the cache builder's rules;
   * setting a value again replaces it. Not thread-safe.
   */
  public static final class Builder {

    private final CacheSettings s = new CacheSettings();

    private Builder() {}

    /**
     * @param ttl see {@link SustainableCacheBuilder#ttl}
     * @return this builder
     */
    public Builder ttl(Duration ttl) {
      return set("ttl", ttl);
    }

    /**
     * @param grace see {@link SustainableCacheBuilder#grace}
     * @return this builder
     */
    public Builder grace(Duration grace) {
      return set("grace", grace);
    }

    /**
     * @param policy see {@link SustainableCacheBuilder#refreshPolicy}
     * @return this builder
     */
    public Builder refreshPolicy(RefreshPolicy policy) {
      return set("refresh-policy", policy);
    }

    /**
     * @param enabled see {@link SustainableCacheBuilder#fleetLease}
     * @return this builder
     */
    public Builder fleetLease(boolean enabled) {
      return set("fleet-lease", enabled);
    }

    /**
     * @param absentTtl see {@link SustainableCacheBuilder#absentTtl}
     * @return this builder
     */
    public Builder absentTtl(Duration absentTtl) {
      return set("absent-ttl", absentTtl);
    }

    /**
     * @param timeout see {@link SustainableCacheBuilder#loadTimeout}
     * @return this builder
     */
    public Builder loadTimeout(Duration timeout) {
      return set("load-timeout", timeout);
    }

    /**
     * @param threads see {@link SustainableCacheBuilder#refreshThreads}
     * @return this builder
     */
    public Builder refreshThreads(int threads) {
      return set("refresh-threads", threads);
    }

    /**
     * @param capacity see {@link SustainableCacheBuilder#refreshQueueCapacity}
     * @return this builder
     */
    public Builder refreshQueueCapacity(int capacity) {
      return set("refresh-queue-capacity", capacity);
    }

    /**
     * @param base see {@link SustainableCacheBuilder#failureBackoff(Duration)}
     * @return this builder
     */
    public Builder failureBackoff(Duration base) {
      return set("failure-backoff",
          new SettingText.FailureBackoff(requireNonNull(base, "base"), null));
    }

    /**
     * @param base see {@link SustainableCacheBuilder#failureBackoff(Duration, Duration)}
     * @param max the cap
     * @return this builder
     */
    public Builder failureBackoff(Duration base, Duration max) {
      return set("failure-backoff",
          new SettingText.FailureBackoff(requireNonNull(base, "base"), requireNonNull(max, "max")));
    }

    /**
     * @param enabled see {@link SustainableCacheBuilder#serveStaleOnError}
     * @return this builder
     */
    public Builder serveStaleOnError(boolean enabled) {
      return set("serve-stale-on-error", enabled);
    }

    /**
     * @param skew see {@link SustainableCacheBuilder#maxClockSkew}
     * @return this builder
     */
    public Builder maxClockSkew(Duration skew) {
      return set("max-clock-skew", skew);
    }

    /**
     * @param fraction see {@link SustainableCacheBuilder#ttlJitter}
     * @return this builder
     */
    public Builder ttlJitter(double fraction) {
      return set("ttl-jitter", fraction);
    }

    /**
     * @param bytes see {@link SustainableCacheBuilder#maxValueSize}
     * @return this builder
     */
    public Builder maxValueSize(int bytes) {
      return set("max-value-size", bytes);
    }

    /**
     * @param maxKeys see {@link SustainableCacheBuilder#refreshBatch}
     * @param maxDelay the longest a refresh waits for its batch
     * @return this builder
     */
    public Builder refreshBatch(int maxKeys, Duration maxDelay) {
      return set("refresh-batch",
          new SettingText.RefreshBatch(maxKeys, requireNonNull(maxDelay, "maxDelay")));
    }

    /**
     * @param timeout see {@link SustainableCacheBuilder#closeTimeout}
     * @return this builder
     */
    public Builder closeTimeout(Duration timeout) {
      return set("close-timeout", timeout);
    }

    /**
     * @param timeout see {@link SustainableCacheBuilder#fenceTimeout}
     * @return this builder
     */
    public Builder fenceTimeout(Duration timeout) {
      return set("fence-timeout", timeout);
    }

    /**
     * @param bound see {@link SustainableCacheBuilder#invalidateAllBound}
     * @return this builder
     */
    public Builder invalidateAllBound(Duration bound) {
      return set("invalidate-all-bound", bound);
    }

    /**
     * @param maximumSize see {@link SustainableCacheBuilder#nearCache}
     * @param staleness the near cache's bound
     * @return this builder
     */
    public Builder nearCache(long maximumSize, Duration staleness) {
      return set("near-cache", new SettingText.NearCache(maximumSize, false,
          requireNonNull(staleness, "staleness"), null));
    }

    /**
     * @param maximumBytes see {@link SustainableCacheBuilder#nearCacheBytes}
     * @param staleness the near cache's bound
     * @return this builder
     */
    public Builder nearCacheBytes(long maximumBytes, Duration staleness) {
      return set("near-cache", new SettingText.NearCache(maximumBytes, true,
          requireNonNull(staleness, "staleness"), null));
    }

    /**
     * @param maximumSize see {@link SustainableCacheBuilder#nearCache(long, Duration, double)}
     * @param staleness the near cache's bound
     * @param sampling the share of near hits checked against the store
     * @return this builder
     */
    public Builder nearCache(long maximumSize, Duration staleness, double sampling) {
      return set("near-cache", new SettingText.NearCache(maximumSize, false,
          requireNonNull(staleness, "staleness"), sampling));
    }

    /**
     * @param copy see {@link SustainableCacheBuilder#nearCacheCopy}
     * @return this builder
     */
    public Builder nearCacheCopy(boolean copy) {
      return set("near-cache-copy", copy);
    }

    /**
     * Creates the value.
     *
     * @return a new immutable value with the settings set so far
     */
    public CacheSettings build() {
      CacheSettings out = new CacheSettings();
      for (Setting<?> setting : SETTINGS.values()) {
        setting.copyIfSet(s, out);
      }
      return out;
    }

    private void copy(CacheSettings from) {
      for (Setting<?> setting : SETTINGS.values()) {
        setting.copyIfSet(from, s);
      }
    }

    private Builder set(String key, Object value) {
      requireNonNull(value, key);
      Setting<?> setting = SETTINGS.get(key);
      setting.checkAndStore(this, value);
      return this;
    }

    /**
     * A cache builder that checks one value with its own rules and messages; a fresh one per
     * value, so that setting a value again is allowed.
     */
    private static SustainableCacheBuilder<?> check() {
      return SustainableCacheBuilder.validating();
    }
  }

  // -------------------------------------------------------------------------------------------
  // The table of settings

  /** One setting: its spec key, its field, its text form and how the cache builder takes it. */
  private static final class Setting<T> {
    final String key;
    final Function<CacheSettings, T> get;
    final BiConsumer<CacheSettings, T> put;
    final Function<String, T> parse;
    final Function<T, String> format;
    final BiConsumer<SustainableCacheBuilder<?>, T> apply;

    Setting(String key, Function<CacheSettings, T> get, BiConsumer<CacheSettings, T> put,
        Function<String, T> parse, Function<T, String> format,
        BiConsumer<SustainableCacheBuilder<?>, T> apply) {
      this.key = key;
      this.get = get;
      this.put = put;
      this.parse = parse;
      this.format = format;
      this.apply = apply;
    }

    void parseInto(Builder builder, String text) {
      try {
        checkAndStore(builder, parse.apply(text));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(key + "=" + text + ": " + e.getMessage(), e);
      }
    }

    @SuppressWarnings("unchecked")
    void checkAndStore(Builder builder, Object value) {
      T typed = (T) value;
      apply.accept(Builder.check(), typed);
      put.accept(builder.s, typed);
    }

    void copyIfSet(CacheSettings from, CacheSettings to) {
      T value = get.apply(from);
      if (value != null) {
        put.accept(to, value);
      }
    }

    void applyTo(CacheSettings from, SustainableCacheBuilder<?> builder) {
      T value = get.apply(from);
      if (value != null) {
        apply.accept(builder, value);
      }
    }

    String format(CacheSettings from) {
      T value = get.apply(from);
      return value == null ? null : format.apply(value);
    }
  }

  private static <T> void add(String key, Function<CacheSettings, T> get,
      BiConsumer<CacheSettings, T> put, Function<String, T> parse, Function<T, String> format,
      BiConsumer<SustainableCacheBuilder<?>, T> apply) {
    Setting<T> setting = new Setting<>(key, get, put, parse, format, apply);
    SETTINGS.put(key, setting);
    BY_NAME.put(normalized(key), setting);
  }

  private static void duration(String key, Function<CacheSettings, Duration> get,
      BiConsumer<CacheSettings, Duration> put,
      BiConsumer<SustainableCacheBuilder<?>, Duration> apply) {
    add(key, get, put, SettingText::duration, Duration::toString, apply);
  }

  private static void bool(String key, Function<CacheSettings, Boolean> get,
      BiConsumer<CacheSettings, Boolean> put,
      BiConsumer<SustainableCacheBuilder<?>, Boolean> apply) {
    add(key, get, put, SettingText::bool, String::valueOf, apply);
  }

  private static void integer(String key, Function<CacheSettings, Integer> get,
      BiConsumer<CacheSettings, Integer> put,
      BiConsumer<SustainableCacheBuilder<?>, Integer> apply) {
    add(key, get, put, text -> SettingText.number(text, Integer::valueOf), String::valueOf,
        apply);
  }
}
