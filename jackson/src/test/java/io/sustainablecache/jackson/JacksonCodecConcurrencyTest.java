package io.sustainablecache.jackson;

import static io.sustainablecache.jackson.Fixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.jackson.Fixtures.Customer;
import io.sustainablecache.jackson.Fixtures.Item;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import tools.jackson.core.type.TypeReference;

/**
 * One codec instance shared by many threads, each encoding and decoding its own values and
 * feeding the codec bad input in between: every result must be that thread's own value, and
 * every bad input a RuntimeException. No timing assertions.
 */
class JacksonCodecConcurrencyTest {

  private static final int THREADS = 8;
  private static final int ROUNDS = 2_000;

  @Test
  void oneCodecIsSafeToShareAcrossThreads() throws Exception {
    JacksonCodec<Customer> customers = JacksonCodec.of(Customer.class);
    JacksonCodec<List<Item>> lists = JacksonCodec.of(new TypeReference<List<Item>>() {});
    byte[] shared = customers.encode(customer(-1, 0));
    byte[] deep = utf8(Fixtures.nested(10_000, false));
    byte[] garbage = utf8("{\"name\":\"x\",\"email\":");
    Queue<String> failures = new ConcurrentLinkedQueue<>();
    AtomicLong roundTrips = new AtomicLong();
    AtomicLong rejections = new AtomicLong();
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    List<Future<?>> workers = new ArrayList<>();
    try {
      for (int t = 0; t < THREADS; t++) {
        int thread = t;
        workers.add(pool.submit(() -> {
          start.await();
          for (int round = 0; round < ROUNDS; round++) {
            Customer mine = customer(thread, round);
            byte[] bytes = customers.encode(mine);
            Customer back = customers.decode(bytes, 0, bytes.length);
            if (!mine.equals(back)) {
              failures.add("thread " + thread + " round " + round + " got " + back);
            }
            List<Item> items = mine.getItems();
            byte[] listBytes = lists.encode(items);
            if (!items.equals(lists.decode(listBytes, 0, listBytes.length))) {
              failures.add("thread " + thread + " round " + round + ": list differs");
            }
            if (!customer(-1, 0).equals(customers.decode(shared, 0, shared.length))) {
              failures.add("thread " + thread + " round " + round + ": shared value differs");
            }
            roundTrips.incrementAndGet();
            for (byte[] bad : List.of(deep, garbage)) {
              try {
                customers.decode(bad, 0, bad.length);
                failures.add("thread " + thread + " round " + round + ": bad input accepted");
              } catch (IllegalArgumentException expected) {
                rejections.incrementAndGet();
              }
            }
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> worker : workers) {
        worker.get(5, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(failures).isEmpty();
    assertThat(roundTrips).hasValue((long) THREADS * ROUNDS);
    assertThat(rejections).hasValue(2L * THREADS * ROUNDS);
  }

  private static Customer customer(int thread, int round) {
    List<Item> items = new ArrayList<>();
    for (int i = 0; i <= round % 4; i++) {
      items.add(new Item("item-" + thread + "-" + round + "-" + i, i,
          BigDecimal.valueOf(round, 2), List.of("t" + thread, "r" + round),
          Instant.ofEpochMilli(1_700_000_000_000L + round)));
    }
    return new Customer("customer-" + thread + "-" + round, thread + "@example.com", items);
  }
}
