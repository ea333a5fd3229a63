package io.sustainablecache.lab;

import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

/**
 * Wraps the store shared by all instances of a run: counts successful writes (the experiments'
 * "duplicate writes") and records when each written value of the watched key expires, for the
 * charts. Thread-safe.
 */
final class CountingStore implements CacheStore {

  private final CacheStore delegate;
  private final Timeline timeline;
  private final String watchedKey;
  private final LongAdder writes = new LongAdder();
  private final LongAdder measuredWrites = new LongAdder();
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
  public Optional<StoreItem> gets(String key) {
    return delegate.gets(key);
  }

  @Override
  public boolean add(String key, byte[] value, int exptime) {
    return written(key, value, exptime, delegate.add(key, value, exptime));
  }

  @Override
  public void set(String key, byte[] value, int exptime) {
    delegate.set(key, value, exptime);
    written(key, value, exptime, true);
  }

  @Override
  public CasOutcome cas(String key, long casToken, byte[] value, int exptime) {
    CasOutcome outcome = delegate.cas(key, casToken, value, exptime);
    written(key, value, exptime, outcome == CasOutcome.STORED);
    return outcome;
  }

  @Override
  public boolean delete(String key) {
    return delegate.delete(key);
  }

  @Override
  public int maxKeyLength() {
    return delegate.maxKeyLength();
  }

  private boolean written(String key, byte[] value, int exptime, boolean stored) {
    if (!stored) {
      return false;
    }
    long now = timeline.millis();
    writes.increment();
    if (now >= measureFromMillis) {
      measuredWrites.increment();
    }
    if (key.equals(watchedKey)) {
      // Logical expiry for envelopes; otherwise the server's tick-truncated physical expiry.
      long expiry = Envelope.isValid(value)
          ? Envelope.expiresAt(value)
          : (Math.floorDiv(now, 1000) + exptime) * 1000;
      synchronized (expiries) {
        expiries.add(expiry);
      }
    }
    return true;
  }

  long measuredWrites() {
    return measuredWrites.sum();
  }

  List<Long> expiries() {
    synchronized (expiries) {
      return List.copyOf(expiries);
    }
  }
}
