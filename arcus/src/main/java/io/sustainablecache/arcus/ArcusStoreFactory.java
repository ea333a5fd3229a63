package io.sustainablecache.arcus;

import io.sustainablecache.memcached.AdapterSettings;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.spi.StoreException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import net.spy.memcached.AddrUtil;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ConnectionFactoryBuilder;

/**
 * The {@link CacheStoreFactory} of the ARCUS adapter ({@link CacheStoreFactory#ARCUS "arcus"}),
 * registered for {@link java.util.ServiceLoader}: creates an {@link ArcusClient} either through
 * ZooKeeper ({@code zooKeeper} and {@code serviceCode}, {@link ArcusClient#createArcusClient}) or
 * straight to memcached-protocol servers ({@code addresses}), with the settings {@link ArcusStore}
 * recommends ({@code FailureMode.Cancel}, the client's operation timeout equal to the store's,
 * {@code opQueueMaxBlockTime} 0), and an {@link ArcusStore} over it. Over ZooKeeper the store
 * accepts ARCUS's 4000-byte keys unless {@code maxKeyLength} says otherwise, and sends {@code
 * flush_prefix} ({@code invalidateAll}); to server addresses it does not, since a plain memcached
 * server rejects the command, unless the settings say the servers are ARCUS servers ({@link
 * Settings#arcusServers()}; Spring Boot: {@code sustainable-cache.arcus.servers=true}).
 *
 * <p>Stateless and thread-safe; each {@link #open} creates a new client.
 */
public final class ArcusStoreFactory implements CacheStoreFactory {

  /** The client's and store's operation timeout unless configured. */
  static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(700);

  /** The longest key an ARCUS server accepts. */
  static final int ARCUS_MAX_KEY_LENGTH = 4000;

  /** Creates the factory; {@link java.util.ServiceLoader} calls this. */
  public ArcusStoreFactory() {}

  @Override
  public String client() {
    return ARCUS;
  }

  @Override
  public OpenedStore open(Settings settings) {
    boolean viaZooKeeper = settings.zooKeeper().isPresent();
    if (viaZooKeeper == !settings.addresses().isEmpty()) {
      throw new IllegalArgumentException("ARCUS needs either a ZooKeeper ensemble with a service"
          + " code, or direct server addresses, not both and not neither: " + settings);
    }
    if (viaZooKeeper && settings.serviceCode().isEmpty()) {
      throw new IllegalArgumentException(
          "ARCUS over ZooKeeper needs a service code: " + settings);
    }
    Duration timeout = settings.operationTimeout().orElse(DEFAULT_TIMEOUT);
    ConnectionFactoryBuilder connection = ArcusStore.recommendedSettings()
        .setOpTimeout(timeout.toMillis());
    ArcusClient client;
    String description;
    if (viaZooKeeper) {
      String zk = settings.zooKeeper().get();
      String serviceCode = settings.serviceCode().get();
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
    ArcusStore.Builder builder = ArcusStore.builder(client).operationTimeout(timeout)
        .prefixFlush(settings.arcusServers().orElse(viaZooKeeper));
    if (maxKeyLength > 0) {
      builder.maxKeyLength(maxKeyLength);
    }
    AdapterSettings.awaitConnected("ARCUS", () -> client.getAvailableServers().size(),
        client.getAvailableServers().size() + client.getUnavailableServers().size());
    CacheStore store;
    try {
      store = builder.build();
    } catch (RuntimeException e) {
      client.shutdown();
      throw e;
    }
    return OpenedStore.of(store, description, client::shutdown);
  }

  @Override
  public String toString() {
    return "ArcusStoreFactory";
  }
}
