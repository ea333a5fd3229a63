package io.sustainablecache.spymemcached;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.FailureMode;
import net.spy.memcached.MemcachedClient;

/** Connects spymemcached clients the way {@link SpymemcachedStore} recommends. */
final class TestClients {

  private TestClients() {}

  /**
   * Connects a client and waits until its connection is up: with {@link FailureMode#Cancel}, a
   * request made before that is cancelled at once.
   */
  static MemcachedClient connect(InetSocketAddress address, Duration operationTimeout) {
    MemcachedClient client;
    try {
      client = new MemcachedClient(new ConnectionFactoryBuilder()
          .setProtocol(ConnectionFactoryBuilder.Protocol.TEXT)
          .setFailureMode(FailureMode.Cancel)
          .setOpTimeout(operationTimeout.toMillis())
          .setOpQueueMaxBlockTime(operationTimeout.toMillis())
          .setMaxReconnectDelay(1)
          .setDaemon(true)
          .build(), List.of(address));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot create a client for " + address, e);
    }
    await("the client to connect to " + address)
        .atMost(Duration.ofSeconds(5))
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(10))
        .until(() -> !client.getAvailableServers().isEmpty());
    return client;
  }
}
