package io.sustainablecache.spymemcached;

import io.sustainablecache.memcached.AdapterSettings;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.spi.StoreException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import net.spy.memcached.AddrUtil;
import net.spy.memcached.MemcachedClient;

/**
 * The {@link CacheStoreFactory} of the spymemcached adapter (client name {@value #CLIENT}),
 * registered for {@link java.util.ServiceLoader}: creates a {@link MemcachedClient} to the
 * configured {@code addresses} with the settings {@link SpymemcachedStore} recommends (text
 * protocol, {@code FailureMode.Cancel}, the client's operation timeout equal to the store's,
 * {@code opQueueMaxBlockTime} 0, a one-second maximum reconnect delay, ketama consistent hashing)
 * and a {@link SpymemcachedStore} over it. It takes no {@linkplain Settings#options() options}, and
 * refuses any with an {@link IllegalArgumentException} naming them: ARCUS's ({@code arcus.*},
 * such as its ZooKeeper ensemble) are the ARCUS adapter's, since plain memcached has no ZooKeeper
 * registry.
 *
 * <p>The {@link OpenedStore} it returns closes by letting the client send and have answered what
 * it still has queued ({@code waitForQueues}), at most {@link Settings#shutdownTimeout()}, then
 * shutting it down.
 *
 * <p>Stateless and thread-safe; each {@link #open} creates a new client.
 */
public final class SpymemcachedStoreFactory implements CacheStoreFactory {

  /** The {@link #client()} name of this factory. */
  public static final String CLIENT = "spymemcached";

  /** The client's and store's operation timeout unless configured. */
  static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(700);

  /** Creates the factory; {@link java.util.ServiceLoader} calls this. */
  public SpymemcachedStoreFactory() {}

  @Override
  public String client() {
    return CLIENT;
  }

  @Override
  public OpenedStore open(Settings settings) {
    if (!settings.options().isEmpty()) {
      throw new IllegalArgumentException("spymemcached takes no options, was given "
          + settings.options().keySet() + (settings.options().keySet().stream()
              .anyMatch(key -> key.startsWith("arcus."))
              ? ": arcus.* options (ZooKeeper, service code, prefix flush) are the ARCUS"
                  + " adapter's, sustainable-cache-arcus; plain memcached is reached by address"
              : "") + ": " + settings);
    }
    if (settings.addresses().isEmpty()) {
      throw new IllegalArgumentException(
          "spymemcached needs at least one server address (host:port): " + settings);
    }
    List<InetSocketAddress> servers;
    try {
      servers = AddrUtil.getAddresses(String.join(" ", settings.addresses()));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("invalid server addresses " + settings.addresses()
          + " (expected host:port each): " + e.getMessage(), e);
    }
    Duration timeout = AdapterSettings.checkBeforeStart(settings, DEFAULT_TIMEOUT,
        SpymemcachedStore.MEMCACHED_MAX_KEY_LENGTH);
    MemcachedClient client;
    try {
      client = new MemcachedClient(SpymemcachedStore.recommendedSettings()
          .setOpTimeout(timeout.toMillis())
          .build(), servers);
    } catch (IOException e) {
      throw new StoreException("could not create a spymemcached client for " + servers, e);
    }
    CacheStore store;
    try { // a failure from here on shuts the started client down
      SpymemcachedStore.Builder builder =
          SpymemcachedStore.builder(client).operationTimeout(timeout);
      if (settings.maxKeyLength() > 0) {
        builder.maxKeyLength(settings.maxKeyLength());
      }
      AdapterSettings.awaitConnected("spymemcached", () -> client.getAvailableServers().size(),
          client.getAvailableServers().size() + client.getUnavailableServers().size());
      store = builder.build();
    } catch (RuntimeException | Error e) {
      AdapterSettings.shutDownAfter(e, client::shutdown);
      throw e;
    }
    return OpenedStore.of(store, "spymemcached to " + settings.addresses(),
        AdapterSettings.drainThenShutdown("spymemcached", settings.shutdownTimeout(), timeout,
            client::waitForQueues, client::shutdown));
  }

  @Override
  public String toString() {
    return "SpymemcachedStoreFactory";
  }
}
