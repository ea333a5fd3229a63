package io.sustainablecache.spi;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Creates a client and a {@link CacheStore} over it from plain settings: the {@link
 * ServiceLoader} service that lets a framework integration (the Spring Boot auto-configuration)
 * open a store without compiling against a client. Each adapter module registers one
 * implementation in {@code META-INF/services/io.sustainablecache.spi.CacheStoreFactory} under a
 * {@linkplain #client() name} of its own, and documents the {@linkplain Settings#options()
 * options} it takes beyond the common settings.
 *
 * <p>Implementations must be thread-safe and have a public no-argument constructor. This
 * interface and its nested types depend on nothing but the JDK.
 */
public interface CacheStoreFactory {

  /**
   * The name users select this factory by, e.g. {@code "arcus"} ({@code
   * sustainable-cache-arcus}) or {@code "spymemcached"} ({@code sustainable-cache-spymemcached}).
   *
   * @return a short lower-case name, never {@code null}
   */
  String client();

  /**
   * Creates and starts a client from the settings and a store over it. The caller owns the
   * result and must {@linkplain OpenedStore#close() close} it (which shuts the client down) after
   * the last cache over the store is closed.
   *
   * @param settings where the servers are, the store's limits and this adapter's options
   * @return the store and the handle that shuts its client down
   * @throws IllegalArgumentException if the settings do not fit this client (an option it does
   *     not know, an option's value it cannot read, addresses it cannot use), with a message
   *     naming the setting and what it takes
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
              + client + "\" on the class path (found: " + names + "). Add the adapter module"
              + " that registers it (this project's: io.sustainablecache:sustainable-cache-arcus"
              + " for \"arcus\", io.sustainablecache:sustainable-cache-spymemcached for"
              + " \"spymemcached\")."));
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

    /**
     * Shuts the client down; the store fails every operation afterwards. Idempotent. The
     * adapters' factories first let the client send what it still has queued (a cache's last
     * write-backs and lease releases, which nobody waits for), at most {@link
     * Settings#shutdownTimeout()}, then shut it down: close the caches over the store first,
     * then this. Never throws for a server that is slow or down: what could not be sent in time
     * is dropped, and logged.
     */
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
   * Where the servers are, the store's limits and the adapter's own options: an immutable value
   * built with {@link #builder()}. The common settings ({@link #addresses()}, {@link
   * #operationTimeout()}, {@link #maxKeyLength()}) mean the same to every adapter; anything only
   * one adapter understands (ARCUS's ZooKeeper ensemble and service code, say) is an {@linkplain
   * #options() option}, a string under a key that adapter documents. An adapter refuses an
   * option it does not know, and a value it cannot read, with an {@link
   * IllegalArgumentException} naming the key; an adapter with no options refuses any.
   *
   * <p>Thread-safe (immutable). No accessor returns {@code null}.
   */
  final class Settings {
    /** The longest operation timeout the settings take; adapters check their own, shorter one. */
    private static final Duration MAX_OPERATION_TIMEOUT = Duration.ofDays(1);

    /** {@link #shutdownTimeout()} unless set: 5 s, as a cache's {@code closeTimeout}. */
    public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(5);

    private final List<String> addresses;
    private final Duration operationTimeout;
    private final int maxKeyLength;
    private final Duration shutdownTimeout;
    private final Map<String, String> options;

    private Settings(Builder b) {
      this.addresses = List.copyOf(b.addresses);
      this.operationTimeout = b.operationTimeout;
      this.shutdownTimeout = b.shutdownTimeout;
      this.maxKeyLength = b.maxKeyLength;
      this.options = Collections.unmodifiableMap(new TreeMap<>(b.options));
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
     * @return an immutable list, empty when the adapter finds its servers otherwise (an option)
     */
    public List<String> addresses() {
      return addresses;
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
     * How long {@link OpenedStore#close()} lets the client send what it still has queued before
     * it shuts the client down (memcached clients' {@code waitForQueues}): zero shuts it down at
     * once, dropping what is queued. The memcached adapters wait no longer than twice the
     * operation timeout either: by then every operation the store issued was answered, or failed
     * at its deadline and was cancelled, and only a server that is down or hung is left to wait
     * for.
     *
     * @return the bound; {@link #DEFAULT_SHUTDOWN_TIMEOUT} unless set
     */
    public Duration shutdownTimeout() {
      return shutdownTimeout;
    }

    /**
     * The adapter's own options, by key: what each key means, and which values it takes, is up
     * to the adapter that reads them (see its factory's documentation).
     *
     * @return an immutable map sorted by key; empty if none were given
     */
    public Map<String, String> options() {
      return options;
    }

    @Override
    public String toString() {
      return "Settings[addresses=" + addresses + ", operationTimeout=" + operationTimeout
          + ", maxKeyLength=" + maxKeyLength
          + (shutdownTimeout.equals(DEFAULT_SHUTDOWN_TIMEOUT) ? ""
              : ", shutdownTimeout=" + shutdownTimeout)
          + (options.isEmpty() ? "" : ", options=" + options)
          + "]";
    }

    /** Builds {@link Settings}. Not thread-safe. */
    public static final class Builder {
      private List<String> addresses = List.of();
      private Duration operationTimeout;
      private int maxKeyLength;
      private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;
      private final Map<String, String> options = new TreeMap<>();

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
       * The operation timeout.
       *
       * @param timeout positive, at most a day, or {@code null} for the adapter's default; an
       *     adapter refuses values past its own limit when the store is opened (the memcached
       *     and ARCUS adapters: 10 minutes), shutting down any client it started
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
       * @param bytes positive, or 0 for the adapter's default; an adapter refuses values past
       *     its own limit when the store is opened (spymemcached: 250, ARCUS: 4000)
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
       * How long closing the opened store lets the client send what it still has queued.
       *
       * @param timeout zero (shut down at once) to 1 day
       * @return this builder
       * @throws NullPointerException if {@code timeout} is {@code null}
       * @throws IllegalArgumentException if negative or longer than a day
       */
      public Builder shutdownTimeout(Duration timeout) {
        requireNonNull(timeout, "shutdownTimeout");
        if (timeout.isNegative() || timeout.compareTo(MAX_OPERATION_TIMEOUT) > 0) {
          throw new IllegalArgumentException(
              "shutdownTimeout must be between 0 and 1 day: " + timeout);
        }
        this.shutdownTimeout = timeout;
        return this;
      }

      /**
       * Sets one of the adapter's options (see {@link Settings#options()}), replacing a value
       * set before under the same key. Only the adapter checks the key and the value, when it
       * opens the store.
       *
       * @param key the option's key, as the adapter documents it; not empty
       * @param value the option's value, as text
       * @return this builder
       * @throws NullPointerException if an argument is {@code null}
       * @throws IllegalArgumentException if {@code key} is empty
       */
      public Builder option(String key, String value) {
        requireNonNull(key, "key");
        requireNonNull(value, "value");
        if (key.isEmpty()) {
          throw new IllegalArgumentException("an option's key must not be empty");
        }
        options.put(key, value);
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
