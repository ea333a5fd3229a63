package io.sustainablecache.hibernate;

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

  /** The longest namespace the core accepts. */
  static final int MAX_NAMESPACE = 64;

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
   * The namespace of a region: {@code prefix + region name} when that is a valid namespace (1 to
   * 64 of {@code [A-Za-z0-9_.+-]}, not starting with {@code -}); otherwise the name with other
   * characters replaced by {@code _}, shortened, and {@code +} and 8 hex digits of the name's
   * SHA-256 appended, so that two regions never share one.
   */
  static String namespace(String prefix, String regionName) {
    String plain = prefix + regionName;
    if (valid(plain)) {
      return plain;
    }
    StringBuilder cleaned = new StringBuilder(plain.length());
    for (int i = 0; i < plain.length(); i++) {
      char c = plain.charAt(i);
      cleaned.append(allowed(c) ? c : '_');
    }
    if (cleaned.charAt(0) == '-') {
      cleaned.setCharAt(0, '_');
    }
    String suffix = "+" + sha256(regionName).substring(0, 8);
    int keep = Math.min(cleaned.length(), MAX_NAMESPACE - suffix.length());
    return cleaned.substring(0, keep) + suffix;
  }

  private static boolean valid(String namespace) {
    if (namespace.isEmpty() || namespace.length() > MAX_NAMESPACE || namespace.charAt(0) == '-') {
      return false;
    }
    for (int i = 0; i < namespace.length(); i++) {
      if (!allowed(namespace.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  private static boolean allowed(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || c == '_' || c == '.' || c == '+' || c == '-';
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
