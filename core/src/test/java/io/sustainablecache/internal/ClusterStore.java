package io.sustainablecache.internal;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.PartialReadException;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.spi.StoreNodes;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.InMemoryStore;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A cluster of in-memory nodes, as a memcached client with {@code FailureMode.Cancel} sees it: a
 * key's operations go to its node (its hash modulo the number of nodes), and fail at once while
 * that node is {@linkplain #kill dead}; a bulk read fails for a dead node's keys only. It offers
 * its {@link StoreNodes}; a {@linkplain #restart restarted} node comes back empty, and {@link
 * #addNode} and {@link #removeNode} change the node list (a new snapshot). Thread-safe enough
 * for single-threaded tests.
 */
final class ClusterStore implements CacheStore {

  private final FakeClock clock;
  private final List<Node> nodes = new ArrayList<>();
  private Snapshot snapshot;
  private volatile long nodesAsked;

  ClusterStore(FakeClock clock, int size) {
    this.clock = clock;
    for (int i = 0; i < size; i++) {
      nodes.add(new Node(i));
    }
    this.snapshot = new Snapshot(List.copyOf(nodes), modulo(List.copyOf(nodes)));
  }

  /** The node of a key in the current list. */
  int nodeOf(String key) {
    return snapshot.nodeOf(key);
  }

  /** The first key {@code prefix + i} (i = 0, 1, …) whose store key {@code ns:…} is on {@code node}. */
  String keyOn(int node, String namespace, String prefix) {
    for (int i = 0; ; i++) {
      if (nodeOf(namespace + ":" + prefix + i) == node) {
        return prefix + i;
      }
    }
  }

  /** Makes a node's operations fail at once, as a dead node's under {@code Cancel}. */
  void kill(int node) {
    nodes.get(node).dead = true;
  }

  /** Brings a node back, empty (a restarted memcached). */
  void restart(int node) {
    Node n = nodes.get(node);
    n.memory = InMemoryStore.create(clock);
    n.dead = false;
  }

  /** Brings a dead node back with what it held (a network partition healed). */
  void heal(int node) {
    nodes.get(node).dead = false;
  }

  /** Adds a node: a new snapshot, with every key routed over the larger list. */
  void addNode() {
    nodes.add(new Node(nodes.size()));
    List<Node> members = new ArrayList<>(snapshot.nodes);
    members.add(nodes.get(nodes.size() - 1));
    snapshot = new Snapshot(List.copyOf(members), modulo(List.copyOf(members)));
  }

  /**
   * Drops node {@code node} (as created: 0, 1, …) from the list, as a cluster's membership drops
   * a dead node: a new snapshot, in which only that node's keys move (to the others, by their
   * hash), as with consistent hashing.
   */
  void removeNode(int node) {
    Node gone = nodes.get(node);
    List<Node> members = new ArrayList<>(snapshot.nodes);
    members.remove(gone);
    Function<String, Node> before = snapshot.route;
    Function<String, Node> rest = modulo(List.copyOf(members));
    snapshot = new Snapshot(List.copyOf(members), key -> {
      Node routed = before.apply(key);
      return routed != gone ? routed : rest.apply(key);
    });
  }

  /**
   * Node {@code node} (as created) dropped from the list and added again at once, as a client
   * does for a restarted node that its membership dropped and added back: a new connection
   * (another node object, empty, in the same place, with the same id) and a new snapshot; the
   * old connection's operations fail (the client closed it).
   */
  void replaceNode(int node) {
    Node old = nodes.get(node);
    old.dead = true;
    Node fresh = new Node(old.index);
    nodes.set(node, fresh);
    List<Node> members = new ArrayList<>(snapshot.nodes);
    members.set(members.indexOf(old), fresh);
    snapshot = new Snapshot(List.copyOf(members), modulo(List.copyOf(members)));
  }

  /**
   * Holds the bulk reads of node {@code node} (as created), which the near logs' polls use,
   * until the returned action runs: a poll of that node's log that does not complete.
   */
  Runnable holdBulkReads(int node) {
    Node held = nodes.get(node);
    held.heldReads = new ArrayList<>();
    return () -> {
      List<Runnable> waiting = held.heldReads;
      held.heldReads = null;
      waiting.forEach(Runnable::run);
    };
  }

  /**
   * Holds every read of node {@code node} (as created) of the cache's own items (the near logs'
   * and the generation's: keys holding {@code 0x7F}), single or bulk, until the returned action
   * runs: the node's polls do not complete while its other keys are read and written as usual.
   */
  Runnable holdLogReads(int node) {
    Node held = nodes.get(node);
    held.heldLogReads = new ArrayList<>();
    return () -> {
      List<Runnable> waiting = held.heldLogReads;
      held.heldLogReads = null;
      waiting.forEach(Runnable::run);
    };
  }

  private static Function<String, Node> modulo(List<Node> members) {
    return key -> members.get(Math.floorMod(key.hashCode() * 0x9E3779B9, members.size()));
  }

  /** The operations that reached a node since it was created. */
  long operationsOn(int node) {
    return nodes.get(node).operations;
  }

  /** How many times {@link #nodes()} was called: what finding a key's node costs a caller. */
  long nodesAsked() {
    return nodesAsked;
  }

  @Override
  public Optional<StoreNodes> nodes() {
    nodesAsked++;
    return Optional.of(snapshot);
  }

  private CacheStore route(String key) {
    return snapshot.on(snapshot.nodeOf(key));
  }

  @Override
  public CompletableFuture<Optional<StoreItem>> gets(String key) {
    return route(key).gets(key);
  }

  /**
   * One read per node, as the adapters' bulk read: a dead node's part fails its own keys only
   * ({@link PartialReadException} with the others' items), and a read of no live node's key
   * fails as a whole.
   */
  @Override
  public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
    Map<Integer, List<String>> byNode = new HashMap<>();
    keys.forEach(k -> byNode.computeIfAbsent(snapshot.nodeOf(k), n -> new ArrayList<>()).add(k));
    Map<String, StoreItem> found = new HashMap<>();
    List<String> failed = new ArrayList<>();
    List<Throwable> failures = new ArrayList<>();
    CompletableFuture<?>[] parts = byNode.entrySet().stream()
        .map(e -> snapshot.on(e.getKey()).getsAll(e.getValue()).handle((items, failure) -> {
          if (failure != null) {
            failed.addAll(e.getValue());
            failures.add(failure);
          } else {
            found.putAll(items);
          }
          return null;
        }))
        .toArray(CompletableFuture<?>[]::new);
    return CompletableFuture.allOf(parts).thenCompose(done -> failed.isEmpty()
        ? CompletableFuture.completedFuture(found)
        : failed.size() == keys.size()
        ? CompletableFuture.failedFuture(failures.get(0))
        : CompletableFuture.failedFuture(new PartialReadException("getsAll failed for "
            + failed.size() + " of " + keys.size() + " keys", failures.get(0), found, failed)));
  }

  @Override
  public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
    return route(key).add(key, value, exptime);
  }

  @Override
  public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
    return route(key).set(key, value, exptime);
  }

  @Override
  public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
      int exptime) {
    return route(key).cas(key, casToken, value, exptime);
  }

  @Override
  public CompletableFuture<Boolean> delete(String key) {
    return route(key).delete(key);
  }

  @Override
  public CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
    return route(key).incr(key, delta, initial, exptime);
  }

  @Override
  public boolean hasCounters() {
    return true;
  }

  /**
   * One node list. Its {@code nodeOf} follows the cluster's routing now, as a client's locator
   * does ({@link StoreNodes#nodeOf}): the index of the node the key is routed to now, or {@code
   * -1} if that node is not in this (older) list.
   */
  private final class Snapshot implements StoreNodes {
    private final List<Node> nodes;
    private final List<String> ids;
    /** Where this list routes a key. */
    private final Function<String, Node> route;

    Snapshot(List<Node> nodes, Function<String, Node> route) {
      this.nodes = nodes;
      this.route = route;
      this.ids = nodes.stream().map(n -> "node" + n.index).toList();
    }

    @Override
    public List<String> ids() {
      return ids;
    }

    @Override
    public int nodeOf(String key) {
      Node now = snapshot.route.apply(key);
      for (int i = 0; i < nodes.size(); i++) {
        if (nodes.get(i) == now) {
          return i;
        }
      }
      return -1;
    }

    @Override
    public CacheStore on(int node) {
      return nodes.get(node);
    }
  }

  /** One node: its memory, and whether it is dead. */
  private final class Node implements CacheStore {
    final int index;
    volatile InMemoryStore memory;
    volatile boolean dead;
    long operations;
    /** The bulk reads held ({@link #holdBulkReads}); {@code null}: none. */
    volatile List<Runnable> heldReads;
    /** The reads of internal items held ({@link #holdLogReads}); {@code null}: none. */
    volatile List<Runnable> heldLogReads;

    Node(int index) {
      this.index = index;
      this.memory = InMemoryStore.create(clock);
    }

    private <T> CompletableFuture<T> call(Function<InMemoryStore, CompletableFuture<T>> op) {
      operations++;
      return dead
          ? CompletableFuture.failedFuture(new StoreException("node" + index + " is down"))
          : op.apply(memory);
    }

    @Override
    public CompletableFuture<Optional<StoreItem>> gets(String key) {
      List<Runnable> heldLog = heldLogReads;
      if (heldLog != null && key.indexOf('\u007F') >= 0) {
        return later(heldLog, () -> call(m -> m.gets(key)));
      }
      return call(m -> m.gets(key));
    }

    private <T> CompletableFuture<T> later(List<Runnable> held,
        Supplier<CompletableFuture<T>> read) {
      CompletableFuture<T> later = new CompletableFuture<>();
      held.add(() -> read.get().whenComplete((value, failure) -> {
        if (failure != null) {
          later.completeExceptionally(failure);
        } else {
          later.complete(value);
        }
      }));
      return later;
    }

    @Override
    public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
      List<Runnable> heldLog = heldLogReads;
      if (heldLog != null && keys.stream().anyMatch(key -> key.indexOf('\u007F') >= 0)) {
        List<String> copy = List.copyOf(keys);
        return later(heldLog, () -> call(m -> m.getsAll(copy)));
      }
      List<Runnable> held = heldReads;
      if (held != null) {
        CompletableFuture<Map<String, StoreItem>> later = new CompletableFuture<>();
        List<String> copy = List.copyOf(keys);
        held.add(() -> call(m -> m.getsAll(copy)).whenComplete((items, failure) -> {
          if (failure != null) {
            later.completeExceptionally(failure);
          } else {
            later.complete(items);
          }
        }));
        return later;
      }
      return call(m -> m.getsAll(keys));
    }

    @Override
    public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
      return call(m -> m.add(key, value, exptime));
    }

    @Override
    public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
      return call(m -> m.set(key, value, exptime));
    }

    @Override
    public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
        int exptime) {
      return call(m -> m.cas(key, casToken, value, exptime));
    }

    @Override
    public CompletableFuture<Boolean> delete(String key) {
      return call(m -> m.delete(key));
    }

    @Override
    public CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
      return call(m -> m.incr(key, delta, initial, exptime));
    }

    @Override
    public boolean hasCounters() {
      return true;
    }
  }
}
