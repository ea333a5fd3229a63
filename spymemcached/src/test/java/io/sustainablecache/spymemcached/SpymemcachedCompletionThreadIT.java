package io.sustainablecache.spymemcached;

import io.sustainablecache.testkit.CompletionThreadContract;
import io.sustainablecache.testkit.StoreConnector;

/** Issue 24: the cache never waits on {@link SpymemcachedStore}'s I/O thread or the scheduler. */
class SpymemcachedCompletionThreadIT extends CompletionThreadContract {

  private final StoreConnector connector = TestClients.connector();

  @Override
  protected StoreConnector connector() {
    return connector;
  }
}
