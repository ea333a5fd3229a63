package io.sustainablecache.hibernate;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.util.List;

/**
 * Hibernate's query-cache entry, {@code QueryResultsCacheImpl.CacheItem(long timestamp, List
 * results)}: read (its two fields) and created through reflection, checked once. Hibernate 7 has it
 * as a private record, 6.6 as a class with a {@code Long timestamp} field and no accessors; the
 * fields and the constructor are the same in both. Stateless.
 */
final class QueryItems {

  private static final Class<?> ITEM;
  private static final Constructor<?> CREATE;
  private static final Field TIMESTAMP;
  private static final Field RESULTS;

  static {
    try {
      ITEM = Class.forName("org.hibernate.cache.internal.QueryResultsCacheImpl$CacheItem", false,
          QueryItems.class.getClassLoader());
      CREATE = ITEM.getDeclaredConstructor(long.class, List.class);
      CREATE.setAccessible(true);
      TIMESTAMP = ITEM.getDeclaredField("timestamp");
      TIMESTAMP.setAccessible(true);
      RESULTS = ITEM.getDeclaredField("results");
      RESULTS.setAccessible(true);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new ExceptionInInitializerError("this Hibernate version's query cache entry"
          + " (QueryResultsCacheImpl.CacheItem(long, List)) cannot be read: " + e);
    }
  }

  private QueryItems() {}

  static boolean isItem(Object value) {
    return ITEM.isInstance(value);
  }

  static long timestamp(Object item) {
    return ((Number) read(TIMESTAMP, item)).longValue();
  }

  static List<?> results(Object item) {
    return (List<?>) read(RESULTS, item);
  }

  static Object item(long timestamp, List<?> results) {
    try {
      return CREATE.newInstance(timestamp, results);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("a query cache entry could not be created", e);
    }
  }

  private static Object read(Field field, Object item) {
    try {
      return field.get(item);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("a query cache entry could not be read", e);
    }
  }
}
