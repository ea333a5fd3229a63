package io.sustainablecache.internal;

import io.sustainablecache.ValueCodec;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreException;
import java.util.concurrent.CompletableFuture;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;

/**
 * Encodes entries and writes loaded values: chooses between {@code add} and {@code cas} for a
 * load's result, applies the size limit, the TTL jitter and the physical exptime, and counts what
 * happened; it encodes what the caller's writes ({@link CallerWrites}: {@code set}, and {@code
 * add}/{@code cas} for {@code putIfAbsent}) and the fleet lease send. Thread-safe.
 *
 * <p>The write protocol: a load's result is written with {@code cas} against the token of the
 * read that decided the load, or with {@code add} if that read found nothing. An invalidation
 * replaces the item with a tombstone ({@code set}), which changes its token, so a load that read
 * the key before the invalidation can never write afterwards, from any host. A {@code cas} that
 * finds no item falls back to {@code add}: the item expired or was evicted while the load ran
 * (an invalidation would have left a tombstone), so the result is still worth caching.
 */
final class EntryWriter<V> {

  private static final Logger log = Log.LOGGER;

  /** How much longer than the longest load a tombstone outlives, at least. */
  private static final long TOMBSTONE_MARGIN_MILLIS = 10_000;

  private final CacheStore store;
  private final ValueCodec<V> codec;
  private final RandomGenerator random;
  private final StatsCounter stats;
  private final long ttlMillis;
  private final long noValueTtlMillis;
  private final long graceMillis;
  private final double ttlJitter;
  private final int maxValueSize;
  private final long tombstoneLifetimeMillis;
  private final long fenceMillis;
  private final RateLimitedLog skippedWriteLog;
  private final RateLimitedLog storeErrorLog;
  /** The near cache, told of every write that landed; {@code null} without one. */
  private final NearCache<V> near;
  /**
   * The generation every entry is written in; {@code null} without a near cache or {@code
   * invalidateAllBound}.
   */
  private final Generation generation;
  /** What every envelope written carries: a checksum, or a keyed tag too. */
  private final EntrySeal seal;

  EntryWriter(CacheConfig<V> config, StatsCounter stats, RateLimitedLog storeErrorLog,
      NearCache<V> near, Generation generation, EntrySeal seal) {
    this.seal = seal;
    this.skippedWriteLog = new RateLimitedLog(log, config.ticker());
    this.near = near;
    this.generation = generation;
    this.store = config.store();
    this.codec = config.codec();
    this.random = config.random();
    this.stats = stats;
    this.storeErrorLog = storeErrorLog;
    this.ttlMillis = config.ttl().toMillis();
    this.noValueTtlMillis = config.noValueTtl().toMillis();
    this.graceMillis = config.grace().toMillis();
    this.ttlJitter = config.ttlJitter();
    this.maxValueSize = config.maxValueSize();
    this.tombstoneLifetimeMillis = Math.max(config.lifetimeMillis(),
        config.loadTimeout().toMillis() + TOMBSTONE_MARGIN_MILLIS);
    long shortestValue = shortest(ttlMillis) + graceMillis;
    long shortestEntry = noValueTtlMillis == 0 ? shortestValue
        : Math.min(shortestValue, shortest(noValueTtlMillis) + graceMillis);
    // a write fence that is never released (its writer died after the commit, or its release
    // failed) leaves the key empty once it expired: fenceTimeout after it was placed
    this.fenceMillis = Math.min(shortestEntry, config.fenceTimeout().toMillis());
  }

  /** The shortest TTL the jitter can give an entry of this TTL. */
  private long shortest(long ttl) {
    return ttl - (long) Math.ceil(ttl * ttlJitter);
  }

  /**
   * How old a load may be, from its start, when its write is issued: the shortest time any entry
   * of this cache stays on the server ({@code ttl + grace}, less the jitter), and no longer than
   * {@code fenceTimeout}. An invalidation leaves a tombstone that outlives every load; the entry
   * that replaces it lives at least this long, and so does a write fence that is never released.
   * So a load younger than this that read the key before an invalidation or a fence always finds
   * the tombstone, the fence or its successor when it writes, and fails its {@code cas} or {@code
   * add}; an older one could find the key empty again, and is not written at all.
   */
  long fenceMillis() {
    return fenceMillis;
  }

  /**
   * Writes a load's result ({@code add} without a token, {@code cas} with one). Never fails: the
   * future tells whether the entry was stored; discards, skips and store errors are counted.
   */
  CompletableFuture<Boolean> writeLoad(String storeKey, Loaded<V> loaded, long casToken) {
    long generation = generation(storeKey);
    if (generation == Generation.UNKNOWN) {
      return CompletableFuture.completedFuture(false); // no poll yet: written in no generation
    }
    if (loaded.generation() != generation) {
      // An invalidateAll since the load started: its value may predate the change.
      stats.increment(Counter.STALE_SET_DISCARD);
      return CompletableFuture.completedFuture(false);
    }
    byte[] bytes;
    long lifetime;
    long ttl;
    try {
      if (loaded.value() == null) {
        if (noValueTtlMillis == 0) {
          return CompletableFuture.completedFuture(false); // absences are not cached
        }
        ttl = jittered(noValueTtlMillis);
        bytes = seal.seal(Envelope.encodeAbsent(loaded.fetchedAt(), loaded.fetchedAt() + ttl,
            loaded.loadMillis(), generation));
      } else {
        ttl = jittered(ttlMillis);
        bytes = seal.seal(Envelope.encode(loaded.fetchedAt(), loaded.fetchedAt() + ttl,
            loaded.loadMillis(), generation, codec.encode(loaded.value())));
      }
      lifetime = ttl + graceMillis;
    } catch (RuntimeException | StackOverflowError | LinkageError | AssertionError e) {
      // The callers have their value already; a codec that fails (even with an Error, say on a
      // cyclic object) costs the cache entry, nothing else.
      stats.increment(Counter.SKIPPED_WRITE);
      skippedWriteLog.warn("a loaded value could not be encoded; returned to the caller, not"
          + " cached", e);
      return CompletableFuture.completedFuture(false);
    }
    if (bytes.length > maxValueSize) {
      stats.increment(Counter.SKIPPED_WRITE);
      skippedWriteLog.warn("a loaded value of " + bytes.length + " bytes exceeds maxValueSize "
          + maxValueSize + "; returned to the caller, not cached");
      return CompletableFuture.completedFuture(false);
    }
    int exptime = Exptime.of(lifetime, loaded.fetchedAt());
    // What the near cache holds once the write landed: the entry as a read of it would find it
    // (its token unknown: memcached does not return it).
    Entry<V> written = near == null ? null : new Entry<>(
        loaded.value() == null ? Entry.Kind.ABSENT : Entry.Kind.VALUE, loaded.value(),
        loaded.fetchedAt(), loaded.fetchedAt() + ttl, loaded.loadMillis(), Entry.NO_CAS);
    NearTier.Ticket ticket = near == null ? null : near.writing(storeKey);
    if (casToken == Entry.NO_CAS) {
      return conditional(storeKey, store.add(storeKey, bytes, exptime), written, bytes,
          generation, ticket);
    }
    return store.cas(storeKey, casToken, bytes, exptime).handle((outcome, error) -> {
      if (error != null) {
        return CompletableFuture.<Boolean>failedFuture(error);
      }
      if (outcome == CasOutcome.NOT_FOUND) {
        return store.add(storeKey, bytes, exptime);
      }
      return CompletableFuture.completedFuture(outcome == CasOutcome.STORED);
    }).thenCompose(stage -> conditional(storeKey, stage, written, bytes, generation, ticket));
  }

  /**
   * Encodes a value given by the caller ({@code put}, {@code putIfAbsent}).
   *
   * @throws IllegalArgumentException if the encoded entry exceeds {@code maxValueSize}
   */
  byte[] encodePut(String storeKey, V value, long now) {
    byte[] bytes = seal.seal(Envelope.encode(now, now + jittered(ttlMillis), 0,
        callerGeneration(storeKey), codec.encode(value)));
    if (bytes.length > maxValueSize) {
      throw new IllegalArgumentException("value of " + bytes.length
          + " bytes (envelope included) exceeds maxValueSize " + maxValueSize);
    }
    return bytes;
  }

  /** Whether "no value" is cached at all ({@code noValueTtl} is not zero). */
  boolean cachesAbsence() {
    return noValueTtlMillis != 0;
  }

  /** Encodes "no value" given by the caller ({@code putNoValue}), for {@code noValueTtl}. */
  byte[] encodeAbsentPut(String storeKey, long now) {
    return seal.seal(Envelope.encodeAbsent(now, now + jittered(noValueTtlMillis), 0,
        callerGeneration(storeKey)));
  }

  /** The exptime of an entry encoded by {@link #encodePut} or {@link #encodeAbsentPut}. */
  int putExptime(byte[] bytes) {
    long fetchedAt = Envelope.fetchedAt(bytes);
    return Exptime.of(Envelope.expiresAt(bytes) - fetchedAt + graceMillis, fetchedAt);
  }

  /**
   * A write fence of the key changed at {@code now}; see {@link Envelope#encodeFence}. Its prior
   * is left out if the fence would not fit {@code maxValueSize} with it.
   */
  byte[] fence(String storeKey, long now, boolean shared, boolean committing, long[] holderIds,
      long[] holderUntils, byte[] prior) {
    long generation = callerGeneration(storeKey);
    if (prior != null && overhead() + Envelope.FENCE_FIXED_SIZE
        + holderIds.length * Envelope.FENCE_HOLDER_SIZE + prior.length > maxValueSize) {
      prior = null;
    }
    return seal.seal(Envelope.encodeFence(now, shared, committing, holderIds, holderUntils,
        prior, generation));
  }

  /** The largest header an envelope has, its keyed tag if any, and its checksum. */
  private int overhead() {
    return Envelope.GENERATION_HEADER_SIZE + (seal.isKeyed() ? Envelope.TAG_SIZE : 0)
        + Envelope.CHECKSUM_SIZE;
  }

  /** What this cache's envelopes carry, for the readers of what it wrote. */
  EntrySeal seal() {
    return seal;
  }

  /** A tombstone for an invalidation at {@code now}. */
  byte[] tombstone(String storeKey, long now) {
    return seal.seal(Envelope.encodeTombstone(now, callerGeneration(storeKey)));
  }

  /**
   * The generation the entry of {@code storeKey} is written in now: 0 (none) without a near
   * cache or {@code invalidateAllBound}, the generation of the key's node with one ({@link
   * Generation#current}: {@link Generation#UNKNOWN} before the first poll of its log, but for the
   * previous layout's reading, at most the bound old, just after a change of the node list).
   */
  long generation(String storeKey) {
    return generation == null ? 0 : generation.current(storeKey);
  }

  /**
   * The generation of a caller's write ({@link Generation#forWrite}: after a change of the node
   * list, the previous layout's for a node in both until the new layout read it); a store
   * failure before the first poll of the key's node's log.
   */
  private long callerGeneration(String storeKey) {
    long current = generation == null ? 0 : generation.forWrite(storeKey);
    if (current == Generation.UNKNOWN) {
      stats.increment(Counter.STORE_ERROR); // its log's store could not be read
      throw new StoreException("the cache has not read the namespace's generation yet (near"
          + " cache or invalidateAllBound): its log could not be polled since the cache started");
    }
    return current;
  }

  /**
   * The exptime of a tombstone: it must outlive every load that could have read the key before
   * the invalidation (the load timeout bounds them) and the entry it replaces.
   */
  int tombstoneExptime(long now) {
    return Exptime.of(tombstoneLifetimeMillis, now);
  }

  private long jittered(long ttl) {
    if (ttlJitter == 0) {
      return ttl;
    }
    return ttl - (long) (ttl * ttlJitter * random.nextDouble());
  }

  /**
   * Counts a load's conditional write; tells the near cache of a write that landed (with the
   * entry written, in {@code generation}, and the ticket taken before it was issued), or that
   * may have (a failure in flight, a timeout).
   */
  private CompletableFuture<Boolean> conditional(String storeKey,
      CompletableFuture<Boolean> write, Entry<V> written, byte[] bytes, long generation,
      NearTier.Ticket ticket) {
    return write.handle((stored, error) -> {
      if (near != null && (error != null || stored)) {
        near.written(storeKey, error == null ? written : null, bytes, generation, ticket);
      }
      if (error != null) {
        stats.increment(Counter.STORE_ERROR);
        storeErrorLog.warn("a write failed; the value was not cached", Failures.unwrap(error));
        return false;
      }
      if (!stored) {
        stats.increment(Counter.STALE_SET_DISCARD);
      }
      return stored;
    });
  }
}
