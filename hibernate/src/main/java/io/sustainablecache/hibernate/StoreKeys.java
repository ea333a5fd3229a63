package io.sustainablecache.hibernate;

import io.sustainablecache.Namespaces;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.temporal.TemporalAccessor;
import java.util.HexFormat;
import java.util.UUID;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.persister.collection.CollectionPersister;
import org.hibernate.persister.entity.EntityPersister;

/**
 * The strings a region's entries and the region itself are stored under: injective and made of
 * characters memcached keys and ARCUS prefixes may hold. Every instance of a service computes the
 * same strings, so they share entries. Stateless.
 */
final class StoreKeys {

  private StoreKeys() {}

  /**
   * The key of an entity: {@code <root entity name>/[<tenant>/]<id>}. A composite id is encoded
   * from its disassembled components.
   */
  static CacheKey entity(Object id, EntityPersister persister, SessionFactoryImplementor factory,
      String tenant) {
    return key(persister.getRootEntityName(), tenant, "", isBasic(id) ? id
        : persister.getIdentifierType().disassemble(id, factory), id);
  }

  /** The key of a collection: {@code <role>/[<tenant>/]<owner's key>}. */
  static CacheKey collection(Object id, CollectionPersister persister,
      SessionFactoryImplementor factory, String tenant) {
    return key(persister.getRole(), tenant, "", isBasic(id) ? id
        : persister.getKeyType().disassemble(id, factory), id);
  }

  /**
   * The key of a natural id's resolution: {@code <root entity name>/[<tenant>/]n<values>}; the
   * values a basic value or an array of them.
   */
  static CacheKey naturalId(Object naturalIdValues, EntityPersister persister, String tenant) {
    return key(persister.getRootEntityName(), tenant, "n", naturalIdValues, naturalIdValues);
  }

  private static CacheKey key(String name, String tenant, String marker, Object encoded,
      Object id) {
    StringBuilder key = new StringBuilder();
    escape(name, key);
    key.append('/');
    if (tenant != null) {
      escape(tenant, key);
      key.append('/');
    }
    key.append(marker);
    value(encoded, key);
    return new CacheKey(key.toString(), id);
  }

  private static boolean isBasic(Object id) {
    return id instanceof String || id instanceof Number || id instanceof UUID
        || id instanceof Character || id instanceof Boolean || id instanceof TemporalAccessor
        || id instanceof java.util.Date;
  }

  /** Appends a disassembled id value: basic values as text, arrays as {@code (a,b)}. */
  private static void value(Object value, StringBuilder key) {
    if (value == null) {
      key.append('~');
    } else if (value instanceof Object[] parts) {
      key.append('(');
      for (int i = 0; i < parts.length; i++) {
        if (i > 0) {
          key.append(',');
        }
        value(parts[i], key);
      }
      key.append(')');
    } else if (value instanceof String s) {
      key.append('\'');
      escape(s, key);
    } else if (value instanceof Long || value instanceof Integer || value instanceof Short
        || value instanceof Byte || value instanceof BigInteger) {
      key.append(value);
    } else if (value instanceof BigDecimal decimal) {
      key.append('d').append(decimal.toPlainString());
    } else if (value instanceof java.util.Date date) {
      key.append('t').append(date.getTime());
    } else if (value instanceof UUID || value instanceof Boolean || value instanceof Character
        || value instanceof TemporalAccessor || value instanceof Enum<?>) {
      key.append(value.getClass().getSimpleName().charAt(0));
      escape(String.valueOf(value), key);
    } else {
      throw new IllegalArgumentException("an id of type " + value.getClass().getName()
          + " cannot be a cache key: use basic id types (numbers, strings, UUIDs, dates) or"
          + " an embeddable of them");
    }
  }

  /** Appends {@code s}, each character outside {@code [A-Za-z0-9_.+-]} as {@code %XX} of UTF-8. */
  static void escape(String s, StringBuilder out) {
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      char c = (char) (b & 0xFF);
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
          || c == '.' || c == '+' || c == '-') {
        out.append(c);
      } else {
        out.append('%').append(HexFormat.of().withUpperCase().toHexDigits((byte) c));
      }
    }
  }

  /**
   * The namespace of a region: {@link Namespaces#derive} of the prefix and the region's name
   * ({@code prefix + region name} when that is valid, else sanitized with a hash suffix), so that
   * two regions never share one.
   */
  static String namespace(String prefix, String regionName) {
    return Namespaces.derive(prefix, regionName);
  }

  static String sha256(String text) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
          .digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every Java platform", e);
    }
  }
}
