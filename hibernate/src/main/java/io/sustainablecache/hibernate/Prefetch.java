package io.sustainablecache.hibernate;

import io.sustainablecache.BulkPeek;
import io.sustainablecache.ReadStart;
import io.sustainablecache.SustainableCache;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.metamodel.model.domain.NavigableRole;
import org.hibernate.stat.spi.StatisticsImplementor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one {@link SustainableHibernate#prefetch} read of an entity region, bound to the calling
 * thread for the duration of the call: {@link DataAccess#get} answers the keys it peeked from it
 * (a value, or a miss) without a store read, and {@link DataAccess#putFromLoad} issues the
 * writes of the entities then loaded through its {@link BulkPeek} (conditional on what the peek
 * read, not awaited one by one) instead of a read and a write each. Only the session and the
 * region it was made for use it. {@link #close} unbinds it, waits for its writes and counts
 * those that stored in Hibernate's statistics. Used by one thread.
 */
final class Prefetch implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Prefetch.class);
  private static final ThreadLocal<Prefetch> CURRENT = new ThreadLocal<>();
  /**
   * How long {@link #close} waits for the writes at most; each is bounded by the store's
   * operation timeout already, this only guards against an adapter that breaks its bound.
   */
  private static final long WRITES_PATIENCE_MILLIS = 10_000;

  private final SustainableCache<Object> cache;
  private final SharedSessionContractImplementor session;
  private final Set<String> keys;
  private final BulkPeek<Object> peek;
  private final NavigableRole entity;
  private final String region;
  private final List<CompletableFuture<Boolean>> writes = new ArrayList<>();
  /** The prefetch this one hides (a nested call), restored by {@link #close}. */
  private final Prefetch outer;

  private Prefetch(SustainableCache<Object> cache, SharedSessionContractImplementor session,
      Set<String> keys, BulkPeek<Object> peek, NavigableRole entity, String region) {
    this.cache = cache;
    this.session = session;
    this.keys = keys;
    this.peek = peek;
    this.entity = entity;
    this.region = region;
    this.outer = CURRENT.get();
  }

  /**
   * Peeks at {@code keys} (the region's store keys) with one bulk read and binds the result to
   * this thread until {@link #close}.
   *
   * @param entity the root entity whose puts {@link #close} counts
   */
  static Prefetch open(SustainableCache<Object> cache, SharedSessionContractImplementor session,
      Set<String> keys, NavigableRole entity, String region) {
    Prefetch prefetch = new Prefetch(cache, session, keys, cache.peekAll(keys), entity, region);
    CURRENT.set(prefetch);
    return prefetch;
  }

  /** The prefetch of this thread for {@code cache} and {@code session}; {@code null}: none. */
  static Prefetch of(SustainableCache<Object> cache, SharedSessionContractImplementor session) {
    Prefetch current = CURRENT.get();
    return current != null && current.cache == cache && current.session == session ? current
        : null;
  }

  /** Whether the key was peeked (then {@link #value} is its answer). */
  boolean peeked(String storeKey) {
    return keys.contains(storeKey);
  }

  /** The value peeked under the key; {@code null}: a miss. */
  Object value(String storeKey) {
    return peek.values().get(storeKey);
  }

  /**
   * Issues the write of a value loaded for the key, not awaited.
   *
   * @throws IllegalArgumentException if the value cannot be cached (too large, not encodable)
   */
  void putLoaded(String storeKey, Object stored, ReadStart readStart) {
    writes.add(peek.putLoaded(storeKey, stored, readStart));
  }

  /**
   * Unbinds this prefetch (restoring the one it hid), then waits for its writes: a failed write is
   * not cached (counted and logged by the cache), a stored one counted as a put in Hibernate's
   * statistics.
   */
  @Override
  public void close() {
    if (outer == null) {
      CURRENT.remove();
    } else {
      CURRENT.set(outer);
    }
    if (writes.isEmpty()) {
      return;
    }
    try {
      CompletableFuture.allOf(writes.toArray(new CompletableFuture<?>[0]))
          .get(WRITES_PATIENCE_MILLIS, TimeUnit.MILLISECONDS);
    } catch (ExecutionException failedOne) {
      // counted and logged by the cache; the others are counted below
    } catch (TimeoutException e) {
      LOG.warn("the writes of a prefetch did not complete within {} ms; they may still land",
          WRITES_PATIENCE_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    StatisticsImplementor statistics = session.getFactory().getStatistics();
    if (statistics.isStatisticsEnabled()) {
      for (CompletableFuture<Boolean> write : writes) {
        if (write.isDone() && !write.isCompletedExceptionally() && write.join()) {
          statistics.entityCachePut(entity, region);
        }
      }
    }
  }
}
