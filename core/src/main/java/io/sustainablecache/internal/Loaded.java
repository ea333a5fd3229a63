package io.sustainablecache.internal;

/**
 * The result of a load: the value, or none ({@code value == null}: the loader found no value),
 * with when it completed, how long it took, and the namespace's generation when it started.
 * {@link #NOT_LOADED} marks a flight that ended without loading (its refresh was rejected or
 * another instance held the lease); callers that joined such a flight read the key again.
 *
 * @param value the loaded value, or {@code null} if there is none
 * @param fetchedAt when the load completed, epoch milliseconds
 * @param loadMillis how long it took
 * @param generation the {@linkplain Generation generation} this instance knew when the load
 *     started ({@link EntryWriter#generation(String)}); the result is written only if it is still the
 *     namespace's when the write is issued
 */
record Loaded<V>(V value, long fetchedAt, long loadMillis, long generation) {

  @SuppressWarnings("rawtypes")
  private static final Loaded NOT_LOADED = new Loaded<>(null, -1, -1, Generation.UNKNOWN);

  @SuppressWarnings("unchecked")
  static <V> Loaded<V> notLoaded() {
    return NOT_LOADED;
  }

  boolean wasLoaded() {
    return this != NOT_LOADED;
  }
}
