package io.sustainablecache.lab;

import io.sustainablecache.CacheStats;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.arcus.ArcusStore;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.ForwardingStore;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ConnectionFactoryBuilder;

/**
 * Issue 24's load amplification, reduced: many threads read a few hundred keys of a near-cached
 * cache in a tight loop on one ARCUS client, while a second cache without a near cache reads
 * through the same client. On a small machine the client's I/O thread starves: polls and reads
 * time out, near entries can no longer be confirmed, and reads fall through to the store and
 * fail. The check prints, for the run after every key was loaded once, how many loader calls and
 * store errors each cache counted: loader calls should stay near one per key per burst of
 * failures, not one per failed read.
 *
 * <pre>{@code
 * java -cp benchmarks/target/benchmarks.jar io.sustainablecache.lab.StarvedClientCheck \
 *     [threads=2000] [virtual=false] [seconds=30] [keys=200] [mode=get|getAll]
 * }</pre>
 * {@code virtual=true} needs Java 21 or later (virtual threads, created reflectively). Uses
 * {@code -Dmemcached=host:port} or else {@link MemcachedServer#shared()}.
 */
public final class StarvedClientCheck {

  private StarvedClientCheck() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> options = new java.util.HashMap<>(Map.of("threads", "2000",
        "virtual", "false", "seconds", "30", "keys", "200", "mode", "get"));
    for (String arg : args) {
      String[] pair = arg.split("=", 2);
      options.put(pair[0], pair[1]);
    }
    int threads = Integer.parseInt(options.get("threads"));
    boolean virtual = Boolean.parseBoolean(options.get("virtual"));
    int seconds = Integer.parseInt(options.get("seconds"));
    int keys = Integer.parseInt(options.get("keys"));
    boolean bulk = options.get("mode").equals("getAll");

    ArcusClient client = new ArcusClient(new ConnectionFactoryBuilder().build(),
        List.of(MemcachedServer.shared().address()));
    String namespace = "starved-" + Long.toHexString(new SplittableRandom().nextLong() >>> 1);
    AtomicLong hotLoads = new AtomicLong();
    AtomicLong otherLoads = new AtomicLong();
    TimedStore hotStore = new TimedStore(ArcusStore.of(client));
    try (SustainableCache<String> hot = SustainableCache.builder(hotStore)
            .namespace(namespace).ttl(Duration.ofMinutes(10)).codec(ValueCodec.utf8())
            .nearCache(10_000, Duration.ofSeconds(1)).build();
        SustainableCache<String> other = SustainableCache.builder(ArcusStore.of(client))
            .namespace(namespace + "-other").ttl(Duration.ofMinutes(10))
            .codec(ValueCodec.utf8()).build()) {
      for (int i = 0; i < keys; i++) {
        hot.get("k" + i, key -> load(hotLoads, key));
        other.get("k" + i, key -> load(otherLoads, key));
      }
      CacheStats hotBefore = hot.stats();
      CacheStats otherBefore = other.stats();
      long hotLoadsBefore = hotLoads.get();
      long otherLoadsBefore = otherLoads.get();
      hotStore.failedAtOnce.set(0);
      hotStore.failedLate.set(0);

      AtomicBoolean running = new AtomicBoolean(true);
      AtomicLong reads = new AtomicLong();
      AtomicLong failures = new AtomicLong();
      AtomicLong otherMaxMicros = new AtomicLong();
      ExecutorService pool = virtual
          ? (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
              .invoke(null)
          : Executors.newFixedThreadPool(threads);
      for (int t = 0; t < threads; t++) {
        int seed = t;
        pool.execute(() -> {
          SplittableRandom random = new SplittableRandom(seed);
          while (running.get()) {
            try {
              if (bulk) {
                List<String> batch = new ArrayList<>(10);
                for (int j = 0; j < 10; j++) {
                  batch.add("k" + random.nextInt(keys));
                }
                hot.getAll(batch, wanted -> {
                  Map<String, String> values = new java.util.HashMap<>();
                  for (String key : wanted) {
                    values.put(key, load(hotLoads, key));
                  }
                  return values;
                });
              } else {
                hot.get("k" + random.nextInt(keys), key -> load(hotLoads, key));
              }
              reads.incrementAndGet();
            } catch (RuntimeException e) {
              failures.incrementAndGet();
            }
          }
        });
      }
      Thread reader = new Thread(() -> {
        SplittableRandom random = new SplittableRandom(-1);
        while (running.get()) {
          long start = System.nanoTime();
          try {
            other.get("k" + random.nextInt(keys), key -> load(otherLoads, key));
          } catch (RuntimeException e) {
            failures.incrementAndGet();
          }
          otherMaxMicros.accumulateAndGet((System.nanoTime() - start) / 1_000, Math::max);
        }
      });
      reader.start();
      Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
      running.set(false);
      reader.join();
      pool.shutdown();
      pool.awaitTermination(1, TimeUnit.MINUTES);

      CacheStats hotStats = hot.stats();
      CacheStats otherStats = other.stats();
      System.out.printf("java %s, %d %s threads, mode %s, %d keys, %d s%n",
          Runtime.version(), threads, virtual ? "virtual" : "platform", bulk ? "getAll" : "get",
          keys, seconds);
      System.out.printf("hot cache (near):   reads %,d, failed calls %,d, loader calls %,d,"
              + " store errors %,d, near hits %,d, near misses %,d, near poll failures %,d%n",
          reads.get(), failures.get(), hotLoads.get() - hotLoadsBefore,
          hotStats.storeErrorCount() - hotBefore.storeErrorCount(),
          hotStats.count("near_hit") - hotBefore.count("near_hit"),
          hotStats.count("near_miss") - hotBefore.count("near_miss"),
          hotStats.count("near_poll_failure") - hotBefore.count("near_poll_failure"));
      System.out.printf("hot cache's failed reads: within 50 ms %,d, later (timeouts) %,d%n",
          hotStore.failedAtOnce.get(), hotStore.failedLate.get());
      System.out.printf("other cache (same client): loader calls %,d, store errors %,d,"
              + " slowest get %,d us%n",
          otherLoads.get() - otherLoadsBefore,
          otherStats.storeErrorCount() - otherBefore.storeErrorCount(), otherMaxMicros.get());
    } finally {
      client.shutdown();
    }
  }

  /** Counts the reads that failed, by how long they took. */
  private static final class TimedStore extends ForwardingStore {
    final AtomicLong failedAtOnce = new AtomicLong();
    final AtomicLong failedLate = new AtomicLong();

    TimedStore(CacheStore delegate) {
      super(delegate);
    }

    @Override
    public CompletableFuture<Optional<StoreItem>> gets(String key) {
      return timed(delegate().gets(key));
    }

    @Override
    public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
      return timed(delegate().getsAll(keys));
    }

    private <T> CompletableFuture<T> timed(CompletableFuture<T> read) {
      long start = System.nanoTime();
      read.whenComplete((value, error) -> {
        if (error != null) {
          (System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(50) ? failedAtOnce
              : failedLate).incrementAndGet();
        }
      });
      return read;
    }
  }

  /** The database: 2 ms per key. */
  private static String load(AtomicLong calls, String key) {
    calls.incrementAndGet();
    try {
      Thread.sleep(2);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return key + "-value";
  }
}
