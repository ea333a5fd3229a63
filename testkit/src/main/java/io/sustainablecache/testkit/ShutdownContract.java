package io.sustainablecache.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.RepetitionInfo;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 31, part 4: shutdown loses nothing. An application reads {@value #KEYS} cold keys, closes
 * the cache and shuts its client down at once (the client's immediate {@code shutdown()}, which
 * drops whatever it still has queued): every value the loads wrote back is in memcached
 * afterwards, and no fleet lease is left standing (a lease key is the entry's key followed by
 * the byte {@code 0x7F} and {@code "lease"}), since {@code close()} waited for the write-backs
 * and lease releases the cache issued. Ten runs, each in a namespace of its own; each prints one
 * line starting with {@value #RESULT_PREFIX} (run, values found, lease keys left, how long
 * {@code close()} took in ms, writes it left unanswered) that {@code docs/results.md} quotes.
 *
 * <p>Subclasses connect stores over their client to a real memcached ({@link
 * MemcachedServer#shared()}) through their {@link StoreConnector}, whose {@code close} is the
 * client's immediate shutdown.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class ShutdownContract extends ServerContract {

  /** The prefix of each run's line on standard output. */
  public static final String RESULT_PREFIX = "SHUTDOWN |";

  static final int KEYS = 300;
  static final int THREADS = 4;
  static final Duration OPERATION_TIMEOUT = Duration.ofMillis(700);

  /** Creates the contract; subclasses are instantiated by JUnit. */
  protected ShutdownContract() {}

  @RepeatedTest(10)
  void coldGets_close_immediateClientShutdown_everyValueIsStored_noLeaseIsLeft(
      RepetitionInfo run) throws Exception {
    String namespace = "sd-" + UUID.randomUUID().toString().substring(0, 8);
    List<String> keys = new ArrayList<>(KEYS);
    for (int i = 0; i < KEYS; i++) {
      keys.add("k" + i);
    }
    CacheStore store = connector().connect(MemcachedServer.shared().address(),
        OPERATION_TIMEOUT);
    SustainableCache<String> cache = SustainableCache.builder(store).namespace(namespace)
        .ttl(Duration.ofMinutes(5)).codec(ValueCodec.utf8()).build();
    ExecutorService callers = Executors.newFixedThreadPool(THREADS);
    try {
      List<Future<?>> reads = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        int first = t;
        reads.add(callers.submit(() -> {
          for (int i = first; i < KEYS; i += THREADS) {
            String key = keys.get(i);
            assertThat(cache.get(key, k -> "value of " + k)).isEqualTo("value of " + key);
          }
          return null;
        }));
      }
      for (Future<?> read : reads) {
        read.get(60, TimeUnit.SECONDS);
      }
    } finally {
      callers.shutdown();
    }
    assertThat(cache.stats().loadSuccessCount()).as("every get was a cold load").isEqualTo(KEYS);

    long start = System.nanoTime();
    cache.close();
    long closeMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    connector().close(store); // at once: whatever the client still has queued is dropped

    CacheStore check = newStore(OPERATION_TIMEOUT);
    SustainableCache<String> reader = closeAfter(SustainableCache.builder(check)
        .namespace(namespace).ttl(Duration.ofMinutes(5)).codec(ValueCodec.utf8()).build());
    Map<String, String> found = reader.getAllIfPresent(keys);
    List<String> leaseKeys = new ArrayList<>(KEYS);
    for (String key : keys) {
      leaseKeys.add(namespace + ":" + key + "\u007Flease");
    }
    Map<String, StoreItem> leases = check.getsAll(leaseKeys).get(10, TimeUnit.SECONDS);
    System.out.println(RESULT_PREFIX + " " + getClass().getSimpleName() + " | run "
        + run.getCurrentRepetition() + " | values " + found.size() + "/" + KEYS + " | leases left "
        + leases.size() + " | close " + closeMillis + " ms | unfinished "
        + cache.stats().count("unfinished_at_close"));

    assertThat(found).as("the values the loads wrote back").hasSize(KEYS);
    found.forEach((key, value) -> assertThat(value).isEqualTo("value of " + key));
    assertThat(leases.keySet()).as("fleet leases left standing").isEmpty();
    assertThat(cache.stats().count("unfinished_at_close")).isZero();
  }
}
