package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.internal.CacheConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
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
 * CacheSettings products = CacheSettings.parse("ttl=2m")
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
 *   <tr><td>{@code ttl}, {@code grace}, {@code no-value-ttl}, {@code load-timeout},
 *       {@code max-clock-skew}, {@code close-timeout}, {@code fence-timeout}, {@code
 *       invalidate-all-bound}, {@code store-probe-interval}, {@code outage-reuse}</td><td>a
 *       duration</td></tr>
 *   <tr><td>{@code refresh-policy}</td><td>{@code sustainable}, {@code
 *       sustainable:<beta>:<ttlFraction>}, {@code xfetch:<beta>} or {@code none}</td></tr>
 *   <tr><td>{@code fleet-lease}, {@code serve-stale-on-error}, {@code
 *       near-cache-copy}, {@code fail-writes-when-store-down}</td><td>{@code true} or {@code false}</td></tr>
 *   <tr><td>{@code refresh-threads}, {@code refresh-queue-capacity}, {@code
 *       max-value-size}</td><td>an integer</td></tr>
 *   <tr><td>{@code ttl-jitter}</td><td>a fraction, 0 to 0.5</td></tr>
 *   <tr><td>{@code failure-backoff}</td><td>a duration (the base), or {@code
 *       <base>:<max>}</td></tr>
 *   <tr><td>{@code coalesce}</td><td>{@code <maxBatchSize>} or {@code
 *       <maxBatchSize>:<maxWait>}</td></tr>
 *   <tr><td>{@code near-cache}</td><td>{@code <maximumSize>:<staleness>[:<sampling>]}; the size in
 *       entries, or in stored bytes with a unit ({@code 64MiB:1s})</td></tr>
 * </table>
 * {@link #toString()} writes the same format, so {@code parse(s.toString()).equals(s)}.
 *
 * <p>Immutable and thread-safe (its state is one final array that is never changed after
 * construction). Two values are equal when they set the same settings to equal values. Every
 * value is checked when it is read, with the builder's own rules and messages ({@link
 * IllegalArgumentException}); rules that relate a setting to an object on the builder (such as
 * {@code refresh-threads} with a {@link SustainableCacheBuilder#refreshExecutor}) are checked when
 * the cache is built.
 */
public final class CacheSettings {

  /** The longest TTL accepted: memcached's absolute exptimes must stay meaningful. */
  static final Duration MAX_TTL = Duration.ofDays(365);

  /** The longest load timeout, close timeout, fence timeout and batching delay accepted. */
  static final Duration MAX_TIMEOUT = Duration.ofDays(1);

  private static final Duration ONE_MILLI = Duration.ofMillis(1);

  /**
   * The smallest grace period chosen by default: the server's one-second expiry tick plus a
   * margin for a refresh started at the logical expiry.
   */
  static final Duration MIN_DEFAULT_GRACE = Duration.ofSeconds(2);

  /** The default cap of the failure back-off, when the TTL is longer. */
  static final Duration DEFAULT_MAX_FAILURE_BACKOFF = Duration.ofSeconds(30);

  /** The settings in spec order; a setting's {@link Setting#index} is its place here. */
  private static final List<Setting<?>> TABLE = new ArrayList<>();
  /** The same settings by {@linkplain #normalized normalized} key. */
  private static final Map<String, Setting<?>> BY_NAME = new HashMap<>();

  // -------------------------------------------------------------------------------------------
  // The table: one row per setting, the only hand-written home of each. A row names the spec
  // key (the builder method is the key in camel case), the type, the check of a value (its range,
  // with the builder's messages), the default (a function of the other settings where it depends
  // on them), and the text form (SettingText). The builder's setter, the spec, Spring Boot's
  // binding and the cache's configuration (CacheConfig.of) all come from these rows.

  /** {@link SustainableCacheBuilder#ttl}: required, so without a default. */
  static final Setting<Duration> TTL =
      duration("ttl", ONE_MILLI, MAX_TTL, s -> null);

  /** {@link SustainableCacheBuilder#grace}: {@code max(2 s, ttl / 10)}. */
  static final Setting<Duration> GRACE = duration("grace", Duration.ZERO, MAX_TTL, s -> {
    Duration tenth = s.resolved(TTL).dividedBy(10);
    return tenth.compareTo(MIN_DEFAULT_GRACE) > 0 ? tenth : MIN_DEFAULT_GRACE;
  });

  /** {@link SustainableCacheBuilder#refreshPolicy}: SUS. */
  static final Setting<RefreshPolicy> REFRESH_POLICY = row("refresh-policy",
      SettingText::policy, SettingText::format, (name, policy) -> { },
      orElse(s -> RefreshPolicy.sustainable()));

  /** {@link SustainableCacheBuilder#fleetLease}: on for a policy that refreshes in the background. */
  static final Setting<Boolean> FLEET_LEASE = bool("fleet-lease",
      s -> Policies.inBackground(s.resolved(REFRESH_POLICY)));

  /** {@link SustainableCacheBuilder#noValueTtl}: the TTL. */
  static final Setting<Duration> NO_VALUE_TTL =
      duration("no-value-ttl", Duration.ZERO, MAX_TTL, s -> s.resolved(TTL));

  /** {@link SustainableCacheBuilder#loadTimeout}: 30 s. */
  static final Setting<Duration> LOAD_TIMEOUT =
      duration("load-timeout", ONE_MILLI, MAX_TIMEOUT, s -> Duration.ofSeconds(30));

  /** {@link SustainableCacheBuilder#refreshThreads}: 4. */
  static final Setting<Integer> REFRESH_THREADS = integer("refresh-threads", 1, 1024, 4);

  /** {@link SustainableCacheBuilder#refreshQueueCapacity}: 1024. */
  static final Setting<Integer> REFRESH_QUEUE_CAPACITY =
      integer("refresh-queue-capacity", 0, 1_000_000, 1024);

  /**
   * {@link SustainableCacheBuilder#failureBackoff(Duration, Duration)}: base 1 s; the cap the TTL,
   * at most 30 s, and at least the base.
   */
  static final Setting<SettingText.FailureBackoff> FAILURE_BACKOFF = row("failure-backoff",
      SettingText.FailureBackoff::parse, SettingText.FailureBackoff::toString,
      CacheSettings::checkBackoff, (set, s) -> {
        Duration base = set == null ? Duration.ofSeconds(1) : set.base();
        if (set != null && set.max() != null) {
          return set;
        }
        Duration ttl = s.resolved(TTL);
        Duration cap = ttl.compareTo(DEFAULT_MAX_FAILURE_BACKOFF) < 0 ? ttl
            : DEFAULT_MAX_FAILURE_BACKOFF;
        return new SettingText.FailureBackoff(base, cap.compareTo(base) < 0 ? base : cap);
      });

  /** {@link SustainableCacheBuilder#serveStaleOnError}: on. */
  static final Setting<Boolean> SERVE_STALE_ON_ERROR = bool("serve-stale-on-error", s -> true);

  /** {@link SustainableCacheBuilder#failWritesWhenStoreDown}: off (a change commits). */
  static final Setting<Boolean> FAIL_WRITES_WHEN_STORE_DOWN =
      bool("fail-writes-when-store-down", s -> false);

  /** {@link SustainableCacheBuilder#maxClockSkew}: 30 s. */
  static final Setting<Duration> MAX_CLOCK_SKEW =
      duration("max-clock-skew", Duration.ZERO, MAX_TTL, s -> Duration.ofSeconds(30));

  /** {@link SustainableCacheBuilder#ttlJitter}: 0. */
  static final Setting<Double> TTL_JITTER = row("ttl-jitter",
      text -> SettingText.number(text, Double::valueOf), String::valueOf, (name, fraction) -> {
        if (!(fraction >= 0 && fraction <= 0.5)) {
          throw new IllegalArgumentException(name + " must be in [0, 0.5]: " + fraction);
        }
      }, orElse(s -> 0.0));

  /**
   * {@link SustainableCacheBuilder#maxValueSize}: memcached's default 1 MiB item size less 1 KiB
   * for the key and the server's item header.
   */
  static final Setting<Integer> MAX_VALUE_SIZE =
      integer("max-value-size", 21, 1 << 30, 1024 * 1024 - 1024);

  /**
   * {@link SustainableCacheBuilder#coalesce}: 100 keys per loader call, no bound on the wait (a
   * batch waits for the running call, at most the load timeout).
   */
  static final Setting<SettingText.Coalesce> COALESCE = row("coalesce",
      SettingText.Coalesce::parse, SettingText.Coalesce::toString, (name, coalesce) -> {
        if (coalesce.maxBatchSize() < 1 || coalesce.maxBatchSize() > 100_000) {
          throw new IllegalArgumentException(
              name + " maxBatchSize must be in [1, 100000]: " + coalesce.maxBatchSize());
        }
        if (coalesce.maxWait() != null) {
          inRange(name + " maxWait", coalesce.maxWait(), ONE_MILLI, MAX_TIMEOUT);
        }
      }, orElse(s -> new SettingText.Coalesce(100, null)));

  /** {@link SustainableCacheBuilder#closeTimeout}: 5 s. */
  static final Setting<Duration> CLOSE_TIMEOUT =
      duration("close-timeout", Duration.ZERO, MAX_TIMEOUT, s -> Duration.ofSeconds(5));

  /** {@link SustainableCacheBuilder#fenceTimeout}: 30 s. */
  static final Setting<Duration> FENCE_TIMEOUT =
      duration("fence-timeout", Duration.ofSeconds(1), MAX_TIMEOUT, s -> Duration.ofSeconds(30));

  /**
   * {@link SustainableCacheBuilder#nearCache} and {@link SustainableCacheBuilder#nearCacheBytes}:
   * off ({@code null}); set without a sampling, one near hit in a thousand is sampled.
   */
  static final Setting<SettingText.NearCache> NEAR_CACHE = row("near-cache",
      SettingText.NearCache::parse, SettingText.NearCache::toString,
      CacheSettings::checkNearCache, (set, s) -> set == null || set.sampling() != null ? set
          : new SettingText.NearCache(set.maximumSize(), set.bytes(), set.staleness(), 0.001));

  /** {@link SustainableCacheBuilder#nearCacheCopy}: off. */
  static final Setting<Boolean> NEAR_CACHE_COPY = bool("near-cache-copy", s -> false);

  /**
   * {@link SustainableCacheBuilder#invalidateAllBound}: 1 s; zero turns the generation off. The
   * builder uses the default only for a cache with a namespace over a store with counters.
   */
  static final Setting<Duration> INVALIDATE_ALL_BOUND = row("invalidate-all-bound",
      SettingText::duration, Duration::toString, (name, bound) -> {
        if (!bound.isZero() && (bound.compareTo(Duration.ofMillis(10)) < 0
            || bound.compareTo(Duration.ofHours(1)) > 0)) {
          throw new IllegalArgumentException(name + " must be zero (off) or between 10 ms and"
              + " 1 h: " + bound);
        }
      }, orElse(s -> Duration.ofSeconds(1)));

  /** {@link SustainableCacheBuilder#storeProbeInterval}: 500 ms; zero turns the breakers off. */
  static final Setting<Duration> STORE_PROBE_INTERVAL = duration("store-probe-interval",
      Duration.ZERO, Duration.ofMinutes(1), s -> Duration.ofMillis(500));

  /** {@link SustainableCacheBuilder#outageReuse}: 50 ms; zero turns it off. */
  static final Setting<Duration> OUTAGE_REUSE = duration("outage-reuse", Duration.ZERO,
      Duration.ofSeconds(10), s -> Duration.ofMillis(50));

  // -------------------------------------------------------------------------------------------

  private static final CacheSettings EMPTY = new CacheSettings(new Object[TABLE.size()]);

  /**
   * The value of each setting by {@link Setting#index}, {@code null} where absent. Never changed
   * after the constructor: the final field publishes it safely.
   */
  private final Object[] values;

  private CacheSettings(Object[] values) {
    this.values = values;
  }

  /**
   * No setting set: every builder default applies.
   *
   * @return the empty settings
   */
  public static CacheSettings empty() {
    return EMPTY;
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
    Object[] read = new Object[TABLE.size()];
    pairs.forEach((key, value) -> {
      requireNonNull(key, "key");
      requireNonNull(value, key);
      Setting<?> setting = BY_NAME.get(normalized(key));
      if (setting == null) {
        throw new IllegalArgumentException("unknown key '" + key + "' in the cache settings;"
            + " the keys are " + String.join(", ", keys()));
      }
      if (read[setting.index] != null) {
        throw new IllegalArgumentException("'" + key + "' is given twice");
      }
      read[setting.index] = setting.parsed(value.strip());
    });
    return new CacheSettings(read);
  }

  /**
   * The keys of the spec format, in the order {@link #toString()} writes them.
   *
   * @return an unmodifiable list, e.g. {@code ttl, grace, refresh-policy, ...}
   */
  public static List<String> keys() {
    return TABLE.stream().map(setting -> setting.key).toList();
  }

  private static String normalized(String key) {
    return key.replace("-", "").replace("_", "").toLowerCase(Locale.ROOT);
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
    Object[] merged = defaults.values.clone();
    for (int i = 0; i < values.length; i++) {
      if (values[i] != null) {
        merged[i] = values[i];
      }
    }
    return new CacheSettings(merged);
  }

  /**
   * These settings with {@code key} absent, so that a cache built from them takes the default
   * (or what is merged under them), for an integration that overrides a setting: Hibernate's
   * timestamps region drops the near cache this way.
   *
   * @param key a key of the {@linkplain CacheSettings spec format}, matched as {@link #from}
   *     matches keys; it need not be set
   * @return the settings without that key; {@code this} if it is not set
   * @throws NullPointerException if {@code key} is {@code null}
   * @throws IllegalArgumentException if {@code key} is not a key of the spec format
   */
  public CacheSettings without(String key) {
    requireNonNull(key, "key");
    Setting<?> setting = BY_NAME.get(normalized(key));
    if (setting == null) {
      throw new IllegalArgumentException("unknown key '" + key + "' in the cache settings;"
          + " the keys are " + String.join(", ", keys()));
    }
    if (!isSet(setting)) {
      return this;
    }
    Object[] fewer = values.clone();
    fewer[setting.index] = null;
    return new CacheSettings(fewer);
  }

  /**
   * Whether no setting is set.
   *
   * @return {@code true} for {@link #empty()}
   */
  public boolean isEmpty() {
    return equals(EMPTY);
  }

  /**
   * The time a value is fresh ({@link SustainableCacheBuilder#ttl}), which a cache cannot be
   * built without: a cache manager checks it before building a cache from these settings.
   *
   * @return the TTL, if set
   */
  public Optional<Duration> ttl() {
    return get(TTL);
  }

  /**
   * How far in the future an entry's load time may lie ({@link
   * SustainableCacheBuilder#maxClockSkew}), which an integration that compares timestamps of its
   * own (Hibernate's query cache) honours too.
   *
   * @return the tolerated clock skew, if set
   */
  public Optional<Duration> maxClockSkew() {
    return get(MAX_CLOCK_SKEW);
  }

  /**
   * Whether a near cache is set ({@code near-cache}: {@link SustainableCacheBuilder#nearCache} or
   * {@link SustainableCacheBuilder#nearCacheBytes}), with which a failed write may break the near
   * cache's bound.
   *
   * @return {@code true} if {@code near-cache} is set
   */
  public boolean hasNearCache() {
    return isSet(NEAR_CACHE);
  }

  /** The value of {@code setting}, if set. */
  <T> Optional<T> get(Setting<T> setting) {
    return Optional.ofNullable(value(setting));
  }

  boolean isSet(Setting<?> setting) {
    return values[setting.index] != null;
  }

  /** The value a cache built with these settings takes: the set one, completed by the default. */
  <T> T resolved(Setting<T> setting) {
    return setting.resolve.apply(value(setting), this);
  }

  @SuppressWarnings("unchecked")
  private <T> T value(Setting<T> setting) {
    return (T) values[setting.index];
  }

  /**
   * These settings and {@code setting}, which must not be set yet: what a builder's setter does.
   *
   * @throws NullPointerException if {@code value} is {@code null}, named as the builder method
   * @throws IllegalArgumentException if the value is out of range
   * @throws IllegalStateException if {@code setting} is already set
   */
  <T> CacheSettings adding(Setting<T> setting, T value) {
    setting.checked(value);
    T current = value(setting);
    if (current != null) {
      throw new IllegalStateException(
          setting.name + " was already set to " + setting.format.apply(current));
    }
    Object[] added = values.clone();
    added[setting.index] = value;
    return new CacheSettings(added);
  }

  /**
   * These settings and every one that {@code more} sets, none of which may be set here yet.
   *
   * @throws IllegalStateException if a setting {@code more} sets is already set here
   */
  CacheSettings adding(CacheSettings more) {
    CacheSettings out = this;
    for (Setting<?> setting : TABLE) {
      out = out.addingFrom(setting, more);
    }
    return out;
  }

  private <T> CacheSettings addingFrom(Setting<T> setting, CacheSettings more) {
    T value = more.value(setting);
    return value == null ? this : adding(setting, value);
  }

  /**
   * Equal when both set the same settings to equal values (durations, numbers, policies and the
   * compound values compare by value).
   */
  @Override
  public boolean equals(Object o) {
    return o instanceof CacheSettings other && Arrays.equals(values, other.values);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(values);
  }

  /**
   * The set settings as a spec, which {@link #parse} reads back to an equal value.
   *
   * @return for example {@code "ttl=PT10M, fleet-lease=true"}; empty when nothing is set
   */
  @Override
  public String toString() {
    StringBuilder out = new StringBuilder();
    for (Setting<?> setting : TABLE) {
      String value = formatted(setting);
      if (value != null) {
        out.append(out.length() == 0 ? "" : ", ").append(setting.key).append('=').append(value);
      }
    }
    return out.toString();
  }

  private <T> String formatted(Setting<T> setting) {
    T value = value(setting);
    return value == null ? null : setting.format.apply(value);
  }

  // -------------------------------------------------------------------------------------------
  // The rows' type

  /** Checks a setting's value; throws {@link IllegalArgumentException} naming it. */
  @FunctionalInterface
  interface Check<T> {
    void check(String name, T value);
  }

  /**
   * One setting, a row of the table: its spec key, its builder method's name, its text form, its
   * check and how a cache resolves it. Immutable.
   */
  static final class Setting<T> {
    /** The place of this setting's value in a {@link CacheSettings}. */
    final int index;
    /** The spec key, e.g. {@code refresh-threads}. */
    final String key;
    /** The builder method, e.g. {@code refreshThreads}: the name in messages. */
    final String name;
    private final Function<String, T> parse;
    private final Function<T, String> format;
    private final Check<T> check;
    /** The set value ({@code null} if absent) and the settings to the value a cache takes. */
    private final BiFunction<T, CacheSettings, T> resolve;

    private Setting(int index, String key, Function<String, T> parse, Function<T, String> format,
        Check<T> check, BiFunction<T, CacheSettings, T> resolve) {
      this.index = index;
      this.key = key;
      this.name = camelCase(key);
      this.parse = parse;
      this.format = format;
      this.check = check;
      this.resolve = resolve;
    }

    /** {@code value}, if it is valid for this setting. */
    T checked(T value) {
      requireNonNull(value, name);
      check.check(name, value);
      return value;
    }

    /** The value of a spec's text, checked; a failure names the pair. */
    T parsed(String text) {
      try {
        return checked(parse.apply(text));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(key + "=" + text + ": " + e.getMessage(), e);
      }
    }

    private static String camelCase(String key) {
      StringBuilder out = new StringBuilder();
      for (String word : key.split("-")) {
        out.append(out.length() == 0 ? word
            : Character.toUpperCase(word.charAt(0)) + word.substring(1));
      }
      return out.toString();
    }

    @Override
    public String toString() {
      return key;
    }
  }

  private static <T> Setting<T> row(String key, Function<String, T> parse,
      Function<T, String> format, Check<T> check, BiFunction<T, CacheSettings, T> resolve) {
    Setting<T> setting = new Setting<>(TABLE.size(), key, parse, format, check, resolve);
    TABLE.add(setting);
    BY_NAME.put(normalized(key), setting);
    return setting;
  }

  /** A resolution that takes the set value, else the default computed from the settings. */
  private static <T> BiFunction<T, CacheSettings, T> orElse(Function<CacheSettings, T> def) {
    return (set, s) -> set != null ? set : def.apply(s);
  }

  private static Setting<Duration> duration(String key, Duration min, Duration max,
      Function<CacheSettings, Duration> def) {
    return row(key, SettingText::duration, Duration::toString,
        (name, value) -> inRange(name, value, min, max), orElse(def));
  }

  private static Setting<Boolean> bool(String key, Function<CacheSettings, Boolean> def) {
    return row(key, SettingText::bool, String::valueOf, (name, value) -> { }, orElse(def));
  }

  private static Setting<Integer> integer(String key, int min, int max, int def) {
    return row(key, text -> SettingText.number(text, Integer::valueOf), String::valueOf,
        (name, value) -> {
          if (value < min || value > max) {
            throw new IllegalArgumentException(
                name + " must be in [" + min + ", " + max + "]: " + value);
          }
        }, orElse(s -> def));
  }

  /** Throws unless {@code value} is in [min, max]. */
  private static void inRange(String name, Duration value, Duration min, Duration max) {
    if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(name + " must be between " + readable(min) + " and "
          + readable(max) + ": " + value);
    }
  }

  /** A bound as a reader writes it: {@code 0}, {@code 10 ms}, {@code 1 s}, {@code 365 d}. */
  private static String readable(Duration bound) {
    long millis = bound.toMillis();
    if (millis == 0) {
      return "0";
    }
    long[] units = {86_400_000L, 3_600_000L, 60_000L, 1_000L};
    String[] names = {" d", " h", " min", " s"};
    for (int i = 0; i < units.length; i++) {
      if (millis % units[i] == 0) {
        return millis / units[i] + names[i];
      }
    }
    return millis + " ms";
  }

  private static void checkBackoff(String name, SettingText.FailureBackoff backoff) {
    inRange(name, backoff.base(), Duration.ZERO, MAX_TTL);
    Duration max = backoff.max();
    if (max != null && (max.compareTo(backoff.base()) < 0 || max.compareTo(MAX_TTL) > 0)) {
      throw new IllegalArgumentException(name + " max must be between the base ("
          + backoff.base() + ") and " + readable(MAX_TTL) + ": " + max);
    }
  }

  private static void checkNearCache(String name, SettingText.NearCache near) {
    if (near.bytes()) {
      if (near.maximumSize() < 1024 || near.maximumSize() > 1L << 40) {
        throw new IllegalArgumentException(
            name + "Bytes maximumBytes must be in [1 KiB, 1 TiB]: " + near.maximumSize());
      }
    } else if (near.maximumSize() < 1 || near.maximumSize() > 100_000_000) {
      throw new IllegalArgumentException(
          name + " maximumSize must be in [1, 100000000]: " + near.maximumSize());
    }
    if (near.staleness().compareTo(Duration.ofMillis(10)) < 0
        || near.staleness().compareTo(Duration.ofHours(1)) > 0) {
      throw new IllegalArgumentException(
          name + " staleness must be between 10 ms and 1 h: " + near.staleness());
    }
    Double sampling = near.sampling();
    if (sampling != null && !(sampling >= 0 && sampling <= 1)) {
      throw new IllegalArgumentException(name + " sampling must be in [0, 1]: " + sampling);
    }
  }
}
