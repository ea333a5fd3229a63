package io.sustainablecache.lab;

import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;

/**
 * Wraps the store shared by all instances of a run: counts successful writes of values (the
 * experiments' "duplicate writes"; lease keys and tombstones are not values), counts requests by
 * kind, and records when each written value of the watched key expires, for the charts.
 * Thread-safe.
 */
final class CountingStore implements CacheStore {

  private final CacheStore delegate;
  private final Timeline timeline;
  private final String watchedKey;
  private final LongAdder writes = new LongAdder();
  private final LongAdder measuredWrites = new LongAdder();
  private final LongAdder reads = new LongAdder();
  private final LongAdder bulkReads = new LongAdder();
  private final List<Long> expiries = new ArrayList<>();
  private volatile long measureFromMillis = Long.MAX_VALUE;

  CountingStore(CacheStore delegate, Timeline timeline, String watchedKey) {
    this.delegate = delegate;
    this.timeline = timeline;
    this.watchedKey = watchedKey;
  }

  void measureFrom(long startMillis) {
    this.measureFromMillis = startMillis;
  }

  @Override
  public CompletableFuture<Optional<StoreItem>> gets(String key) {
    reads.increment();
    return delegate.gets(key);
  }

  @Override
  public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
    bulkReads.increment();
    return delegate.getsAll(keys);
  }

  @Override
  public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
    return delegate.add(key, value, exptime).thenApply(stored -> {
      written(key, value, exptime, stored);
      return stored;
    });
  }

  @Override
  public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
    return delegate.set(key, value, exptime).thenApply(ignored -> {
      written(key, value, exptime, true);
      return null;
    });
  }

  @Override
  public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value,
      int exptime) {
    return delegate.cas(key, casToken, value, exptime).thenApply(outcome -> {
      written(key, value, exptime, outcome == CasOutcome.STORED);
      return outcome;
    });
  }

  @Override
  public CompletableFuture<Boolean> delete(String key) {
    return delegate.delete(key);
  }

  @Override
  public CompletableFuture<Void> flushPrefix(String prefix) {
    return delegate.flushPrefix(prefix);
  }

  @Override
  public int maxKeyLength() {
    return delegate.maxKeyLength();
  }

  private void written(String key, byte[] value, int exptime, boolean stored) {
    boolean envelope = Envelope.isValid(value);
    if (!stored || (envelope && Envelope.kind(value) == Envelope.KIND_TOMBSTONE)
        || (!envelope && key.indexOf('\u007F') >= 0)) {
      return; // not stored, an invalidation, or a lease
    }
    long now = timeline.millis();
    writes.increment();
    if (now >= measureFromMillis) {
      measuredWrites.increment();
    }
    if (key.equals(watchedKey)) {
      // Logical expiry for envelopes; otherwise the server's tick-truncated physical expiry.
      long expiry = envelope
          ? Envelope.expiresAt(value)
          : (Math.floorDiv(now, 1000) + exptime) * 1000;
      synchronized (expiries) {
        expiries.add(expiry);
      }
    }
  }

  long measuredWrites() {
    return measuredWrites.sum();
  }

  long reads() {
    return reads.sum();
  }

  long bulkReads() {
    return bulkReads.sum();
  }

  List<Long> expiries() {
    synchronized (expiries) {
      return List.copyOf(expiries);
    }
  }
}
