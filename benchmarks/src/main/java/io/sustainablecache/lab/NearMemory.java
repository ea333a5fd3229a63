package io.sustainablecache.lab;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.ForwardingStore;
import io.sustainablecache.testing.InMemoryStore;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The near cache's memory (issues 14 and 24): the heap a near cache of 10,000 entries holds after
 * 1,000,000 distinct keys went through it, against the same keys through a cache without a near
 * cache, in two ways:
 * <ul>
 *   <li><b>hits</b>: each key read with {@code get}, found in the store (so the near cache holds
 *       the entries it read), and per entry, for a 100-character value;</li>
 *   <li><b>loads</b>: each key missing from the store, loaded through {@code getAll} in pages of
 *       100 (so every key is loaded, written and recorded in the near cache's log, and its
 *       instance's insertion fence drops it), with the keys per second of the stream.</li>
 * </ul>
 * The store answers data keys itself (the same item for hits; nothing for loads, and it keeps no
 * write), so only the caches' own memory is measured; it keeps the near cache's log in memory.
 *
 * <pre>{@code
 * java -cp benchmarks/target/stampede-lab.jar io.sustainablecache.lab.NearMemory
 * }</pre>
 */
public final class NearMemory {

  static final int NEAR_ENTRIES = 10_000;
  static final int KEYS = 1_000_000;
  static final int PAGE = 100;

  private NearMemory() {}

  public static void main(String[] args) throws Exception {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    long without = heapAfterHits(memory, false);
    long with = heapAfterHits(memory, true);
    System.out.printf("hits: heap held after %,d distinct keys, without a near cache: %,d bytes%n",
        KEYS, without);
    System.out.printf("hits: heap held after %,d distinct keys, near cache of %,d: %,d bytes"
        + " (%.1f MiB)%n", KEYS, NEAR_ENTRIES, with, mib(with));
    System.out.printf("hits: per near entry (100-character value): %,d bytes%n",
        (with - without) / NEAR_ENTRIES);
    Loads loadsWithout = heapAfterLoads(memory, false);
    Loads loadsWith = heapAfterLoads(memory, true);
    System.out.printf("loads: heap held after %,d distinct keys loaded by getAll, without a near"
        + " cache: %,d bytes (%.1f MiB), %,.0f keys/s, %.2f CPU µs per key%n", KEYS,
        loadsWithout.heldBytes(), mib(loadsWithout.heldBytes()), loadsWithout.keysPerSecond(),
        loadsWithout.cpuMicrosPerKey());
    System.out.printf("loads: heap held after %,d distinct keys loaded by getAll, near cache of"
        + " %,d: %,d bytes (%.1f MiB), %,.0f keys/s, %.2f CPU µs per key%n", KEYS, NEAR_ENTRIES,
        loadsWith.heldBytes(), mib(loadsWith.heldBytes()), loadsWith.keysPerSecond(),
        loadsWith.cpuMicrosPerKey());
    System.out.printf("loads: the near cache's own: %,d bytes (%.1f MiB)%n",
        loadsWith.heldBytes() - loadsWithout.heldBytes(),
        mib(loadsWith.heldBytes() - loadsWithout.heldBytes()));
  }

  private static double mib(long bytes) {
    return bytes / (1024.0 * 1024.0);
  }

  /** The heap the cache holds, beyond the baseline after building it, after the reads. */
  private static long heapAfterHits(MemoryMXBean memory, boolean near) throws Exception {
    long generation = near ? 1L << 45 : 0;
    byte[] item = Envelope.encode(System.currentTimeMillis(),
        System.currentTimeMillis() + Duration.ofHours(1).toMillis(), 1, generation,
        "v".repeat(100).getBytes(StandardCharsets.UTF_8));
    CacheStore store = new DataKeysAnswered(logStore(near), new StoreItem(item, 42));
    try (SustainableCache<String> cache = build(store, near)) {
      cache.get("warm-up", key -> key);
      long baseline = settledHeap(memory);
      for (int i = 0; i < KEYS; i++) {
        cache.get("key-" + i, key -> key);
      }
      long after = settledHeap(memory);
      if (near && cache.stats().count("near_miss") < KEYS) {
        throw new IllegalStateException("expected every read to miss the near cache once");
      }
      if (cache.stats().missCount() > 1) {
        throw new IllegalStateException("expected every read but the warm-up's to hit the"
            + " store's item: " + cache.stats());
      }
      return after - baseline;
    }
  }

  /**
   * What streaming loads held and how fast they went: keys per second of wall time, and the
   * process's CPU time per key (every thread, the collector's included), which a loaded machine
   * disturbs less.
   */
  private record Loads(long heldBytes, double keysPerSecond, double cpuMicrosPerKey) {}

  /** The heap the cache holds after every key was loaded by getAll, and the keys per second. */
  private static Loads heapAfterLoads(MemoryMXBean memory, boolean near) throws Exception {
    CacheStore store = new DataKeysAnswered(logStore(near), null);
    try (SustainableCache<String> cache = build(store, near)) {
      cache.getAll(List.of("warm-up"), NearMemory::loadAll);
      long baseline = settledHeap(memory);
      long started = System.nanoTime();
      long cpuStarted = processCpuNanos();
      List<String> page = new ArrayList<>(PAGE);
      for (int i = 0; i < KEYS; i++) {
        page.add("key-" + i);
        if (page.size() == PAGE) {
          cache.getAll(page, NearMemory::loadAll);
          page.clear();
        }
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      double cpuMicros = (processCpuNanos() - cpuStarted) / 1e3;
      long after = settledHeap(memory);
      if (cache.stats().loadSuccessCount() < KEYS) {
        throw new IllegalStateException("expected every key to be loaded: " + cache.stats());
      }
      return new Loads(after - baseline, KEYS / seconds, cpuMicros / KEYS);
    }
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean)
        ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static Map<String, String> loadAll(Collection<String> keys) {
    Map<String, String> values = new HashMap<>();
    for (String key : keys) {
      values.put(key, "v".repeat(100));
    }
    return values;
  }

  /** The store of the near cache's log (and its generation's item, which entries carry). */
  private static InMemoryStore logStore(boolean near) {
    InMemoryStore store = InMemoryStore.create();
    if (near) {
      store.set("heap:\u007Fnear:gen",
          Long.toString(1L << 45).getBytes(StandardCharsets.US_ASCII), 0).join();
    }
    return store;
  }

  private static SustainableCache<String> build(CacheStore store, boolean near) {
    var builder = SustainableCache.builder(store).namespace("heap").ttl(Duration.ofHours(1))
        .codec(ValueCodec.utf8());
    if (near) {
      builder.nearCache(NEAR_ENTRIES, Duration.ofSeconds(1), 0);
    }
    return builder.build();
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

  /**
   * Answers every data key itself: with one item ({@code item}), or as missing ({@code null}),
   * taking every write of a data key (a lease included) and keeping none. The near cache's log
   * ({@code \x7Fnear:}) goes to memory.
   */
  private static final class DataKeysAnswered extends ForwardingStore {
    private static final String LOG = "\u007Fnear:";
    private final CompletableFuture<Optional<StoreItem>> item;
    private final StoreItem found;

    DataKeysAnswered(CacheStore delegate, StoreItem item) {
      super(delegate);
      this.found = item;
      this.item = CompletableFuture.completedFuture(Optional.ofNullable(item));
    }

    @Override
    public CompletableFuture<Optional<StoreItem>> gets(String key) {
      return key.contains(LOG) ? super.gets(key) : item;
    }

    @Override
    public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
      List<String> log = keys.stream().filter(key -> key.contains(LOG)).toList();
      CompletableFuture<Map<String, StoreItem>> logged = log.isEmpty()
          ? CompletableFuture.completedFuture(new HashMap<>()) : super.getsAll(log);
      return logged.thenApply(items -> {
        Map<String, StoreItem> all = new HashMap<>(items);
        if (found != null) {
          keys.stream().filter(key -> !key.contains(LOG)).forEach(key -> all.put(key, found));
        }
        return all;
      });
    }

    @Override
    public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
      return key.contains(LOG) ? super.add(key, value, exptime)
          : CompletableFuture.completedFuture(true);
    }

    @Override
    public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
      return key.contains(LOG) ? super.set(key, value, exptime)
          : CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
        int exptime) {
      return key.contains(LOG) ? super.cas(key, casToken, value, exptime)
          : CompletableFuture.completedFuture(CasOutcome.STORED);
    }

    @Override
    public CompletableFuture<Boolean> delete(String key) {
      return key.contains(LOG) ? super.delete(key) : CompletableFuture.completedFuture(true);
    }
  }
}
