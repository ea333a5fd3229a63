package io.sustainablecache.hibernate;

import io.sustainablecache.ValueCodec;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.BufferUnderflowException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.hibernate.bytecode.enhance.spi.LazyPropertyInitializer;
import org.hibernate.cache.spi.entry.StandardCacheEntryImpl;
import org.hibernate.property.access.internal.PropertyAccessStrategyBackRefImpl;

/**
 * Encodes a region's values, Hibernate's disassembled entity state ({@link StandardCacheEntryImpl}:
 * the subclass, the version and the disassembled property values), a collection's disassembled
 * elements ({@link CollectionValue}), a natural id's entity id ({@link NaturalIdValue}), a query's
 * results (Hibernate's query cache entry: its timestamp and rows) and a table's last update
 * ({@code Long}), in a format of its own, with
 * an allow-list of types: {@code null}, {@code String}, the primitives' boxes, {@code BigDecimal},
 * {@code BigInteger}, {@code UUID}, {@code byte[]}, {@code char[]}, the {@code java.time} values
 * ({@code LocalDate}, {@code LocalTime}, {@code LocalDateTime}, {@code Instant}, {@code
 * OffsetDateTime}, {@code OffsetTime}, {@code ZonedDateTime}, {@code Duration}), {@code
 * java.util.Date} and {@code java.sql.Date}, {@code Time} and {@code Timestamp}, enum constants,
 * arrays of these (components and embeddable ids disassemble to {@code Object[]}), and
 * Hibernate's markers for unfetched lazy properties and unknown back-references. No class is
 * named by the bytes except an enum's, which is loaded without initialization and used only if
 * it is an enum.
 *
 * <p>Each entry carries the {@linkplain MappingFingerprints fingerprint} of its entity's (or
 * collection's; for query results, every entity's) mapping when it was written; an entry whose fingerprint differs from the running mapping's (a
 * changed class: other properties or types) does not decode. A value outside the allow-list does
 * not encode ({@link IllegalArgumentException}: the entry is not cached); bytes that do not decode
 * (foreign, truncated, another mapping) throw {@link IllegalArgumentException}, which the cache
 * reads as a corrupt entry: a miss. Thread-safe.
 */
final class EntryCodec implements ValueCodec<Object> {

  /** The first byte of every value, and the format's version. */
  private static final byte MAGIC = 0x48;
  private static final byte VERSION = 1;
  private static final byte ENTITY = 1;
  private static final byte COLLECTION = 2;
  private static final byte NATURAL_ID = 3;
  private static final byte QUERY = 4;
  private static final byte TIMESTAMP = 5;

  private static final int MAX_DEPTH = 16;

  // value tags
  private static final byte NULL = 0;
  private static final byte STRING = 1;
  private static final byte INT = 2;
  private static final byte LONG = 3;
  private static final byte SHORT = 4;
  private static final byte BYTE = 5;
  private static final byte BOOLEAN = 6;
  private static final byte CHAR = 7;
  private static final byte FLOAT = 8;
  private static final byte DOUBLE = 9;
  private static final byte BIG_DECIMAL = 10;
  private static final byte BIG_INTEGER = 11;
  private static final byte UUID_TAG = 12;
  private static final byte BYTES = 13;
  private static final byte LOCAL_DATE = 14;
  private static final byte LOCAL_TIME = 15;
  private static final byte LOCAL_DATE_TIME = 16;
  private static final byte INSTANT = 17;
  private static final byte OFFSET_DATE_TIME = 18;
  private static final byte ZONED_DATE_TIME = 19;
  private static final byte OFFSET_TIME = 20;
  private static final byte DURATION = 21;
  private static final byte SQL_DATE = 22;
  private static final byte SQL_TIME = 23;
  private static final byte SQL_TIMESTAMP = 24;
  private static final byte UTIL_DATE = 25;
  private static final byte ENUM = 26;
  private static final byte ARRAY = 27;
  private static final byte UNFETCHED = 28;
  private static final byte UNKNOWN_BACKREF = 29;
  private static final byte CHARS = 30;

  /** The component types an array may have, by their index in the encoding. */
  private static final List<Class<?>> COMPONENTS = List.of(Object.class, Serializable.class,
      String.class, Integer.class, Long.class, Short.class, Byte.class, Boolean.class,
      Character.class, Float.class, Double.class, BigDecimal.class, BigInteger.class,
      UUID.class, LocalDate.class, LocalTime.class, LocalDateTime.class, Instant.class,
      OffsetDateTime.class, ZonedDateTime.class, OffsetTime.class, Duration.class,
      java.sql.Date.class, java.sql.Time.class, java.sql.Timestamp.class, java.util.Date.class);

  /** {@code StandardCacheEntryImpl(Serializable[], String, Object)}, package-private in Hibernate. */
  private static final Constructor<StandardCacheEntryImpl> ENTRY;

  static {
    try {
      ENTRY = StandardCacheEntryImpl.class.getDeclaredConstructor(Serializable[].class,
          String.class, Object.class);
      ENTRY.setAccessible(true);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new ExceptionInInitializerError("this Hibernate version's StandardCacheEntryImpl has"
          + " no (Serializable[], String, Object) constructor that can be made accessible: " + e);
    }
  }

  private final MappingFingerprints fingerprints;
  private final ClassLoader enums;

  EntryCodec(MappingFingerprints fingerprints, ClassLoader enums) {
    this.fingerprints = fingerprints;
    this.enums = enums;
  }

  @Override
  public byte[] encode(Object value) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
    DataOutputStream out = new DataOutputStream(bytes);
    try {
      out.writeByte(MAGIC);
      out.writeByte(VERSION);
      if (value instanceof StandardCacheEntryImpl entry) {
        out.writeByte(ENTITY);
        out.writeLong(fingerprints.fingerprint(entry.getSubclass()));
        writeString(out, entry.getSubclass());
        write(out, entry.getVersion(), 0);
        writeState(out, entry.getDisassembledState());
      } else if (value instanceof CollectionValue collection) {
        out.writeByte(COLLECTION);
        out.writeLong(fingerprints.collectionFingerprint(collection.role()));
        writeString(out, collection.role());
        writeState(out, collection.state());
      } else if (value instanceof NaturalIdValue naturalId) {
        out.writeByte(NATURAL_ID);
        out.writeLong(fingerprints.fingerprint(naturalId.entityName()));
        writeString(out, naturalId.entityName());
        write(out, naturalId.id(), 0);
      } else if (QueryItems.isItem(value)) {
        out.writeByte(QUERY);
        out.writeLong(fingerprints.all());
        writeString(out, "");
        out.writeLong(QueryItems.timestamp(value));
        List<?> results = QueryItems.results(value);
        out.writeInt(results.size());
        for (Object row : results) {
          write(out, row, 0);
        }
      } else if (value instanceof Long timestamp) {
        out.writeByte(TIMESTAMP);
        out.writeLong(0);
        writeString(out, "");
        out.writeLong(timestamp);
      } else {
        throw new IllegalArgumentException("not a value this region caches: "
            + (value == null ? "null" : value.getClass().getName())
            + " (structured or reference cache entries are not supported)");
      }
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
    }
    return bytes.toByteArray();
  }

  private void writeState(DataOutputStream out, Serializable[] state) throws IOException {
    out.writeInt(state.length);
    for (Serializable value : state) {
      write(out, value, 0);
    }
  }

  private Serializable[] readState(ByteBuffer in) {
    int count = count(in, 1);
    Serializable[] state = new Serializable[count];
    for (int i = 0; i < count; i++) {
      state[i] = (Serializable) read(in, 0);
    }
    return state;
  }

  @Override
  public Object decode(byte[] bytes, int offset, int length) {
    ByteBuffer in = ByteBuffer.wrap(bytes, offset, length);
    try {
      if (in.get() != MAGIC || in.get() != VERSION) {
        throw new IllegalArgumentException("not an entry of this format");
      }
      byte kind = in.get();
      long fingerprint = in.getLong();
      String name = readString(in);
      Object value = switch (kind) {
        case ENTITY -> {
          check(fingerprint, fingerprints.fingerprint(name), name);
          Object version = read(in, 0);
          yield ENTRY.newInstance(readState(in), name, version);
        }
        case COLLECTION -> {
          check(fingerprint, fingerprints.collectionFingerprint(name), name);
          yield new CollectionValue(name, readState(in));
        }
        case NATURAL_ID -> {
          check(fingerprint, fingerprints.fingerprint(name), name);
          yield new NaturalIdValue(name, read(in, 0));
        }
        case QUERY -> {
          check(fingerprint, fingerprints.all(), "the query cache");
          long timestamp = in.getLong();
          int count = count(in, 1);
          List<Object> results = new ArrayList<>(count);
          for (int i = 0; i < count; i++) {
            results.add(read(in, 0));
          }
          yield QueryItems.item(timestamp, results);
        }
        case TIMESTAMP -> in.getLong();
        default -> throw new IllegalArgumentException("not an entry of this format");
      };
      if (in.hasRemaining()) {
        throw new IllegalArgumentException("trailing bytes after the entry");
      }
      return value;
    } catch (BufferUnderflowException | ClassCastException e) {
      throw new IllegalArgumentException("a truncated or malformed entry", e);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("StandardCacheEntryImpl could not be created", e);
    }
  }

  private static void check(long written, long running, String name) {
    if (written != running) {
      throw new IllegalArgumentException("an entry of " + name + " written by another version"
          + " of its mapping");
    }
  }

  private void write(DataOutputStream out, Object value, int depth) throws IOException {
    if (depth > MAX_DEPTH) {
      throw new IllegalArgumentException("values nested deeper than " + MAX_DEPTH);
    }
    if (value == null) {
      out.writeByte(NULL);
    } else if (value == LazyPropertyInitializer.UNFETCHED_PROPERTY) {
      out.writeByte(UNFETCHED);
    } else if (value == PropertyAccessStrategyBackRefImpl.UNKNOWN) {
      out.writeByte(UNKNOWN_BACKREF);
    } else if (value instanceof String s) {
      out.writeByte(STRING);
      writeString(out, s);
    } else if (value instanceof Integer i) {
      out.writeByte(INT);
      out.writeInt(i);
    } else if (value instanceof Long l) {
      out.writeByte(LONG);
      out.writeLong(l);
    } else if (value instanceof Short s) {
      out.writeByte(SHORT);
      out.writeShort(s);
    } else if (value instanceof Byte b) {
      out.writeByte(BYTE);
      out.writeByte(b);
    } else if (value instanceof Boolean b) {
      out.writeByte(BOOLEAN);
      out.writeBoolean(b);
    } else if (value instanceof Character c) {
      out.writeByte(CHAR);
      out.writeChar(c);
    } else if (value instanceof Float f) {
      out.writeByte(FLOAT);
      out.writeFloat(f);
    } else if (value instanceof Double d) {
      out.writeByte(DOUBLE);
      out.writeDouble(d);
    } else if (value instanceof BigDecimal d) {
      out.writeByte(BIG_DECIMAL);
      out.writeInt(d.scale());
      writeBytes(out, d.unscaledValue().toByteArray());
    } else if (value instanceof BigInteger i) {
      out.writeByte(BIG_INTEGER);
      writeBytes(out, i.toByteArray());
    } else if (value instanceof UUID u) {
      out.writeByte(UUID_TAG);
      out.writeLong(u.getMostSignificantBits());
      out.writeLong(u.getLeastSignificantBits());
    } else if (value instanceof byte[] b) {
      out.writeByte(BYTES);
      writeBytes(out, b);
    } else if (value instanceof char[] c) {
      out.writeByte(CHARS);
      writeString(out, new String(c));
    } else if (value instanceof LocalDate d) {
      out.writeByte(LOCAL_DATE);
      out.writeLong(d.toEpochDay());
    } else if (value instanceof LocalTime t) {
      out.writeByte(LOCAL_TIME);
      out.writeLong(t.toNanoOfDay());
    } else if (value instanceof LocalDateTime t) {
      out.writeByte(LOCAL_DATE_TIME);
      out.writeLong(t.toLocalDate().toEpochDay());
      out.writeLong(t.toLocalTime().toNanoOfDay());
    } else if (value instanceof Instant t) {
      out.writeByte(INSTANT);
      out.writeLong(t.getEpochSecond());
      out.writeInt(t.getNano());
    } else if (value instanceof OffsetDateTime t) {
      out.writeByte(OFFSET_DATE_TIME);
      out.writeLong(t.toLocalDate().toEpochDay());
      out.writeLong(t.toLocalTime().toNanoOfDay());
      out.writeInt(t.getOffset().getTotalSeconds());
    } else if (value instanceof ZonedDateTime t) {
      out.writeByte(ZONED_DATE_TIME);
      out.writeLong(t.toLocalDate().toEpochDay());
      out.writeLong(t.toLocalTime().toNanoOfDay());
      out.writeInt(t.getOffset().getTotalSeconds());
      writeString(out, t.getZone().getId());
    } else if (value instanceof OffsetTime t) {
      out.writeByte(OFFSET_TIME);
      out.writeLong(t.toLocalTime().toNanoOfDay());
      out.writeInt(t.getOffset().getTotalSeconds());
    } else if (value instanceof Duration d) {
      out.writeByte(DURATION);
      out.writeLong(d.getSeconds());
      out.writeInt(d.getNano());
    } else if (value instanceof java.sql.Timestamp t) {
      out.writeByte(SQL_TIMESTAMP);
      out.writeLong(t.getTime());
      out.writeInt(t.getNanos());
    } else if (value instanceof java.sql.Date d) {
      out.writeByte(SQL_DATE);
      out.writeLong(d.getTime());
    } else if (value instanceof java.sql.Time t) {
      out.writeByte(SQL_TIME);
      out.writeLong(t.getTime());
    } else if (value.getClass() == java.util.Date.class) {
      out.writeByte(UTIL_DATE);
      out.writeLong(((java.util.Date) value).getTime());
    } else if (value instanceof Enum<?> e) {
      out.writeByte(ENUM);
      writeString(out, e.getDeclaringClass().getName());
      writeString(out, e.name());
    } else if (value instanceof Object[] array) {
      int component = COMPONENTS.indexOf(array.getClass().getComponentType());
      if (component < 0) {
        throw new IllegalArgumentException("an array of " + array.getClass().getComponentType()
            .getName() + " is not on the allow-list of cached types");
      }
      out.writeByte(ARRAY);
      out.writeByte(component);
      out.writeInt(array.length);
      for (Object element : array) {
        write(out, element, depth + 1);
      }
    } else {
      throw new IllegalArgumentException(value.getClass().getName()
          + " is not on the allow-list of cached types");
    }
  }

  private Object read(ByteBuffer in, int depth) {
    if (depth > MAX_DEPTH) {
      throw new IllegalArgumentException("values nested deeper than " + MAX_DEPTH);
    }
    byte tag = in.get();
    return switch (tag) {
      case NULL -> null;
      case UNFETCHED -> LazyPropertyInitializer.UNFETCHED_PROPERTY;
      case UNKNOWN_BACKREF -> PropertyAccessStrategyBackRefImpl.UNKNOWN;
      case STRING -> readString(in);
      case INT -> in.getInt();
      case LONG -> in.getLong();
      case SHORT -> in.getShort();
      case BYTE -> in.get();
      case BOOLEAN -> switch (in.get()) {
        case 0 -> Boolean.FALSE;
        case 1 -> Boolean.TRUE;
        default -> throw new IllegalArgumentException("not a boolean");
      };
      case CHAR -> in.getChar();
      case FLOAT -> in.getFloat();
      case DOUBLE -> in.getDouble();
      case BIG_DECIMAL -> {
        int scale = in.getInt();
        yield new BigDecimal(new BigInteger(readBytes(in)), scale);
      }
      case BIG_INTEGER -> new BigInteger(readBytes(in));
      case UUID_TAG -> new UUID(in.getLong(), in.getLong());
      case BYTES -> readBytes(in);
      case CHARS -> readString(in).toCharArray();
      case LOCAL_DATE -> LocalDate.ofEpochDay(in.getLong());
      case LOCAL_TIME -> LocalTime.ofNanoOfDay(in.getLong());
      case LOCAL_DATE_TIME -> LocalDateTime.of(LocalDate.ofEpochDay(in.getLong()),
          LocalTime.ofNanoOfDay(in.getLong()));
      case INSTANT -> Instant.ofEpochSecond(in.getLong(), in.getInt());
      case OFFSET_DATE_TIME -> OffsetDateTime.of(LocalDate.ofEpochDay(in.getLong()),
          LocalTime.ofNanoOfDay(in.getLong()), ZoneOffset.ofTotalSeconds(in.getInt()));
      case ZONED_DATE_TIME -> {
        LocalDateTime local = LocalDateTime.of(LocalDate.ofEpochDay(in.getLong()),
            LocalTime.ofNanoOfDay(in.getLong()));
        ZoneOffset offset = ZoneOffset.ofTotalSeconds(in.getInt());
        yield ZonedDateTime.ofStrict(local, offset, ZoneId.of(readString(in)));
      }
      case OFFSET_TIME -> OffsetTime.of(LocalTime.ofNanoOfDay(in.getLong()),
          ZoneOffset.ofTotalSeconds(in.getInt()));
      case DURATION -> Duration.ofSeconds(in.getLong(), in.getInt());
      case SQL_TIMESTAMP -> {
        java.sql.Timestamp t = new java.sql.Timestamp(in.getLong());
        t.setNanos(in.getInt());
        yield t;
      }
      case SQL_DATE -> new java.sql.Date(in.getLong());
      case SQL_TIME -> new java.sql.Time(in.getLong());
      case UTIL_DATE -> new java.util.Date(in.getLong());
      case ENUM -> enumConstant(readString(in), readString(in));
      case ARRAY -> {
        int component = in.get();
        if (component < 0 || component >= COMPONENTS.size()) {
          throw new IllegalArgumentException("not a component type of the allow-list");
        }
        int count = count(in, 1);
        Object[] array = (Object[]) Array.newInstance(COMPONENTS.get(component), count);
        for (int i = 0; i < count; i++) {
          array[i] = read(in, depth + 1); // ArrayStoreException for an element of another type
        }
        yield array;
      }
      default -> throw new IllegalArgumentException("unknown value tag " + tag);
    };
  }

  private Object enumConstant(String className, String name) {
    Class<?> type;
    try {
      type = Class.forName(className, false, enums); // not initialized unless it is an enum
    } catch (ClassNotFoundException | LinkageError e) {
      throw new IllegalArgumentException("an enum class that is not there: " + className, e);
    }
    if (!type.isEnum()) {
      throw new IllegalArgumentException(className + " is not an enum");
    }
    for (Object constant : type.getEnumConstants()) {
      if (((Enum<?>) constant).name().equals(name)) {
        return constant;
      }
    }
    throw new IllegalArgumentException(className + " has no constant " + name);
  }

  /** Reads a count of items of at least {@code minBytes} each, no more than the bytes left. */
  private static int count(ByteBuffer in, int minBytes) {
    int count = in.getInt();
    if (count < 0 || (long) count * minBytes > in.remaining()) {
      throw new IllegalArgumentException("a count beyond the entry's length: " + count);
    }
    return count;
  }

  private static void writeBytes(DataOutputStream out, byte[] bytes) throws IOException {
    out.writeInt(bytes.length);
    out.write(bytes);
  }

  private static byte[] readBytes(ByteBuffer in) {
    byte[] bytes = new byte[count(in, 1)];
    in.get(bytes);
    return bytes;
  }

  private static void writeString(DataOutputStream out, String s) throws IOException {
    writeBytes(out, s.getBytes(StandardCharsets.UTF_8));
  }

  private static String readString(ByteBuffer in) {
    return new String(readBytes(in), StandardCharsets.UTF_8);
  }

  @Override
  public String toString() {
    return "EntryCodec[Hibernate entity entries, allow-listed types]";
  }
}
