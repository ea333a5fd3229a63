package io.sustainablecache.spring.boot.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a cache is configured with, both at the top level of {@code sustainable-cache.*} (the
 * defaults of every cache) and under {@code sustainable-cache.caches.<name>.*}: its settings and
 * how its values are stored. A mutable JavaBean for Spring Boot's binder.
 *
 * <p>The settings are bound as they are, by key, and read by the core's {@link
 * io.sustainablecache.CacheSettings#from}: a setting added to the core needs no property here.
 */
public class SustainableCacheSettings {

  /**
   * The cache settings, by the keys of io.sustainablecache.CacheSettings: ttl (required here or
   * per cache), grace, refresh-policy (sustainable, sustainable:beta:ttlFraction, xfetch:beta or
   * none), fleet-lease, no-value-ttl, load-timeout, refresh-threads, refresh-queue-capacity,
   * failure-backoff (base or base:max), serve-stale-on-error, fail-writes-when-store-down (true:
   * a change whose invalidation cannot reach the store rolls back instead of committing with its
   * invalidation owed), max-clock-skew, ttl-jitter, max-value-size, coalesce (maxBatchSize or
   * maxBatchSize:maxWait; a loading cache's misses and every bulk loader's refreshes),
   * close-timeout, fence-timeout, near-cache (maximumSize:staleness[:sampling]), near-cache-copy (true or
   * false), invalidate-all-bound (default 1s: clear() on every store as a new generation of the
   * namespace; 0 turns the generation off), store-probe-interval (default 500ms; 0 turns the
   * node breakers off), outage-reuse (default 50ms; 0: off). Durations: 500ms, 30s, 10m, 2h, 1d
   * or ISO-8601. Keys match ignoring case, dashes and underscores, in every form Spring Boot
   * binds: near-cache in properties or YAML, SUSTAINABLECACHE_SETTINGS_NEAR_CACHE or
   * ..._NEARCACHE in the environment.
   */
  private Map<String, String> settings = new LinkedHashMap<>();

  /** The type of the values: what JSON is read into, or what Java serialization must produce. */
  private Class<?> valueType;

  /** How values are stored: json (needs value-type), java-serialization, utf8 or bytes. */
  private Codec codec;

  /** For java-serialization: ObjectInputFilter patterns of every class values may contain. */
  private String allowList;

  /** The name of a ValueCodec bean that stores this cache's values (instead of codec/value-type). */
  private String codecBean;

  /**
   * The cache settings by key.
   *
   * @return the bound map; empty if none
   */
  public Map<String, String> getSettings() {
    return settings;
  }

  /**
   * Sets the cache settings.
   *
   * @param settings the settings by key
   */
  public void setSettings(Map<String, String> settings) {
    this.settings = settings;
  }

  /**
   * The value type.
   *
   * @return the type, or {@code null}
   */
  public Class<?> getValueType() {
    return valueType;
  }

  /**
   * Sets the value type.
   *
   * @param valueType a class name when bound from properties
   */
  public void setValueType(Class<?> valueType) {
    this.valueType = valueType;
  }

  /**
   * The codec kind.
   *
   * @return the kind, or {@code null} (JSON when a value type is set)
   */
  public Codec getCodec() {
    return codec;
  }

  /**
   * Sets the codec kind.
   *
   * @param codec the kind
   */
  public void setCodec(Codec codec) {
    this.codec = codec;
  }

  /**
   * The allow-list for Java serialization.
   *
   * @return the patterns, or {@code null}
   */
  public String getAllowList() {
    return allowList;
  }

  /**
   * Sets the allow-list for Java serialization.
   *
   * @param allowList ObjectInputFilter patterns separated by ';'
   */
  public void setAllowList(String allowList) {
    this.allowList = allowList;
  }

  /**
   * The codec bean's name.
   *
   * @return the name, or {@code null}
   */
  public String getCodecBean() {
    return codecBean;
  }

  /**
   * Sets the codec bean's name.
   *
   * @param codecBean the name of a ValueCodec bean
   */
  public void setCodecBean(String codecBean) {
    this.codecBean = codecBean;
  }

  /** How a cache's values are stored. */
  public enum Codec {
    /** JSON through Jackson, into the value type. */
    JSON,
    /** Java serialization restricted to the allow-list. */
    JAVA_SERIALIZATION,
    /** Strings as UTF-8. */
    UTF8,
    /** Byte arrays as they are. */
    BYTES
  }
}
