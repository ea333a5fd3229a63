package io.sustainablecache.jackson;

import static io.sustainablecache.jackson.Fixtures.GADGET;
import static io.sustainablecache.jackson.Fixtures.item;
import static io.sustainablecache.jackson.Fixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.sustainablecache.jackson.Fixtures.Gadget;
import io.sustainablecache.jackson.Fixtures.Item;
import io.sustainablecache.jackson.Fixtures.Note;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.DefaultTyping;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.jsontype.BasicPolymorphicTypeValidator;
import tools.jackson.databind.jsontype.PolymorphicTypeValidator;
import tools.jackson.databind.jsontype.impl.DefaultTypeResolverBuilder;

/**
 * Planted type ids ("gadget" payloads) and the refusal of mappers with polymorphic default
 * typing. {@link Gadget} counts its instantiations, so each test can show that nothing was
 * instantiated, and one control test shows that the same payload does instantiate it through a
 * mapper that the codec would have refused.
 */
class JacksonCodecPolymorphismTest {

  /** Default typing's wrapper-array form: ["class name", {properties}]. */
  private static final String WRAPPER_ARRAY = "[\"" + GADGET + "\",{\"command\":\"id\"}]";
  /** The property form: {"@class": "class name", properties}. */
  private static final String AT_CLASS = "{\"@class\":\"" + GADGET + "\",\"command\":\"x\"}";
  /** A classic JDK gadget-chain entry point, as seen in published payloads. */
  private static final String URL_PAYLOAD = "[\"java.net.URL\",\"http://attacker.invalid/\"]";

  private static final PolymorphicTypeValidator ANY_CLASS =
      BasicPolymorphicTypeValidator.builder().allowIfBaseType(Object.class).build();

  @BeforeEach
  void resetGadget() {
    Gadget.CREATED.set(0);
    Gadget.COMMANDS_RUN.set(0);
  }

  private static Object decode(JacksonCodec<?> codec, String json) {
    byte[] bytes = utf8(json);
    return codec.decode(bytes, 0, bytes.length);
  }

  private static void assertNoGadget() {
    assertThat(Gadget.CREATED).as("gadget instances").hasValue(0);
    assertThat(Gadget.COMMANDS_RUN).as("gadget commands").hasValue(0);
  }

  // ---------------------------------------------------------------------------------------------
  // The default mapper ignores type ids

  @Test
  void plantedTypeIdsAreRejectedForTypedValues() {
    JacksonCodec<Item> items = JacksonCodec.of(Item.class);

    for (String planted : List.of(WRAPPER_ARRAY, AT_CLASS, URL_PAYLOAD,
        "{\"name\":\"x\",\"tags\":" + WRAPPER_ARRAY + "}",
        "{\"name\":\"x\",\"tags\":[" + AT_CLASS + "]}")) {
      assertThatThrownBy(() -> decode(items, planted)).as(planted)
          .isInstanceOf(IllegalArgumentException.class);
    }
    assertThatThrownBy(() -> decode(JacksonCodec.of(new TypeReference<List<Item>>() {}),
        "[" + AT_CLASS + "]")).isInstanceOf(IllegalArgumentException.class);
    assertNoGadget();
  }

  @Test
  void plantedTypeIdsInUntypedValuesStayPlainData() {
    JacksonCodec<Object> untyped = JacksonCodec.of(Object.class);
    JacksonCodec<Note> notes = JacksonCodec.of(Note.class);

    Object wrapper = decode(untyped, WRAPPER_ARRAY);
    Object property = decode(untyped, AT_CLASS);
    Object url = decode(untyped, URL_PAYLOAD);
    Note note = (Note) decode(notes, "{\"title\":\"t\",\"body\":" + WRAPPER_ARRAY + "}");

    assertThat(wrapper).isEqualTo(List.of(GADGET, Map.of("command", "id")));
    assertThat(property).isEqualTo(Map.of("@class", GADGET, "command", "x"));
    assertThat(url).isEqualTo(List.of("java.net.URL", "http://attacker.invalid/"));
    assertThat(note.body()).isInstanceOf(List.class);
    assertNoGadget();
  }

  @Test
  void annotatedClassTypeIdsOnAnUnsafeBaseTypeAreRejected() {
    // Jackson's validator denies every subtype of Object, so no value of the type could ever be
    // read: the codec refuses the type when it is built (issue 15), before anything is decoded
    assertThatThrownBy(() -> JacksonCodec.of(Tagged.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("PolymorphicTypeValidator");
    assertNoGadget();
  }

  /** Class-named polymorphism on {@code Object}: Jackson 3's default validator denies it. */
  record Tagged(@JsonTypeInfo(use = JsonTypeInfo.Id.CLASS) Object payload) {}

  @Test
  void polymorphismByRegisteredNameNeedsNoOptIn() {
    JacksonCodec<Shape> shapes = JacksonCodec.of(Shape.class);
    Shape circle = new Circle(2.5);

    byte[] bytes = shapes.encode(circle);

    assertThat(utf8(bytes)).isEqualTo("{\"kind\":\"circle\",\"radius\":2.5}");
    assertThat(shapes.decode(bytes, 0, bytes.length)).isEqualTo(circle);
    assertThatThrownBy(() -> decode(shapes, "{\"kind\":\"" + GADGET + "\",\"command\":\"x\"}"))
        .isInstanceOf(IllegalArgumentException.class);
    assertNoGadget();
  }

  @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
  @JsonSubTypes({@JsonSubTypes.Type(value = Circle.class, name = "circle"),
      @JsonSubTypes.Type(value = Square.class, name = "square")})
  sealed interface Shape permits Circle, Square {}

  record Circle(double radius) implements Shape {}

  record Square(double side) implements Shape {}

  // ---------------------------------------------------------------------------------------------
  // Mappers with default typing are refused

  @Test
  void aMapperWithDefaultTypingIsRefused() {
    List<JsonMapper> unsafe = List.of(
        JsonMapper.builder().activateDefaultTyping(ANY_CLASS).build(),
        JsonMapper.builder().activateDefaultTyping(ANY_CLASS, DefaultTyping.NON_FINAL).build(),
        JsonMapper.builder().activateDefaultTypingAsProperty(ANY_CLASS,
            DefaultTyping.JAVA_LANG_OBJECT, "@class").build(),
        JsonMapper.builder().setDefaultTyping(new DefaultTypeResolverBuilder(ANY_CLASS,
            DefaultTyping.NON_CONCRETE_AND_ARRAYS, JsonTypeInfo.As.PROPERTY)).build());

    for (JsonMapper mapper : unsafe) {
      assertThatThrownBy(() -> JacksonCodec.of(mapper, Item.class))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("default typing")
          .hasMessageContaining("gadget")
          .hasMessageContaining("allowDefaultTyping()");
      assertThatThrownBy(() -> JacksonCodec.of(mapper, new TypeReference<List<Item>>() {}))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> JacksonCodec.builder(Object.class).mapper(mapper).build())
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void theRefusedMapperWouldHaveRunTheGadget() {
    // The control for every test above: the payload works when the codec is told to allow it.
    JsonMapper unsafe = JsonMapper.builder()
        .activateDefaultTyping(ANY_CLASS, DefaultTyping.JAVA_LANG_OBJECT).build();
    JacksonCodec<Note> codec = JacksonCodec.builder(Note.class).mapper(unsafe)
        .allowDefaultTyping().build();

    Note note = (Note) decode(codec, "{\"title\":\"t\",\"body\":" + WRAPPER_ARRAY + "}");

    assertThat(note.body()).isInstanceOf(Gadget.class);
    assertThat(Gadget.CREATED).hasValue(1);
    assertThat(Gadget.COMMANDS_RUN).hasValue(1);
  }

  @Test
  void optingInWithAnAllowListKeepsGadgetsOut() {
    PolymorphicTypeValidator allowList = BasicPolymorphicTypeValidator.builder()
        .allowIfSubType(Item.class).allowIfSubType("java.util.").build();
    JsonMapper mapper = JsonMapper.builder()
        .activateDefaultTyping(allowList, DefaultTyping.JAVA_LANG_OBJECT).build();
    JacksonCodec<Note> codec = JacksonCodec.builder(Note.class).mapper(mapper)
        .allowDefaultTyping().build();
    Note note = new Note("typed", item("x"));

    byte[] bytes = codec.encode(note);

    assertThat(utf8(bytes)).contains("[\"" + Item.class.getName() + "\",{");
    assertThat(codec.decode(bytes, 0, bytes.length)).isEqualTo(note);
    assertThatThrownBy(() -> decode(codec, "{\"title\":\"t\",\"body\":" + WRAPPER_ARRAY + "}"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> decode(codec, "{\"title\":\"t\",\"body\":" + URL_PAYLOAD + "}"))
        .isInstanceOf(IllegalArgumentException.class);
    assertNoGadget();
  }

  @Test
  void theDefaultMapperHasNoDefaultTyping() {
    JacksonCodec<Object> untyped = JacksonCodec.of(Object.class);

    byte[] bytes = untyped.encode(List.of(item("x")));

    assertThat(utf8(bytes)).doesNotContain(Item.class.getName()).startsWith("[{\"name\"");
  }
}
