package io.sustainablecache.spi;

import java.util.Optional;

/**
 * A remote store with memcached semantics: the service provider interface that the ARCUS and
 * spymemcached adapters implement and that {@link io.sustainablecache.SustainableCache} drives.
 *
 * <p>Every method is synchronous and bounded by the adapter's operation timeout. The cache calls
 * them from request threads and from its refresh executor, so <b>implementations must be
 * thread-safe</b>.
 *
 * <h2>Semantics</h2>
 * <ul>
 *   <li>Keys are already namespaced and validated by the cache: non-empty, printable ASCII without
 *       spaces, at most {@link #maxKeyLength()} bytes.</li>
 *   <li>Values are opaque byte arrays that the store must return byte-for-byte. Adapters store
 *       them raw (no serialization, no compression that changes what {@link #gets} returns).</li>
 *   <li>{@code exptime} follows the memcached protocol: {@code 0} means no expiry, {@code 1} to
 *       {@code 2592000} (30 days) are relative seconds, larger values are an absolute Unix time
 *       in seconds. The cache computes it; adapters pass it through unchanged.</li>
 *   <li>Failures (connection loss, timeout, server error) are reported by throwing
 *       {@link StoreException}; a miss, a failed {@code add} or a failed {@code cas} are normal
 *       results, not exceptions.</li>
 * </ul>
 *
 * <p>Every adapter must pass the shared contract suite in {@code sustainable-cache-testkit}
 * against a real memcached.
 */
public interface CacheStore {

  /**
   * Reads an item together with its CAS token (memcached {@code gets}).
   *
   * @param key a namespaced key; never {@code null}
   * @return the item, or empty when the key is absent or expired
   * @throws StoreException when the server cannot be reached or does not answer in time
   */
  Optional<StoreItem> gets(String key);

  /**
   * Stores the value only if the key is absent (memcached {@code add}).
   *
   * @param key a namespaced key; never {@code null}
   * @param value the bytes to store; never {@code null}; not modified or retained after return
   * @param exptime memcached exptime, see the class documentation
   * @return {@code true} if stored, {@code false} if the key already existed
   * @throws StoreException when the server cannot be reached or does not answer in time
   */
  boolean add(String key, byte[] value, int exptime);

  /**
   * Stores the value unconditionally (memcached {@code set}).
   *
   * @param key a namespaced key; never {@code null}
   * @param value the bytes to store; never {@code null}
   * @param exptime memcached exptime, see the class documentation
   * @throws StoreException when the server cannot be reached, does not answer in time, or
   *     refuses the item (for example because it exceeds the server's item size)
   */
  void set(String key, byte[] value, int exptime);

  /**
   * Stores the value only if the item is unchanged since the {@link #gets} that returned
   * {@code casToken} (memcached {@code cas}).
   *
   * @param key a namespaced key; never {@code null}
   * @param casToken the token from {@link StoreItem#casToken()}
   * @param value the bytes to store; never {@code null}
   * @param exptime memcached exptime, see the class documentation
   * @return {@link CasOutcome#STORED}, or why it was not stored
   * @throws StoreException when the server cannot be reached or does not answer in time
   */
  CasOutcome cas(String key, long casToken, byte[] value, int exptime);

  /**
   * Removes the item (memcached {@code delete}).
   *
   * @param key a namespaced key; never {@code null}
   * @return {@code true} if an item was removed, {@code false} if there was none
   * @throws StoreException when the server cannot be reached or does not answer in time
   */
  boolean delete(String key);

  /**
   * The longest key, in bytes, this store accepts. The cache rejects longer keys before any
   * network call. Defaults to memcached's 250.
   *
   * @return a positive number of bytes
   */
  default int maxKeyLength() {
    return 250;
  }
}
