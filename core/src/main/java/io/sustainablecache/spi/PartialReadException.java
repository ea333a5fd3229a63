package io.sustainablecache.spi;

import static java.util.Objects.requireNonNull;

import java.util.Collection;
import java.util.Map;
import java.util.Set;

/**
 * A bulk read ({@link CacheStore#getsAll}) that read some of its keys and could not read the
 * others: in a cluster, typically the keys of a node that is down, while the other nodes
 * answered. It carries what was read, so that the cache treats only the {@linkplain #failedKeys
 * failed keys} as failed reads (misses that load and write nothing back) and serves the others
 * as read: a dead node costs a {@code getAll} its own keys only.
 *
 * <p>Every requested key is either in {@link #failedKeys()} or was read: then it is in {@link
 * #found()} if the store holds it, and absent from both if it does not. A consumer that does not
 * know this class sees a {@link StoreException} and may treat every key as failed, as before.
 * Like every {@code StoreException} of the adapters, its message names no key.
 *
 * <p>The items and keys it carries are not serialized: a deserialized instance carries none.
 */
public class PartialReadException extends StoreException {

  private static final long serialVersionUID = 1L;

  private final transient Map<String, StoreItem> found;
  private final transient Set<String> failedKeys;

  /**
   * Creates an exception.
   *
   * @param message what failed and for how many keys, without the keys or the values
   * @param cause the failure of (one of) the failed keys' reads, may be {@code null}
   * @param found the items read from the keys that did not fail (present keys only); copied
   * @param failedKeys the keys whose read failed: at least one; copied
   * @throws NullPointerException if {@code found}, {@code failedKeys} or an element is {@code
   *     null}
   * @throws IllegalArgumentException if {@code failedKeys} is empty or shares a key with {@code
   *     found}
   */
  public PartialReadException(String message, Throwable cause, Map<String, StoreItem> found,
      Collection<String> failedKeys) {
    super(message, cause);
    this.found = Map.copyOf(requireNonNull(found, "found"));
    this.failedKeys = Set.copyOf(requireNonNull(failedKeys, "failedKeys"));
    if (this.failedKeys.isEmpty()) {
      throw new IllegalArgumentException("a partial read has at least one failed key");
    }
    for (String key : this.failedKeys) {
      if (this.found.containsKey(key)) {
        throw new IllegalArgumentException("a key is both read and failed");
      }
    }
  }

  /**
   * The items read, by key: the keys that did not fail and that the store holds.
   *
   * @return an unmodifiable map; empty after deserialization
   */
  public Map<String, StoreItem> found() {
    return found == null ? Map.of() : found;
  }

  /**
   * The keys whose read failed: for these the store's content is unknown.
   *
   * @return an unmodifiable, non-empty set; empty after deserialization
   */
  public Set<String> failedKeys() {
    return failedKeys == null ? Set.of() : failedKeys;
  }
}
