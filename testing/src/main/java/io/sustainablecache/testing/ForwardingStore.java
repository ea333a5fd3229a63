package io.sustainablecache.testing;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.spi.StoreNodes;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A {@link CacheStore} that forwards every operation to another one: subclass it and override
 * the operations a test wants to count, delay or change.
 *
 * <p>Thread-safe if the delegate is and the subclass's additions are.
 */
public abstract class ForwardingStore implements CacheStore {

  private final CacheStore delegate;

  /**
   * Forwards to {@code delegate}.
   *
   * @param delegate the store operations reach; never {@code null}
   */
  protected ForwardingStore(CacheStore delegate) {
    this.delegate = requireNonNull(delegate, "delegate");
  }

  /**
   * A store that forwards everything but {@link #flushPrefix}, which it refuses as plain memcached
   * does (the SPI's default).
   *
   * @param delegate the store operations reach; never {@code null}
   * @return a new store
   */
  public static CacheStore withoutFlushPrefix(CacheStore delegate) {
    return new ForwardingStore(delegate) {
      @Override
      public CompletableFuture<Void> flushPrefix(String prefix) {
        return refuseFlushPrefix(prefix);
      }

      @Override
      public String toString() {
        return "withoutFlushPrefix(" + delegate + ")";
      }
    };
  }

  /**
   * The store this one forwards to.
   *
   * @return never {@code null}
   */
  protected final CacheStore delegate() {
    return delegate;
  }

  @Override
  public CompletableFuture<Optional<StoreItem>> gets(String key) {
    return delegate.gets(key);
  }

  @Override
  public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
    return delegate.getsAll(keys);
  }

  @Override
  public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
    return delegate.add(key, value, exptime);
  }

  @Override
  public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
    return delegate.set(key, value, exptime);
  }

  @Override
  public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
      int exptime) {
    return delegate.cas(key, casToken, value, exptime);
  }

  @Override
  public CompletableFuture<Boolean> delete(String key) {
    return delegate.delete(key);
  }

  @Override
  public CompletableFuture<Void> flushPrefix(String prefix) {
    return delegate.flushPrefix(prefix);
  }

  @Override
  public CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
    return delegate.incr(key, delta, initial, exptime);
  }

  /**
   * {@inheritDoc} Forwarded: a wrapper of a store without counters has none.
   *
   * @return {@inheritDoc}
   */
  @Override
  public boolean hasCounters() {
    return delegate.hasCounters();
  }

  @Override
  public int maxKeyLength() {
    return delegate.maxKeyLength();
  }

  @Override
  public boolean isCompletionThread(Thread thread) {
    return delegate.isCompletionThread(thread);
  }

  /**
   * {@inheritDoc} Forwarded: the delegate's nodes (their stores bypass this wrapper).
   *
   * @return {@inheritDoc}
   */
  @Override
  public Optional<StoreNodes> nodes() {
    return delegate.nodes();
  }

  /** The SPI's refusal of {@code flushPrefix}, for subclasses that act like plain memcached. */
  final CompletableFuture<Void> refuseFlushPrefix(String prefix) {
    return CacheStore.super.flushPrefix(prefix);
  }
}
