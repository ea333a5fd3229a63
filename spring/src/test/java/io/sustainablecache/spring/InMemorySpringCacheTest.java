package io.sustainablecache.spring;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ScriptedStore;

/** {@link SpringCacheContract} over the in-memory store. */
final class InMemorySpringCacheTest extends SpringCacheContract {

  private final InMemoryStore shared = InMemoryStore.create();

  @Override
  protected CacheStore openStore() {
    return shared;
  }

  @Override
  protected CacheStore openFailingStore() {
    ScriptedStore failing = ScriptedStore.over(InMemoryStore.create());
    for (ScriptedStore.Op op : ScriptedStore.Op.values()) {
      failing.fail(op, Integer.MAX_VALUE);
    }
    return failing;
  }

  @Override
  protected void closeStore(CacheStore store) {}

}
