package io.sustainablecache.spring;

import static java.util.Objects.requireNonNull;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Collections;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.springframework.cache.interceptor.SimpleKey;

/** See {@link KeyEncoder#typeTagged()}. Stateless, thread-safe. */
final class TypeTaggedKeyEncoder implements KeyEncoder {

  static final TypeTaggedKeyEncoder INSTANCE = new TypeTaggedKeyEncoder();

  /** Deeper keys are refused: they are certainly a mistake, and a cycle would never end. */
  static final int MAX_DEPTH = 32;

  /**
   * {@code SimpleKey} keeps its parameters private and has no accessor; its {@code equals} is
   * {@code Arrays.deepEquals} over them, which is what the encoding must follow.
   */
  private static final Field SIMPLE_KEY_PARAMS = simpleKeyParams();

  private TypeTaggedKeyEncoder() {}

  @Override
  public String encode(Object key) {
    requireNonNull(key, "key");
    StringBuilder b = new StringBuilder(32);
    append(b, key, 0);
    return b.toString();
  }

  /**
   * Decodes the scalar types (see {@link KeyEncoder#typeTagged()}); the result is checked by
   * encoding it again, so that only the exact encoding of a key of {@code type} is accepted.
   */
  @Override
  public <K> K decode(String encoded, Class<K> type) {
    requireNonNull(encoded, "encoded");
    requireNonNull(type, "type");
    Object key;
    try {
      key = scalar(encoded, type);
    } catch (IllegalArgumentException e) { // NumberFormatException, a bad UUID or enum name
      throw notAnEncoding(encoded, type, e);
    }
    if (key == null || !encode(key).equals(encoded)) {
      throw notAnEncoding(encoded, type, null);
    }
    return type.cast(key);
  }

  private static Object scalar(String encoded, Class<?> type) {
    String body = encoded.isEmpty() ? "" : encoded.substring(1);
    String number = body.endsWith(";") ? body.substring(0, body.length() - 1) : body;
    char tag = encoded.isEmpty() ? 0 : encoded.charAt(0);
    if (type == String.class) {
      return tag == 's' ? body.substring(body.indexOf(':') + 1) : null;
    } else if (type == Long.class) {
      return tag == 'l' ? Long.valueOf(number) : null;
    } else if (type == Integer.class) {
      return tag == 'i' ? Integer.valueOf(number) : null;
    } else if (type == Short.class) {
      return tag == 'h' ? Short.valueOf(number) : null;
    } else if (type == Byte.class) {
      return tag == 'b' ? Byte.valueOf(number) : null;
    } else if (type == BigInteger.class) {
      return tag == 'I' ? new BigInteger(number) : null;
    } else if (type == BigDecimal.class) {
      return tag == 'D' ? new BigDecimal(number) : null;
    } else if (type == UUID.class) {
      return tag == 'u' ? UUID.fromString(body) : null;
    } else if (type == Boolean.class) {
      return tag == 'T' ? Boolean.TRUE : tag == 'F' ? Boolean.FALSE : null;
    } else if (type == Character.class) {
      return tag == 'c' && body.length() == 1 ? body.charAt(0) : null;
    } else if (type.isEnum()) {
      String prefix = "e" + INSTANCE.encode(type.getName()); // 'e', then the class name as a string
      String name = encoded.startsWith(prefix) ? encoded.substring(prefix.length()) : "";
      return name.startsWith("s") ? enumConstant(type, name.substring(name.indexOf(':') + 1))
          : null;
    }
    throw new UnsupportedOperationException("the type-tagged key encoder decodes keys of the"
        + " scalar types (String, Long, Integer, Short, Byte, BigInteger, BigDecimal, UUID,"
        + " Boolean, Character, enums), not " + type.getName() + ": give the bulk loader ids of"
        + " such a type (a @Cacheable key expression such as key = \"#order.id\"), or use a"
        + " KeyEncoder that decodes yours");
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Object enumConstant(Class<?> type, String name) {
    return Enum.valueOf((Class) type, name);
  }

  private static IllegalArgumentException notAnEncoding(String encoded, Class<?> type,
      Throwable cause) {
    return new IllegalArgumentException("'" + encoded + "' is not a type-tagged key of type "
        + type.getName(), cause);
  }

  private static void append(StringBuilder b, Object o, int depth) {
    if (depth > MAX_DEPTH) {
      throw new IllegalArgumentException("cache key is nested more than " + MAX_DEPTH
          + " levels deep (or contains itself)");
    }
    if (o == null) {
      b.append('n');
    } else if (o instanceof String s) {
      string(b, s);
    } else if (o instanceof Integer i) {
      b.append('i').append(i.intValue()).append(';');
    } else if (o instanceof Long l) {
      b.append('l').append(l.longValue()).append(';');
    } else if (o instanceof Short s) {
      b.append('h').append(s.shortValue()).append(';');
    } else if (o instanceof Byte y) {
      b.append('b').append(y.byteValue()).append(';');
    } else if (o instanceof Boolean t) {
      b.append(t ? 'T' : 'F');
    } else if (o instanceof Character c) {
      b.append('c').append(c.charValue());
    } else if (o instanceof Double d) {
      // Double.equals compares doubleToLongBits: -0.0 != 0.0, every NaN equal.
      b.append('d').append(Long.toHexString(Double.doubleToLongBits(d))).append(';');
    } else if (o instanceof Float f) {
      b.append('f').append(Integer.toHexString(Float.floatToIntBits(f))).append(';');
    } else if (o.getClass() == BigInteger.class) {
      b.append('I').append(o).append(';');
    } else if (o.getClass() == BigDecimal.class) {
      // equals compares value and scale; toString is canonical for both (1.5 vs 1.50).
      b.append('D').append(o).append(';');
    } else if (o instanceof UUID u) {
      b.append('u').append(u);
    } else if (o instanceof Enum<?> e) {
      b.append('e');
      string(b, e.getDeclaringClass().getName());
      string(b, e.name());
    } else if (o instanceof SimpleKey k) {
      Object[] params = params(k);
      b.append('K').append(params.length).append('(');
      for (Object p : params) {
        append(b, p, depth + 1);
      }
      b.append(')');
    } else if (o.getClass().isArray()) {
      array(b, o, depth);
    } else if (o instanceof Optional<?> opt) {
      b.append('O');
      append(b, opt.orElse(null), depth + 1);
    } else if (o instanceof List<?> list) {
      b.append('L').append(list.size()).append('(');
      for (Object e : list) {
        append(b, e, depth + 1);
      }
      b.append(')');
    } else if (o instanceof Set<?> set) {
      sorted(b, 'S', set, depth);
    } else if (o instanceof Map<?, ?> map) {
      List<String> entries = new ArrayList<>(map.size());
      for (Map.Entry<?, ?> e : map.entrySet()) {
        StringBuilder entry = new StringBuilder();
        append(entry, e.getKey(), depth + 1);
        append(entry, e.getValue(), depth + 1);
        entries.add(entry.toString());
      }
      // Keys are distinct and their encodings prefix-free, so sorting whole entries is sorting
      // by key: equal maps encode alike whatever their iteration order.
      Collections.sort(entries);
      b.append('M').append(entries.size()).append('(');
      entries.forEach(b::append);
      b.append(')');
    } else if (o instanceof Record r) {
      record(b, r, depth);
    } else if (o.getClass().getName().startsWith("java.time.")) {
      // java.time value types: toString is ISO text that determines the value (zone included).
      b.append('t');
      string(b, o.getClass().getName());
      string(b, o.toString());
    } else if (o.getClass() == Date.class) {
      b.append('w');
      string(b, o.getClass().getName());
      b.append(((Date) o).getTime()).append(';');
    } else if (o instanceof Serializable s) {
      b.append('j');
      string(b, o.getClass().getName());
      b.append(serializedDigest(s));
    } else {
      throw new IllegalArgumentException("cache key of type " + o.getClass().getName()
          + " has no injective encoding: it is neither a String, number, boolean, character, UUID,"
          + " enum, SimpleKey, array, collection, map, Optional, record, java.time value nor"
          + " Serializable, and its toString() may print two different keys alike. Use a record,"
          + " a key expression such as key = \"#order.id\", or your own KeyEncoder.");
    }
  }

  /** {@code s}, the length, {@code :}, the characters: self-delimiting. */
  private static void string(StringBuilder b, String s) {
    b.append('s').append(s.length()).append(':').append(s);
  }

  private static void array(StringBuilder b, Object array, int depth) {
    int n = Array.getLength(array);
    Class<?> component = array.getClass().getComponentType();
    if (component.isPrimitive()) {
      // The component type is part of the encoding: new int[0] and new long[0] differ.
      b.append('p').append(primitiveTag(component)).append(n).append('(');
    } else {
      b.append('a').append(n).append('(');
    }
    for (int i = 0; i < n; i++) {
      append(b, Array.get(array, i), depth + 1);
    }
    b.append(')');
  }

  private static char primitiveTag(Class<?> type) {
    if (type == int.class) {
      return 'i';
    } else if (type == long.class) {
      return 'l';
    } else if (type == short.class) {
      return 'h';
    } else if (type == byte.class) {
      return 'b';
    } else if (type == boolean.class) {
      return 'z';
    } else if (type == char.class) {
      return 'c';
    } else if (type == double.class) {
      return 'd';
    } else {
      return 'f';
    }
  }

  private static void sorted(StringBuilder b, char tag, Collection<?> elements, int depth) {
    List<String> encoded = new ArrayList<>(elements.size());
    for (Object e : elements) {
      StringBuilder one = new StringBuilder();
      append(one, e, depth + 1);
      encoded.add(one.toString());
    }
    Collections.sort(encoded);
    b.append(tag).append(encoded.size()).append('(');
    encoded.forEach(b::append);
    b.append(')');
  }

  private static void record(StringBuilder b, Record r, int depth) {
    RecordComponent[] components = r.getClass().getRecordComponents();
    b.append('r');
    string(b, r.getClass().getName());
    b.append(components.length).append('(');
    for (RecordComponent c : components) {
      Method accessor = c.getAccessor();
      Object value;
      try {
        accessor.setAccessible(true);
        value = accessor.invoke(r);
      } catch (IllegalAccessException | RuntimeException e) {
        throw new IllegalArgumentException("cannot read component " + c.getName() + " of cache"
            + " key record " + r.getClass().getName() + ": " + e, e);
      } catch (InvocationTargetException e) {
        throw new IllegalArgumentException("component accessor " + c.getName() + " of cache key"
            + " record " + r.getClass().getName() + " threw " + e.getCause(), e.getCause());
      }
      append(b, value, depth + 1);
    }
    b.append(')');
  }

  private static String serializedDigest(Serializable value) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(value);
    } catch (IOException e) {
      throw new IllegalArgumentException("cache key of type " + value.getClass().getName()
          + " is Serializable but could not be serialized: " + e, e);
    }
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(bytes.toByteArray());
      return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform provides SHA-256", e);
    }
  }

  private static Object[] params(SimpleKey key) {
    try {
      return (Object[]) SIMPLE_KEY_PARAMS.get(key);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("cannot read SimpleKey's parameters", e);
    }
  }

  private static Field simpleKeyParams() {
    try {
      Field f = SimpleKey.class.getDeclaredField("params");
      f.setAccessible(true);
      return f;
    } catch (NoSuchFieldException | RuntimeException e) {
      throw new IllegalStateException("this Spring version's SimpleKey has no readable 'params'"
          + " field; sustainable-cache-spring cannot encode SimpleKey keys injectively", e);
    }
  }

  @Override
  public String toString() {
    return "KeyEncoder.typeTagged()";
  }
}
