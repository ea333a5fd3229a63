package io.sustainablecache.arcus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.testkit.StoreConnector;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ConnectionFactoryBuilder;

/** ARCUS clients for the integration tests, configured as {@link ArcusStore} recommends. */
final class Clients {

  /** How long a client may take to connect before a test gives up. */
  static final Duration CONNECT_PATIENCE = Duration.ofSeconds(20);

  private Clients() {}

  /** The connection settings the {@link ArcusStore} documentation recommends. */
  static ConnectionFactoryBuilder recommendedSettings() {
    return ArcusStore.recommendedSettings();
  }

  /**
   * Creates a client connected straight to memcached servers (no ZooKeeper) and waits until it
   * is connected to all of them.
   */
  static ArcusClient connectedTo(InetSocketAddress... servers) {
    ArcusClient client = connectingTo(servers);
    for (InetSocketAddress server : servers) {
      awaitConnected(client, server);
    }
    return client;
  }

  /**
   * Creates a client connected straight to one server with the given operation timeout, and
   * waits until it is connected.
   */
  static ArcusClient connectedTo(InetSocketAddress server, java.time.Duration operationTimeout) {
    ArcusClient client;
    try {
      client = new ArcusClient(recommendedSettings().setOpTimeout(operationTimeout.toMillis())
          .build(), List.of(server));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    awaitConnected(client, server);
    return client;
  }

  /**
   * The contracts' connector: a store over a client of its own ({@link #connectedTo(
   * InetSocketAddress, java.time.Duration)}), shut down with its store.
   */
  static StoreConnector connector() {
    return StoreConnector.of(Clients::connectedTo,
        (client, timeout) -> ArcusStore.builder(client).operationTimeout(timeout).build(),
        ArcusClient::shutdown);
  }

  /** Creates a client connected straight to memcached servers, without waiting for it. */
  static ArcusClient connectingTo(InetSocketAddress... servers) {
    try {
      return new ArcusClient(recommendedSettings().build(), List.of(servers));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Waits, at most {@link #CONNECT_PATIENCE}, until the client is connected to the server. */
  static void awaitConnected(ArcusClient client, InetSocketAddress server) {
    await("connection of " + client + " to " + server)
        .atMost(CONNECT_PATIENCE)
        .untilAsserted(() -> assertThat(client.getAvailableServers()).contains(server));
  }
}
