package io.sustainablecache.arcus;

import io.sustainablecache.memcached.AdapterSettings;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.spi.StoreException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import net.spy.memcached.AddrUtil;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ConnectionFactoryBuilder;

/**
 * The {@link CacheStoreFactory} of the ARCUS adapter (client name {@value #CLIENT}), registered
 * for {@link java.util.ServiceLoader}: creates an {@link ArcusClient} either through ZooKeeper
 * (the options {@value #ZOOKEEPER} and {@value #SERVICE_CODE}, {@link
 * ArcusClient#createArcusClient}) or straight to memcached-protocol servers ({@link
 * Settings#addresses()}), with the settings {@link ArcusStore} recommends ({@code
 * FailureMode.Cancel}, the client's operation timeout equal to the store's, {@code
 * opQueueMaxBlockTime} 0), and an {@link ArcusStore} over it. Over ZooKeeper the store accepts
 * ARCUS's 4000-byte keys unless {@code maxKeyLength} says otherwise, and sends {@code
 * flush_prefix} ({@code invalidateAll} of a cache without a generation); to server addresses it
 * does not, since a plain memcached server rejects the command, unless the option {@value
 * #PREFIX_FLUSH} says the servers are ARCUS servers, which know it.
 *
 * <p>Its {@linkplain Settings#options() options} (Spring Boot binds them from {@code
 * sustainable-cache.arcus.zookeeper}, {@code .service-code} and {@code .prefix-flush}):
 * <table>
 *   <caption>Options of the ARCUS adapter</caption>
 *   <tr><th>key</th><th>value</th></tr>
 *   <tr><td>{@value #ZOOKEEPER}</td><td>the ZooKeeper ensemble of the ARCUS cluster, {@code
 *       host:port[,host:port...]}; instead of addresses, and with a service code</td></tr>
 *   <tr><td>{@value #SERVICE_CODE}</td><td>the ARCUS service code (the cluster's name in
 *       ZooKeeper); only with {@value #ZOOKEEPER}</td></tr>
 *   <tr><td>{@value #PREFIX_FLUSH}</td><td>{@code true} or {@code false}: whether the servers
 *       know {@code flush_prefix} (ARCUS servers do, plain memcached does not). Unset: {@code
 *       true} through ZooKeeper, {@code false} for addresses</td></tr>
 * </table>
 * Any other key, a blank ensemble or service code, or a {@value #PREFIX_FLUSH} that is neither
 * {@code true} nor {@code false} is refused with an {@link IllegalArgumentException} naming it.
 *
 * <p>The {@link OpenedStore} it returns closes by letting the client send and have answered what
 * it still has queued ({@code waitForQueues}), at most {@link Settings#shutdownTimeout()}, then
 * shutting it down.
 *
 * <p>Stateless and thread-safe; each {@link #open} creates a new client.
 */
public final class ArcusStoreFactory implements CacheStoreFactory {

  /** The {@link #client()} name of this factory. */
  public static final String CLIENT = "arcus";

  /** The option naming the ZooKeeper ensemble, {@code host:port[,host:port...]}. */
  public static final String ZOOKEEPER = "arcus.zookeeper";

  /** The option naming the ARCUS service code, with {@link #ZOOKEEPER}. */
  public static final String SERVICE_CODE = "arcus.service-code";

  /**
   * The option saying whether the servers know {@code flush_prefix} (are ARCUS servers): {@code
   * true} or {@code false}; {@link ArcusStore.Builder#prefixFlush} as an option.
   */
  public static final String PREFIX_FLUSH = "arcus.prefix-flush";

  private static final List<String> OPTIONS = List.of(ZOOKEEPER, SERVICE_CODE, PREFIX_FLUSH);

  /** The client's and store's operation timeout unless configured. */
  static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(700);

  /** The longest key an ARCUS server accepts. */
  static final int ARCUS_MAX_KEY_LENGTH = 4000;

  /** Creates the factory; {@link java.util.ServiceLoader} calls this. */
  public ArcusStoreFactory() {}

  @Override
  public String client() {
    return CLIENT;
  }

  /**
   * {@inheritDoc}
   *
   * @param settings {@inheritDoc} (the options of the class documentation)
   * @return {@inheritDoc}
   */
  @Override
  public OpenedStore open(Settings settings) {
    Map<String, String> options = settings.options();
    for (Map.Entry<String, String> option : options.entrySet()) {
      if (!OPTIONS.contains(option.getKey())) {
        throw new IllegalArgumentException("unknown option \"" + option.getKey()
            + "\" for the ARCUS adapter; it takes " + String.join(", ", OPTIONS) + ": " + settings);
      }
      if (option.getValue().isBlank()) {
        throw new IllegalArgumentException("option " + option.getKey()
            + " of the ARCUS adapter must not be blank: " + settings);
      }
    }
    String zk = options.get(ZOOKEEPER);
    String serviceCode = options.get(SERVICE_CODE);
    Boolean prefixFlush = prefixFlush(options.get(PREFIX_FLUSH), settings);
    boolean viaZooKeeper = zk != null;
    if (viaZooKeeper == !settings.addresses().isEmpty()) {
      throw new IllegalArgumentException("ARCUS needs either a ZooKeeper ensemble (" + ZOOKEEPER
          + ") with a service code, or direct server addresses, not both and not neither: "
          + settings);
    }
    if (viaZooKeeper && serviceCode == null) {
      throw new IllegalArgumentException(
          "ARCUS over ZooKeeper needs a service code (" + SERVICE_CODE + "): " + settings);
    }
    if (!viaZooKeeper && serviceCode != null) {
      throw new IllegalArgumentException("a service code (" + SERVICE_CODE + ") names a cluster"
          + " in ZooKeeper: set " + ZOOKEEPER + " too, or leave it out: " + settings);
    }
    Duration timeout =
        AdapterSettings.checkBeforeStart(settings, DEFAULT_TIMEOUT, ARCUS_MAX_KEY_LENGTH);
    ConnectionFactoryBuilder connection = ArcusStore.recommendedSettings()
        .setOpTimeout(timeout.toMillis());
    ArcusClient client;
    String description;
    if (viaZooKeeper) {
      try {
        client = ArcusClient.createArcusClient(zk, serviceCode, connection);
      } catch (RuntimeException e) {
        throw new StoreException("could not create an ARCUS client for service code "
            + serviceCode + " through ZooKeeper " + zk + ": " + e.getMessage(), e);
      }
      description = "ARCUS service code " + serviceCode + " via ZooKeeper " + zk;
    } else {
      String joined = String.join(" ", settings.addresses());
      List<InetSocketAddress> servers;
      try {
        servers = AddrUtil.getAddresses(joined);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("invalid server addresses " + settings.addresses()
            + " (expected host:port each): " + e.getMessage(), e);
      }
      try {
        client = new ArcusClient(connection.build(), servers);
      } catch (IOException e) {
        throw new StoreException("could not create an ARCUS client for " + servers, e);
      }
      description = "ArcusClient to " + settings.addresses();
    }
    int maxKeyLength = settings.maxKeyLength() > 0 ? settings.maxKeyLength()
        : viaZooKeeper ? ARCUS_MAX_KEY_LENGTH : 0;
    CacheStore store;
    try { // a failure from here on shuts the started client down
      ArcusStore.Builder builder = ArcusStore.builder(client).operationTimeout(timeout)
          .prefixFlush(prefixFlush == null ? viaZooKeeper : prefixFlush);
      if (maxKeyLength > 0) {
        builder.maxKeyLength(maxKeyLength);
      }
      AdapterSettings.awaitConnected("ARCUS", () -> client.getAvailableServers().size(),
          client.getAvailableServers().size() + client.getUnavailableServers().size());
      store = builder.build();
    } catch (RuntimeException | Error e) {
      AdapterSettings.shutDownAfter(e, client::shutdown);
      throw e;
    }
    return OpenedStore.of(store, description, AdapterSettings.drainThenShutdown("ARCUS",
        settings.shutdownTimeout(), timeout, client::waitForQueues, client::shutdown));
  }

  /** The {@link #PREFIX_FLUSH} option: {@code null} if unset. */
  private static Boolean prefixFlush(String value, Settings settings) {
    if (value == null) {
      return null;
    }
    if (value.equalsIgnoreCase("true") || value.equalsIgnoreCase("false")) {
      return Boolean.valueOf(value);
    }
    throw new IllegalArgumentException("option " + PREFIX_FLUSH + " of the ARCUS adapter must be"
        + " true or false, was \"" + value + "\": " + settings);
  }

  @Override
  public String toString() {
    return "ArcusStoreFactory";
  }
}
