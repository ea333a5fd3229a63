package io.sustainablecache.internal;

import io.sustainablecache.CacheLoadException;

/**
 * What a read answers: the typed answer of {@link AfterRead}, the one consumer of the read step's
 * results, for {@code get}, {@code getAsync} and {@code getAll} alike, and of the hit paths. A hit
 * with a value answers with the value itself, not a {@link Value} it would allocate; every other
 * answer without data is a shared instance ({@link #absent()}, {@link #notCached()}), a hit's as
 * a load's. So the facade maps one vocabulary: a value, or one of those two ({@code
 * ReadPath.consume} unboxes a loaded {@link Value} and throws a {@link Failed}). Immutable.
 *
 * @param <V> the value type
 */
sealed interface Answer<V> {

  /** The key's value: loaded, or the entry a failed load kept serving (stale-on-error). */
  record Value<V>(V value) implements Answer<V> {}

  /** The key has no value: its loader found none (cached as absent), or its entry says so. */
  record Absent<V>() implements Answer<V> {}

  /** A peek found nothing cached under the key (a miss); only a peek answers it. */
  record NotCached<V>() implements Answer<V> {}

  /**
   * The load the key joined ended without a value (a refresh refused, another instance held the
   * lease and its write did not come): read the key again.
   */
  record NotLoaded<V>() implements Answer<V> {}

  /**
   * The load failed and no stale value may answer: the raw failure ({@link CacheLoadException},
   * a remembered one, or {@link IllegalStateException} for a recursive load); {@link Failures}
   * says what the caller gets.
   */
  record Failed<V>(Throwable cause) implements Answer<V> {}

  /** The answer of a load's result: its value, or absent. */
  static <V> Answer<V> of(Loaded<V> loaded) {
    return loaded.value() == null ? absent() : new Value<>(loaded.value());
  }

  /** The answer of an entry that answers: its value, or absent. */
  static <V> Answer<V> of(Entry<V> entry) {
    return entry.value() != null ? new Value<>(entry.value()) : absent(); // a prior may be one
  }

  @SuppressWarnings("unchecked")
  static <V> Answer<V> absent() {
    return (Answer<V>) Shared.ABSENT;
  }

  @SuppressWarnings("unchecked")
  static <V> Answer<V> notCached() {
    return (Answer<V>) Shared.NOT_CACHED;
  }

  @SuppressWarnings("unchecked")
  static <V> Answer<V> notLoaded() {
    return (Answer<V>) Shared.NOT_LOADED;
  }

  /** The shared instances of the answers without data: the only ones (compared by identity). */
  final class Shared {
    static final Absent<?> ABSENT = new Absent<>();
    static final NotCached<?> NOT_CACHED = new NotCached<>();
    static final NotLoaded<?> NOT_LOADED = new NotLoaded<>();

    private Shared() {}
  }
}
