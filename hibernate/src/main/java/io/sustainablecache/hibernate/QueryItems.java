package io.sustainablecache.hibernate;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.List;

/**
 * Hibernate's query-cache entry, {@code QueryResultsCacheImpl.CacheItem(long timestamp, List
 * results)}, a private record: read and created through reflection, checked once. Stateless.
 */
final class QueryItems {

  private static final Class<?> ITEM;
  private static final Constructor<?> CREATE;
  private static final Method TIMESTAMP;
  private static final Method RESULTS;

  static {
    try {
      ITEM = Class.forName("org.hibernate.cache.internal.QueryResultsCacheImpl$CacheItem", false,
          QueryItems.class.getClassLoader());
      CREATE = ITEM.getDeclaredConstructor(long.class, List.class);
      CREATE.setAccessible(true);
      TIMESTAMP = ITEM.getDeclaredMethod("timestamp");
      TIMESTAMP.setAccessible(true);
      RESULTS = ITEM.getDeclaredMethod("results");
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
    return (long) invoke(TIMESTAMP, item);
  }

  static List<?> results(Object item) {
    return (List<?>) invoke(RESULTS, item);
  }

  static Object item(long timestamp, List<?> results) {
    try {
      return CREATE.newInstance(timestamp, results);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("a query cache entry could not be created", e);
    }
  }

  private static Object invoke(Method method, Object item) {
    try {
      return method.invoke(item);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("a query cache entry could not be read", e);
    }
  }
}
