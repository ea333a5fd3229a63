package io.sustainablecache.spring.boot.autoconfigure;

import java.time.Duration;

/**
 * The settings a cache can have, both at the top level of {@code sustainable-cache.*} (the
 * defaults of every cache) and under {@code sustainable-cache.caches.<name>.*}. A mutable JavaBean
 * for Spring Boot's binder.
 */
public class SustainableCacheSettings {


    /** How long a loaded value counts as fresh (required here or per cache). */
    private Duration ttl;

    /** How long past the TTL a value stays on the server, served stale while it refreshes. */
    private Duration grace;

    /** How long "no value" (the method returned null) is cached. Unset: the TTL. */
    private Duration absentTtl;

    /** How long a load may run before its callers fail and the key is released. Unset: 30 s. */
    private Duration loadTimeout;

    /** Whether instances sharing the store coordinate loads with a lease. Unset: on for SUS. */
    private Boolean fleetLease;

    /** The type of the values: what JSON is read into, or what Java serialization must produce. */
    private Class<?> valueType;

    /** How values are stored: json (needs value-type), java-serialization, utf8 or bytes. */
    private Codec codec;

    /** For java-serialization: ObjectInputFilter patterns of every class values may contain. */
    private String allowList;

    /** The name of a ValueCodec bean that stores this cache's values (instead of codec/value-type). */
    private String codecBean;

    /** Refresh settings. */
    private final Refresh refresh = new Refresh();

    /**
     * The TTL.
     *
     * @return the TTL, or {@code null}
     */
    public Duration getTtl() {
      return ttl;
    }

    /**
     * Sets the TTL.
     *
     * @param ttl 1 ms to 365 days
     */
    public void setTtl(Duration ttl) {
      this.ttl = ttl;
    }

    /**
     * The grace period.
     *
     * @return the grace period, or {@code null}
     */
    public Duration getGrace() {
      return grace;
    }

    /**
     * Sets the grace period.
     *
     * @param grace zero or positive
     */
    public void setGrace(Duration grace) {
      this.grace = grace;
    }

    /**
     * The absent TTL.
     *
     * @return the absent TTL, or {@code null}
     */
    public Duration getAbsentTtl() {
      return absentTtl;
    }

    /**
     * Sets the absent TTL.
     *
     * @param absentTtl zero (cache no absences) or positive
     */
    public void setAbsentTtl(Duration absentTtl) {
      this.absentTtl = absentTtl;
    }

    /**
     * The load timeout.
     *
     * @return the timeout, or {@code null}
     */
    public Duration getLoadTimeout() {
      return loadTimeout;
    }

    /**
     * Sets the load timeout.
     *
     * @param loadTimeout 1 ms to 1 day
     */
    public void setLoadTimeout(Duration loadTimeout) {
      this.loadTimeout = loadTimeout;
    }

    /**
     * The fleet lease flag.
     *
     * @return the flag, or {@code null}
     */
    public Boolean getFleetLease() {
      return fleetLease;
    }

    /**
     * Sets the fleet lease flag.
     *
     * @param fleetLease the flag
     */
    public void setFleetLease(Boolean fleetLease) {
      this.fleetLease = fleetLease;
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

    /**
     * The refresh settings.
     *
     * @return the nested settings
     */
    public Refresh getRefresh() {
      return refresh;
    }
  
  /** How a cache's values are stored. */
  public enum Codec {
    /** JSON through Jackson 3 ({@code JacksonCodec}), for {@code value-type}; the default. */
    JSON,
    /** Java serialization restricted to {@code allow-list} ({@code ValueCodec.javaSerialization}). */
    JAVA_SERIALIZATION,
    /** Strings as UTF-8. */
    UTF8,
    /** Byte arrays as they are. */
    BYTES
  }

  /** The refresh policy and executor. */
  public static class Refresh {

    /** The refresh policy: sustainable (SUS, refresh ahead in the background), xfetch (PER) or none. */
    private Policy policy;

    /** The policy's beta (sustainable and xfetch). Unset: 1. */
    private Double beta;

    /** For sustainable: the share of the TTL that delta is at least. Unset: 0.1. */
    private Double ttlFraction;

    /** Threads of each cache's refresh executor. Unset: 4. */
    private Integer threads;

    /** Queue capacity of each cache's refresh executor. Unset: 1024. */
    private Integer queueCapacity;

    /**
     * The policy.
     *
     * @return the policy, or {@code null}
     */
    public Policy getPolicy() {
      return policy;
    }

    /**
     * Sets the policy.
     *
     * @param policy the policy
     */
    public void setPolicy(Policy policy) {
      this.policy = policy;
    }

    /**
     * Beta.
     *
     * @return beta, or {@code null}
     */
    public Double getBeta() {
      return beta;
    }

    /**
     * Sets beta.
     *
     * @param beta positive
     */
    public void setBeta(Double beta) {
      this.beta = beta;
    }

    /**
     * The TTL fraction.
     *
     * @return the fraction, or {@code null}
     */
    public Double getTtlFraction() {
      return ttlFraction;
    }

    /**
     * Sets the TTL fraction.
     *
     * @param ttlFraction in (0, 1]
     */
    public void setTtlFraction(Double ttlFraction) {
      this.ttlFraction = ttlFraction;
    }

    /**
     * The refresh threads.
     *
     * @return the number, or {@code null}
     */
    public Integer getThreads() {
      return threads;
    }

    /**
     * Sets the refresh threads.
     *
     * @param threads 1 to 1024
     */
    public void setThreads(Integer threads) {
      this.threads = threads;
    }

    /**
     * The refresh queue capacity.
     *
     * @return the capacity, or {@code null}
     */
    public Integer getQueueCapacity() {
      return queueCapacity;
    }

    /**
     * Sets the refresh queue capacity.
     *
     * @param queueCapacity 0 to 1,000,000
     */
    public void setQueueCapacity(Integer queueCapacity) {
      this.queueCapacity = queueCapacity;
    }
  }

  /** The refresh policies. */
  public enum Policy {
    /** {@code RefreshPolicy.sustainable()}: refresh ahead in the background, serve stale in the grace period. */
    SUSTAINABLE,
    /** {@code RefreshPolicy.xfetch(beta)}: probabilistic early recomputation on the reading thread. */
    XFETCH,
    /** {@code RefreshPolicy.none()}: plain TTL. */
    NONE
  }
}
