package io.sustainablecache.internal;

import io.sustainablecache.CacheObserver;
import io.sustainablecache.CacheObserver.Kind;
import io.sustainablecache.CacheObserver.Scope;
import io.sustainablecache.CacheObserver.Span;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The cache's {@link CacheObserver}, as the load pipeline and the write fences call it: each
 * method is one null check and nothing else when the cache has no observer (a span is then
 * {@code null}), and none throws what the observer throws (it is logged, rate-limited, and the
 * step goes on unobserved). Thread-safe.
 */
final class Spans {

  private final CacheObserver observer;
  private final String cache;
  private final RateLimitedLog log;

  Spans(CacheConfig<?> config) {
    this.observer = config.observer();
    this.cache = config.namespace();
    this.log = new RateLimitedLog(Log.LOGGER, config.ticker());
  }

  /** Whether the cache has an observer: if not, every span is {@code null}. */
  boolean on() {
    return observer != null;
  }

  /**
   * Begins a step's span on this thread.
   *
   * @param parent the span the step belongs to, or {@code null}: this thread's current one
   * @return the span, or {@code null} without an observer (or if it failed)
   */
  Span begin(Kind kind, Collection<String> keys, boolean background, Span parent) {
    if (observer == null) {
      return null;
    }
    try {
      Span span = observer.begin(new CacheObserver.Step(kind, cache, keys, background, parent));
      if (span == null) {
        throw new NullPointerException(observer + " returned no span");
      }
      return span;
    } catch (RuntimeException | LinkageError e) {
      failed(e);
      return null;
    }
  }

  /** Ends {@code span} ({@code null}: none) with {@code outcome}, after {@code error} if any. */
  void end(Span span, String outcome, Throwable error) {
    if (span == null) {
      return;
    }
    try {
      if (error != null) {
        span.error(error);
      }
      span.end(outcome);
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
  }

  /** Makes {@code span} ({@code null}: none) current on this thread until {@link #close}. */
  Scope open(Span span) {
    if (span == null) {
      return Scope.NONE;
    }
    try {
      Scope scope = span.open();
      return scope == null ? Scope.NONE : scope;
    } catch (RuntimeException | LinkageError e) {
      failed(e);
      return Scope.NONE;
    }
  }

  /** Closes what {@link #open} returned. */
  void close(Scope scope) {
    try {
      scope.close();
    } catch (RuntimeException | LinkageError e) {
      failed(e);
    }
  }

  /**
   * Runs a synchronous step of one key on this thread within its span: ended with {@code
   * outcome} of the result, or with {@code failure} and the exception, which is rethrown.
   */
  <T> T around(Kind kind, String key, Supplier<T> step, Function<? super T, String> outcome) {
    if (observer == null) {
      return step.get();
    }
    Span span = begin(kind, List.of(key), false, null);
    T result;
    try {
      result = step.get();
    } catch (RuntimeException | Error e) {
      end(span, "failure", e);
      throw e;
    }
    end(span, outcome.apply(result), null);
    return result;
  }

  private void failed(Throwable e) {
    log.warn("cache " + (cache.isEmpty() ? "(no namespace)" : cache) + ": its CacheObserver"
        + " threw; the step goes on unobserved", e);
  }
}
