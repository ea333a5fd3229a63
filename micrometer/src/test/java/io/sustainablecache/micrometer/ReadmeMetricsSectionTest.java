package io.sustainablecache.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.InMemoryStore;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Keeps the manual's (docs/manual.md) "Metrics" section honest: its code block is {@link #readmeBlock}, and its
 * table lists exactly the meters of {@link SustainableCacheMeters}.
 */
final class ReadmeMetricsSectionTest {

  private static void readmeBlock(MeterRegistry registry, SustainableCache<String> cache) {
    // README:begin
    SustainableCacheMetrics.monitor(registry, cache, "books");
    // README:end
  }

  private static String section() throws IOException {
    String readme = Files.readString(Path.of("..", "docs", "manual.md"), StandardCharsets.UTF_8);
    int from = readme.indexOf("## Metrics\n");
    assertThat(from).as("README section").isNotNegative();
    return readme.substring(from, readme.indexOf("\n## ", from + 1));
  }

  private static String between(String text, String begin, String end) {
    int from = text.indexOf(begin);
    assertThat(from).as("marker %s", begin).isNotNegative();
    from += begin.length();
    return text.substring(from, text.indexOf(end, from)).strip();
  }

  @Test
  void codeBlockIsTheCodeCompiledHere() throws IOException {
    String source = Files.readString(
        Path.of("src/test/java/io/sustainablecache/micrometer/ReadmeMetricsSectionTest.java"),
        StandardCharsets.UTF_8);
    assertThat(between(section(), "```java", "```"))
        .isEqualTo(between(source, "// README:begin", "// README:end"));

    MeterRegistry registry = new SimpleMeterRegistry();
    try (SustainableCache<String> cache = SustainableCache.builder(InMemoryStore.create())
        .namespace("books").ttl(Duration.ofSeconds(10)).codec(ValueCodec.utf8()).build()) {
      readmeBlock(registry, cache);
      assertThat(registry.get("cache.gets").tags("cache", "books").meters()).hasSize(2);
    }
  }

  @Test
  void tableListsExactlyTheMeters() throws Exception {
    List<String> constants = new ArrayList<>();
    for (Field f : SustainableCacheMeters.class.getDeclaredFields()) {
      if (Modifier.isStatic(f.getModifiers()) && !f.getName().startsWith("TAG_")) {
        constants.add((String) f.get(null));
      }
    }
    List<String> documented = new ArrayList<>();
    Matcher m = Pattern.compile("(?m)^\\| `([a-z.]+)` \\|").matcher(section());
    while (m.find()) {
      documented.add(m.group(1));
    }
    assertThat(documented).containsExactlyInAnyOrderElementsOf(constants);
  }
}
