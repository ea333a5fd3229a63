package io.sustainablecache.spring;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.RefreshPolicy;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The settings of one Spring cache: how its {@link io.sustainablecache.SustainableCache} is built.
 * Every setting is optional; an unset one takes the manager's default spec's value, and then the
 * core's default (see {@link SustainableCacheBuilder}). {@link #ttl} and {@link #codec} must be
 * set in the cache's spec or the default spec: the manager refuses to create a cache without them,
 * at start-up for the caches it knows.
 *
 * <p>Immutable and thread-safe; {@link #builder()} and {@link #toBuilder()} create builders, which
 * are not thread-safe. Values are checked when the cache is built, by the core's builder, with its
 * messages.
 */
public final class CacheSpec {

  private static final CacheSpec EMPTY = builder().build();

  private final Duration ttl;
  private final Duration grace;
  private final Duration absentTtl;
  private final Duration loadTimeout;
  private final RefreshPolicy refreshPolicy;
  private final String namespace;
  private final ValueCodec<?> codec;
  private final Class<?> valueType;
  private final Integer refreshThreads;
  private final Integer refreshQueueCapacity;
  private final Boolean fleetLease;
  private final Consumer<SustainableCacheBuilder<?>> customizer;

  private CacheSpec(Builder b) {
    this.ttl = b.ttl;
    this.grace = b.grace;
    this.absentTtl = b.absentTtl;
    this.loadTimeout = b.loadTimeout;
    this.refreshPolicy = b.refreshPolicy;
    this.namespace = b.namespace;
    this.codec = b.codec;
    this.valueType = b.valueType;
    this.refreshThreads = b.refreshThreads;
    this.refreshQueueCapacity = b.refreshQueueCapacity;
    this.fleetLease = b.fleetLease;
    this.customizer = b.customizer;
  }

  /**
   * A spec with nothing set.
   *
   * @return a shared instance
   */
  public static CacheSpec empty() {
    return EMPTY;
  }

  /**
   * Starts a spec with nothing set.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * A builder holding this spec's settings, to derive another spec.
   *
   * @return a new builder
   */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.ttl = ttl;
    b.grace = grace;
    b.absentTtl = absentTtl;
    b.loadTimeout = loadTimeout;
    b.refreshPolicy = refreshPolicy;
    b.namespace = namespace;
    b.codec = codec;
    b.valueType = valueType;
    b.refreshThreads = refreshThreads;
    b.refreshQueueCapacity = refreshQueueCapacity;
    b.fleetLease = fleetLease;
    b.customizer = customizer;
    return b;
  }

  /**
   * This spec with every unset setting taken from {@code defaults}. The customizers of both run,
   * the defaults' first.
   *
   * @param defaults the fallback; never {@code null}
   * @return the merged spec
   */
  public CacheSpec withDefaults(CacheSpec defaults) {
    requireNonNull(defaults, "defaults");
    Builder b = toBuilder();
    b.ttl = ttl != null ? ttl : defaults.ttl;
    b.grace = grace != null ? grace : defaults.grace;
    b.absentTtl = absentTtl != null ? absentTtl : defaults.absentTtl;
    b.loadTimeout = loadTimeout != null ? loadTimeout : defaults.loadTimeout;
    b.refreshPolicy = refreshPolicy != null ? refreshPolicy : defaults.refreshPolicy;
    b.namespace = namespace != null ? namespace : defaults.namespace;
    if (codec == null) {
      b.codec = defaults.codec;
      b.valueType = valueType != null ? valueType : defaults.valueType;
    }
    b.refreshThreads = refreshThreads != null ? refreshThreads : defaults.refreshThreads;
    b.refreshQueueCapacity =
        refreshQueueCapacity != null ? refreshQueueCapacity : defaults.refreshQueueCapacity;
    b.fleetLease = fleetLease != null ? fleetLease : defaults.fleetLease;
    if (defaults.customizer != null && customizer != null) {
      b.customizer = defaults.customizer.andThen(customizer);
    } else if (customizer == null) {
      b.customizer = defaults.customizer;
    }
    return b.build();
  }

  /**
   * The logical time to live.
   *
   * @return the TTL, or empty if unset
   */
  public Optional<Duration> ttl() {
    return Optional.ofNullable(ttl);
  }

  /**
   * How long past the TTL an entry stays on the server, served stale while it refreshes.
   *
   * @return the grace period, or empty if unset
   */
  public Optional<Duration> grace() {
    return Optional.ofNullable(grace);
  }

  /**
   * How long a "no value" result (the method returned {@code null}) is cached.
   *
   * @return the absent TTL, or empty if unset
   */
  public Optional<Duration> absentTtl() {
    return Optional.ofNullable(absentTtl);
  }

  /**
   * How long a load may run before its callers fail.
   *
   * @return the load timeout, or empty if unset
   */
  public Optional<Duration> loadTimeout() {
    return Optional.ofNullable(loadTimeout);
  }

  /**
   * The refresh policy.
   *
   * @return the policy, or empty if unset
   */
  public Optional<RefreshPolicy> refreshPolicy() {
    return Optional.ofNullable(refreshPolicy);
  }

  /**
   * The namespace (key prefix).
   *
   * @return the namespace, or empty to derive it from the cache name
   */
  public Optional<String> namespace() {
    return Optional.ofNullable(namespace);
  }

  /**
   * The value codec.
   *
   * @return the codec, or empty if unset
   */
  public Optional<ValueCodec<?>> codec() {
    return Optional.ofNullable(codec);
  }

  /**
   * The type every value of the cache has, when known: {@code put} checks it, so that a value
   * the codec cannot encode fails at the call instead of being silently left uncached.
   *
   * @return the value type, or empty if unknown
   */
  public Optional<Class<?>> valueType() {
    return Optional.ofNullable(valueType);
  }

  /**
   * The number of refresh threads.
   *
   * @return the number, or empty if unset
   */
  public Optional<Integer> refreshThreads() {
    return Optional.ofNullable(refreshThreads);
  }

  /**
   * The refresh queue's capacity.
   *
   * @return the capacity, or empty if unset
   */
  public Optional<Integer> refreshQueueCapacity() {
    return Optional.ofNullable(refreshQueueCapacity);
  }

  /**
   * Whether instances coordinate loads through a fleet lease.
   *
   * @return the setting, or empty if unset (the core's default: on for SUS)
   */
  public Optional<Boolean> fleetLease() {
    return Optional.ofNullable(fleetLease);
  }

  /**
   * The customizer applied to the core builder after every other setting.
   *
   * @return the customizer, or empty
   */
  public Optional<Consumer<SustainableCacheBuilder<?>>> customizer() {
    return Optional.ofNullable(customizer);
  }

  @Override
  public String toString() {
    return "CacheSpec[ttl=" + ttl + ", grace=" + grace + ", absentTtl=" + absentTtl
        + ", loadTimeout=" + loadTimeout + ", refreshPolicy=" + refreshPolicy + ", namespace="
        + namespace + ", codec=" + codec + ", valueType="
        + (valueType == null ? null : valueType.getName()) + ", refreshThreads=" + refreshThreads
        + ", refreshQueueCapacity=" + refreshQueueCapacity + ", fleetLease=" + fleetLease
        + (customizer == null ? "" : ", customized") + "]";
  }

  /** Builds a {@link CacheSpec}. Setters may be called repeatedly; the last call wins. */
  public static final class Builder {
    private Duration ttl;
    private Duration grace;
    private Duration absentTtl;
    private Duration loadTimeout;
    private RefreshPolicy refreshPolicy;
    private String namespace;
    private ValueCodec<?> codec;
    private Class<?> valueType;
    private Integer refreshThreads;
    private Integer refreshQueueCapacity;
    private Boolean fleetLease;
    private Consumer<SustainableCacheBuilder<?>> customizer;

    private Builder() {}

    /**
     * See {@link SustainableCacheBuilder#ttl}.
     *
     * @param ttl the TTL, or {@code null} to unset
     * @return this builder
     */
    public Builder ttl(Duration ttl) {
      this.ttl = ttl;
      return this;
    }

    /**
     * See {@link SustainableCacheBuilder#grace}.
     *
     * @param grace the grace period, or {@code null} to unset
     * @return this builder
     */
    public Builder grace(Duration grace) {
      this.grace = grace;
      return this;
    }

    /**
     * See {@link SustainableCacheBuilder#absentTtl}.
     *
     * @param absentTtl the absent TTL, or {@code null} to unset
     * @return this builder
     */
    public Builder absentTtl(Duration absentTtl) {
      this.absentTtl = absentTtl;
      return this;
    }

    /**
     * See {@link SustainableCacheBuilder#loadTimeout}.
     *
     * @param loadTimeout the timeout, or {@code null} to unset
     * @return this builder
     */
    public Builder loadTimeout(Duration loadTimeout) {
      this.loadTimeout = loadTimeout;
      return this;
    }

    /**
     * See {@link SustainableCacheBuilder#refreshPolicy}.
     *
     * @param policy the policy, or {@code null} to unset
     * @return this builder
     */
    public Builder refreshPolicy(RefreshPolicy policy) {
      this.refreshPolicy = policy;
      return this;
    }

    /**
     * The cache's namespace (see {@link SustainableCacheBuilder#namespace}). Unset, the manager
     * derives it from the cache name (see {@link SustainableCacheManager}).
     *
     * @param namespace the namespace, or {@code null} to unset
     * @return this builder
     */
    public Builder namespace(String namespace) {
      this.namespace = namespace;
      return this;
    }

    /**
     * The value codec, of unknown value type.
     *
     * @param codec the codec, or {@code null} to unset
     * @return this builder
     */
    public Builder codec(ValueCodec<?> codec) {
      this.codec = codec;
      this.valueType = null;
      return this;
    }

    /**
     * The value codec and the type of every value, which {@code put} checks.
     *
     * @param codec the codec; never {@code null}
     * @param valueType the type its values have; never {@code null}
     * @param <V> the value type
     * @return this builder
     */
    public <V> Builder codec(ValueCodec<V> codec, Class<? super V> valueType) {
      this.codec = requireNonNull(codec, "codec");
      this.valueType = requireNonNull(valueType, "valueType");
      return this;
    }

    /**
     * See {@link SustainableCacheBuilder#refreshThreads}.
     *
     * @param threads the number, or {@code null} to unset
     * @return this builder
     */
    public Builder refreshThreads(Integer threads) {
      this.refreshThreads = threads;
      return this;
    }

    /**
     * See {@link SustainableCacheBuilder#refreshQueueCapacity}.
     *
     * @param capacity the capacity, or {@code null} to unset
     * @return this builder
     */
    public Builder refreshQueueCapacity(Integer capacity) {
      this.refreshQueueCapacity = capacity;
      return this;
    }

    /**
     * See {@link SustainableCacheBuilder#fleetLease}.
     *
     * @param enabled the setting, or {@code null} to unset
     * @return this builder
     */
    public Builder fleetLease(Boolean enabled) {
      this.fleetLease = enabled;
      return this;
    }

    /**
     * Sets anything else on the core builder (clock, scheduler, executor, value size, ...). It
     * runs last; it must not set what this spec sets (the core builder allows each setting once).
     *
     * @param customizer the customizer, or {@code null} to unset
     * @return this builder
     */
    public Builder customizer(Consumer<SustainableCacheBuilder<?>> customizer) {
      this.customizer = customizer;
      return this;
    }

    /**
     * Builds the spec.
     *
     * @return an immutable spec
     */
    public CacheSpec build() {
      return new CacheSpec(this);
    }
  }
}
