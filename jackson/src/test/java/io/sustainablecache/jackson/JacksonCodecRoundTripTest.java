package io.sustainablecache.jackson;

import static io.sustainablecache.jackson.Fixtures.item;
import static io.sustainablecache.jackson.Fixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.ValueCodec;
import io.sustainablecache.jackson.Fixtures.Customer;
import io.sustainablecache.jackson.Fixtures.Item;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.module.SimpleModule;
import tools.jackson.databind.ser.std.ToStringSerializer;

class JacksonCodecRoundTripTest {

  private static <V> V roundTrip(ValueCodec<V> codec, V value) {
    byte[] bytes = codec.encode(value);
    return codec.decode(bytes, 0, bytes.length);
  }

  @Test
  void recordRoundTripsAsCompactJson() {
    JacksonCodec<Item> codec = JacksonCodec.of(Item.class);
    Item item = item("widget");

    byte[] bytes = codec.encode(item);

    // Record components in declaration order; java.time values as ISO-8601 strings.
    assertThat(utf8(bytes)).isEqualTo("{\"name\":\"widget\",\"quantity\":3,\"price\":19.99,"
        + "\"tags\":[\"a\",\"b\"],\"updated\":\"2026-01-02T03:04:05.678Z\"}");
    assertThat(codec.decode(bytes, 0, bytes.length)).isEqualTo(item);
  }

  @Test
  void beanRoundTrips() {
    Customer customer = new Customer("Ada", "ada@example.com", List.of(item("a"), item("b")));

    Customer decoded = roundTrip(JacksonCodec.of(Customer.class), customer);

    assertThat(decoded).isEqualTo(customer).isNotSameAs(customer);
  }

  @Test
  void nullsInsideObjectsRoundTrip() {
    Item sparse = new Item(null, 0, null, null, null);
    Customer anonymous = new Customer(null, null, Arrays.asList(sparse, null));

    assertThat(roundTrip(JacksonCodec.of(Item.class), sparse)).isEqualTo(sparse);
    assertThat(roundTrip(JacksonCodec.of(Customer.class), anonymous)).isEqualTo(anonymous);
    assertThat(roundTrip(JacksonCodec.of(new TypeReference<List<String>>() {}),
        Arrays.asList("x", null, "z"))).containsExactly("x", null, "z");
  }

  @Test
  void genericCollectionsKeepTheirElementTypes() {
    JacksonCodec<List<Item>> lists = JacksonCodec.of(new TypeReference<List<Item>>() {});
    JacksonCodec<Map<String, List<Item>>> maps =
        JacksonCodec.of(new TypeReference<Map<String, List<Item>>>() {});
    Map<String, List<Item>> byShelf = new LinkedHashMap<>();
    byShelf.put("top", List.of(item("a")));
    byShelf.put("empty", List.of());

    List<Item> list = roundTrip(lists, List.of(item("a"), item("b")));
    Map<String, List<Item>> map = roundTrip(maps, byShelf);

    assertThat(list).containsExactly(item("a"), item("b"));
    assertThat(list.get(0)).isInstanceOf(Item.class);
    assertThat(map).isEqualTo(byShelf);
    assertThat(map.get("top").get(0)).isInstanceOf(Item.class);
    assertThat(roundTrip(JacksonCodec.of(new TypeReference<Set<Long>>() {}), Set.of(1L, 2L)))
        .containsExactlyInAnyOrder(1L, 2L);
  }

  @Test
  void javaTypeFactoryUsesTheGivenType() {
    JsonMapper mapper = JsonMapper.builder().build();
    JavaType listOfItems = mapper.getTypeFactory().constructCollectionType(List.class,
        Item.class);
    JacksonCodec<List<Item>> codec = JacksonCodec.of(mapper, listOfItems);

    List<Item> decoded = roundTrip(codec, List.of(item("x")));

    assertThat(decoded).containsExactly(item("x"));
    assertThat(codec.type()).isEqualTo(listOfItems);
  }

  @Test
  void unicodeRoundTripsAsUtf8() {
    String text = "naïve café · 日本語 · 한국어 · emoji \uD83C\uDF89 · \u0000\u001f control · "
        + "\"quoted\" \\ back\\slash · \u2028 line separator";
    JacksonCodec<String> strings = JacksonCodec.of(String.class);

    byte[] bytes = strings.encode(text);

    assertThat(strings.decode(bytes, 0, bytes.length)).isEqualTo(text);
    assertThat(utf8(bytes)).contains("日本語", "\uD83C\uDF89").contains("\\u0000");
    Item unicodeItem = new Item("\uD83D\uDE00 ünïcödé", 1, null, List.of("ß", "中"), null);
    assertThat(roundTrip(JacksonCodec.of(Item.class), unicodeItem)).isEqualTo(unicodeItem);
  }

  @Test
  void scalarsAndBigNumbersRoundTrip() {
    BigDecimal money = new BigDecimal("12345678901234567890.000000000000000001");
    BigInteger big = new BigInteger("9".repeat(100));

    assertThat(roundTrip(JacksonCodec.of(Long.class), Long.MIN_VALUE)).isEqualTo(Long.MIN_VALUE);
    assertThat(roundTrip(JacksonCodec.of(Double.class), -1.0e-300)).isEqualTo(-1.0e-300);
    assertThat(roundTrip(JacksonCodec.of(BigDecimal.class), money)).isEqualTo(money);
    assertThat(roundTrip(JacksonCodec.of(BigInteger.class), big)).isEqualTo(big);
    assertThat(roundTrip(JacksonCodec.of(Boolean.class), false)).isFalse();
    assertThat(roundTrip(JacksonCodec.of(Instant.class), Instant.EPOCH)).isEqualTo(Instant.EPOCH);
    assertThat(roundTrip(JacksonCodec.of(String.class), "")).isEmpty();
  }

  @Test
  void sliceIsHonouredAndBytesAroundItAreIgnored() {
    JacksonCodec<Item> codec = JacksonCodec.of(Item.class);
    byte[] json = codec.encode(item("inside"));
    // Before: a complete, different Item; after: garbage that would fail if it were read.
    byte[] before = codec.encode(item("before"));
    byte[] after = utf8("]]]{\"name\": garbage \u0000");
    byte[] stored = new byte[before.length + json.length + after.length];
    System.arraycopy(before, 0, stored, 0, before.length);
    System.arraycopy(json, 0, stored, before.length, json.length);
    System.arraycopy(after, 0, stored, before.length + json.length, after.length);
    byte[] copy = stored.clone();

    Item decoded = codec.decode(stored, before.length, json.length);

    assertThat(decoded).isEqualTo(item("inside"));
    assertThat(stored).as("the stored bytes are not modified").isEqualTo(copy);
    assertThatThrownBy(() -> codec.decode(stored, before.length, json.length - 1))
        .as("one byte short of the value").isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> codec.decode(stored, before.length, json.length + 1))
        .as("one byte of the garbage after it").isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> codec.decode(stored, stored.length - 2, 3))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void whitespaceAroundTheValueIsAccepted() {
    JacksonCodec<Item> codec = JacksonCodec.of(Item.class);
    byte[] padded = utf8(" \n\t" + utf8(codec.encode(item("x"))) + " \r\n ");

    assertThat(codec.decode(padded, 0, padded.length)).isEqualTo(item("x"));
  }

  @Test
  void callersMapperConfigurationIsUsed() {
    SimpleModule module = new SimpleModule("prices-as-strings")
        .addSerializer(BigDecimal.class, ToStringSerializer.instance);
    JsonMapper mapper = JsonMapper.builder()
        .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
        .addModule(module)
        .build();
    record Line(String productName, BigDecimal unitPrice) {}
    JacksonCodec<Line> codec = JacksonCodec.of(mapper, Line.class);
    Line line = new Line("tea", new BigDecimal("2.50"));

    byte[] bytes = codec.encode(line);

    assertThat(utf8(bytes)).isEqualTo("{\"product_name\":\"tea\",\"unit_price\":\"2.50\"}");
    assertThat(codec.decode(bytes, 0, bytes.length)).isEqualTo(line);
  }

  @Test
  void callersMapperIsNotModified() {
    JsonMapper mapper = JsonMapper.builder().build();
    int depthBefore = mapper.tokenStreamFactory().streamReadConstraints().getMaxNestingDepth();

    JacksonCodec<Item> codec = JacksonCodec.of(mapper, Item.class);

    assertThat(mapper.tokenStreamFactory().streamReadConstraints().getMaxNestingDepth())
        .isEqualTo(depthBefore).isNotEqualTo(codec.limits().getMaxNestingDepth());
    // The mapper itself still reads what the codec refuses.
    String deep = Fixtures.nested(200, true);
    assertThat(mapper.readValue(deep, Object.class)).isInstanceOf(List.class);
    assertThatThrownBy(() -> JacksonCodec.of(mapper, Object.class).decode(utf8(deep), 0,
        deep.length())).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void toStringNamesTheType() {
    assertThat(JacksonCodec.of(Item.class)).hasToString("JacksonCodec["
        + Item.class.getName() + "]");
    assertThat(JacksonCodec.of(new TypeReference<List<Item>>() {}))
        .hasToString("JacksonCodec[java.util.List<" + Item.class.getName() + ">]");
  }
}
