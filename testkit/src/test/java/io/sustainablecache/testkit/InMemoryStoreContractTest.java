package io.sustainablecache.testkit;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testing.InMemoryStore;

/**
 * Runs the contract against the in-process reference store, which needs no server: it checks
 * the contract itself as much as the store.
 */
class InMemoryStoreContractTest extends CacheStoreContract {

  private final InMemoryStore store = InMemoryStore.create();

  @Override
  protected CacheStore store() {
    return store;
  }

  /** Like an ARCUS server, the in-memory store removes a prefix's items. */
  @Override
  protected FlushPrefixSupport flushPrefixSupport() {
    return FlushPrefixSupport.REMOVES_THE_PREFIX;
  }
}
