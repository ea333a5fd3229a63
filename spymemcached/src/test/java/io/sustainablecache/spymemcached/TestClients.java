package io.sustainablecache.spymemcached;

import static org.awaitility.Awaitility.await;

import io.sustainablecache.testkit.StoreConnector;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.FailureMode;
import net.spy.memcached.MemcachedClient;

/** Connects spymemcached clients with {@link SpymemcachedStore#recommendedSettings()}. */
final class TestClients {

  private TestClients() {}

  /**
   * The contracts' connector: a store over a client of its own ({@link #connect(
   * InetSocketAddress, Duration)}), shut down with its store.
   */
  static StoreConnector connector() {
    return StoreConnector.of(TestClients::connect,
        (client, timeout) -> SpymemcachedStore.builder(client).operationTimeout(timeout).build(),
        MemcachedClient::shutdown);
  }

  /**
   * Connects a client and waits until its connection is up: with {@link FailureMode#Cancel}, a
   * request made before that is cancelled at once.
   */
  static MemcachedClient connect(InetSocketAddress address, Duration operationTimeout) {
    return connect(List.of(address), operationTimeout);
  }

  /**
   * Connects a client to several servers (ketama: consistent hashing with the KETAMA hash; with
   * spymemcached's default native hash, the consistent locator sends every key to one server)
   * and waits until every connection is up.
   */
  static MemcachedClient connect(List<InetSocketAddress> servers, Duration operationTimeout) {
    MemcachedClient client = connecting(servers, operationTimeout, ConnectionFactoryBuilder.Protocol.TEXT);
    await("the client to connect to " + servers)
        .atMost(Duration.ofSeconds(5))
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(10))
        .until(() -> client.getAvailableServers().containsAll(servers));
    return client;
  }

  /** Creates a client without waiting for its connections. */
  static MemcachedClient connecting(List<InetSocketAddress> servers, Duration operationTimeout,
      ConnectionFactoryBuilder.Protocol protocol) {
    try {
      return new MemcachedClient(SpymemcachedStore.recommendedSettings()
          .setProtocol(protocol)
          .setOpTimeout(operationTimeout.toMillis())
          .setDaemon(true)
          .build(), servers);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot create a client for " + servers, e);
    }
  }
}
