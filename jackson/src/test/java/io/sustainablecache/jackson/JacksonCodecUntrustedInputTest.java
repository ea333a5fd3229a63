package io.sustainablecache.jackson;

import static io.sustainablecache.jackson.Fixtures.item;
import static io.sustainablecache.jackson.Fixtures.nested;
import static io.sustainablecache.jackson.Fixtures.nestedTrees;
import static io.sustainablecache.jackson.Fixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.jackson.Fixtures.Item;
import io.sustainablecache.jackson.Fixtures.Note;
import io.sustainablecache.jackson.Fixtures.Order;
import io.sustainablecache.jackson.Fixtures.Tree;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What an attacker, or a buggy writer, can leave under a key: every case must end in a
 * RuntimeException (a counted miss), never in a wrong value, an Error, or unbounded work.
 */
class JacksonCodecUntrustedInputTest {

  private final JacksonCodec<Item> items = JacksonCodec.of(Item.class);
  private final JacksonCodec<Object> untyped = JacksonCodec.of(Object.class);

  private static IllegalArgumentException rejected(JacksonCodec<?> codec, String json) {
    byte[] bytes = utf8(json);
    return rejected(codec, bytes);
  }

  private static IllegalArgumentException rejected(JacksonCodec<?> codec, byte[] bytes) {
    ThrowingCallable decode = () -> codec.decode(bytes, 0, bytes.length);
    assertThatThrownBy(decode).isInstanceOf(IllegalArgumentException.class);
    try {
      codec.decode(bytes, 0, bytes.length);
    } catch (IllegalArgumentException e) {
      return e;
    }
    throw new AssertionError("not rejected");
  }

  // ---------------------------------------------------------------------------------------------
  // Malformed input

  @Test
  void everyTruncationOfAValueIsRejected() {
    byte[] json = items.encode(item("truncated"));

    for (int length = 0; length < json.length; length++) {
      int cut = length;
      assertThatThrownBy(() -> items.decode(json, 0, cut)).as("first %d bytes", cut)
          .isInstanceOf(IllegalArgumentException.class);
    }
    assertThat(items.decode(json, 0, json.length)).isEqualTo(item("truncated"));
  }

  @Test
  void randomBytesAreRejected() {
    Random random = new Random(20261122L);
    int rejected = 0;
    for (int i = 0; i < 5_000; i++) {
      // At least 8 bytes: a shorter draw could be a valid number, e.g. "7".
      byte[] bytes = new byte[8 + random.nextInt(193)];
      random.nextBytes(bytes);
      if (i % 2 == 0) {
        bytes[0] = '{'; // get past the first byte, into the object parser
      }
      assertThatThrownBy(() -> items.decode(bytes, 0, bytes.length))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> untyped.decode(bytes, 0, bytes.length))
          .isInstanceOf(IllegalArgumentException.class);
      rejected++;
    }
    assertThat(rejected).isEqualTo(5_000);
  }

  @Test
  void anotherTypesJsonIsRejected() {
    byte[] order = JacksonCodec.of(Order.class).encode(new Order(42, "Ada"));

    assertThat(rejected(items, order)).hasMessageContaining(Item.class.getName())
        .hasMessageContaining("MismatchedInputException");
    // The default mapper fails on unknown properties (Jackson 3 alone would ignore them).
    assertThat(rejected(items, "{\"name\":\"x\",\"quantity\":1,\"customer\":\"Ada\"}"))
        .hasMessageContaining("UnrecognizedPropertyException");
    // Jackson 3 fails on a missing primitive (FAIL_ON_NULL_FOR_PRIMITIVES).
    rejected(items, "{}");
    rejected(items, "[\"widget\",3]");
    rejected(items, "\"widget\"");
    rejected(items, "3");
    rejected(items, "{\"name\":\"x\",\"quantity\":\"three\"}");
    rejected(items, "{\"name\":\"x\",\"quantity\":null}");
    rejected(JacksonCodec.of(new TypeReference<List<Item>>() {}), utf8(items.encode(item("x"))));
    rejected(JacksonCodec.of(Long.class), "\"12\"x");
  }

  @Test
  void jsonNullEmptyAndBlankPayloadsAreRejected() {
    assertThat(rejected(items, "null")).hasMessageContaining("null");
    rejected(untyped, "null");
    rejected(JacksonCodec.of(String.class), " null ");
    rejected(items, "");
    rejected(items, " \n ");
  }

  @Test
  void trailingContentIsRejected() {
    String json = utf8(items.encode(item("x")));

    rejected(items, json + "x");
    rejected(items, json + json);
    rejected(items, json + "]");
    rejected(items, json + " {}");
    rejected(untyped, "[1,2] 3");
    rejected(JacksonCodec.of(Long.class), "12 13");
    assertThat(items.decode(utf8(json + "  "), 0, json.length() + 2)).isEqualTo(item("x"));
  }

  @Test
  void aCallersMapperGetsTheTrailingContentCheckAndTheLimits() {
    JsonMapper lenient = JsonMapper.builder()
        .disable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .build();
    JacksonCodec<Object> codec = JacksonCodec.of(lenient, Object.class);
    String overLongString = "[\"" + "s".repeat(256 * 1024 + 1) + "\"]";

    // The mapper on its own accepts all three.
    assertThat(lenient.readValue("[1] [2]", Object.class)).isEqualTo(List.of(1));
    assertThat(lenient.readValue(nested(101, true), Object.class)).isInstanceOf(List.class);
    assertThat(lenient.readValue(overLongString, Object.class)).isInstanceOf(List.class);
    assertThat(rejected(codec, "[1] [2]")).hasMessageContaining("MismatchedInputException");
    assertThat(rejected(codec, nested(101, true))).hasMessageContaining("nesting depth");
    assertThat(rejected(codec, overLongString)).hasMessageContaining("String value length");
  }

  @Test
  void messagesNeverQuoteTheStoredBytes() {
    List<IllegalArgumentException> failures = new ArrayList<>();
    failures.add(rejected(items, "{\"name\":\"SECRET-1\",\"quantity\":\"SECRET-2\"}"));
    failures.add(rejected(items, "{\"name\":\"SECRET-1\",\"SECRET-3\":1}"));
    failures.add(rejected(items, "SECRET-4"));
    failures.add(rejected(items, "{\"name\":SECRET-5}"));
    failures.add(rejected(JacksonCodec.of(BigDecimal.class), "\"SECRET-6\""));

    for (IllegalArgumentException e : failures) {
      assertThat(e.getMessage()).doesNotContain("SECRET").contains(" (");
      assertThat(e.getCause()).as("Jackson's message may quote the bytes").isNull();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Limits

  @Test
  @Timeout(value = 10, unit = TimeUnit.SECONDS)
  void aDeeplyNestedPlantedDocumentIsRejectedAtTheDepthLimit() {
    String planted = nested(100_000, false);

    for (JacksonCodec<?> codec : List.of(untyped, JacksonCodec.of(JsonNode.class),
        JacksonCodec.of(new TypeReference<List<Object>>() {}), JacksonCodec.of(Note.class))) {
      String json = codec.type().getRawClass() == Note.class
          ? "{\"title\":\"t\",\"body\":" + planted : planted;
      assertThat(rejected(codec, json)).as("%s", codec)
          .hasMessageContaining("exceeds a read limit")
          .hasMessageContaining("nesting depth")
          .hasMessageContaining("(101)")
          .hasMessageContaining("(100,");
    }
    assertThat(rejected(untyped, nested(100_000, true))).hasMessageContaining("nesting depth");
    // A recursive type: each JSON level is a level of data binding's recursion.
    assertThat(rejected(JacksonCodec.of(Tree.class), nestedTrees(100_000)))
        .hasMessageContaining("nesting depth");
  }

  @Test
  void withoutTheDepthLimitARecursiveTypeOverflowsTheStack() {
    // The control for the test above: a StackOverflowError is an Error, not a RuntimeException,
    // so the cache could not turn it into a miss; it would reach the caller of get().
    JacksonCodec<Tree> unbounded = JacksonCodec.builder(Tree.class)
        .limits(JacksonCodec.defaultLimits().rebuild().maxNestingDepth(Integer.MAX_VALUE).build())
        .build();
    byte[] planted = utf8(nestedTrees(100_000));

    assertThatThrownBy(() -> unbounded.decode(planted, 0, planted.length))
        .isInstanceOf(StackOverflowError.class);
  }

  @Test
  void nestingUpToTheLimitIsAccepted() {
    assertThat(untyped.decode(utf8(nested(100, true)), 0, 200)).isInstanceOf(List.class);
    assertThat(rejected(untyped, nested(101, true))).hasMessageContaining("nesting depth");
  }

  @Test
  @Timeout(value = 10, unit = TimeUnit.SECONDS)
  void anOversizedStringIsRejected() {
    int limit = JacksonCodec.defaultLimits().getMaxStringLength();
    assertThat(limit).isEqualTo(256 * 1024);
    String atLimit = "\"" + "a".repeat(limit) + "\"";
    String over = "\"" + "a".repeat(limit + 1) + "\"";
    JacksonCodec<String> strings = JacksonCodec.of(String.class);

    assertThat(strings.decode(utf8(atLimit), 0, atLimit.length())).hasSize(limit);
    assertThat(rejected(strings, over)).hasMessageContaining("exceeds a read limit")
        .hasMessageContaining("String value length");
    assertThat(rejected(items, "{\"name\":" + over + ",\"quantity\":1}"))
        .hasMessageContaining("String value length");
    // Escapes count as the characters they stand for: two bytes each, one char.
    String escaped = "\"" + "\\n".repeat(limit + 1) + "\"";
    assertThat(rejected(strings, escaped)).hasMessageContaining("String value length");
  }

  @Test
  void anOversizedNumberIsRejected() {
    JacksonCodec<BigInteger> integers = JacksonCodec.of(BigInteger.class);
    String hundred = "9".repeat(100);

    assertThat(integers.decode(utf8(hundred), 0, 100)).isEqualTo(new BigInteger(hundred));
    assertThat(rejected(integers, hundred + "9")).hasMessageContaining("Number value length");
    assertThat(rejected(JacksonCodec.of(BigDecimal.class), "0." + "1".repeat(100)))
        .hasMessageContaining("Number value length");
    assertThat(rejected(untyped, "[" + "1".repeat(10_000) + "]"))
        .hasMessageContaining("Number value length");
  }

  /**
   * Issue 15: a short planted number with a large exponent, bound to an integer type, expanded
   * to 100,000 digits (about 700 times the CPU of a normal read); floats are refused where an
   * integer is expected.
   */
  @Test
  void aFloatWhereAnIntegerIsExpectedIsRejected() {
    JacksonCodec<BigInteger> integers = JacksonCodec.of(BigInteger.class);
    for (String planted : List.of("1e99999", "-1.0e100000", "1.5")) {
      assertThat(rejected(integers, planted)).hasMessageContaining("BigInteger");
    }
    JacksonCodec<Fixtures.Order> orders = JacksonCodec.of(Fixtures.Order.class);
    assertThat(rejected(orders, "{\"id\":1e18,\"customer\":\"c\"}"))
        .hasMessageContaining("Order");
    byte[] valid = utf8("{\"id\":7,\"customer\":\"c\"}");
    assertThat(orders.decode(valid, 0, valid.length))
        .isEqualTo(new Fixtures.Order(7, "c"));
  }

  /** A record with a decimal amount, a list of them, and an untyped bag. */
  record Priced(BigDecimal amount, List<BigDecimal> history, Map<String, Object> extra) {}

  /**
   * Issue 24: a planted {@code 1e999999999} (11 characters, within every length limit) was read
   * as a BigDecimal of scale −999,999,999 and served: the caller's {@code toPlainString()} then
   * builds a billion digits. Scales beyond ±10,000 are refused (a counted miss), wherever the
   * BigDecimal is and whether it was a number or a string; ordinary ones still read.
   */
  @Test
  void aBigDecimalOfAnAbsurdScaleIsRejected_whereverItIs() {
    JacksonCodec<BigDecimal> decimals = JacksonCodec.of(BigDecimal.class);
    for (String planted : List.of("1e999999999", "1E-999999999", "-7.5e10002",
        "\"1e999999999\"")) {
      assertThat(rejected(decimals, planted)).as(planted)
          .hasMessageContaining("BigDecimal scale").hasMessageContaining("10000");
    }
    JacksonCodec<Priced> priced = JacksonCodec.of(Priced.class);
    assertThat(rejected(priced, "{\"amount\":1e999999999,\"history\":[],\"extra\":{}}"))
        .hasMessageContaining("BigDecimal scale");
    assertThat(rejected(priced, "{\"amount\":1,\"history\":[2,1e-20000],\"extra\":{}}"))
        .hasMessageContaining("BigDecimal scale");

    byte[] ordinary = utf8("{\"amount\":12.50,\"history\":[1e10000,4.9E-324],\"extra\":{}}");
    Priced read = priced.decode(ordinary, 0, ordinary.length);
    assertThat(read.amount()).isEqualByComparingTo("12.50");
    assertThat(read.history().get(0).scale()).isEqualTo(-10_000);
  }

  /** The same where a caller's mapper makes BigDecimals of untyped floats. */
  @Test
  void aBigDecimalOfAnAbsurdScaleInAnUntypedValueIsRejected_whenTheMapperMakesThem() {
    JsonMapper mapper = JsonMapper.builder()
        .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS).build();
    JacksonCodec<Object> bags = JacksonCodec.of(mapper, Object.class);
    assertThat(rejected(bags, "{\"a\":[{\"b\":1e999999999}]}"))
        .hasMessageContaining("BigDecimal scale");
    JacksonCodec<Number> numbers = JacksonCodec.of(mapper, Number.class);
    assertThat(rejected(numbers, "1e999999999")).hasMessageContaining("BigDecimal scale");
    byte[] ordinary = utf8("{\"a\":[{\"b\":1.25}]}");
    assertThat(bags.decode(ordinary, 0, ordinary.length))
        .isEqualTo(Map.of("a", List.of(Map.of("b", new BigDecimal("1.25")))));
  }

  /** What every read would reject is not cached: the write is refused (a skipped write). */
  @Test
  void aBigDecimalOfAnAbsurdScaleIsNotEncoded() {
    assertThatThrownBy(() -> JacksonCodec.of(BigDecimal.class).encode(new BigDecimal("1e20000")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("BigDecimal scale");
    assertThat(JacksonCodec.of(BigDecimal.class).encode(new BigDecimal("1e9999")))
        .isEqualTo(utf8("1E+9999"));
  }

  @Test
  void anOversizedPropertyNameIsRejected() {
    JacksonCodec<Map<String, Integer>> maps =
        JacksonCodec.of(new TypeReference<Map<String, Integer>>() {});
    String atLimit = "{\"" + "k".repeat(4096) + "\":1}";

    assertThat(maps.decode(utf8(atLimit), 0, atLimit.length())).containsValue(1);
    assertThat(rejected(maps, "{\"" + "k".repeat(4097) + "\":1}"))
        .hasMessageContaining("Name length");
  }

  @Test
  void aDocumentOverTheLengthLimitIsRejectedBeforeParsing() {
    int limit = 1 << 20;
    assertThat(JacksonCodec.defaultLimits().getMaxDocumentLength()).isEqualTo(limit);
    // Valid JSON, every string short: only the document length is over.
    StringBuilder json = new StringBuilder("[");
    while (json.length() < limit) {
      json.append("\"0123456789abcdef\",");
    }
    json.append("\"end\"]");
    byte[] bytes = utf8(json.toString());
    // The parse would fail anyway if it were attempted: the slice ends inside a string.
    byte[] cutInside = java.util.Arrays.copyOf(bytes, limit + 5);

    assertThat(rejected(untyped, bytes)).hasMessageContaining("document length limit")
        .hasMessageContaining(String.valueOf(limit));
    assertThat(rejected(untyped, cutInside)).hasMessageContaining("document length limit");
    byte[] exactly = utf8("\"" + "x".repeat(limit - 2) + "\"");
    JacksonCodec<String> strings = JacksonCodec.builder(String.class)
        .limits(JacksonCodec.defaultLimits().rebuild().maxStringLength(limit).build()).build();
    assertThat(strings.decode(exactly, 0, exactly.length)).hasSize(limit - 2);
  }

  @Test
  void customLimitsApplyToDecodeAndEncode() {
    StreamReadConstraints tight = StreamReadConstraints.builder().maxDocumentLength(64)
        .maxNestingDepth(3).maxStringLength(8).maxNumberLength(5).maxNameLength(8).build();
    JacksonCodec<Object> codec = JacksonCodec.builder(Object.class).limits(tight).build();

    assertThat(codec.limits()).isSameAs(tight);
    assertThat(codec.decode(utf8("[[[\"12345678\"]]]"), 0, 16)).isInstanceOf(List.class);
    assertThat(rejected(codec, "[[[[]]]]")).hasMessageContaining("nesting depth");
    assertThat(rejected(codec, "[\"123456789\"]")).hasMessageContaining("String value length");
    assertThat(rejected(codec, "[123456]")).hasMessageContaining("Number value length");
    assertThat(rejected(codec, "{\"123456789\":1}")).hasMessageContaining("Name length");
    assertThat(rejected(codec, "[" + "1,".repeat(40) + "1]"))
        .hasMessageContaining("document length limit of 64 bytes");

    assertThatThrownBy(() -> codec.encode(List.of("123456789")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("String value length");
    assertThatThrownBy(() -> codec.encode(Fixtures.nestedLists(4)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nesting depth");
    assertThatThrownBy(() -> codec.encode(new BigInteger("123456")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Number value length");
    assertThatThrownBy(() -> codec.encode(Map.of("123456789", 1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Name length");
    assertThatThrownBy(() -> codec.encode(java.util.Collections.nCopies(40, 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("over the document length limit of 64 bytes");
    assertThat(utf8(codec.encode(Fixtures.nestedLists(3)))).isEqualTo("[[[]]]");
  }

  @Test
  void encodeRefusesWhatDecodeWouldRefuseWithTheDefaultLimits() {
    JacksonCodec<String> strings = JacksonCodec.of(String.class);
    String tooLong = "b".repeat(256 * 1024 + 1);

    assertThatThrownBy(() -> strings.encode(tooLong)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is not encoded").hasMessageContaining("String value length");
    assertThatThrownBy(() -> untyped.encode(Fixtures.nestedLists(101)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nesting depth");
    assertThatThrownBy(() -> JacksonCodec.of(BigInteger.class).encode(BigInteger.TEN.pow(100)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Number value length");
    List<String> big = java.util.Collections.nCopies(5, "c".repeat(256 * 1024));
    assertThatThrownBy(() -> JacksonCodec.of(new TypeReference<List<String>>() {}).encode(big))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("over the document length limit");
    byte[] deepest = untyped.encode(Fixtures.nestedLists(100));
    assertThat(untyped.decode(deepest, 0, deepest.length)).isInstanceOf(List.class);
  }
}
