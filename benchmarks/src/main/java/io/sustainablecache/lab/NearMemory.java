package io.sustainablecache.lab;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.ForwardingStore;
import io.sustainablecache.testing.InMemoryStore;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The near cache's memory (issue 14): the heap a near cache of 10,000 entries holds after
 * 1,000,000 distinct keys were read through it, and per entry, for a 100-character value,
 * against the same reads through a cache without a near cache. The store answers every data key
 * with the same item (so only the caches' own memory is measured) and keeps the near cache's log
 * in memory.
 *
 * <pre>{@code
 * java -cp benchmarks/target/stampede-lab.jar io.sustainablecache.lab.NearMemory
 * }</pre>
 */
public final class NearMemory {

  static final int NEAR_ENTRIES = 10_000;
  static final int KEYS = 1_000_000;

  private NearMemory() {}

  public static void main(String[] args) throws Exception {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    long without = heapAfterReads(memory, false);
    long with = heapAfterReads(memory, true);
    System.out.printf("heap held after %,d distinct keys, without a near cache: %,d bytes%n",
        KEYS, without);
    System.out.printf("heap held after %,d distinct keys, near cache of %,d: %,d bytes"
        + " (%.1f MiB)%n", KEYS, NEAR_ENTRIES, with, with / (1024.0 * 1024.0));
    System.out.printf("per near entry (100-character value): %,d bytes%n",
        (with - without) / NEAR_ENTRIES);
  }

  /** The heap the cache holds, beyond the baseline after building it, after the reads. */
  private static long heapAfterReads(MemoryMXBean memory, boolean near) throws Exception {
    // With a near cache, entries carry the namespace's generation: create it, and the item in it.
    InMemoryStore memoryStore = InMemoryStore.create();
    long generation = near ? 1L << 45 : 0;
    if (near) {
      memoryStore.set("heap:\u007Fnear:gen",
          Long.toString(generation).getBytes(StandardCharsets.US_ASCII), 0).join();
    }
    byte[] item = Envelope.encode(System.currentTimeMillis(),
        System.currentTimeMillis() + Duration.ofHours(1).toMillis(), 1, generation,
        "v".repeat(100).getBytes(StandardCharsets.UTF_8));
    CacheStore store = new SameItemStore(memoryStore, new StoreItem(item, 42));
    var builder = SustainableCache.builder(store).namespace("heap").ttl(Duration.ofHours(1))
        .codec(ValueCodec.utf8());
    if (near) {
      builder.nearCache(NEAR_ENTRIES, Duration.ofSeconds(1), 0);
    }
    try (SustainableCache<String> cache = builder.build()) {
      cache.get("warm-up", key -> key);
      long baseline = settledHeap(memory);
      for (int i = 0; i < KEYS; i++) {
        cache.get("key-" + i, key -> key);
      }
      long after = settledHeap(memory);
      if (near && cache.stats().nearMissCount() < KEYS) {
        throw new IllegalStateException("expected every read to miss the near cache once");
      }
      if (cache.stats().missCount() > 1) {
        throw new IllegalStateException("expected every read but the warm-up's to hit the"
            + " store's item: " + cache.stats());
      }
      return after - baseline;
    }
  }

  private static long settledHeap(MemoryMXBean memory) throws InterruptedException {
    long best = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(100);
      best = Math.min(best, memory.getHeapMemoryUsage().getUsed());
    }
    return best;
  }

  /** Answers every data key with one item; the near cache's own keys (0x7F) go to memory. */
  private static final class SameItemStore extends ForwardingStore {
    private final CompletableFuture<Optional<StoreItem>> item;

    SameItemStore(CacheStore delegate, StoreItem item) {
      super(delegate);
      this.item = CompletableFuture.completedFuture(Optional.of(item));
    }

    @Override
    public CompletableFuture<Optional<StoreItem>> gets(String key) {
      return key.indexOf('\u007F') >= 0 ? super.gets(key) : item;
    }
  }
}
