package io.sustainablecache.spi;

import static java.util.Objects.requireNonNull;

import java.time.InstantSource;
import java.util.Arrays;
import java.util.Optional;
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
 * <p>Thread-safe. Values are copied on the way in and out.
 */
public final class InMemoryStore implements CacheStore {

  /** memcached's boundary between relative and absolute exptimes, in seconds. */
  private static final int MAX_RELATIVE_EXPTIME = 60 * 60 * 24 * 30;

  private final InstantSource clock;
  private final int maxItemSize;
  private final ConcurrentHashMap<String, Item> items = new ConcurrentHashMap<>();
  private final AtomicLong casCounter = new AtomicLong();
  private final LongAdder writes = new LongAdder();

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
    return new InMemoryStore(requireNonNull(clock, "clock"), 1024 * 1024);
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
  public Optional<StoreItem> gets(String key) {
    requireNonNull(key, "key");
    Item item = live(key);
    return item == null
        ? Optional.empty()
        : Optional.of(new StoreItem(item.value().clone(), item.cas()));
  }

  @Override
  public boolean add(String key, byte[] value, int exptime) {
    Item fresh = newItem(key, value, exptime);
    boolean[] stored = {false};
    items.compute(key, (k, old) -> {
      if (old != null && !expired(old)) {
        return old;
      }
      stored[0] = true;
      return fresh;
    });
    dropIfDead(key, fresh);
    return stored[0];
  }

  @Override
  public void set(String key, byte[] value, int exptime) {
    Item fresh = newItem(key, value, exptime);
    items.put(key, fresh);
    dropIfDead(key, fresh);
  }

  @Override
  public CasOutcome cas(String key, long casToken, byte[] value, int exptime) {
    Item fresh = newItem(key, value, exptime);
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
    return outcome[0];
  }

  @Override
  public boolean delete(String key) {
    requireNonNull(key, "key");
    Item removed = items.remove(key);
    return removed != null && !expired(removed);
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
