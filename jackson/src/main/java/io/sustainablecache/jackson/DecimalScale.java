package io.sustainablecache.jackson;

import java.math.BigDecimal;
import java.util.Collection;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.databind.BeanDescription;
import tools.jackson.databind.DeserializationConfig;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.ValueDeserializer;
import tools.jackson.databind.deser.ValueDeserializerModifier;
import tools.jackson.databind.deser.std.DelegatingDeserializer;
import tools.jackson.databind.jsontype.TypeDeserializer;
import tools.jackson.databind.module.SimpleModule;

/**
 * The bound on the scale of the {@link BigDecimal}s a {@link JacksonCodec} reads: at most {@value
 * #MAX_SCALE} in magnitude. Jackson reads {@code 1e999999999} as a {@code BigDecimal} of scale
 * −999,999,999 from 11 characters (within every length limit), and the caller's {@code
 * toPlainString()} or {@code toBigInteger()} of it would then build a billion digits: a value
 * planted in the cache server must be a miss, not a time bomb. {@link #MODULE}, added to every
 * codec's mapper, wraps the deserializers that make {@code BigDecimal}s: of {@code BigDecimal}
 * itself (from a number or a string), and of {@code Number} and {@code Object} (which make them
 * only under {@code DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS}; their maps and lists are
 * walked then). A {@code JsonNode} read under that feature is not checked. Stateless and
 * thread-safe.
 */
final class DecimalScale {

  /**
   * The largest scale magnitude accepted: a plain string of at most about 10,000 digits. A
   * {@code double} needs at most 342 (4.9E-324 with 17 digits); business amounts a few.
   */
  static final int MAX_SCALE = 10_000;

  /** Adds the check to a mapper (one registration per mapper: it has a fixed name). */
  static final SimpleModule MODULE = new SimpleModule("sustainable-cache-decimal-scale")
      .setDeserializerModifier(new ValueDeserializerModifier() {
        private static final long serialVersionUID = 1L;

        @Override
        public ValueDeserializer<?> modifyDeserializer(DeserializationConfig config,
            BeanDescription.Supplier description, ValueDeserializer<?> deserializer) {
          Class<?> type = description.getType().getRawClass();
          return type == BigDecimal.class || type == Number.class || type == Object.class
              ? new Checking(deserializer) : deserializer;
        }
      });

  private DecimalScale() {}

  /**
   * Throws if {@code value} has a {@code BigDecimal} beyond the scale limit: {@code value}
   * itself, or, walked when {@code deep}, the values of its maps and the elements of its lists.
   */
  static Object check(Object value, boolean deep) {
    if (value instanceof BigDecimal decimal) {
      check(decimal);
    } else if (deep && value instanceof Map<?, ?> map) {
      for (Object element : map.values()) {
        check(element, true);
      }
    } else if (deep && value instanceof Collection<?> elements) {
      for (Object element : elements) {
        check(element, true);
      }
    }
    return value;
  }

  /** Throws if the scale of {@code decimal} is beyond the limit. */
  static void check(BigDecimal decimal) {
    int scale = decimal.scale();
    if (scale > MAX_SCALE || scale < -MAX_SCALE) {
      // numbers only: a constraint message never quotes the stored bytes
      throw new StreamConstraintsException("BigDecimal scale (" + scale
          + ") magnitude exceeds the maximum allowed (" + MAX_SCALE + ")");
    }
  }

  /** A deserializer whose results are checked. */
  private static final class Checking extends DelegatingDeserializer {

    Checking(ValueDeserializer<?> delegate) {
      super(delegate);
    }

    @Override
    protected ValueDeserializer<?> newDelegatingInstance(ValueDeserializer<?> delegate) {
      return new Checking(delegate);
    }

    @Override
    public Object deserialize(JsonParser parser, DeserializationContext context)
        throws JacksonException {
      return check(super.deserialize(parser, context), deep(context));
    }

    @Override
    public Object deserialize(JsonParser parser, DeserializationContext context, Object into)
        throws JacksonException {
      return check(super.deserialize(parser, context, into), deep(context));
    }

    @Override
    public Object deserializeWithType(JsonParser parser, DeserializationContext context,
        TypeDeserializer types) throws JacksonException {
      return check(super.deserializeWithType(parser, context, types), deep(context));
    }

    /** Untyped maps and lists hold {@code BigDecimal}s only under this feature. */
    private static boolean deep(DeserializationContext context) {
      return context.isEnabled(
          tools.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
    }
  }
}
