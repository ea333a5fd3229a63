package io.sustainablecache.internal;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.spi.StoreNodes;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A store that forwards every call to another one: the base of the cache's own decorators of its
 * store ({@link NodeBreakers}, the nodes' breakers; {@link OwedInvalidations}, the gate of reads;
 * {@link PendingWrites}, the count of writes), which override what they change. Thread-safe if the store is.
 */
abstract class DelegatingStore implements CacheStore {

  /** The store decorated. */
  final CacheStore store;

  DelegatingStore(CacheStore store) {
    this.store = store;
  }

  @Override
  public CompletableFuture<Optional<StoreItem>> gets(String key) {
    return store.gets(key);
  }

  @Override
  public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
    return store.getsAll(keys);
  }

  @Override
  public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
    return store.add(key, value, exptime);
  }

  @Override
  public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
    return store.set(key, value, exptime);
  }

  @Override
  public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
      int exptime) {
    return store.cas(key, casToken, value, exptime);
  }

  @Override
  public CompletableFuture<Boolean> delete(String key) {
    return store.delete(key);
  }

  @Override
  public CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
    return store.incr(key, delta, initial, exptime);
  }

  @Override
  public boolean hasCounters() {
    return store.hasCounters();
  }

  @Override
  public CompletableFuture<Void> flushPrefix(String prefix) {
    return store.flushPrefix(prefix);
  }

  @Override
  public boolean isCompletionThread(Thread thread) {
    return store.isCompletionThread(thread);
  }

  @Override
  public Optional<StoreNodes> nodes() {
    return store.nodes();
  }

  @Override
  public int maxKeyLength() {
    return store.maxKeyLength();
  }

  @Override
  public String toString() {
    return store.toString();
  }
}
