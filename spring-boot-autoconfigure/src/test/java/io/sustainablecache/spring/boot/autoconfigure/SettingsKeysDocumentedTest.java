package io.sustainablecache.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.CacheSettings;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The description of {@code sustainable-cache.settings}, which IDEs show from Spring Boot's
 * configuration metadata (the Javadoc of {@link SustainableCacheSettings}' field), is kept by hand:
 * this fails when it and the core's {@link CacheSettings#keys()} differ.
 */
final class SettingsKeysDocumentedTest {

  private static String description() throws IOException {
    try (InputStream in = SettingsKeysDocumentedTest.class.getResourceAsStream(
        "/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("the configuration processor's metadata").isNotNull();
      for (JsonNode property : JsonMapper.builder().build().readTree(in).get("properties")) {
        if (property.get("name").asString().equals("sustainable-cache.settings")) {
          return property.get("description").asString();
        }
      }
    }
    throw new AssertionError("no sustainable-cache.settings in the metadata");
  }

  @Test
  void theSettingsDescription_namesEveryKeyOfTheCore_inItsOrder_andNoOther() throws IOException {
    String description = description();
    List<String> named = new ArrayList<>();
    Set<String> keys = new LinkedHashSet<>(CacheSettings.keys());
    // every whole word that is a key, or looks like one (lower-case words joined by '-')
    Matcher words = Pattern.compile("(?<![A-Za-z0-9_.-])[a-z]+(?:-[a-z]+)*(?![A-Za-z0-9_-])")
        .matcher(description);
    while (words.find()) {
      String word = words.group();
      if (keys.contains(word)) {
        if (!named.contains(word)) {
          named.add(word);
        }
      } else {
        assertThat(word).as("a key-like word that is no key of CacheSettings").doesNotContain("-");
      }
    }
    assertThat(named).as("the keys named, first mention each").isEqualTo(CacheSettings.keys());
  }
}
