package io.sustainablecache.arcus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.memcached.NodeSnapshot;
import io.sustainablecache.spi.StoreNodes;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import net.spy.memcached.MemcachedNode;
import org.junit.jupiter.api.Test;

/**
 * {@link ClientNodes}: the client's node list is read at most every 100 ms by an injected ticker
 * (its only public view copies the hash ring, 90 to 180 µs a call), a new snapshot only when the
 * list changed; and the ARCUS client's copy can throw {@link ConcurrentModificationException}
 * while ZooKeeper changes the membership (the lab's cluster scenario saw it reach a caller of
 * {@code get}): the previous snapshot stands, or the list is read again when there is none.
 */
final class ClientNodesTest {

  private static final long INTERVAL = ClientNodes.READ_INTERVAL_NANOS;

  private final AtomicInteger reads = new AtomicInteger();
  private final AtomicLong nanos = new AtomicLong(1_000);
  private final AtomicReference<List<MemcachedNode>> list =
      new AtomicReference<>(List.of(node(1), node(2)));
  /** How many of the next reads throw. */
  private final AtomicInteger races = new AtomicInteger();

  private final ClientNodes nodes = new ClientNodes(() -> {
    reads.incrementAndGet();
    if (races.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      throw new ConcurrentModificationException();
    }
    return list.get();
  }, ClientNodesTest::snapshot, nanos::get);

  private static MemcachedNode node(int port) {
    InetSocketAddress address = new InetSocketAddress("127.0.0.1", port);
    return (MemcachedNode) Proxy.newProxyInstance(MemcachedNode.class.getClassLoader(),
        new Class<?>[] {MemcachedNode.class}, (proxy, method, args) -> switch (method.getName()) {
          case "getSocketAddress" -> address;
          case "hashCode" -> System.identityHashCode(proxy);
          case "equals" -> proxy == args[0];
          case "toString" -> "node" + port;
          default -> throw new UnsupportedOperationException(method.getName());
        });
  }

  private static NodeSnapshot snapshot(List<MemcachedNode> nodes) {
    return NodeSnapshot.of(nodes, key -> null, node -> null, null); // no operation runs on it
  }

  @Test
  void theListIsReadOnce_perInterval_byTheTicker() {
    Optional<StoreNodes> first = nodes.current();
    assertThat(first.orElseThrow().ids()).hasSize(2);
    nanos.addAndGet(INTERVAL - 1);
    assertThat(nodes.current()).isSameAs(first);
    assertThat(reads).hasValue(1);
    nanos.addAndGet(1);
    assertThat(nodes.current()).as("the same list: the same snapshot").isSameAs(first);
    assertThat(reads).hasValue(2);
  }

  @Test
  void aChangedList_isANewSnapshot_whenTheIntervalPassed() {
    Optional<StoreNodes> first = nodes.current();
    list.set(List.of(node(1), node(2), node(3)));
    nanos.addAndGet(INTERVAL / 2);
    assertThat(nodes.current()).as("not due yet").isSameAs(first);
    nanos.addAndGet(INTERVAL / 2);
    assertThat(nodes.current().orElseThrow().ids()).hasSize(3);
    assertThat(reads).hasValue(2);
  }

  @Test
  void aRacedCopy_withAPreviousSnapshot_keepsIt_andReadsAgainAtTheNextCall() {
    Optional<StoreNodes> first = nodes.current();
    list.set(List.of(node(3)));
    nanos.addAndGet(INTERVAL);
    races.set(1);
    assertThat(nodes.current()).isSameAs(first);
    assertThat(reads).hasValue(2);
    assertThat(nodes.current().orElseThrow().ids()).as("read at once, not an interval later")
        .hasSize(1);
    assertThat(reads).hasValue(3);
  }

  @Test
  void aRacedCopy_withoutAPreviousSnapshot_isReadAgain() {
    races.set(2);
    assertThat(nodes.current().orElseThrow().ids()).hasSize(2);
    assertThat(reads).hasValue(3);
  }

  @Test
  void aCopyRacedThreeTimes_withoutAPreviousSnapshot_fails() {
    races.set(3);
    assertThatThrownBy(nodes::current).isInstanceOf(ConcurrentModificationException.class);
    assertThat(reads).hasValue(3);
  }

  @Test
  void theIntervalIsOneHundredMilliseconds() {
    assertThat(INTERVAL).isEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
  }

  @Test
  void aCallerFindingAnotherReading_takesTheStandingSnapshot() throws Exception {
    java.util.concurrent.CountDownLatch inRead = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    ClientNodes blocking = new ClientNodes(() -> {
      if (reads.incrementAndGet() > 1) {
        inRead.countDown();
        try {
          release.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return list.get();
    }, ClientNodesTest::snapshot, nanos::get);
    reads.set(0);
    Optional<StoreNodes> standing = blocking.current();
    nanos.addAndGet(INTERVAL);
    Thread reader = new Thread(blocking::current);
    reader.start();
    assertThat(inRead.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(blocking.current()).isSameAs(standing);
    assertThat(reads).hasValue(2);
    release.countDown();
    reader.join(10_000);
    assertThat(reader.isAlive()).isFalse();
  }
}
