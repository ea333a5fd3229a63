package io.sustainablecache.memcached;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreNodes;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import net.spy.memcached.MemcachedNode;

/**
 * The {@link StoreNodes} of a memcached client's node list at one moment: ids by the nodes'
 * socket addresses, {@link #nodeOf} by the client's own locator, and a store per node whose
 * operations are {@linkplain MemcachedOperations#on pinned} to it. Both adapters build it the
 * same way; each decides when its client's list changed. Immutable and thread-safe.
 */
public final class NodeSnapshot implements StoreNodes {

  private final List<MemcachedNode> nodes;
  private final List<String> ids;
  private final Map<MemcachedNode, Integer> indexes = new IdentityHashMap<>();
  private final Function<String, MemcachedNode> primary;
  private final List<CacheStore> stores;

  /**
   * A snapshot of {@code nodes}.
   *
   * @param nodes the client's nodes, in its locator's order
   * @param primary the node the client's locator sends a key to ({@code null} for none)
   * @param pinned the operations of one node ({@code operations.on(node, connection)})
   * @param parent the adapter's store: its completion threads and key limit
   * @param <C> the adapter's connection type
   * @return a new snapshot
   */
  public static <C extends MemcachedOperations.Connection> NodeSnapshot of(
      List<MemcachedNode> nodes, Function<String, MemcachedNode> primary,
      Function<MemcachedNode, MemcachedOperations<C>> pinned, CacheStore parent) {
    return new NodeSnapshot(nodes, primary, node -> new PinnedStore(pinned.apply(node), parent));
  }

  private NodeSnapshot(List<MemcachedNode> nodes, Function<String, MemcachedNode> primary,
      Function<MemcachedNode, CacheStore> storeOn) {
    this.nodes = List.copyOf(nodes);
    this.primary = requireNonNull(primary, "primary");
    List<String> names = new ArrayList<>(nodes.size());
    List<CacheStore> perNode = new ArrayList<>(nodes.size());
    for (int i = 0; i < this.nodes.size(); i++) {
      MemcachedNode node = this.nodes.get(i);
      indexes.put(node, i);
      names.add(String.valueOf(node.getSocketAddress()) + "#" + i);
      perNode.add(storeOn.apply(node));
    }
    this.ids = List.copyOf(names);
    this.stores = List.copyOf(perNode);
  }

  /**
   * Whether this snapshot holds exactly {@code current}, in the same order (the same node
   * objects): if not, the adapter takes another snapshot.
   *
   * @param current the client's nodes now
   * @return whether nothing changed
   */
  public boolean holds(Collection<MemcachedNode> current) {
    if (current.size() != nodes.size()) {
      return false;
    }
    int i = 0;
    for (MemcachedNode node : current) {
      if (node != nodes.get(i++)) {
        return false;
      }
    }
    return true;
  }

  @Override
  public List<String> ids() {
    return ids;
  }

  @Override
  public int nodeOf(String key) {
    requireNonNull(key, "key");
    MemcachedNode node = primary.apply(key);
    Integer index = node == null ? null : indexes.get(node);
    return index == null ? -1 : index;
  }

  @Override
  public CacheStore on(int node) {
    return stores.get(node);
  }

  @Override
  public String toString() {
    return "NodeSnapshot" + ids;
  }

  /** A store whose operations go to one node. */
  private static final class PinnedStore extends MemcachedStore {

    private final MemcachedOperations<?> operations;
    private final CacheStore parent;

    PinnedStore(MemcachedOperations<?> operations, CacheStore parent) {
      this.operations = operations;
      this.parent = parent;
    }

    @Override
    protected MemcachedOperations<?> operations() {
      return operations;
    }

    @Override
    public boolean isCompletionThread(Thread thread) {
      return parent.isCompletionThread(thread);
    }

    @Override
    public int maxKeyLength() {
      return parent.maxKeyLength();
    }
  }
}
