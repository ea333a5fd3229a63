package io.sustainablecache.hibernate;

import io.sustainablecache.ReadStart;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.Ticker;
import java.time.Instant;
import java.time.InstantSource;
import org.hibernate.cache.spi.CacheTransactionSynchronization;
import org.hibernate.cache.spi.RegionFactory;
import org.hibernate.engine.spi.SharedSessionContractImplementor;

/**
 * A session's caching timestamp, as Hibernate's own {@code
 * AbstractCacheTransactionSynchronization} takes it (when the session opens, and again when a
 * transaction begins: no later than the first statement whose rows the session puts), kept as a
 * {@link ReadStart} with a reading of the regions' ticker ({@link Ticker#systemTicker()}, which
 * every region's cache runs on). {@code putFromLoad} hands it to {@link
 * SustainableCache#putLoaded(String, Object, ReadStart)}: a change this instance saw in the store
 * before the session's reads began then no longer keeps a loaded row out for {@code
 * max-clock-skew}. Hibernate reads the timestamp itself as {@link #getCachingTimestamp} (the same
 * wall-clock milliseconds as before: {@link RegionFactory#nextTimestamp}). One per session, used
 * by its thread.
 */
final class SessionReadStart implements CacheTransactionSynchronization {

  private final InstantSource clock;
  private ReadStart start;

  SessionReadStart(RegionFactory factory) {
    this.clock = () -> Instant.ofEpochMilli(factory.nextTimestamp());
    this.start = ReadStart.now(clock, Ticker.systemTicker());
  }

  /** When the session's reads began, as {@code putLoaded} takes it. */
  static ReadStart of(SharedSessionContractImplementor session) {
    CacheTransactionSynchronization sync = session.getCacheTransactionSynchronization();
    return sync instanceof SessionReadStart own ? own.start
        : ReadStart.at(Instant.ofEpochMilli(sync.getCachingTimestamp()));
  }

  @Override
  public long getCachingTimestamp() {
    return start.instant().toEpochMilli();
  }

  @Override
  public void transactionJoined() {
    start = ReadStart.now(clock, Ticker.systemTicker());
  }

  @Override
  public void transactionCompleting() {}

  @Override
  public void transactionCompleted(boolean successful) {}
}
