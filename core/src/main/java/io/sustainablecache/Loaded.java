package io.sustainablecache;

/**
 * The result of a load: the value, or none ({@code value == null}: the loader found no value),
 * with when it completed and how long it took. {@link #NOT_LOADED} marks a flight that ended
 * without loading (its refresh was rejected or another instance held the lease); callers that
 * joined such a flight read the key again.
 *
 * @param value the loaded value, or {@code null} if there is none
 * @param fetchedAt when the load completed, epoch milliseconds
 * @param loadMillis how long it took
 */
record Loaded<V>(V value, long fetchedAt, long loadMillis) {

  @SuppressWarnings("rawtypes")
  private static final Loaded NOT_LOADED = new Loaded<>(null, -1, -1);

  @SuppressWarnings("unchecked")
  static <V> Loaded<V> notLoaded() {
    return NOT_LOADED;
  }

  boolean wasLoaded() {
    return this != NOT_LOADED;
  }
}
