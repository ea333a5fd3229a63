package io.sustainablecache;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

/**
 * One load of one key in this JVM: a caller's miss or a refresh. Registered in the {@link
 * KeyRegistry} from the moment it is decided until its write has been issued (or it ended without
 * one), so that every caller of the key in between joins it instead of loading again.
 *
 * <p>{@link #result} completes once, with the load's outcome, with {@link Loaded#notLoaded()}, or
 * exceptionally ({@link CacheLoadException}: failure or timeout). A flight is <em>voided</em> by
 * {@code invalidate}/{@code put} or its timeout: it is no longer registered and never writes.
 */
final class Flight<V> {

  /** Why the flight loads. */
  enum Origin {
    /** A caller found no usable entry and waits for this load. */
    MISS,
    /** The refresh policy decided to reload an entry that is still served meanwhile. */
    REFRESH
  }

  final String key;
  final String storeKey;
  final Origin origin;
  final long startedAt;
  /** The token of the read that decided this load; every write of it is conditional on it. */
  final long casToken;
  final CompletableFuture<Loaded<V>> result = new CompletableFuture<>();

  /** The thread inside the loader call right now, for detecting recursive loads. */
  volatile Thread loaderThread;
  volatile boolean voided;
  /** The timeout task; cancelled when the flight is deregistered. */
  volatile Future<?> timeout;
  /** Whether this instance holds the key's fleet lease for this flight. */
  volatile boolean leaseHeld;
  /** Until when the lease it holds lasts, on the cache's clock. */
  volatile long leaseUntil;
  /** Whether a loader was called for this flight (a refresh may be dropped before). */
  volatile boolean loadStarted;
  /** The load time measured last time (the entry's), or -1 if unknown. */
  volatile long expectedLoadMillis = -1;

  Flight(String key, String storeKey, Origin origin, long startedAt, long casToken) {
    this.key = key;
    this.storeKey = storeKey;
    this.origin = origin;
    this.startedAt = startedAt;
    this.casToken = casToken;
  }

  @Override
  public String toString() {
    return "Flight[" + origin + ", started " + startedAt + (voided ? ", voided" : "") + "]";
  }
}
