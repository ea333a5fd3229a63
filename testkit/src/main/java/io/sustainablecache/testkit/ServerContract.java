package io.sustainablecache.testkit;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;

/**
 * What the contracts that run against a real memcached through an adapter share: the adapter's
 * {@link StoreConnector}, stores connected through it, and closing after each test everything a
 * test opened (its caches first, then its stores and their clients).
 */
public abstract class ServerContract {

  private final List<CacheStore> opened = new ArrayList<>();
  private final List<AutoCloseable> closeables = new ArrayList<>();

  /** Creates the contract; subclasses are instantiated by JUnit. */
  protected ServerContract() {}

  /**
   * How the adapter under test connects a store over a client of its own to a server, and shuts
   * the client down ({@link StoreConnector#of}). Called whenever a test connects or closes a
   * store: return the same instance every time.
   *
   * @return this test's connector; never {@code null}
   */
  protected abstract StoreConnector connector();

  /** A store over a client of its own connected to {@code address}; closed after the test. */
  final CacheStore newStore(InetSocketAddress address, Duration operationTimeout) {
    CacheStore store = connector().connect(address, operationTimeout);
    opened.add(store);
    return store;
  }

  /** A store connected to the shared server; closed after the test. */
  final CacheStore newStore(Duration operationTimeout) {
    return newStore(MemcachedServer.shared().address(), operationTimeout);
  }

  /** Closes {@code closeable} after the test, before the stores; returns it. */
  final <T extends AutoCloseable> T closeAfter(T closeable) {
    closeables.add(closeable);
    return closeable;
  }

  @AfterEach
  final void closeEverything() throws Exception {
    for (AutoCloseable closeable : closeables) {
      closeable.close();
    }
    for (CacheStore store : opened) {
      connector().close(store);
    }
  }
}
