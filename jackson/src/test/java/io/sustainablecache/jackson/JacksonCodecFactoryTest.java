package io.sustainablecache.jackson;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.jackson.Fixtures.Item;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.json.JsonMapper;

class JacksonCodecFactoryTest {

  @Test
  void defaultLimitsAreTheDocumentedOnes() {
    StreamReadConstraints limits = JacksonCodec.defaultLimits();

    assertThat(limits.getMaxDocumentLength()).isEqualTo(1L << 20);
    assertThat(limits.getMaxNestingDepth()).isEqualTo(100);
    assertThat(limits.getMaxStringLength()).isEqualTo(256 * 1024);
    assertThat(limits.getMaxNumberLength()).isEqualTo(100);
    assertThat(limits.getMaxNameLength()).isEqualTo(4096);
    assertThat(JacksonCodec.of(Item.class).limits()).isSameAs(limits);
    assertThat(JacksonCodec.of(JsonMapper.builder().build(), Item.class).limits())
        .isSameAs(limits);
  }

  @Test
  void typeIsResolvedFromEachFactory() {
    JsonMapper mapper = JsonMapper.builder().build();
    JavaType listOfItems = mapper.getTypeFactory().constructCollectionType(List.class,
        Item.class);

    assertThat(JacksonCodec.of(Item.class).type().getRawClass()).isEqualTo(Item.class);
    assertThat(JacksonCodec.of(new TypeReference<List<Item>>() {}).type())
        .isEqualTo(listOfItems);
    assertThat(JacksonCodec.of(mapper, Item.class).type().getRawClass()).isEqualTo(Item.class);
    assertThat(JacksonCodec.of(mapper, new TypeReference<List<Item>>() {}).type())
        .isEqualTo(listOfItems);
    assertThat(JacksonCodec.<List<Item>>builder(listOfItems).build().type())
        .isEqualTo(listOfItems);
  }

  @Test
  void nullArgumentsAreRejected() {
    JsonMapper mapper = JsonMapper.builder().build();

    assertThatThrownBy(() -> JacksonCodec.of((Class<Item>) null))
        .isInstanceOf(NullPointerException.class).hasMessage("type");
    assertThatThrownBy(() -> JacksonCodec.of((TypeReference<Item>) null))
        .isInstanceOf(NullPointerException.class).hasMessage("type");
    assertThatThrownBy(() -> JacksonCodec.of(null, Item.class))
        .isInstanceOf(NullPointerException.class).hasMessage("mapper");
    assertThatThrownBy(() -> JacksonCodec.of(mapper, (JavaType) null))
        .isInstanceOf(NullPointerException.class).hasMessage("type");
    assertThatThrownBy(() -> JacksonCodec.builder(Item.class).limits(null))
        .isInstanceOf(NullPointerException.class).hasMessage("limits");
    JacksonCodec<Item> codec = JacksonCodec.of(Item.class);
    assertThatThrownBy(() -> codec.encode(null))
        .isInstanceOf(NullPointerException.class).hasMessage("value");
    assertThatThrownBy(() -> codec.decode(null, 0, 0))
        .isInstanceOf(NullPointerException.class).hasMessage("bytes");
  }

  @Test
  void eachBuilderSetterMayBeCalledOnce() {
    JsonMapper mapper = JsonMapper.builder().build();
    JacksonCodec.Builder<Item> builder = JacksonCodec.builder(Item.class).mapper(mapper)
        .limits(JacksonCodec.defaultLimits());

    assertThatThrownBy(() -> builder.mapper(mapper)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("mapper");
    assertThatThrownBy(() -> builder.limits(JacksonCodec.defaultLimits()))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("limits");
    assertThat(builder.build().type().getRawClass()).isEqualTo(Item.class);
  }

  @Test
  void subclassedMappersAndFactoriesAreRefused() {
    JsonMapper subclassed = new JsonMapper() {
      private static final long serialVersionUID = 1L;
    };
    JsonFactory customFactory = new JsonFactory() {
      private static final long serialVersionUID = 1L;
    };
    JsonMapper overCustomFactory = JsonMapper.builder(customFactory).build();

    assertThatThrownBy(() -> JacksonCodec.of(subclassed, Item.class))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("plain");
    assertThatThrownBy(() -> JacksonCodec.of(overCustomFactory, Item.class))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("JsonFactory");
  }

  @Test
  void customLimitsDoNotLeakIntoOtherCodecs() {
    StreamReadConstraints small = JacksonCodec.defaultLimits().rebuild().maxNestingDepth(2)
        .build();
    JacksonCodec<Object> limited = JacksonCodec.builder(Object.class).limits(small).build();
    JacksonCodec<Object> regular = JacksonCodec.of(Object.class);
    byte[] threeDeep = Fixtures.utf8("[[[]]]");

    assertThatThrownBy(() -> limited.decode(threeDeep, 0, threeDeep.length))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nesting depth");
    assertThat(regular.decode(threeDeep, 0, threeDeep.length)).isInstanceOf(List.class);
    assertThat(JacksonCodec.builder(Object.class).limits(JacksonCodec.defaultLimits()).build()
        .decode(threeDeep, 0, threeDeep.length)).isInstanceOf(List.class);
  }
}
