package io.sustainablecache.internal;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.BulkPeek;
import io.sustainablecache.ReadStart;
import io.sustainablecache.spi.StoreItem;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The {@link BulkPeek} of {@code peekAll}: the values found, and per key the peek read from the
 * store what it found there (empty: nothing), which {@link #putLoaded} makes its write conditional
 * on. Thread-safe (immutable; its writes go through {@link CallerWrites}).
 */
final class PeekedKeys<V> implements BulkPeek<V> {

  private final Map<String, V> values;
  private final Map<String, Optional<StoreItem>> read;
  private final CallerWrites<V> writes;

  PeekedKeys(Map<String, V> values, Map<String, Optional<StoreItem>> read,
      CallerWrites<V> writes) {
    this.values = values;
    this.read = read;
    this.writes = writes;
  }

  @Override
  public Map<String, V> values() {
    return values;
  }

  @Override
  public CompletableFuture<Boolean> putLoaded(String key, V value, Instant readStart) {
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    return putLoaded(key, value, ReadStart.at(requireNonNull(readStart, "readStart")));
  }

  @Override
  public CompletableFuture<Boolean> putLoaded(String key, V value, ReadStart readStart) {
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    return writes.putLoadedAsync(key, value, requireNonNull(readStart, "readStart"),
        read.get(key));
  }

  @Override
  public String toString() {
    return "BulkPeek{" + values.size() + " values, " + read.size() + " keys read}";
  }
}
