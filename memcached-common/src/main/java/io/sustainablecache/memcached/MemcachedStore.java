package io.sustainablecache.memcached;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The key-value operations of a store over a memcached client, written once: each sends the
 * memcached command through the adapter's {@link MemcachedOperations}. The adapters' stores (and
 * a store pinned to one node of a {@link NodeSnapshot}) extend it with what differs between
 * clients: the node list, the completion threads, prefix flushes, closing. Thread-safe.
 *
 * <p>Not part of the supported API: the adapters compile this package in; use {@link CacheStore}.
 */
public abstract class MemcachedStore implements CacheStore {

  /** Creates the store; the subclass holds its operations. */
  protected MemcachedStore() {}

  /**
   * How every operation reaches the client.
   *
   * @return the adapter's operations, the same every time; never {@code null}
   */
  protected abstract MemcachedOperations<?> operations();

  /**
   * {@inheritDoc}
   *
   * <p>Sends {@code gets} and returns the stored bytes whatever their flags.
   */
  @Override
  public final CompletableFuture<Optional<StoreItem>> gets(String key) {
    return operations().gets(key);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Sends one {@code gets} (ARCUS: {@code mgets}) per node and per 200 keys, like the clients'
   * {@code asyncGetsBulk}. The keys of a node that is down are not sent, and a part that fails
   * fails its own keys only: the future then fails with a {@link
   * io.sustainablecache.spi.PartialReadException} carrying the items of the keys read (or, if no
   * key was read, with a plain {@link io.sustainablecache.spi.StoreException}). Fails as a whole
   * if any key is invalid, the client is shut down or the operation timeout passes.
   *
   * @throws NullPointerException if {@code keys} or one of them is {@code null}
   */
  @Override
  public final CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
    return operations().getsAll(keys);
  }

  /**
   * {@inheritDoc}
   *
   * @return {@inheritDoc}; the future fails when the server answers anything but {@code STORED}
   *     or {@code NOT_STORED}, for example when the value exceeds its item size
   */
  @Override
  public final CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
    return operations().add(key, value, exptime);
  }

  /**
   * {@inheritDoc}
   *
   * @return {@inheritDoc}; the future fails with the server's answer when it is not {@code
   *     STORED}
   */
  @Override
  public final CompletableFuture<Void> set(String key, byte[] value, int exptime) {
    return operations().set(key, value, exptime);
  }

  /**
   * {@inheritDoc}
   *
   * @return {@inheritDoc}; the future fails when the server answers anything but {@code
   *     STORED}, {@code EXISTS} or {@code NOT_FOUND}
   */
  @Override
  public final CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
      int exptime) {
    return operations().cas(key, casToken, value, exptime);
  }

  /**
   * {@inheritDoc}
   *
   * <p>An ARCUS client also drops the key from its front cache, if it has one.
   *
   * @return {@inheritDoc}; the future fails when the server answers anything but {@code
   *     DELETED} or {@code NOT_FOUND}
   */
  @Override
  public final CompletableFuture<Boolean> delete(String key) {
    return operations().delete(key);
  }

  /**
   * {@inheritDoc}
   *
   * <p>memcached's text protocol has no {@code incr} with a default: a missing counter costs an
   * {@code add} (and, if another client created it meanwhile, a second {@code incr}).
   *
   * @return {@inheritDoc}
   */
  @Override
  public final CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
    return operations().incr(key, delta, initial, exptime);
  }

  /**
   * {@inheritDoc} Always: memcached and ARCUS servers have {@code incr}.
   *
   * @return {@code true}
   */
  @Override
  public final boolean hasCounters() {
    return true;
  }
}
