package io.sustainablecache.spymemcached;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testkit.CacheStoreFailureContract;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import net.spy.memcached.MemcachedClient;

class SpymemcachedStoreFailureIT extends CacheStoreFailureContract {

  private MemcachedClient client;

  @Override
  protected CacheStore storeConnectedTo(InetSocketAddress address) {
    client = TestClients.connect(address, operationTimeout());
    return SpymemcachedStore.builder(client).operationTimeout(operationTimeout()).build();
  }

  @Override
  protected void closeStore(CacheStore store) {
    client.shutdown(0, TimeUnit.SECONDS);
  }

  @Override
  protected Duration operationTimeout() {
    return SpymemcachedStore.DEFAULT_OPERATION_TIMEOUT;
  }
}
