package io.sustainablecache.arcus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import net.spy.memcached.MemcachedNode;
import org.junit.jupiter.api.Test;

/**
 * {@link ArcusStore#readNodes}: the ARCUS client's copy of its node list can throw {@link
 * ConcurrentModificationException} while ZooKeeper changes the membership (the lab's cluster
 * scenario saw it reach a caller of {@code get}); the store keeps its previous snapshot, or tries
 * again when it has none.
 */
final class ReadNodesTest {

  private final AtomicInteger reads = new AtomicInteger();

  private Supplier<List<MemcachedNode>> racingTimes(int times) {
    return () -> {
      if (reads.incrementAndGet() <= times) {
        throw new ConcurrentModificationException();
      }
      return List.of();
    };
  }

  @Test
  void aRacedCopy_withAPreviousSnapshot_keepsIt_withoutReadingAgain() {
    assertThat(ArcusStore.readNodes(racingTimes(1), true)).isNull();
    assertThat(reads).hasValue(1);
  }

  @Test
  void aRacedCopy_withoutAPreviousSnapshot_isReadAgain() {
    assertThat(ArcusStore.readNodes(racingTimes(2), false)).isEmpty();
    assertThat(reads).hasValue(3);
  }

  @Test
  void aCopyRacedThreeTimes_withoutAPreviousSnapshot_fails() {
    assertThatThrownBy(() -> ArcusStore.readNodes(racingTimes(3), false))
        .isInstanceOf(ConcurrentModificationException.class);
    assertThat(reads).hasValue(3);
  }

  @Test
  void anUnracedCopy_isTheList() {
    assertThat(ArcusStore.readNodes(racingTimes(0), true)).isEmpty();
    assertThat(reads).hasValue(1);
  }
}
