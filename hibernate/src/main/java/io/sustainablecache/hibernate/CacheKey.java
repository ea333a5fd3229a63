package io.sustainablecache.hibernate;

import java.util.Objects;

/**
 * A region's cache key: the key in the store (the entity's root name, the tenant and the id,
 * encoded by {@link StoreKeys}) and the id Hibernate asks back for. Equal when the store keys are.
 * Immutable.
 */
final class CacheKey {

  private final String storeKey;
  private final Object id;

  CacheKey(String storeKey, Object id) {
    this.storeKey = Objects.requireNonNull(storeKey, "storeKey");
    this.id = Objects.requireNonNull(id, "id");
  }

  String storeKey() {
    return storeKey;
  }

  Object id() {
    return id;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CacheKey other && storeKey.equals(other.storeKey);
  }

  @Override
  public int hashCode() {
    return storeKey.hashCode();
  }

  @Override
  public String toString() {
    return storeKey;
  }
}
