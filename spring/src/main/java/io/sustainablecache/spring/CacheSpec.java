package io.sustainablecache.spring;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.CacheSettings;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * How one Spring cache's {@link io.sustainablecache.SustainableCache} is built: its {@link
 * CacheSettings} (the TTL, refresh policy, fleet lease, ...), its namespace, its codec and an
 * optional customizer of the core builder. Every part is optional; an unset one (each setting
 * separately) takes the manager's default spec's value, and then the core's default (see {@link
 * SustainableCacheBuilder}). The TTL and the codec must be set in the cache's spec or the default
 * spec: the manager refuses to create a cache without them, at start-up for the caches it knows.
 *
 * <pre>{@code
 * CacheSpec.builder()
 *     .settings(CacheSettings.parse("ttl=10m, grace=1m"))
 *     .codec(JacksonCodec.of(mapper, Product.class), Product.class)
 *     .build();
 * }</pre>
 *
 * <p>Immutable and thread-safe; {@link #builder()} and {@link #toBuilder()} create builders, which
 * are not thread-safe. The settings' values are checked when they are set ({@link
 * CacheSettings}); the namespace and the codec when the cache is built, by the core's builder.
 */
public final class CacheSpec {

  private static final CacheSpec EMPTY = builder().build();

  private final CacheSettings settings;
  private final String namespace;
  private final ValueCodec<?> codec;
  private final Class<?> valueType;
  private final Consumer<SustainableCacheBuilder<?>> customizer;

  private CacheSpec(Builder b) {
    this.settings = b.settings;
    this.namespace = b.namespace;
    this.codec = b.codec;
    this.valueType = b.valueType;
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
   * A builder holding this spec's parts, to derive another spec.
   *
   * @return a new builder
   */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.settings = settings;
    b.namespace = namespace;
    b.codec = codec;
    b.valueType = valueType;
    b.customizer = customizer;
    return b;
  }

  /**
   * This spec with every unset part taken from {@code defaults}: each setting separately ({@link
   * CacheSettings#withDefaults}), the namespace, and the codec with its value type. The
   * customizers of both run, the defaults' first.
   *
   * @param defaults the fallback; never {@code null}
   * @return the merged spec
   */
  public CacheSpec withDefaults(CacheSpec defaults) {
    requireNonNull(defaults, "defaults");
    Builder b = toBuilder();
    b.settings = settings.withDefaults(defaults.settings);
    b.namespace = namespace != null ? namespace : defaults.namespace;
    if (codec == null) {
      b.codec = defaults.codec;
      b.valueType = valueType != null ? valueType : defaults.valueType;
    }
    if (defaults.customizer != null && customizer != null) {
      b.customizer = defaults.customizer.andThen(customizer);
    } else if (customizer == null) {
      b.customizer = defaults.customizer;
    }
    return b.build();
  }

  /**
   * The cache's settings.
   *
   * @return the settings; {@link CacheSettings#empty()} if none were set
   */
  public CacheSettings settings() {
    return settings;
  }

  /**
   * The namespace of the cache's keys.
   *
   * @return the namespace, or empty if unset (the manager derives one from the cache name)
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
   * The type every value of the cache must have, checked on writes, if the codec was given one.
   *
   * @return the value type, or empty if unset
   */
  public Optional<Class<?>> valueType() {
    return Optional.ofNullable(valueType);
  }

  /**
   * The customizer of the core builder, which runs after the spec's parts are applied.
   *
   * @return the customizer, or empty if unset
   */
  public Optional<Consumer<SustainableCacheBuilder<?>>> customizer() {
    return Optional.ofNullable(customizer);
  }

  @Override
  public String toString() {
    return "CacheSpec[settings=" + settings + ", namespace=" + namespace + ", codec=" + codec
        + ", valueType=" + (valueType == null ? null : valueType.getName())
        + (customizer == null ? "" : ", customized") + "]";
  }

  /** Builds a {@link CacheSpec}. Not thread-safe. */
  public static final class Builder {
    private CacheSettings settings = CacheSettings.empty();
    private String namespace;
    private ValueCodec<?> codec;
    private Class<?> valueType;
    private Consumer<SustainableCacheBuilder<?>> customizer;

    private Builder() {}

    /**
     * Sets the cache's settings, replacing any set before.
     *
     * @param settings the settings, e.g. {@code CacheSettings.parse("ttl=10m")}
     * @return this builder
     * @throws NullPointerException if {@code settings} is {@code null}
     */
    public Builder settings(CacheSettings settings) {
      this.settings = requireNonNull(settings, "settings");
      return this;
    }

    /**
     * Sets the namespace of the cache's keys; unset, the manager derives it from the cache name.
     *
     * @param namespace see {@link SustainableCacheBuilder#namespace}; {@code null} to unset
     * @return this builder
     */
    public Builder namespace(String namespace) {
      this.namespace = namespace;
      return this;
    }

    /**
     * Sets the value codec, without a value type check.
     *
     * @param codec the codec; {@code null} to unset
     * @return this builder
     */
    public Builder codec(ValueCodec<?> codec) {
      this.codec = codec;
      this.valueType = null;
      return this;
    }

    /**
     * Sets the value codec and the type every value must have: a write of another type fails
     * with an {@link IllegalArgumentException} instead of storing what the codec cannot read.
     *
     * @param codec the codec
     * @param valueType the type of the values
     * @param <V> the codec's value type
     * @return this builder
     * @throws NullPointerException if an argument is {@code null}
     */
    public <V> Builder codec(ValueCodec<V> codec, Class<? super V> valueType) {
      this.codec = requireNonNull(codec, "codec");
      this.valueType = requireNonNull(valueType, "valueType");
      return this;
    }

    /**
     * Sets a customizer of the core builder, for what a spec does not hold (an executor, a
     * clock, a key policy).
     *
     * @param customizer runs on the builder after the spec's parts; {@code null} to unset
     * @return this builder
     */
    public Builder customizer(Consumer<SustainableCacheBuilder<?>> customizer) {
      this.customizer = customizer;
      return this;
    }

    /**
     * Creates the spec.
     *
     * @return a new immutable spec
     */
    public CacheSpec build() {
      return new CacheSpec(this);
    }
  }
}
