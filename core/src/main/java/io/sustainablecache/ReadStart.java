package io.sustainablecache;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.time.InstantSource;
import java.util.OptionalLong;

/**
 * When a caller's read of the source began, for {@link SustainableCache#putLoaded(String, Object,
 * ReadStart)}: an instant on the wall clock and, if taken with {@link #now}, a reading of a {@link
 * Ticker}. The instant is compared with other hosts' changes (their tombstones' times, less {@link
 * SustainableCacheBuilder#maxClockSkew maxClockSkew}); the ticker's reading, on a cache that runs
 * on the same ticker, with when this instance saw a change in the store, which needs no clock skew:
 * a change this instance saw in the store before the read began was made before that read (see
 * {@code putLoaded}).
 *
 * <p>Take it no later than the read's first statement (a transaction's start is safe).
 * <b>Thread-safety:</b> immutable. <b>Nulls:</b> no method accepts or returns {@code null}.
 */
public final class ReadStart {

  private final Instant instant;
  /** The ticker read, or {@code null} for a start taken on the wall clock only. */
  private final Ticker ticker;
  private final long tick;

  private ReadStart(Instant instant, Ticker ticker, long tick) {
    this.instant = instant;
    this.ticker = ticker;
    this.tick = tick;
  }

  /**
   * A read that begins now: {@code ticker} read now, and the instant of {@code clock} now. Use the
   * cache's ticker ({@link Ticker#systemTicker()} unless one was set on its builder): a cache on
   * another ticker takes only the instant.
   *
   * @param clock the wall clock (the cache's, {@link InstantSource#system()} by default)
   * @param ticker the cache's ticker
   * @return the read's start
   * @throws NullPointerException if an argument is {@code null}
   */
  public static ReadStart now(InstantSource clock, Ticker ticker) {
    requireNonNull(clock, "clock");
    requireNonNull(ticker, "ticker");
    long tick = ticker.read();
    return new ReadStart(requireNonNull(clock.instant(), "clock.instant()"), ticker, tick);
  }

  /**
   * A read that began at {@code instant} on the wall clock, with no ticker reading: compared with
   * changes by their time only, as {@link SustainableCache#putLoaded(String, Object, Instant)}
   * does.
   *
   * @param instant when the read began
   * @return the read's start
   * @throws NullPointerException if {@code instant} is {@code null}
   */
  public static ReadStart at(Instant instant) {
    return new ReadStart(requireNonNull(instant, "instant"), null, 0);
  }

  /**
   * When the read began, on the wall clock.
   *
   * @return the instant, never {@code null}
   */
  public Instant instant() {
    return instant;
  }

  /**
   * The reading of {@code ticker} when the read began, if this start was taken with that very
   * ticker (the same instance); empty otherwise. For the cache, which compares it with its own
   * ticker's readings only.
   *
   * @param ticker a cache's ticker
   * @return the reading, in nanoseconds, or empty
   * @throws NullPointerException if {@code ticker} is {@code null}
   */
  public OptionalLong tickOn(Ticker ticker) {
    requireNonNull(ticker, "ticker");
    return this.ticker == ticker ? OptionalLong.of(tick) : OptionalLong.empty();
  }

  @Override
  public String toString() {
    return "ReadStart[" + instant + (ticker == null ? "" : ", tick " + tick) + "]";
  }
}
