package io.sustainablecache.testkit;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.memcached.FaultProxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * How an adapter's tests connect a store over a client of its own to a server, and shut that
 * client down again: what the contracts that start their own servers ({@link
 * SustainableCacheContract}, {@link NearCacheContract}, {@link FaultToleranceContract}, {@link
 * CompletionThreadContract}) ask of an adapter. An adapter's test module defines it once ({@link
 * #of}) and every contract subclass returns an instance of its own.
 *
 * <p>Not thread-safe: a test connects and closes its stores on its own thread.
 */
public interface StoreConnector {

  /**
   * Creates a store over a new client connected to {@code address}, configured as the adapter
   * recommends, with the given operation timeout; returns once the client is connected.
   *
   * @param address a real memcached, or a {@link FaultProxy} in front of one
   * @param operationTimeout the client's and the store's operation timeout
   * @return a new store whose client only this test uses; never {@code null}
   */
  CacheStore connect(InetSocketAddress address, Duration operationTimeout);

  /**
   * Shuts down the client behind a store returned by {@link #connect}, without waiting for the
   * server (it may be unreachable).
   *
   * @param store the store to close; never {@code null}
   */
  void close(CacheStore store);

  /**
   * A connector that makes a client, builds a store over it and shuts the client down when its
   * store is closed.
   *
   * @param client connects a new client to an address with an operation timeout
   * @param store builds the adapter's store over a client, with the operation timeout
   * @param shutdown shuts a client down
   * @param <C> the client's type
   * @return a new connector that remembers the clients it made; never {@code null}
   */
  static <C> StoreConnector of(BiFunction<InetSocketAddress, Duration, C> client,
      BiFunction<C, Duration, CacheStore> store, Consumer<C> shutdown) {
    requireNonNull(client, "client");
    requireNonNull(store, "store");
    requireNonNull(shutdown, "shutdown");
    return new StoreConnector() {
      private final Map<CacheStore, C> clients = new IdentityHashMap<>();

      @Override
      public CacheStore connect(InetSocketAddress address, Duration operationTimeout) {
        C connected = client.apply(address, operationTimeout);
        CacheStore built = store.apply(connected, operationTimeout);
        clients.put(built, connected);
        return built;
      }

      @Override
      public void close(CacheStore closed) {
        C connected = clients.remove(closed);
        if (connected == null) {
          throw new IllegalArgumentException("not a store this connector made: " + closed);
        }
        shutdown.accept(connected);
      }
    };
  }
}
