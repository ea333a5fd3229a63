package io.sustainablecache.arcus;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.CacheStoreContract;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ArcusClientPool;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The store contract for {@link ArcusStore} over an {@link ArcusClientPool} of three clients
 * connected straight to the shared memcached: every operation runs on a randomly picked client,
 * so the contract's read-after-write and CAS checks also cross clients.
 */
class ArcusClientPoolStoreIT extends CacheStoreContract {

  private static final int POOL_SIZE = 3;

  private static ArcusClientPool pool;
  private static ArcusStore store;

  @BeforeAll
  static void connect() {
    InetSocketAddress server = MemcachedServer.shared().address();
    ArcusClient[] clients = new ArcusClient[POOL_SIZE];
    for (int i = 0; i < POOL_SIZE; i++) {
      clients[i] = Clients.connectedTo(server);
    }
    pool = new ArcusClientPool(POOL_SIZE, clients);
    store = ArcusStore.of(pool);
  }

  @AfterAll
  static void disconnect() {
    if (pool != null) {
      pool.shutdown();
    }
  }

  @Override
  protected CacheStore store() {
    return store;
  }

  /** The pools of the stores {@link #ownStore} opened in this test. */
  private final Map<CacheStore, ArcusClientPool> own = new IdentityHashMap<>();

  @Override
  protected CacheStore ownStore(Duration operationTimeout) {
    InetSocketAddress server = MemcachedServer.shared().address();
    ArcusClient[] clients = new ArcusClient[POOL_SIZE];
    for (int i = 0; i < POOL_SIZE; i++) {
      clients[i] = Clients.connectedTo(server, operationTimeout);
    }
    ArcusClientPool ownPool = new ArcusClientPool(POOL_SIZE, clients);
    ArcusStore opened = ArcusStore.builder(ownPool).operationTimeout(operationTimeout).build();
    own.put(opened, ownPool);
    return opened;
  }

  @Override
  protected void closeOwnStore(CacheStore store) {
    own.remove(store).shutdown();
  }

  /**
   * The client was created with the address of a plain memcached, which does not know ARCUS's
   * flush_prefix: the store does not send it (issue 15: its ERROR answer made the client re-open
   * the connection shared with other caches).
   */
  @Override
  protected FlushPrefixSupport flushPrefixSupport() {
    return FlushPrefixSupport.UNSUPPORTED;
  }
}
