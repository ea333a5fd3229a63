package io.sustainablecache.spi;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Creates a memcached or ARCUS client and a {@link CacheStore} over it from plain settings: the
 * {@link ServiceLoader} service that lets a framework integration (the Spring Boot
 * auto-configuration) open a store without compiling against a client. Each adapter module
 * registers one implementation in {@code META-INF/services/io.sustainablecache.spi.CacheStoreFactory}
 * ({@code sustainable-cache-arcus}: {@value #ARCUS}; {@code sustainable-cache-spymemcached}:
 * {@value #SPYMEMCACHED}). The two clients both ship {@code net.spy.memcached.*} and never share
 * a class path, so at most one of the two is normally present.
 *
 * <p>Implementations must be thread-safe and have a public no-argument constructor. This
 * interface and its nested types depend on nothing but the JDK.
 */
public interface CacheStoreFactory {

  /** The {@link #client()} name of the ARCUS adapter's factory. */
  String ARCUS = "arcus";

  /** The {@link #client()} name of the spymemcached adapter's factory. */
  String SPYMEMCACHED = "spymemcached";

  /**
   * The name users select this factory by, e.g. {@value #ARCUS} or {@value #SPYMEMCACHED}.
   *
   * @return a short lower-case name, never {@code null}
   */
  String client();

  /**
   * Creates and starts a client from the settings and a store over it. The caller owns the
   * result and must {@linkplain OpenedStore#close() close} it (which shuts the client down) after
   * the last cache over the store is closed.
   *
   * @param settings where the servers are, and the store's limits
   * @return the store and the handle that shuts its client down
   * @throws IllegalArgumentException if the settings do not fit this client (for example ZooKeeper
   *     settings for plain memcached), with a message naming the setting
   * @throws StoreException if the client could not be created (unresolvable address, ZooKeeper
   *     unreachable)
   */
  OpenedStore open(Settings settings);

  /**
   * Finds the factory for a client name among those on the class path of {@code loader}, or the
   * only one present when {@code client} is {@code null}.
   *
   * @param client the {@link #client()} name, or {@code null} to use the only factory present
   * @param loader the class loader to search; {@code null} for the thread context class loader
   * @return the factory
   * @throws IllegalStateException if none matches, or {@code client} is {@code null} and several
   *     factories are present; the message lists the factories found and the adapter modules
   */
  static CacheStoreFactory find(String client, ClassLoader loader) {
    List<CacheStoreFactory> found = ServiceLoader.load(CacheStoreFactory.class,
            loader != null ? loader : Thread.currentThread().getContextClassLoader())
        .stream().map(ServiceLoader.Provider::get).toList();
    List<String> names = found.stream().map(CacheStoreFactory::client).toList();
    if (client != null) {
      return found.stream().filter(f -> f.client().equals(client)).findFirst()
          .orElseThrow(() -> new IllegalStateException("No CacheStoreFactory for client \""
              + client + "\" on the class path (found: " + names + "). Add the adapter module: "
              + "io.sustainablecache:sustainable-cache-arcus for \"" + ARCUS
              + "\", io.sustainablecache:sustainable-cache-spymemcached for \"" + SPYMEMCACHED
              + "\"."));
    }
    if (found.size() == 1) {
      return found.get(0);
    }
    if (found.isEmpty()) {
      throw new IllegalStateException("No CacheStoreFactory on the class path: add one adapter"
          + " module, io.sustainablecache:sustainable-cache-arcus (ARCUS, or memcached through the"
          + " ARCUS client) or io.sustainablecache:sustainable-cache-spymemcached (memcached), or"
          + " provide a CacheStore yourself.");
    }
    throw new IllegalStateException("Several CacheStoreFactory implementations on the class path "
        + names + ": choose one by name. (The ARCUS client and spymemcached both ship"
        + " net.spy.memcached.* and must not share a class path.)");
  }

  /**
   * A store created by a factory, with the client it owns. Thread-safe.
   */
  interface OpenedStore extends AutoCloseable {

    /**
     * The store over the client.
     *
     * @return the store, never {@code null}
     */
    CacheStore store();

    /**
     * A short description for logs: the client and where it connects, without credentials.
     *
     * @return a description, never {@code null}
     */
    String description();

    /** Shuts the client down; the store fails every operation afterwards. Idempotent. */
    @Override
    void close();

    /**
     * A handle over a store whose {@link #close()} runs {@code shutdown} once, however often it
     * is called; what each adapter's factory returns.
     *
     * @param store the store over the client
     * @param description the client and where it connects, without credentials
     * @param shutdown shuts the client down
     * @return the handle; thread-safe
     * @throws NullPointerException if an argument is {@code null}
     */
    static OpenedStore of(CacheStore store, String description, Runnable shutdown) {
      requireNonNull(store, "store");
      requireNonNull(description, "description");
      requireNonNull(shutdown, "shutdown");
      AtomicBoolean closed = new AtomicBoolean();
      return new OpenedStore() {
        @Override
        public CacheStore store() {
          return store;
        }

        @Override
        public String description() {
          return description;
        }

        @Override
        public void close() {
          if (closed.compareAndSet(false, true)) {
            shutdown.run();
          }
        }

        @Override
        public String toString() {
          return description;
        }
      };
    }
  }

  /**
   * Where the servers are and the store's limits: an immutable value built with {@link
   * #builder()}. Which settings apply depends on the client: ARCUS takes either a ZooKeeper
   * ensemble with a service code, or direct addresses; spymemcached takes direct addresses only.
   * Thread-safe (immutable).
   */
  final class Settings {
    /** The longest operation timeout the settings take; adapters check their own, shorter one. */
    private static final Duration MAX_OPERATION_TIMEOUT = Duration.ofDays(1);

    private final List<String> addresses;
    private final String zooKeeper;
    private final String serviceCode;
    private final Duration operationTimeout;
    private final int maxKeyLength;
    private final Boolean arcusServers;

    private Settings(Builder b) {
      this.addresses = List.copyOf(b.addresses);
      this.zooKeeper = b.zooKeeper;
      this.serviceCode = b.serviceCode;
      this.operationTimeout = b.operationTimeout;
      this.maxKeyLength = b.maxKeyLength;
      this.arcusServers = b.arcusServers;
    }

    /**
     * Starts building settings.
     *
     * @return a new builder, not thread-safe
     */
    public static Builder builder() {
      return new Builder();
    }

    /**
     * Direct server addresses, each {@code host:port}.
     *
     * @return an immutable list, empty when ZooKeeper is used
     */
    public List<String> addresses() {
      return addresses;
    }

    /**
     * The ARCUS ZooKeeper ensemble, {@code host:port[,host:port...]}.
     *
     * @return the ensemble, or empty
     */
    public Optional<String> zooKeeper() {
      return Optional.ofNullable(zooKeeper);
    }

    /**
     * The ARCUS service code (the cluster's name in ZooKeeper).
     *
     * @return the service code, or empty
     */
    public Optional<String> serviceCode() {
      return Optional.ofNullable(serviceCode);
    }

    /**
     * How long one store operation may take before its future fails.
     *
     * @return the timeout, or empty for the adapter's default
     */
    public Optional<Duration> operationTimeout() {
      return Optional.ofNullable(operationTimeout);
    }

    /**
     * The longest key the store accepts, in bytes.
     *
     * @return a positive length, or 0 for the adapter's default (memcached's 250)
     */
    public int maxKeyLength() {
      return maxKeyLength;
    }

    /**
     * Whether the servers are ARCUS servers, which know ARCUS's commands ({@code flush_prefix},
     * behind {@code invalidateAll}): set for ARCUS servers given by address; unset, the ARCUS
     * adapter assumes so only for a cluster found through ZooKeeper. Other adapters ignore it.
     *
     * @return the setting, or empty for the adapter's default
     */
    public Optional<Boolean> arcusServers() {
      return Optional.ofNullable(arcusServers);
    }

    @Override
    public String toString() {
      return "Settings[addresses=" + addresses + ", zooKeeper=" + zooKeeper + ", serviceCode="
          + serviceCode + ", operationTimeout=" + operationTimeout + ", maxKeyLength="
          + maxKeyLength + (arcusServers == null ? "" : ", arcusServers=" + arcusServers) + "]";
    }

    /** Builds {@link Settings}. Not thread-safe. */
    public static final class Builder {
      private List<String> addresses = List.of();
      private String zooKeeper;
      private String serviceCode;
      private Duration operationTimeout;
      private int maxKeyLength;
      private Boolean arcusServers;

      private Builder() {}

      /**
       * Direct server addresses.
       *
       * @param addresses {@code host:port} each; never {@code null}
       * @return this builder
       */
      public Builder addresses(List<String> addresses) {
        this.addresses = List.copyOf(requireNonNull(addresses, "addresses"));
        return this;
      }

      /**
       * The ARCUS ZooKeeper ensemble.
       *
       * @param zooKeeper {@code host:port[,host:port...]}, or {@code null}
       * @return this builder
       */
      public Builder zooKeeper(String zooKeeper) {
        this.zooKeeper = zooKeeper;
        return this;
      }

      /**
       * The ARCUS service code.
       *
       * @param serviceCode the service code, or {@code null}
       * @return this builder
       */
      public Builder serviceCode(String serviceCode) {
        this.serviceCode = serviceCode;
        return this;
      }

      /**
       * The operation timeout.
       *
       * @param timeout positive, at most a day (each adapter accepts less: see its own limits),
       *     or {@code null} for the adapter's default
       * @return this builder
       * @throws IllegalArgumentException if zero, negative or longer than a day
       */
      public Builder operationTimeout(Duration timeout) {
        if (timeout != null && (timeout.isZero() || timeout.isNegative()
            || timeout.compareTo(MAX_OPERATION_TIMEOUT) > 0)) {
          throw new IllegalArgumentException(
              "operationTimeout must be positive and at most 1 day: " + timeout);
        }
        this.operationTimeout = timeout;
        return this;
      }

      /**
       * The longest key.
       *
       * @param bytes positive, or 0 for the adapter's default
       * @return this builder
       * @throws IllegalArgumentException if negative
       */
      public Builder maxKeyLength(int bytes) {
        if (bytes < 0) {
          throw new IllegalArgumentException("maxKeyLength must not be negative: " + bytes);
        }
        this.maxKeyLength = bytes;
        return this;
      }

      /**
       * Says whether the servers are ARCUS servers (see {@link Settings#arcusServers()}).
       *
       * @param arcusServers the setting, or {@code null} for the adapter's default
       * @return this builder
       */
      public Builder arcusServers(Boolean arcusServers) {
        this.arcusServers = arcusServers;
        return this;
      }

      /**
       * Builds the settings.
       *
       * @return immutable settings
       */
      public Settings build() {
        return new Settings(this);
      }
    }
  }
}
