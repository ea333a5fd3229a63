package io.sustainablecache.testing;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * An in-process {@link CacheStore} with memcached's semantics, for tests, simulations and local
 * development. It is not shared across processes and has no eviction; do not use it as a
 * production cache.
 *
 * <p>It reproduces what matters for stampede behaviour: {@code add}/{@code cas}/{@code set}
 * semantics with CAS tokens, and memcached's <b>one-second expiry tick</b>. The server's clock is
 * {@code floor(clock.millis() / 1000)}; an item stored at tick {@code T} with relative exptime
 * {@code N} is gone once the tick reaches {@code T + N}, so it lives between {@code N - 1} and
 * {@code N} seconds depending on where inside the second it was written, exactly like memcached
 * 1.6 and ARCUS. Exptimes above 30 days are absolute Unix seconds; negative ones expire at once.
 *
 * <p>Every operation is applied when it is called and returns an already completed future, so a
 * test on a fake clock is fully deterministic. {@link #flushPrefix} is supported, as on ARCUS.
 *
 * <p>Thread-safe. Values are copied on the way in and out.
 */
public final class InMemoryStore implements CacheStore {

  /** memcached's boundary between relative and absolute exptimes, in seconds. */
  private static final int MAX_RELATIVE_EXPTIME = 60 * 60 * 24 * 30;

  /** memcached's default item size limit, 1 MiB. */
  public static final int DEFAULT_MAX_ITEM_SIZE = 1024 * 1024;

  private final InstantSource clock;
  private final int maxItemSize;
  private final ConcurrentHashMap<String, Item> items = new ConcurrentHashMap<>();
  private final AtomicLong casCounter = new AtomicLong();
  private final LongAdder writes = new LongAdder();
  private final LongAdder reads = new LongAdder();

  private record Item(byte[] value, long cas, long expiresAtSecond) {}

  private InMemoryStore(InstantSource clock, int maxItemSize) {
    this.clock = clock;
    this.maxItemSize = maxItemSize;
  }

  /**
   * Creates a store driven by the given clock (the "server clock"), with memcached's default
   * 1 MiB item size limit.
   *
   * @param clock the server's time source; a fake clock makes expiry deterministic
   * @return a new, empty store
   * @throws NullPointerException if {@code clock} is {@code null}
   */
  public static InMemoryStore create(InstantSource clock) {
    return new InMemoryStore(requireNonNull(clock, "clock"), DEFAULT_MAX_ITEM_SIZE);
  }

  /**
   * Creates a store on the system clock.
   *
   * @return a new, empty store
   */
  public static InMemoryStore create() {
    return create(InstantSource.system());
  }

  @Override
  public CompletableFuture<Optional<StoreItem>> gets(String key) {
    requireNonNull(key, "key");
    reads.increment();
    Item item = live(key);
    return CompletableFuture.completedFuture(item == null
        ? Optional.empty()
        : Optional.of(new StoreItem(item.value().clone(), item.cas())));
  }

  /** {@inheritDoc} One "round trip", counted once in {@link #readCount()}. */
  @Override
  public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
    requireNonNull(keys, "keys");
    reads.increment();
    Map<String, StoreItem> found = new HashMap<>();
    for (String key : keys) {
      Item item = live(requireNonNull(key, "key"));
      if (item != null) {
        found.put(key, new StoreItem(item.value().clone(), item.cas()));
      }
    }
    return CompletableFuture.completedFuture(found);
  }

  @Override
  public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
    Item fresh;
    try {
      fresh = newItem(key, value, exptime);
    } catch (StoreException e) {
      return CompletableFuture.failedFuture(e);
    }
    boolean[] stored = {false};
    items.compute(key, (k, old) -> {
      if (old != null && !expired(old)) {
        return old;
      }
      stored[0] = true;
      return fresh;
    });
    dropIfDead(key, fresh);
    return CompletableFuture.completedFuture(stored[0]);
  }

  @Override
  public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
    Item fresh;
    try {
      fresh = newItem(key, value, exptime);
    } catch (StoreException e) {
      return CompletableFuture.failedFuture(e);
    }
    items.put(key, fresh);
    dropIfDead(key, fresh);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
      int exptime) {
    Item fresh;
    try {
      fresh = newItem(key, value, exptime);
    } catch (StoreException e) {
      return CompletableFuture.failedFuture(e);
    }
    CasOutcome[] outcome = {CasOutcome.NOT_FOUND};
    items.compute(key, (k, old) -> {
      if (old == null || expired(old)) {
        outcome[0] = CasOutcome.NOT_FOUND;
        return null;
      }
      if (old.cas() != casToken) {
        outcome[0] = CasOutcome.EXISTS;
        return old;
      }
      outcome[0] = CasOutcome.STORED;
      return fresh;
    });
    dropIfDead(key, fresh);
    return CompletableFuture.completedFuture(outcome[0]);
  }

  @Override
  public CompletableFuture<Boolean> delete(String key) {
    requireNonNull(key, "key");
    Item removed = items.remove(key);
    return CompletableFuture.completedFuture(removed != null && !expired(removed));
  }

  /**
   * {@inheritDoc}
   *
   * <p>As memcached: a counter is its value's decimal digits, 64 bits without sign, wrapping;
   * an item that holds anything else fails the future as the server answers ({@code
   * CLIENT_ERROR}); the increment keeps the item's expiry. Creating a counter counts as a write
   * ({@link #writeCount}), an increment does not.
   */
  @Override
  public CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
    requireNonNull(key, "key");
    if (delta < 0 || initial < 0) {
      throw new IllegalArgumentException(
          "delta and initial must not be negative: " + delta + ", " + initial);
    }
    Item created;
    try {
      created = newItem(key, Long.toString(initial).getBytes(StandardCharsets.US_ASCII), exptime);
    } catch (StoreException e) {
      return CompletableFuture.failedFuture(e);
    }
    long[] result = {initial};
    boolean[] numeric = {true};
    items.compute(key, (k, old) -> {
      if (old == null || expired(old)) {
        return created;
      }
      long current;
      try {
        current = Long.parseUnsignedLong(new String(old.value(), StandardCharsets.US_ASCII));
      } catch (NumberFormatException e) {
        numeric[0] = false;
        return old;
      }
      result[0] = current + delta;
      return new Item(Long.toUnsignedString(result[0]).getBytes(StandardCharsets.US_ASCII),
          casCounter.incrementAndGet(), old.expiresAtSecond());
    });
    dropIfDead(key, created);
    return numeric[0] ? CompletableFuture.completedFuture(result[0])
        : CompletableFuture.failedFuture(new StoreException(
            "CLIENT_ERROR cannot increment or decrement non-numeric value"));
  }

  /**
   * {@inheritDoc} Always, as memcached.
   *
   * @return {@code true}
   */
  @Override
  public boolean hasCounters() {
    return true;
  }

  @Override
  public CompletableFuture<Void> flushPrefix(String prefix) {
    requireNonNull(prefix, "prefix");
    String start = prefix + ":";
    items.keySet().removeIf(key -> key.startsWith(start));
    return CompletableFuture.completedFuture(null);
  }

  /**
   * The number of items written so far by {@code add}, {@code set} and {@code cas} (successful
   * writes only): the "duplicate writes" measure of the stampede experiments.
   *
   * @return a non-negative count
   */
  public long writeCount() {
    return writes.sum();
  }

  /**
   * The number of read requests so far: one per {@link #gets}, one per {@link #getsAll}
   * whatever its number of keys (a bulk read is one round trip per server).
   *
   * @return a non-negative count
   */
  public long readCount() {
    return reads.sum();
  }

  /**
   * The number of live items.
   *
   * @return a non-negative count
   */
  public int size() {
    items.values().removeIf(this::expired);
    return items.size();
  }

  /** Removes every item. */
  public void clear() {
    items.clear();
  }

  private Item newItem(String key, byte[] value, int exptime) {
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    if (value.length > maxItemSize) {
      throw new StoreException(
          "SERVER_ERROR object too large for cache: " + value.length + " > " + maxItemSize);
    }
    return new Item(Arrays.copyOf(value, value.length), casCounter.incrementAndGet(),
        expiresAtSecond(exptime));
  }

  private void dropIfDead(String key, Item written) {
    Item current = items.get(key);
    if (current == written) {
      writes.increment();
      if (expired(written)) {
        items.remove(key, written);
      }
    }
  }

  private Item live(String key) {
    Item item = items.get(key);
    if (item == null) {
      return null;
    }
    if (expired(item)) {
      items.remove(key, item);
      return null;
    }
    return item;
  }

  private long nowSecond() {
    return Math.floorDiv(clock.millis(), 1000L);
  }

  private long expiresAtSecond(int exptime) {
    if (exptime == 0) {
      return Long.MAX_VALUE;
    }
    if (exptime < 0) {
      return Long.MIN_VALUE;
    }
    return exptime > MAX_RELATIVE_EXPTIME ? exptime : nowSecond() + exptime;
  }

  private boolean expired(Item item) {
    return item.expiresAtSecond() <= nowSecond();
  }
}
