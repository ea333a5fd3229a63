package io.sustainablecache.jackson;

import io.sustainablecache.ValueCodec;
import java.util.Objects;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.StreamWriteConstraints;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.DeserializationConfig;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.exc.InvalidDefinitionException;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.type.TypeFactory;

/**
 * A {@link ValueCodec} that stores values as UTF-8 JSON through Jackson 3 ({@code
 * tools.jackson}), and treats what it reads back as untrusted input.
 *
 * <pre>{@code
 * ValueCodec<Item> items = JacksonCodec.of(Item.class);
 * ValueCodec<List<Item>> lists = JacksonCodec.of(new TypeReference<List<Item>>() {});
 * ValueCodec<Item> withYours = JacksonCodec.of(springsJsonMapper, Item.class);
 * }</pre>
 *
 * <p><b>Thread-safety.</b> Instances are immutable and thread-safe; share one per value type. The
 * {@link ObjectReader} and {@link ObjectWriter} are created once, at construction, so {@link
 * #encode} and {@link #decode} do no configuration work.
 *
 * <p><b>Untrusted bytes.</b> Whoever can write to the cache server can put any bytes under a key,
 * and {@link #decode} is where the application reads them. The codec therefore:
 *
 * <ul>
 *   <li>never lets the JSON name the classes to instantiate: the default mapper has no
 *       polymorphic default typing, and a caller's mapper that has default typing activated is
 *       refused at construction ({@link IllegalArgumentException}) unless the caller opts in
 *       with {@link Builder#allowDefaultTyping()}. Otherwise a planted {@code
 *       ["some.gadget.Class", {...}]} would instantiate whatever "gadget" class the class path
 *       offers, and gadget chains run code. (Polymorphism declared on a type with {@code
 *       @JsonTypeInfo} stays the mapper's business: Jackson 3's default {@link
 *       tools.jackson.databind.jsontype.PolymorphicTypeValidator} refuses class names for base
 *       types such as {@code Object} and {@code Serializable}; a mapper configured with a
 *       permissive validator is not detected.)</li>
 *   <li>bounds what a read can cost with Jackson's {@link StreamReadConstraints} (see {@link
 *       #defaultLimits()}): the document length is checked before parsing, and nesting depth,
 *       string, number and property-name lengths while parsing, so a planted 100,000-deep {@code
 *       [[[[...} fails at the 101st level. (Bound into a recursive type, such as a tree of
 *       records, it would otherwise overflow the stack, and a {@link StackOverflowError} is not a
 *       {@link RuntimeException}: the cache could not turn it into a miss.)</li>
 *   <li>rejects trailing content after the value ({@link
 *       DeserializationFeature#FAIL_ON_TRAILING_TOKENS}, enabled on every reader), and a JSON
 *       {@code null} (the cache never stores {@code null}).</li>
 *   <li>rejects a floating-point number where an integer is expected ({@link
 *       DeserializationFeature#ACCEPT_FLOAT_AS_INT} disabled on every reader): a planted {@code
 *       1e99999} bound to a {@code BigInteger} would otherwise expand to 100,000 digits on every
 *       read. This codec writes integers as integers, so only
 *       foreign or planted bytes are refused (as misses).</li>
 *   <li>rejects a {@code BigDecimal} whose scale is beyond ±10,000 (a planted {@code
 *       1e999999999}, 11 characters, is a {@code BigDecimal} of scale −999,999,999, whose {@code
 *       toPlainString()} would build a billion digits in the caller's hands): values of type
 *       {@code BigDecimal}, from a number or a string, anywhere in the value, and of type {@code
 *       Number} or {@code Object} (with their maps and lists) where the mapper makes {@code
 *       BigDecimal}s of floats ({@code USE_BIG_DECIMAL_FOR_FLOATS}; a {@code JsonNode} is not
 *       checked). A module added to the mapper does it ({@code
 *       "sustainable-cache-decimal-scale"}), and {@link #encode} refuses such a value, so
 *       that it is not cached only to be rejected by every read.</li>
 * </ul>
 *
 * <p>Rejected input throws an {@link IllegalArgumentException}, which the cache turns into a miss
 * counted in {@code corrupt_entry}. Its message names the value type and either the limit
 * exceeded or the Jackson exception type and position, but never quotes the stored bytes, and the
 * Jackson exception (whose
 * message may quote them) is not attached as the cause: the cache logs decode failures at DEBUG,
 * and its logs never contain values.
 *
 * <p><b>Writing what it can read.</b> The same limits hold for {@link #encode}: it rejects a value
 * whose JSON is nested deeper than the limit (while writing) or whose JSON has a longer document,
 * string, number or name than the limits allow (checked by a streaming pass over the output, with
 * no data binding), and JSON that is {@code null}. Otherwise a value could be cached that every
 * later read rejects, and the key would be reloaded on every read while counting as corrupt; this
 * way the cache skips that one write and counts it ({@code skipped_write}).
 *
 * <p><b>The default mapper</b> is a plain {@link JsonMapper} with Jackson 3's defaults (records,
 * {@code java.time} types and {@code Optional} supported out of the box), {@link
 * DeserializationFeature#FAIL_ON_UNKNOWN_PROPERTIES} enabled (Jackson 3 disables it by default;
 * enabled, another type's JSON under the key is rejected instead of read as an object of empty
 * fields), and the limits. A type that must tolerate properties written by a newer version of
 * itself during a rolling deployment can say so with {@code @JsonIgnoreProperties(ignoreUnknown =
 * true)}; otherwise those reads miss, and reload, until the deployment completes. Likewise, with
 * Jackson 3's default {@link DeserializationFeature#FAIL_ON_NULL_FOR_PRIMITIVES}, JSON that lacks
 * a primitive record component (an {@code int} added in a newer version) is rejected: give
 * components added later a wrapper type, or change the cache's {@code namespace}.
 *
 * <p><b>A caller's mapper</b> (for example the {@code JsonMapper} bean of a Spring Boot 4
 * application) keeps all of its configuration, modules and features, with four exceptions: its
 * stream factory is rebuilt with this codec's read limits (replacing the mapper's own read
 * constraints) and a write nesting limit no larger than the read one; {@link
 * DeserializationFeature#FAIL_ON_TRAILING_TOKENS} is enabled on the reader; the module that
 * checks {@code BigDecimal} scales is added; and default typing is refused as described above. The caller's mapper itself is not modified. Only plain {@link
 * JsonMapper} instances over a plain {@link JsonFactory} can be rebuilt like this; subclasses of
 * either are refused.
 *
 * <p><b>Why Jackson 3.</b> Spring Boot 4 moved to Jackson 3 (group {@code tools.jackson.core},
 * packages {@code tools.jackson.*}); Spring Boot 4.1, the newest Spring Boot release line when
 * this module was written, manages Jackson 3.1 by default ({@code jackson-bom.version} 3.1.7 in
 * {@code spring-boot-dependencies} 4.1.2), and Jackson 2 (2.21.7) alongside it for its {@code
 * spring-boot-jackson2} compatibility module. A service that uses Spring Boot's mapper thus has a
 * {@code tools.jackson.databind.json.JsonMapper} it can hand to {@link #of(JsonMapper, Class)} as
 * it is.
 *
 * @param <V> the value type
 */
public final class JacksonCodec<V> implements ValueCodec<V> {

  /** 1 MiB: memcached's default item size, above the cache's default {@code maxValueSize}. */
  private static final int DEFAULT_MAX_DOCUMENT_BYTES = 1 << 20;

  private static final StreamReadConstraints DEFAULT_LIMITS = StreamReadConstraints.builder()
      .maxDocumentLength(DEFAULT_MAX_DOCUMENT_BYTES)
      .maxNestingDepth(100)
      .maxStringLength(256 * 1024)
      .maxNumberLength(100)
      .maxNameLength(4096)
      .build();

  /** The default mapper with the default limits, created on first use and then shared. */
  private static final class DefaultMapper {
    static final JsonMapper INSTANCE = defaultMapper(DEFAULT_LIMITS);
  }

  private final JavaType type;
  private final String typeName;
  private final StreamReadConstraints limits;
  private volatile boolean readBackChecked;
  private final JsonFactory factory;
  private final ObjectReader reader;
  private final ObjectWriter writer;

  private JacksonCodec(JsonMapper mapper, JavaType type, StreamReadConstraints limits) {
    this.type = type;
    this.typeName = type.toCanonical();
    this.limits = limits;
    this.factory = mapper.tokenStreamFactory();
    this.reader = mapper.readerFor(type).with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .without(DeserializationFeature.ACCEPT_FLOAT_AS_INT);
    this.writer = mapper.writerFor(type);
  }

  // ---------------------------------------------------------------------------------------------
  // Factories

  /**
   * The read limits a codec applies unless {@link Builder#limits} says otherwise. Each is tighter
   * than Jackson's own default and generous for cached data transfer objects:
   *
   * <table>
   *   <caption>Default limits</caption>
   *   <tr><th>limit</th><th>default</th><th>Jackson 3.1's default</th><th>why</th></tr>
   *   <tr><td>document length</td><td>1 MiB (1,048,576 bytes)</td><td>none</td>
   *       <td>memcached's default item size; the cache's default {@code maxValueSize} is below
   *       it. Checked before parsing.</td></tr>
   *   <tr><td>nesting depth</td><td>100 levels</td><td>500</td>
   *       <td>Protocol Buffers' default recursion limit; data transfer objects nest a few
   *       levels. Bounds the parser's and data binding's recursion.</td></tr>
   *   <tr><td>string length</td><td>262,144 chars (256 Ki)</td><td>100,000,000</td>
   *       <td>a quarter of the document; text that long belongs in {@link ValueCodec#utf8()}.
   *       </td></tr>
   *   <tr><td>number length</td><td>100 chars</td><td>1,000</td>
   *       <td>far above any {@code long} (20) or {@code double} (24); bounds the super-linear
   *       cost of parsing {@code BigInteger} and {@code BigDecimal}.</td></tr>
   *   <tr><td>property name length</td><td>4,096 chars</td><td>50,000</td>
   *       <td>property names are short; map keys such as URLs fit.</td></tr>
   * </table>
   *
   * <p>To change one, start from these: {@code
   * JacksonCodec.defaultLimits().rebuild().maxStringLength(1 << 20).build()}.
   *
   * @return the shared, immutable default limits
   */
  public static StreamReadConstraints defaultLimits() {
    return DEFAULT_LIMITS;
  }

  /**
   * A codec for a non-generic type, with the default mapper and limits.
   *
   * @param type the value type, e.g. a record; for a generic type use {@link
   *     #of(TypeReference)}
   * @param <V> the value type
   * @return a new thread-safe codec
   * @throws NullPointerException if {@code type} is {@code null}
   */
  public static <V> JacksonCodec<V> of(Class<V> type) {
    return builder(type).build();
  }

  /**
   * A codec for a generic type, with the default mapper and limits: {@code
   * JacksonCodec.of(new TypeReference<List<Item>>() {})}.
   *
   * @param type the value type, captured by an anonymous subclass
   * @param <V> the value type
   * @return a new thread-safe codec
   * @throws NullPointerException if {@code type} is {@code null}
   */
  public static <V> JacksonCodec<V> of(TypeReference<V> type) {
    return builder(type).build();
  }

  /**
   * A codec for a non-generic type with the caller's mapper (its modules, naming strategy and
   * features) and the default limits.
   *
   * @param mapper the mapper to read and write with; it is not modified (see the class
   *     documentation for what the codec overrides)
   * @param type the value type
   * @param <V> the value type
   * @return a new thread-safe codec
   * @throws NullPointerException if an argument is {@code null}
   * @throws IllegalArgumentException if the mapper has polymorphic default typing activated (see
   *     {@link Builder#allowDefaultTyping()}), or if it, or its stream factory, is a subclass that
   *     cannot be rebuilt with read limits
   */
  public static <V> JacksonCodec<V> of(JsonMapper mapper, Class<V> type) {
    return builder(type).mapper(mapper).build();
  }

  /**
   * A codec for a generic type with the caller's mapper and the default limits: {@code
   * JacksonCodec.of(mapper, new TypeReference<List<Item>>() {})}.
   *
   * @param mapper the mapper to read and write with; it is not modified
   * @param type the value type, captured by an anonymous subclass
   * @param <V> the value type
   * @return a new thread-safe codec
   * @throws NullPointerException if an argument is {@code null}
   * @throws IllegalArgumentException as {@link #of(JsonMapper, Class)}
   */
  public static <V> JacksonCodec<V> of(JsonMapper mapper, TypeReference<V> type) {
    return builder(type).mapper(mapper).build();
  }

  /**
   * A codec for a type the caller constructed, e.g. with {@code
   * mapper.getTypeFactory().constructCollectionType(List.class, Item.class)}, with the caller's
   * mapper and the default limits. {@code V} is not checked against {@code type}: a mismatch
   * surfaces as a {@link ClassCastException} where the caller uses the value.
   *
   * @param mapper the mapper to read and write with; it is not modified
   * @param type the value type
   * @param <V> the value type {@code type} describes
   * @return a new thread-safe codec
   * @throws NullPointerException if an argument is {@code null}
   * @throws IllegalArgumentException as {@link #of(JsonMapper, Class)}
   */
  public static <V> JacksonCodec<V> of(JsonMapper mapper, JavaType type) {
    return JacksonCodec.<V>builder(type).mapper(mapper).build();
  }

  /**
   * Starts a codec for a non-generic type, to set a mapper, limits or {@link
   * Builder#allowDefaultTyping()}.
   *
   * @param type the value type
   * @param <V> the value type
   * @return a new builder (not thread-safe; use it on one thread)
   * @throws NullPointerException if {@code type} is {@code null}
   */
  public static <V> Builder<V> builder(Class<V> type) {
    Objects.requireNonNull(type, "type");
    return new Builder<>(factory -> factory.constructType(type));
  }

  /**
   * Starts a codec for a generic type.
   *
   * @param type the value type, captured by an anonymous subclass
   * @param <V> the value type
   * @return a new builder (not thread-safe; use it on one thread)
   * @throws NullPointerException if {@code type} is {@code null}
   */
  public static <V> Builder<V> builder(TypeReference<V> type) {
    Objects.requireNonNull(type, "type");
    return new Builder<>(factory -> factory.constructType(type));
  }

  /**
   * Starts a codec for a type the caller constructed. {@code V} is not checked against {@code
   * type}.
   *
   * @param type the value type
   * @param <V> the value type {@code type} describes
   * @return a new builder (not thread-safe; use it on one thread)
   * @throws NullPointerException if {@code type} is {@code null}
   */
  public static <V> Builder<V> builder(JavaType type) {
    Objects.requireNonNull(type, "type");
    return new Builder<>(factory -> type);
  }

  // ---------------------------------------------------------------------------------------------
  // ValueCodec

  /**
   * Writes the value as compact UTF-8 JSON, through an {@link ObjectWriter} for {@link #type()}
   * (so a subclass instance is written with the properties of the declared type).
   *
   * @param value the value, never {@code null}
   * @return new bytes, at most the limits' document length
   * @throws NullPointerException if {@code value} is {@code null}
   * @throws IllegalArgumentException if Jackson cannot serialize the value (the Jackson exception
   *     is the cause), or its JSON is {@code null} or exceeds a read limit, so that {@link
   *     #decode} would reject it
   */
  @Override
  public byte[] encode(V value) {
    Objects.requireNonNull(value, "value");
    byte[] json;
    try {
      json = writer.writeValueAsBytes(value);
    } catch (JacksonException e) {
      StreamConstraintsException limit = constraintViolation(e);
      if (limit != null) {
        throw new IllegalArgumentException("a " + typeName + " is not encoded: its JSON exceeds "
            + "a read limit (" + limit.getOriginalMessage() + ")", e);
      }
      throw new IllegalArgumentException("a " + typeName + " could not be encoded as JSON ("
          + e.getClass().getSimpleName() + ")", e);
    }
    checkReadable(json);
    if (!readBackChecked) {
      checkReadsBack(json);
    }
    return json;
  }

  /**
   * The first value this codec writes is read back once: a type Jackson can write but not read
   * (a derived getter with no setter, say) would otherwise be cached and then rejected by every
   * read, so the cache would silently stop caching it. Thread-safe: at worst a few concurrent
   * first writes each check.
   */
  private void checkReadsBack(byte[] json) {
    try {
      reader.readValue(json);
    } catch (JacksonException e) {
      throw new IllegalArgumentException("a " + typeName + " can be written as JSON but not read"
          + " back, so it cannot be cached: " + e.getClass().getSimpleName() + " ("
          + e.getOriginalMessage() + "). Give the type a creator (@JsonCreator, a record, or a"
          + " no-argument constructor with setters) and ignore derived properties"
          + " (@JsonIgnore)", e);
    }
    readBackChecked = true;
  }

  /**
   * Reads a value from {@code length} bytes of {@code bytes} starting at {@code offset}; bytes
   * outside that slice are not read. The slice must hold exactly one JSON value of {@link
   * #type()}, within the limits, and nothing else but whitespace.
   *
   * @param bytes the stored item; not modified or retained
   * @param offset where the JSON starts
   * @param length the JSON's length in bytes
   * @return the value, never {@code null}
   * @throws NullPointerException if {@code bytes} is {@code null}
   * @throws IndexOutOfBoundsException if the slice is not within {@code bytes}
   * @throws IllegalArgumentException if the slice is longer than the document length limit, is
   *     not valid JSON, exceeds a read limit, has content after the value, is JSON {@code null},
   *     or does not bind to {@link #type()} (unknown properties included, with the default
   *     mapper); the message never quotes the bytes
   */
  @Override
  public V decode(byte[] bytes, int offset, int length) {
    Objects.requireNonNull(bytes, "bytes");
    Objects.checkFromIndexSize(offset, length, bytes.length);
    if (limits.hasMaxDocumentLength() && length > limits.getMaxDocumentLength()) {
      throw new IllegalArgumentException("stored JSON is " + length + " bytes, over the "
          + "document length limit of " + limits.getMaxDocumentLength() + " bytes (" + typeName
          + ")");
    }
    V value;
    try {
      value = reader.readValue(bytes, offset, length);
    } catch (JacksonException e) {
      throw rejected(e);
    }
    if (value == null) {
      throw new IllegalArgumentException("stored JSON is null, not a " + typeName);
    }
    return value;
  }

  // ---------------------------------------------------------------------------------------------
  // Accessors

  /**
   * The value type this codec reads and writes.
   *
   * @return the type, as resolved by the codec's mapper
   */
  public JavaType type() {
    return type;
  }

  /**
   * The read limits this codec applies to {@link #decode} (and, so that it can read back what it
   * wrote, to {@link #encode}).
   *
   * @return the immutable limits
   */
  public StreamReadConstraints limits() {
    return limits;
  }

  /**
   * Names the value type, e.g. {@code JacksonCodec[java.util.List<com.example.Item>]}.
   *
   * @return a description; never contains values
   */
  @Override
  public String toString() {
    return "JacksonCodec[" + typeName + "]";
  }

  // ---------------------------------------------------------------------------------------------
  // Builder

  /**
   * Configures a {@link JacksonCodec}: the mapper, the read limits, and the explicit opt-in to a
   * mapper with polymorphic default typing. Each setter may be called once. Not thread-safe:
   * build on one thread, then share the codec.
   *
   * @param <V> the value type
   */
  public static final class Builder<V> {
    private final java.util.function.Function<TypeFactory, JavaType> typeResolver;
    private JsonMapper mapper;
    private StreamReadConstraints limits;
    private boolean allowDefaultTyping;

    private Builder(java.util.function.Function<TypeFactory, JavaType> typeResolver) {
      this.typeResolver = typeResolver;
    }

    /**
     * Reads and writes with the caller's mapper instead of the default one. The mapper is not
     * modified; the codec uses a copy of it rebuilt with the read limits (see the class
     * documentation for everything the codec overrides).
     *
     * @param mapper a plain {@link JsonMapper}, e.g. Spring Boot's
     * @return this builder
     * @throws NullPointerException if {@code mapper} is {@code null}
     * @throws IllegalStateException if a mapper was already set
     */
    public Builder<V> mapper(JsonMapper mapper) {
      Objects.requireNonNull(mapper, "mapper");
      if (this.mapper != null) {
        throw new IllegalStateException("mapper was already set");
      }
      this.mapper = mapper;
      return this;
    }

    /**
     * Read limits instead of {@link JacksonCodec#defaultLimits()}, e.g. {@code
     * JacksonCodec.defaultLimits().rebuild().maxDocumentLength(4 << 20).build()} for a cache
     * whose {@code maxValueSize} was raised to 4 MiB. A limit without a maximum document length
     * leaves the payload's length, and so the store's item size, as the only bound.
     *
     * @param limits the limits for reading (and for checking what is written)
     * @return this builder
     * @throws NullPointerException if {@code limits} is {@code null}
     * @throws IllegalStateException if limits were already set
     */
    public Builder<V> limits(StreamReadConstraints limits) {
      Objects.requireNonNull(limits, "limits");
      if (this.limits != null) {
        throw new IllegalStateException("limits were already set");
      }
      this.limits = limits;
      return this;
    }

    /**
     * Accepts a {@link #mapper mapper} that has polymorphic default typing activated, which
     * {@link #build()} otherwise refuses.
     *
     * <p>With default typing the JSON names the classes Jackson instantiates, and anyone who can
     * write to the cache server controls the JSON: only call this if the mapper's {@link
     * tools.jackson.databind.jsontype.PolymorphicTypeValidator} is a strict allow-list of your
     * own types (e.g. {@code BasicPolymorphicTypeValidator.builder().allowIfSubType(
     * "com.example.dto.")}), never with an allow-everything validator. Prefer polymorphism by
     * name ({@code @JsonTypeInfo(use = JsonTypeInfo.Id.NAME)} with registered subtypes), which
     * needs no opt-in.
     *
     * @return this builder
     */
    public Builder<V> allowDefaultTyping() {
      this.allowDefaultTyping = true;
      return this;
    }

    /**
     * Builds the codec: resolves the type, rebuilds the mapper with the limits, and creates the
     * reader and writer.
     *
     * @return a new thread-safe codec
     * @throws IllegalArgumentException if the mapper has polymorphic default typing activated and
     *     {@link #allowDefaultTyping()} was not called, or if the mapper or its stream factory is
     *     a subclass that cannot be rebuilt
     */
    public JacksonCodec<V> build() {
      StreamReadConstraints readLimits = limits == null ? DEFAULT_LIMITS : limits;
      JsonMapper effective;
      if (mapper == null) {
        effective = readLimits == DEFAULT_LIMITS ? DefaultMapper.INSTANCE
            : defaultMapper(readLimits);
      } else {
        effective = withLimits(mapper, readLimits);
      }
      JavaType type = typeResolver.apply(effective.getTypeFactory());
      if (!allowDefaultTyping) {
        refuseDefaultTyping(effective, type);
      }
      refuseUnconstructible(effective, type);
      return new JacksonCodec<>(effective, type, readLimits);
    }
  }

  /**
   * Fails at build time for a type Jackson cannot construct at all (no creator, no usable
   * constructor): a dry read of {@code {}} fails with an {@link InvalidDefinitionException} for
   * exactly those; any other outcome (a value, a mismatch) says nothing against the type.
   */
  private static void refuseUnconstructible(JsonMapper mapper, JavaType type) {
    try {
      mapper.readerFor(type).readValue("{}");
    } catch (InvalidDefinitionException e) {
      throw new IllegalArgumentException("Jackson cannot read a " + type.toCanonical()
          + " back, so the cache could write it but never read it: "
          + e.getOriginalMessage() + ". Give the type a creator (@JsonCreator, a record, or a"
          + " no-argument constructor with setters)", e);
    } catch (RuntimeException e) {
      // not an object, a missing property, a creator that rejects nulls: the type is readable
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Mappers

  private static JsonMapper defaultMapper(StreamReadConstraints limits) {
    JsonFactory factory = JsonFactory.builder()
        .streamReadConstraints(limits)
        .streamWriteConstraints(writeLimits(StreamWriteConstraints.defaults(), limits))
        .build();
    return JsonMapper.builder(factory)
        .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .addModule(DecimalScale.MODULE)
        .build();
  }

  /** The caller's mapper, rebuilt over a copy of its stream factory that has the limits. */
  private static JsonMapper withLimits(JsonMapper mapper, StreamReadConstraints limits) {
    if (mapper.getClass() != JsonMapper.class) {
      throw new IllegalArgumentException("cannot apply read limits to a "
          + mapper.getClass().getName() + ": pass a plain " + JsonMapper.class.getName()
          + " (subclasses would be rebuilt as plain JsonMappers, losing their overrides)");
    }
    JsonFactory callers = mapper.tokenStreamFactory();
    if (callers.getClass() != JsonFactory.class) {
      throw new IllegalArgumentException("cannot apply read limits to a mapper over a "
          + callers.getClass().getName() + ": pass a JsonMapper over a plain "
          + JsonFactory.class.getName());
    }
    JsonFactory limited = callers.rebuild()
        .streamReadConstraints(limits)
        .streamWriteConstraints(writeLimits(callers.streamWriteConstraints(), limits))
        .build();
    return new LimitedMapperBuilder(mapper, limited).addModule(DecimalScale.MODULE).build();
  }

  /** Writes no deeper than the codec reads, so an over-deep value fails while being written. */
  private static StreamWriteConstraints writeLimits(StreamWriteConstraints base,
      StreamReadConstraints limits) {
    return base.rebuild()
        .maxNestingDepth(Math.min(base.getMaxNestingDepth(), limits.getMaxNestingDepth()))
        .build();
  }

  /**
   * Jackson 3 has no public way to swap the stream factory of an existing mapper: {@code
   * rebuild()} keeps the old factory, and {@code JsonMapper.builder(factory)} starts from
   * defaults. This builder restores the mapper's saved configuration (modules included, applied
   * again at build time exactly as {@code rebuild().build()} would) and replaces the factory.
   */
  private static final class LimitedMapperBuilder extends JsonMapper.Builder {
    LimitedMapperBuilder(JsonMapper mapper, JsonFactory factory) {
      super(savedState(mapper));
      _streamFactory = factory;
    }

    private static StateImpl savedState(JsonMapper mapper) {
      return (StateImpl) mapper.rebuild().saveStateApplyModules();
    }
  }

  private static void refuseDefaultTyping(JsonMapper mapper, JavaType type) {
    DeserializationConfig config = mapper.deserializationConfig();
    if (config.getDefaultTyper(type) != null) {
      throw new IllegalArgumentException("refusing a JsonMapper that has polymorphic default "
          + "typing activated (activateDefaultTyping, activateDefaultTypingAsProperty or "
          + "setDefaultTyping) for "
          + type.toCanonical() + ": cached bytes are untrusted (anyone who can write to the cache "
          + "server can plant a value), and JSON that names classes lets them instantiate "
          + "\"gadget\" classes on the class path, which can run code. Use a mapper without "
          + "default typing (@JsonTypeInfo(use = Id.NAME) with registered subtypes needs none), "
          + "or, if its PolymorphicTypeValidator is a strict allow-list of your own types, opt "
          + "in with JacksonCodec.builder(type).mapper(mapper).allowDefaultTyping()");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Errors and the write-side check

  /**
   * Makes sure {@link #decode} would accept {@code json} as far as syntax and limits go: the
   * document length, then one streaming pass (no data binding) that materializes every string
   * so its length is checked, as data binding would, and every floating-point number as a
   * {@code BigDecimal}, whose scale is checked.
   */
  private void checkReadable(byte[] json) {
    if (limits.hasMaxDocumentLength() && json.length > limits.getMaxDocumentLength()) {
      throw new IllegalArgumentException("a " + typeName + " is not encoded: its JSON is "
          + json.length + " bytes, over the document length limit of "
          + limits.getMaxDocumentLength() + " bytes");
    }
    try (JsonParser parser = factory.createParser(ObjectReadContext.empty(), json)) {
      JsonToken token = parser.nextToken();
      if (token == JsonToken.VALUE_NULL) {
        throw new IllegalArgumentException("a " + typeName + " is not encoded: its JSON is null");
      }
      for (; token != null; token = parser.nextToken()) {
        if (token == JsonToken.VALUE_STRING) {
          parser.getString();
        } else if (token == JsonToken.VALUE_NUMBER_FLOAT) {
          DecimalScale.check(parser.getDecimalValue()); // as a BigDecimal it must read back
        }
      }
    } catch (JacksonException e) {
      StreamConstraintsException limit = constraintViolation(e);
      throw new IllegalArgumentException("a " + typeName + " is not encoded: its JSON "
          + (limit != null ? "exceeds a read limit (" + limit.getOriginalMessage() + ")"
              : "could not be read back (" + e.getClass().getSimpleName() + ")"), e);
    }
  }

  /** A decode failure without the payload in its message (see the class documentation). */
  private IllegalArgumentException rejected(JacksonException e) {
    StreamConstraintsException limit = constraintViolation(e);
    if (limit != null) {
      // Constraint messages hold only numbers: the length or depth found and the limit.
      return new IllegalArgumentException("stored JSON exceeds a read limit for " + typeName
          + ": " + limit.getOriginalMessage());
    }
    StringBuilder message = new StringBuilder("stored bytes are not a JSON ").append(typeName)
        .append(" (").append(e.getClass().getSimpleName());
    TokenStreamLocation location = e.getLocation();
    if (location != null && location.getByteOffset() >= 0) {
      message.append(" at byte ").append(location.getByteOffset());
    } else if (location != null && location.getLineNr() > 0) {
      message.append(" at line ").append(location.getLineNr()).append(", column ")
          .append(location.getColumnNr());
    }
    return new IllegalArgumentException(message.append(')').toString());
  }

  private static StreamConstraintsException constraintViolation(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof StreamConstraintsException) {
        return (StreamConstraintsException) t;
      }
    }
    return null;
  }
}
