package io.sustainablecache.spi;

import java.util.List;

/**
 * A snapshot of the nodes a clustered {@link CacheStore} routes keys to, offered through {@link
 * CacheStore#nodes()} by a store whose client fails a dead node's operations at once: the near
 * cache then keeps one invalidation log per node, on that node, so that a dead node costs only
 * the keys it holds ({@code docs/near-cache.md}, "A log per node").
 *
 * <p>A snapshot never changes: when the client's node list changes, {@link CacheStore#nodes()}
 * returns another snapshot (with other {@link #ids()}). Implementations are immutable and
 * thread-safe.
 */
public interface StoreNodes {

  /**
   * The nodes, in the order {@link #nodeOf} and {@link #on} number them.
   *
   * @return at least one distinct id per node (its {@code host:port}); immutable
   */
  List<String> ids();

  /**
   * The node the client sends a key's operations to, by its own node locator (ketama or
   * modulo), whether that node is up or down.
   *
   * @param key a namespaced key; never {@code null}
   * @return an index into {@link #ids()}, or {@code -1} when the client no longer routes the key
   *     to a node of this snapshot (its node list changed since)
   * @throws NullPointerException if {@code key} is {@code null}
   */
  int nodeOf(String key);

  /**
   * A store whose operations go to one node whatever their keys hash to. Its operations fail at
   * once while that node is down, and with the same failures as the clustered store otherwise;
   * it offers no {@link CacheStore#nodes()} of its own.
   *
   * @param node an index into {@link #ids()}
   * @return the node's store; the same one on every call
   * @throws IndexOutOfBoundsException if {@code node} is not an index of {@link #ids()}
   */
  CacheStore on(int node);
}
