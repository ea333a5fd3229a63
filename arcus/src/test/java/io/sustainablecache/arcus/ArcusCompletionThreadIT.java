package io.sustainablecache.arcus;

import io.sustainablecache.testkit.CompletionThreadContract;
import io.sustainablecache.testkit.StoreConnector;

/** Issue 24: the cache never waits on {@link ArcusStore}'s I/O thread or the scheduler. */
class ArcusCompletionThreadIT extends CompletionThreadContract {

  private final StoreConnector connector = Clients.connector();

  @Override
  protected StoreConnector connector() {
    return connector;
  }
}
