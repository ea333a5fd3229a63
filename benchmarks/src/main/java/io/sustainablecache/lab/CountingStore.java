package io.sustainablecache.lab;

import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.spi.StoreNodes;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Wraps the store of a run: counts successful writes of values (the experiments' "duplicate
 * writes"; lease keys and tombstones are not values), counts reads by kind ({@code gets} and
 * {@code getsAll} round trips), records when each written value of the watched key expires (for
 * the charts), and follows every value a background refresh wrote until a caller reads it or it
 * leaves the server: a refresh nobody read is a <em>wasted refresh</em>. A refresh is a value the
 * database loaded for a background refresh (its value ends with {@link
 * SimulatedDatabase#REFRESH_SUFFIX}).
 *
 * <p>Each instance of a run may have its own client ({@link #on}); the views share one set of
 * counters. Requests mark their reads with {@link #request()}: the first store read made inside
 * that scope is the request's own, so it can tell a hit (the answer is the value it read) from a
 * wait for a load, whatever thread completes it; reads inside a scope are callers' reads. Reads
 * outside one (a refresh's lease check, a lease loser's polls) are the cache's own. Thread-safe.
 */
final class CountingStore implements CacheStore {

  /** The store reads of one request, captured on the thread that issued it. */
  static final class Request implements AutoCloseable {
    private static final ThreadLocal<Request> CURRENT = new ThreadLocal<>();

    private CompletableFuture<Optional<StoreItem>> read;
    private CompletableFuture<Map<String, StoreItem>> bulkRead;
    private int reads;

    private Request() {}

    /** Whether {@code answer} is the value the request's own read found (empty: an absence). */
    boolean answeredFromRead(Optional<String> answer) {
      if (read == null || !read.isDone() || read.isCompletedExceptionally()) {
        return false;
      }
      return read.join().map(item -> payload(item.value())).map(found -> found.equals(answer))
          .orElse(false);
    }

    /** Whether {@code answer} holds, for every key, the value the request's bulk read found. */
    boolean answeredFromBulkRead(Map<String, String> answer, Collection<String> keys,
        String namespacePrefix) {
      if (bulkRead == null || !bulkRead.isDone() || bulkRead.isCompletedExceptionally()) {
        return false;
      }
      Map<String, StoreItem> items = bulkRead.join();
      for (String key : keys) {
        StoreItem item = items.get(namespacePrefix + key);
        Optional<String> found = item == null ? null : payload(item.value());
        if (found == null || !found.equals(Optional.ofNullable(answer.get(key)))) {
          return false;
        }
      }
      return true;
    }

    /** Store reads (round trips) the request started on its own thread. */
    int reads() {
      return reads;
    }

    @Override
    public void close() {
      CURRENT.remove();
    }
  }

  /** Opens the scope of one request on this thread; close it when the call returned. */
  static Request request() {
    Request request = new Request();
    Request.CURRENT.set(request);
    return request;
  }

  /** Whether this thread is inside a request's scope (a caller's read or miss). */
  static boolean inRequest() {
    return Request.CURRENT.get() != null;
  }

  /**
   * The value an item holds: the payload of a value envelope, empty for a cached absence, or
   * {@code null} (no answer) for anything else.
   */
  static Optional<String> payload(byte[] bytes) {
    if (!Envelope.isValid(bytes)) {
      return null;
    }
    byte kind = Envelope.kind(bytes);
    if (kind == Envelope.KIND_ABSENT) {
      return Optional.empty();
    }
    if (kind != Envelope.KIND_VALUE) {
      return null;
    }
    return Optional.of(new String(bytes, Envelope.payloadOffset(bytes),
        Envelope.payloadLength(bytes), StandardCharsets.UTF_8));
  }

  /** A written value followed until it is read or leaves the server. */
  private record Written(long at, long until, boolean refresh, boolean read) {}

  /** The counters all views of a run share. */
  private static final class Shared {
    final Timeline timeline;
    final String watchedKey;
    final LongAdder writes = new LongAdder();
    final LongAdder measuredWrites = new LongAdder();
    final LongAdder refreshWrites = new LongAdder();
    final LongAdder wasted = new LongAdder();
    final LongAdder reads = new LongAdder();
    final LongAdder bulkReads = new LongAdder();
    final LongAdder callerReads = new LongAdder();
    final List<Long> expiries = new ArrayList<>();
    final ConcurrentHashMap<String, Written> written = new ConcurrentHashMap<>();
    volatile long measureFromMillis = Long.MAX_VALUE;

    Shared(Timeline timeline, String watchedKey) {
      this.timeline = timeline;
      this.watchedKey = watchedKey;
    }
  }

  private final CacheStore delegate;
  private final Shared shared;

  CountingStore(CacheStore delegate, Timeline timeline, String watchedKey) {
    this(delegate, new Shared(timeline, watchedKey));
  }

  private CountingStore(CacheStore delegate, Shared shared) {
    this.delegate = delegate;
    this.shared = shared;
  }

  /** A view over another client of the same server, sharing this store's counters. */
  CountingStore on(CacheStore otherClient) {
    return new CountingStore(otherClient, shared);
  }

  void measureFrom(long startMillis) {
    shared.measureFromMillis = startMillis;
  }

  @Override
  public CompletableFuture<Optional<StoreItem>> gets(String key) {
    shared.reads.increment();
    CompletableFuture<Optional<StoreItem>> read = delegate.gets(key);
    Request request = Request.CURRENT.get();
    if (request != null) {
      shared.callerReads.increment();
      request.reads++;
      if (request.read == null) {
        request.read = read;
      }
      callerRead(key);
    }
    return read;
  }

  @Override
  public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
    shared.bulkReads.increment();
    CompletableFuture<Map<String, StoreItem>> read = delegate.getsAll(keys);
    Request request = Request.CURRENT.get();
    if (request != null) {
      shared.callerReads.increment();
      request.reads++;
      if (request.bulkRead == null) {
        request.bulkRead = read;
      }
      keys.forEach(this::callerRead);
    }
    return read;
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

  /** Forwarded, not counted: the near cache's log numbers its records with it. */
  @Override
  public CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
    return delegate.incr(key, delta, initial, exptime);
  }

  /** Forwarded: a wrapper of a store without counters has none. */
  @Override
  public boolean hasCounters() {
    return delegate.hasCounters();
  }

  /** Forwarded: the delegate's nodes, whose stores this one does not count. */
  @Override
  public Optional<StoreNodes> nodes() {
    return delegate.nodes();
  }

  @Override
  public int maxKeyLength() {
    return delegate.maxKeyLength();
  }

  @Override
  public boolean isCompletionThread(Thread thread) {
    return delegate.isCompletionThread(thread);
  }

  /** A caller read the key: the value written last, if still on the server, was read. */
  private void callerRead(String key) {
    long now = shared.timeline.millis();
    shared.written.computeIfPresent(key, (k, w) -> !w.read() && now < w.until()
        ? new Written(w.at(), w.until(), w.refresh(), true) : w);
  }

  private void written(String key, byte[] value, int exptime, boolean stored) {
    boolean envelope = Envelope.isValid(value);
    if (!stored || (envelope && Envelope.kind(value) == Envelope.KIND_TOMBSTONE)
        || (!envelope && key.indexOf('\u007F') >= 0)) {
      return; // not stored, an invalidation, or a lease
    }
    long now = shared.timeline.millis();
    shared.writes.increment();
    boolean measured = now >= shared.measureFromMillis;
    if (measured) {
      shared.measuredWrites.increment();
    }
    // The server drops an item with a relative exptime N between N-1 and N seconds from now.
    long until = (Math.floorDiv(now, 1000) + exptime) * 1000;
    Optional<String> payload = envelope ? payload(value) : null;
    boolean refresh = payload != null && payload.isPresent()
        && payload.get().endsWith(SimulatedDatabase.REFRESH_SUFFIX);
    if (refresh && measured) {
      shared.refreshWrites.increment();
    }
    Written previous = shared.written.put(key, new Written(now, until, refresh, false));
    if (previous != null && wasted(previous)) {
      shared.wasted.increment();
    }
    if (key.equals(shared.watchedKey)) {
      // Logical expiry for envelopes; otherwise the server's tick-truncated physical expiry.
      long expiry = envelope ? Envelope.expiresAt(value) : until;
      synchronized (shared.expiries) {
        shared.expiries.add(expiry);
      }
    }
  }

  /** A refresh replaced (or expired) without a caller having read it. */
  private boolean wasted(Written w) {
    return w.refresh() && !w.read() && w.at() >= shared.measureFromMillis;
  }

  long measuredWrites() {
    return shared.measuredWrites.sum();
  }

  /** Values loaded by background refreshes and written after warm-up. */
  long refreshWrites() {
    return shared.refreshWrites.sum();
  }

  /**
   * Refreshes written after warm-up that no caller read before the value was replaced or left
   * the server, as of {@code endMillis}; values still on the server and unread then do not count.
   */
  long wastedRefreshes(long endMillis) {
    long unreadAtEnd = shared.written.values().stream()
        .filter(w -> w.refresh() && !w.read() && w.at() >= shared.measureFromMillis
            && w.until() <= endMillis)
        .count();
    return shared.wasted.sum() + unreadAtEnd;
  }

  long reads() {
    return shared.reads.sum();
  }

  long bulkReads() {
    return shared.bulkReads.sum();
  }

  /** Round trips ({@code gets}, {@code getsAll}) made inside requests' scopes: the callers'. */
  long callerReads() {
    return shared.callerReads.sum();
  }

  List<Long> expiries() {
    synchronized (shared.expiries) {
      return List.copyOf(shared.expiries);
    }
  }
}
