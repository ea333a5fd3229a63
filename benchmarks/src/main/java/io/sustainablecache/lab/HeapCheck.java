package io.sustainablecache.lab;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Shows that a cache's per-key state returns to baseline: the heap after a million distinct keys
 * and after twenty thousand failing keys (once their back-off windows passed), against the heap
 * right after the cache was built. The store forgets everything (so only the cache's own memory
 * is measured) and answers at once.
 *
 * <pre>{@code
 * java -cp benchmarks/target/stampede-lab.jar io.sustainablecache.lab.HeapCheck
 * }</pre>
 */
public final class HeapCheck {

  private HeapCheck() {}

  public static void main(String[] args) throws Exception {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    try (SustainableCache<String> cache = SustainableCache.builder(new ForgetfulStore())
        .namespace("heap").ttl(Duration.ofSeconds(3)).codec(ValueCodec.utf8()).build()) {
      cache.get("warm-up", key -> key);
      long baseline = settledHeap(memory);
      System.out.printf("baseline after build          %8.1f MiB%n", mib(baseline));

      for (int i = 0; i < 1_000_000; i++) {
        cache.get(Integer.toString(i), key -> key);
      }
      long afterKeys = settledHeap(memory);
      System.out.printf("after 1,000,000 distinct keys %8.1f MiB  (%+.1f MiB)%n", mib(afterKeys),
          mib(afterKeys - baseline));

      for (int i = 0; i < 20_000; i++) {
        try {
          cache.get("failing-" + i, key -> {
            throw new IllegalStateException("db down");
          });
        } catch (RuntimeException expected) {
          // the failure is remembered for the key's back-off window
        }
      }
      long whileFailing = settledHeap(memory);
      System.out.printf("20,000 keys failing (records) %8.1f MiB  (%+.1f MiB)%n",
          mib(whileFailing), mib(whileFailing - baseline));

      Thread.sleep(6_000); // back-off (<= 1.5 s) + its window (the 3 s TTL) + the drain
      long afterForget = settledHeap(memory);
      System.out.printf("after their windows passed    %8.1f MiB  (%+.1f MiB)%n",
          mib(afterForget), mib(afterForget - baseline));
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

  private static double mib(long bytes) {
    return bytes / (1024.0 * 1024.0);
  }

  /** Remembers nothing: every read is a miss, every write succeeds. */
  private static final class ForgetfulStore implements CacheStore {
    private static final CompletableFuture<Optional<StoreItem>> NOTHING =
        CompletableFuture.completedFuture(Optional.empty());
    private static final CompletableFuture<Boolean> YES = CompletableFuture.completedFuture(true);

    @Override
    public CompletableFuture<Optional<StoreItem>> gets(String key) {
      return NOTHING;
    }

    @Override
    public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
      return YES;
    }

    @Override
    public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
        int exptime) {
      return CompletableFuture.completedFuture(CasOutcome.STORED);
    }

    @Override
    public CompletableFuture<Boolean> delete(String key) {
      return YES;
    }
  }
}
