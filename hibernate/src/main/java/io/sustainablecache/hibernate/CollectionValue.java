package io.sustainablecache.hibernate;

import java.io.Serializable;
import java.lang.reflect.Constructor;
import org.hibernate.cache.spi.entry.CollectionCacheEntry;

/**
 * A collection's cached state as a region stores it: the role (whose mapping's fingerprint the
 * entry carries) and Hibernate's disassembled elements. Immutable by convention (the state array
 * is Hibernate's, not copied).
 *
 * @param role the collection's role, e.g. {@code io.example.Order.lines}
 * @param state the disassembled elements ({@link CollectionCacheEntry#getState()})
 */
record CollectionValue(String role, Serializable[] state) {

  /** {@code CollectionCacheEntry(Serializable)}, package-private in Hibernate. */
  private static final Constructor<CollectionCacheEntry> ENTRY;

  static {
    try {
      ENTRY = CollectionCacheEntry.class.getDeclaredConstructor(Serializable.class);
      ENTRY.setAccessible(true);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new ExceptionInInitializerError("this Hibernate version's CollectionCacheEntry has no"
          + " (Serializable) constructor that can be made accessible: " + e);
    }
  }

  /** Hibernate's entry for this state. */
  CollectionCacheEntry toEntry() {
    try {
      return ENTRY.newInstance((Object) state);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("CollectionCacheEntry could not be created", e);
    }
  }
}
