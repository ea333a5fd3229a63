package io.sustainablecache;

import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * What a peek at several keys found ({@link SustainableCache#peekAll}), and what it read: values
 * the caller then loads itself for the keys that missed are cached through {@link #putLoaded}
 * without reading the store again. Made for callers whose read of the cache and whose load are
 * separate steps over many keys, such as Hibernate's multi-id loading: one bulk read before the
 * load, one wave of writes after it, instead of a read, and a read and a write, per key.
 *
 * <p><b>Thread-safety:</b> immutable apart from the writes it issues; safe to share between
 * threads. <b>Nulls:</b> no method accepts or returns {@code null}.
 *
 * <p><b>Implementations:</b> this library's; a test double or a decorator may implement it too,
 * but later releases may add methods to it (with default implementations where they can).
 *
 * @param <V> the value type
 */
public interface BulkPeek<V> {

  /**
   * The keys that hold a value, with their values, in the iteration order of the keys peeked
   * (duplicates once): what {@link SustainableCache#getAllIfPresent} returns.
   *
   * @return an unmodifiable map, never {@code null}
   */
  Map<String, V> values();

  /**
   * {@link SustainableCache#putLoaded} for a value the caller loaded after this peek, issued
   * without waiting: the same rules (stored only if nothing changed the key since the caller's
   * read of the source began), but conditional on what this peek read of the key instead of a new
   * read: an {@code add} where the peek found nothing, a {@code cas} over the item it found,
   * nothing where what it found keeps the value out (a live value, a fence, a change at or after
   * {@code readStart} less the clock skew). A key that changed since the peek fails that write,
   * which is then followed by {@code putLoaded}'s own read and write. A key this peek did not
   * read from the store (the near cache answered it, the read failed, or it was not peeked) is
   * read first, as {@code putLoaded} does.
   *
   * <p>So the write is as safe as {@code putLoaded}'s: its read may be older, but the write is
   * conditional on the item being the one read, and the store's tombstones and fences, not the
   * read's age, decide what is kept out. Never blocks; the future completes on the thread that
   * completes the store's answer.
   *
   * @param key one of the caller's keys, as for {@link SustainableCache#get}
   * @param value the value loaded; never {@code null}
   * @param readStart when the caller's read of the source began, as for {@link
   *     SustainableCache#putLoaded}
   * @return a future of whether the value was stored; it fails with {@link
   *     io.sustainablecache.spi.StoreException} if the store failed (counted; the value may or
   *     may not be stored)
   * @throws IllegalArgumentException if the key is invalid or the encoded value exceeds {@link
   *     SustainableCacheBuilder#maxValueSize}
   * @throws NullPointerException if an argument is {@code null}
   */
  CompletableFuture<Boolean> putLoaded(String key, V value, Instant readStart);

  /**
   * {@link #putLoaded(String, Object, Instant)} with a start that may carry a reading of the
   * cache's ticker: a change this instance saw in the store before it no longer keeps the value
   * out, as for {@link SustainableCache#putLoaded(String, Object, ReadStart)}.
   *
   * @param key one of the caller's keys, as for {@link SustainableCache#get}
   * @param value the value loaded; never {@code null}
   * @param readStart when the caller's read of the source began
   * @return as {@link #putLoaded(String, Object, Instant)}
   * @throws IllegalArgumentException if the key is invalid or the encoded value exceeds {@link
   *     SustainableCacheBuilder#maxValueSize}
   * @throws NullPointerException if an argument is {@code null}
   */
  default CompletableFuture<Boolean> putLoaded(String key, V value, ReadStart readStart) {
    return putLoaded(key, value, java.util.Objects.requireNonNull(readStart, "readStart")
        .instant());
  }
}
