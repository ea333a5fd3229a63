package io.sustainablecache.spring;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testkit.memcached.FaultProxy;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@link SpringCacheContract} over an adapter's {@link CacheStoreFactory} against a real
 * memcached: what the starters' integration tests share. {@code clear()} works on plain memcached
 * too (a new generation of the namespace); answers complete on the client's I/O threads.
 */
public abstract class MemcachedSpringCacheContract extends SpringCacheContract {

  private final Map<CacheStore, CacheStoreFactory.OpenedStore> opened = new ConcurrentHashMap<>();

  private final Map<CacheStore, FaultProxy> proxies = new ConcurrentHashMap<>();

  /** Creates the contract; subclasses are instantiated by JUnit. */
  protected MemcachedSpringCacheContract() {}

  /**
   * The adapter's factory, which opens a store from a list of addresses.
   *
   * @return a factory; never {@code null}
   */
  protected abstract CacheStoreFactory storeFactory();

  /**
   * A store behind a proxy that adds 1 ms each way, as a network does: without it a local
   * server's answer can be back before the client's call has returned, and then the dependent
   * actions Spring's reactive caching registers run on the caller's thread, not on the client's
   * I/O thread where they run in production (issue 24).
   */
  @Override
  protected CacheStore openStore() {
    FaultProxy proxy = FaultProxy.start(MemcachedServer.shared().address());
    proxy.delay(Duration.ofMillis(1));
    CacheStore store = open(proxy.address());
    proxies.put(store, proxy);
    return store;
  }

  /** A store whose server is not there: a port nothing listens on. */
  @Override
  protected CacheStore openFailingStore() throws IOException {
    int port;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort();
    }
    return open(new InetSocketAddress("127.0.0.1", port));
  }

  private CacheStore open(InetSocketAddress a) {
    CacheStoreFactory.OpenedStore store = storeFactory().open(CacheStoreFactory.Settings
        .builder().addresses(List.of(a.getHostString() + ":" + a.getPort())).build());
    opened.put(store.store(), store);
    return store.store();
  }

  @Override
  protected void closeStore(CacheStore store) {
    opened.remove(store).close();
    FaultProxy proxy = proxies.remove(store);
    if (proxy != null) {
      proxy.close();
    }
  }

  @Override
  protected boolean completesOnClientThreads() {
    return true;
  }

}
