package io.sustainablecache.jackson;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.jackson.Fixtures.Item;
import io.sustainablecache.spi.CacheStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * Keeps the manual's (docs/manual.md) "JSON values with Jackson" section honest: its code block is the code in
 * {@link #readmeBlock} (which must compile), and the Jackson version it names is the one on the
 * class path.
 */
class ReadmeJacksonSectionTest {

  /** The manual's block; {@code ArcusStore.of(client)} there is {@code store} here. */
  @SuppressWarnings("unused")
  private static SustainableCache<Item> readmeBlock(JsonMapper jsonMapper, CacheStore store) {
    // README:begin
    ValueCodec<Item> codec = JacksonCodec.of(Item.class); // records and beans, default mapper
    ValueCodec<List<Item>> lists = JacksonCodec.of(new TypeReference<List<Item>>() {});
    ValueCodec<Item> withYours = JacksonCodec.of(jsonMapper, Item.class); // your JsonMapper bean
    SustainableCache<Item> items = SustainableCache.builder(store)
        .namespace("item").ttl(Duration.ofMinutes(5)).codec(codec).build();
    // README:end
    return items;
  }

  private static String section() throws IOException {
    String readme = Files.readString(Path.of("..", "docs", "manual.md"), StandardCharsets.UTF_8);
    int from = readme.indexOf("## JSON values with Jackson\n");
    assertThat(from).as("README section").isNotNegative();
    int to = readme.indexOf("\n## ", from + 1);
    return readme.substring(from, to);
  }

  private static List<String> between(String text, String begin, String end) {
    int from = text.indexOf(begin);
    assertThat(from).as("marker %s", begin).isNotNegative();
    from += begin.length();
    return text.substring(from, text.indexOf(end, from)).strip().lines().toList();
  }

  @Test
  void codeBlockIsTheCodeCompiledHere() throws IOException {
    String source = Files.readString(
        Path.of("src/test/java/io/sustainablecache/jackson/ReadmeJacksonSectionTest.java"),
        StandardCharsets.UTF_8);
    List<String> compiled = between(source, "    // README:begin", "    // README:end").stream()
        .map(line -> line.startsWith("    ") ? line.substring(4) : line)
        .toList();

    List<String> documented = between(section(), "```java", "```").stream()
        .map(line -> line.replace("ArcusStore.of(client)", "store"))
        .toList();

    assertThat(documented).isEqualTo(compiled);
  }

  @Test
  void sectionNamesTheJacksonVersionOnTheClassPath() throws IOException {
    String version = JsonMapper.builder().build().version().toString();

    assertThat(version).startsWith("3.1.");
    assertThat(section()).contains("`tools.jackson.core:jackson-databind` " + version)
        .contains("Jackson 3.1")
        .contains("`tools.jackson:jackson-bom` " + version);
  }

  @Test
  void theDocumentedCodecsWork() {
    ValueCodec<Item> codec = JacksonCodec.of(Item.class);
    ValueCodec<List<Item>> lists = JacksonCodec.of(new TypeReference<List<Item>>() {});
    ValueCodec<Item> withYours = JacksonCodec.of(JsonMapper.builder().build(), Item.class);
    Item item = Fixtures.item("readme");

    byte[] one = codec.encode(item);
    byte[] many = lists.encode(List.of(item, item));

    assertThat(withYours.decode(one, 0, one.length)).isEqualTo(item);
    assertThat(lists.decode(many, 0, many.length)).containsExactly(item, item);
  }
}
