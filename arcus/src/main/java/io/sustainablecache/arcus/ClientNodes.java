package io.sustainablecache.arcus;

import io.sustainablecache.memcached.NodeSnapshot;
import io.sustainablecache.spi.StoreNodes;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import net.spy.memcached.MemcachedNode;

/**
 * The {@link StoreNodes} an {@link ArcusStore} offers: a snapshot of its client's node list,
 * read again at most every {@link #READ_INTERVAL_NANOS}. The store's node breakers and near cache
 * ask for it on every store operation, and the ARCUS client's only public view of its node list
 * ({@code getNodeLocator()}) copies the whole hash ring: about 160 points and a wrapper object per
 * node, 90 to 180 µs a call with three nodes, measured (more than a loopback round trip). A
 * membership change reaches the client from ZooKeeper seconds after a node died; the snapshot
 * follows it at most 100 ms later, and meanwhile {@link StoreNodes#nodeOf} routes a key as the
 * client does now ({@code -1} for a node the snapshot does not hold yet). Thread-safe: one
 * caller reads the list when it is due, the others take the snapshot they find.
 */
final class ClientNodes {

  /** How long a snapshot stands before the client's list is read again. */
  static final long READ_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  /** A snapshot, offered as it is returned, and when its list was read (ticker ns). */
  private record Offered(NodeSnapshot snapshot, Optional<StoreNodes> nodes, long readAt) {}

  private final Supplier<List<MemcachedNode>> read;
  private final Function<List<MemcachedNode>, NodeSnapshot> snapshotOf;
  private final LongSupplier nanoTime;
  private final AtomicBoolean reading = new AtomicBoolean();
  private volatile Offered offered;

  /**
   * @param read the client's nodes now, in its locator's order (may throw {@link
   *     ConcurrentModificationException}: see {@link #read})
   * @param snapshotOf a snapshot of a list {@code read} returned
   * @param nanoTime a monotonic ticker, nanoseconds
   */
  ClientNodes(Supplier<List<MemcachedNode>> read,
      Function<List<MemcachedNode>, NodeSnapshot> snapshotOf, LongSupplier nanoTime) {
    this.read = read;
    this.snapshotOf = snapshotOf;
    this.nanoTime = nanoTime;
  }

  /** The snapshot of the client's node list, read again if the one standing is due. */
  Optional<StoreNodes> current() {
    Offered seen = offered;
    long now = nanoTime.getAsLong();
    if (seen != null && (now - seen.readAt < READ_INTERVAL_NANOS
        || !reading.compareAndSet(false, true))) {
      return seen.nodes; // fresh, or another caller is reading the list
    }
    try {
      List<MemcachedNode> current = read(read, seen != null);
      synchronized (this) {
        Offered standing = offered;
        if (current == null) { // the copy raced a membership change: read again next call
          return standing.nodes;
        }
        Offered next = standing != null && standing.snapshot.holds(current)
            ? new Offered(standing.snapshot, standing.nodes, now)
            : offer(snapshotOf.apply(current), now);
        offered = next;
        return next.nodes;
      }
    } finally {
      if (seen != null) {
        reading.set(false);
      }
    }
  }

  private static Offered offer(NodeSnapshot snapshot, long readAt) {
    return new Offered(snapshot, Optional.of(snapshot), readAt);
  }

  /**
   * The client's node list, or {@code null} to keep the previous snapshot. The ARCUS client copies
   * its locator's hash ring without a lock ({@code ArcusKetamaNodeLocator.getReadonlyCopy}) while
   * a membership change from ZooKeeper rewrites it, and the copy can throw {@link
   * ConcurrentModificationException}: found by the lab's cluster scenario, where it reached a
   * caller of {@code get} (the node breakers ask for the nodes on store operations). With a
   * previous snapshot, that snapshot stands until the next call reads the new list; without one,
   * the read is tried again, at most three times in all.
   */
  static List<MemcachedNode> read(Supplier<List<MemcachedNode>> read, boolean hasPrevious) {
    for (int attempt = 1; ; attempt++) {
      try {
        return read.get();
      } catch (ConcurrentModificationException raced) {
        if (hasPrevious) {
          return null;
        }
        if (attempt == 3) {
          throw raced;
        }
      }
    }
  }
}
