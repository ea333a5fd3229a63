package io.sustainablecache.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code sustainable-cache.*} properties. The store's durations ({@code operation-timeout},
 * {@code shutdown-timeout}) take Spring Boot's formats ({@code 30s}, {@code 5m}, {@code PT1H}; a
 * bare number is milliseconds); the cache settings under {@code settings.*} take the core's
 * ({@code CacheSettings}: {@code 30s}, {@code 5m}, {@code 500ms}, {@code PT1H}; a bare number is
 * refused, except {@code 0}). Unset values fall back to the per-cache defaults at the top level,
 * then to the core's defaults (see {@code SustainableCacheBuilder}).
 *
 * <pre>
 * sustainable-cache.addresses=cache1:11211,cache2:11211
 * sustainable-cache.settings.ttl=5m
 * sustainable-cache.caches.books.value-type=com.example.Book
 * sustainable-cache.caches.books.settings.ttl=30s
 * </pre>
 *
 * <p>A mutable JavaBean for Spring Boot's binder; not thread-safe while it is bound, read-only
 * afterwards.
 */
@ConfigurationProperties("sustainable-cache")
public class SustainableCacheProperties extends SustainableCacheSettings {

  /** Whether to auto-configure the cache manager at all. */
  private boolean enabled = true;

  /**
   * Which client adapter creates the store: "arcus" (sustainable-cache-arcus) or "spymemcached"
   * (sustainable-cache-spymemcached). Unset: the only adapter on the class path.
   */
  private String client;

  /** memcached (or ARCUS) servers to connect to directly, "host:port" each. */
  private List<String> addresses = new ArrayList<>();

  /** ARCUS cluster settings (sustainable-cache-arcus only). */
  private final Arcus arcus = new Arcus();

  /** How long one store operation may take before it counts as failed. Unset: 700 ms. */
  private Duration operationTimeout;

  /** The longest key the servers accept, in bytes. Unset: 250 (memcached), 4000 over ZooKeeper. */
  private Integer maxKeyLength;

  /**
   * How long the client the auto-configuration created may take, when the context closes, to
   * send and have answered what it still has queued (the caches' last write-backs and lease
   * releases) before it is shut down. 0 shuts it down at once. Unset: 5 s.
   */
  private Duration shutdownTimeout;

  /** Put before every derived namespace (the cache name), e.g. "orders." for one service. */
  private String namespacePrefix = "";

  /** Whether caches that are not listed under "caches" are created on first use from the defaults. */
  private boolean dynamic = true;

  /**
   * Whether the caches hold null values (Spring's allowNullValues): a null is cached as "no
   * value" for the no-value TTL and read back as a cached null.
   */
  private boolean allowNullValues = true;

  /**
   * Whether evict, put and clear inside a Spring-managed, non-read-only transaction fence their
   * key at once and complete after the commit or rollback, so that a read of the old row before
   * the commit cannot stay cached. Off: they act at once, as outside transactions. Needs
   * spring-tx on the class path.
   */
  private boolean transactionAware = true;

  /**
   * Secret keys that sign every entry of every cache (HMAC-SHA256), base64, each at least 16
   * bytes: the first signs, the others are still accepted on reads (during a rotation). Set them
   * from a secret store or the environment (SUSTAINABLECACHE_ENTRYKEYS_0), not in a file under
   * version control. Every instance of a namespace needs the same keys. Empty: entries carry a
   * checksum only, and whoever can write to the store can forge one.
   */
  private List<String> entryKeys = new ArrayList<>();

  /** Per-cache settings, by cache name; each overrides the defaults above. */
  private Map<String, Cache> caches = new LinkedHashMap<>();

  /**
   * Whether the auto-configuration is on.
   *
   * @return {@code true} unless disabled
   */
  public boolean isEnabled() {
    return enabled;
  }

  /**
   * Turns the auto-configuration on or off.
   *
   * @param enabled the flag
   */
  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  /**
   * The adapter's client name.
   *
   * @return the name, or {@code null} for the only adapter present
   */
  public String getClient() {
    return client;
  }

  /**
   * Selects the adapter.
   *
   * @param client "arcus" or "spymemcached"
   */
  public void setClient(String client) {
    this.client = client;
  }

  /**
   * The direct server addresses.
   *
   * @return the mutable list
   */
  public List<String> getAddresses() {
    return addresses;
  }

  /**
   * Sets the direct server addresses.
   *
   * @param addresses "host:port" each
   */
  public void setAddresses(List<String> addresses) {
    this.addresses = addresses;
  }

  /**
   * The ARCUS settings.
   *
   * @return the nested settings
   */
  public Arcus getArcus() {
    return arcus;
  }

  /**
   * The store's operation timeout.
   *
   * @return the timeout, or {@code null} for the adapter's default
   */
  public Duration getOperationTimeout() {
    return operationTimeout;
  }

  /**
   * Sets the store's operation timeout.
   *
   * @param operationTimeout positive
   */
  public void setOperationTimeout(Duration operationTimeout) {
    this.operationTimeout = operationTimeout;
  }

  /**
   * How long closing the client waits for its queued operations.
   *
   * @return the bound, or {@code null} for the default (5 s)
   */
  public Duration getShutdownTimeout() {
    return shutdownTimeout;
  }

  /**
   * Sets how long closing the client waits for its queued operations.
   *
   * @param shutdownTimeout zero (at once) to 1 day
   */
  public void setShutdownTimeout(Duration shutdownTimeout) {
    this.shutdownTimeout = shutdownTimeout;
  }

  /**
   * The longest key.
   *
   * @return bytes, or {@code null} for the adapter's default
   */
  public Integer getMaxKeyLength() {
    return maxKeyLength;
  }

  /**
   * Sets the longest key.
   *
   * @param maxKeyLength bytes
   */
  public void setMaxKeyLength(Integer maxKeyLength) {
    this.maxKeyLength = maxKeyLength;
  }

  /**
   * The namespace prefix.
   *
   * @return the prefix, possibly empty
   */
  public String getNamespacePrefix() {
    return namespacePrefix;
  }

  /**
   * Sets the namespace prefix.
   *
   * @param namespacePrefix the prefix
   */
  public void setNamespacePrefix(String namespacePrefix) {
    this.namespacePrefix = namespacePrefix;
  }

  /**
   * Whether unlisted caches are created on first use.
   *
   * @return the flag
   */
  public boolean isDynamic() {
    return dynamic;
  }

  /**
   * Sets whether unlisted caches are created on first use.
   *
   * @param dynamic the flag
   */
  public void setDynamic(boolean dynamic) {
    this.dynamic = dynamic;
  }

  /**
   * Whether the caches hold null values (Spring's {@code allowNullValues}).
   *
   * @return the flag; {@code true} unless set
   */
  public boolean isAllowNullValues() {
    return allowNullValues;
  }

  /**
   * Sets whether the caches hold null values.
   *
   * @param allowNullValues the flag
   */
  public void setAllowNullValues(boolean allowNullValues) {
    this.allowNullValues = allowNullValues;
  }

  /**
   * Whether writes inside transactions are fenced and completed after them.
   *
   * @return the flag; {@code true} unless set
   */
  public boolean isTransactionAware() {
    return transactionAware;
  }

  /**
   * Sets whether writes inside transactions are fenced and completed after them.
   *
   * @param transactionAware the flag
   */
  public void setTransactionAware(boolean transactionAware) {
    this.transactionAware = transactionAware;
  }

  /**
   * The entry keys, base64, the signing key first.
   *
   * @return the mutable list; empty unless set
   */
  public List<String> getEntryKeys() {
    return entryKeys;
  }

  /**
   * Sets the entry keys, base64, the signing key first.
   *
   * @param entryKeys the keys; empty for none
   */
  public void setEntryKeys(List<String> entryKeys) {
    this.entryKeys = entryKeys;
  }

  /**
   * Describes the properties without the entry keys' values (secrets), for logs.
   *
   * @return for example {@code SustainableCacheProperties[client=memcached, entryKeys=2 set]}
   */
  @Override
  public String toString() {
    return "SustainableCacheProperties[client=" + client + ", addresses=" + addresses
        + ", namespacePrefix=" + namespacePrefix + ", entryKeys=" + entryKeys.size() + " set]";
  }

  /**
   * The per-cache settings.
   *
   * @return the mutable map, by cache name
   */
  public Map<String, Cache> getCaches() {
    return caches;
  }

  /**
   * Sets the per-cache settings.
   *
   * @param caches by cache name
   */
  public void setCaches(Map<String, Cache> caches) {
    this.caches = caches;
  }

  /** ARCUS cluster settings. */
  public static class Arcus {

    /** The ZooKeeper ensemble of the ARCUS cluster, "host:port[,host:port...]". */
    private String zookeeper;

    /** The ARCUS service code (the cluster's name in ZooKeeper). */
    private String serviceCode;

    /**
     * Whether the servers know flush_prefix, as ARCUS servers do (Spring's clear() and
     * @CacheEvict(allEntries = true) of a cache without a generation). Unset: true through
     * ZooKeeper, false for addresses (a plain memcached rejects the command and the client
     * re-opens the connection).
     */
    private Boolean prefixFlush;

    /**
     * Whether the servers know {@code flush_prefix}.
     *
     * @return the setting, or {@code null} for the default
     */
    public Boolean getPrefixFlush() {
      return prefixFlush;
    }

    /**
     * Sets whether the servers know {@code flush_prefix}.
     *
     * @param prefixFlush {@code true} for ARCUS servers given by address
     */
    public void setPrefixFlush(Boolean prefixFlush) {
      this.prefixFlush = prefixFlush;
    }

    /**
     * The ZooKeeper ensemble.
     *
     * @return the ensemble, or {@code null}
     */
    public String getZookeeper() {
      return zookeeper;
    }

    /**
     * Sets the ZooKeeper ensemble.
     *
     * @param zookeeper "host:port[,host:port...]"
     */
    public void setZookeeper(String zookeeper) {
      this.zookeeper = zookeeper;
    }

    /**
     * The service code.
     *
     * @return the service code, or {@code null}
     */
    public String getServiceCode() {
      return serviceCode;
    }

    /**
     * Sets the service code.
     *
     * @param serviceCode the service code
     */
    public void setServiceCode(String serviceCode) {
      this.serviceCode = serviceCode;
    }

    /**
     * The settings that are set, as the ARCUS adapter's store factory options ({@code
     * ArcusStoreFactory}: {@code arcus.zookeeper}, {@code arcus.service-code}, {@code
     * arcus.prefix-flush}, the same names as these properties'); another adapter refuses them.
     */
    Map<String, String> options() {
      Map<String, String> options = new LinkedHashMap<>();
      if (zookeeper != null) {
        options.put("arcus.zookeeper", zookeeper);
      }
      if (serviceCode != null) {
        options.put("arcus.service-code", serviceCode);
      }
      if (prefixFlush != null) {
        options.put("arcus.prefix-flush", prefixFlush.toString());
      }
      return options;
    }
  }

  /** The settings of one cache. */
  public static class Cache extends SustainableCacheSettings {

    /**
     * The cache's namespace (key prefix). Unset: namespace-prefix + the cache name, made valid by
     * io.sustainablecache.Namespaces.derive.
     */
    private String namespace;

    /**
     * The namespace.
     *
     * @return the namespace, or {@code null} to derive it
     */
    public String getNamespace() {
      return namespace;
    }

    /**
     * Sets the namespace.
     *
     * @param namespace 1 to 64 characters of [A-Za-z0-9_.+-]
     */
    public void setNamespace(String namespace) {
      this.namespace = namespace;
    }
  }

}
