package io.sustainablecache.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import com.example.Book;
import com.example.BookRepository;
import com.example.BookService;
import io.micrometer.core.instrument.MeterRegistry;
import io.sustainablecache.CacheSettings;
import io.sustainablecache.jackson.JacksonCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spring.SustainableCacheManager;
import io.sustainablecache.testing.InMemoryStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.SpringVersion;
import tools.jackson.databind.json.JsonMapper;

/**
 * Keeps the manual's (docs/manual.md) "Spring" section honest: its Java block is {@code com.example.BookService}
 * (compiled here), its properties block binds and works, every property in its table exists, and
 * the versions it names are the ones on the class path.
 */
final class ReadmeSpringSectionTest {

  private static String section() throws IOException {
    String readme = Files.readString(Path.of("..", "docs", "manual.md"), StandardCharsets.UTF_8);
    int from = readme.indexOf("## Spring\n");
    assertThat(from).as("README section").isNotNegative();
    return readme.substring(from, readme.indexOf("\n## ", from + 1));
  }

  private static List<String> block(String text, String fence) {
    int from = text.indexOf(fence);
    assertThat(from).as("block %s", fence).isNotNegative();
    from += fence.length();
    return text.substring(from, text.indexOf("```", from)).strip().lines().toList();
  }

  @Test
  void javaBlockIsTheCompiledService() throws IOException {
    String source = Files.readString(Path.of("src/test/java/com/example/BookService.java"),
        StandardCharsets.UTF_8);
    int from = source.indexOf("// README:begin") + "// README:begin".length();
    List<String> compiled = source.substring(from, source.indexOf("// README:end")).strip()
        .lines().toList();
    assertThat(block(section(), "```java")).isEqualTo(compiled);
  }

  @Configuration(proxyBeanMethods = false)
  @EnableCaching
  static class App {
    static final InMemoryStore STORE = InMemoryStore.create();

    @Bean
    CacheStore store() {
      return STORE; // replaces the client that sustainable-cache.addresses would create
    }

    @Bean
    BookRepository bookRepository() {
      return new BookRepository();
    }

    @Bean
    BookService bookService(BookRepository repository) {
      return new BookService(repository);
    }
  }

  @Test
  void propertiesBlockBindsAndTheServiceCaches() throws IOException {
    String[] properties = block(section(), "```properties").toArray(String[]::new);
    assertThat(properties).hasSize(4);
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(SustainableCacheAutoConfiguration.class))
        .withUserConfiguration(App.class)
        .withPropertyValues(properties)
        .run(context -> {
          assertThat(context).hasNotFailed();
          SustainableCacheManager manager = context.getBean(SustainableCacheManager.class);
          assertThat(manager.specOf("books").settings().ttl()).contains(Duration.ofSeconds(30));
          assertThat(manager.specOf("books").codec()).get().isInstanceOf(JacksonCodec.class);
          assertThat(manager.specOf("other").settings().ttl()).contains(Duration.ofMinutes(5));
          BookService service = context.getBean(BookService.class);
          BookRepository repository = context.getBean(BookRepository.class);
          assertThat(service.book(1)).isEqualTo(new Book(1, "title 1"));
          assertThat(service.book(1)).isEqualTo(new Book(1, "title 1"));
          assertThat(service.book(0)).isNull();
          assertThat(service.book(0)).isNull();
          assertThat(repository.queries()).isEqualTo(2);
          service.bookChanged(1);
          assertThat(service.book(1)).isEqualTo(new Book(1, "title 1"));
          assertThat(repository.queries()).isEqualTo(3);
          assertThat(App.STORE.gets("books:l1;").join()).isPresent();
        });
  }

  @Test
  void everyPropertyInTheTableExists() throws IOException {
    String metadata = Files.readString(
        Path.of("target/classes/META-INF/spring-configuration-metadata.json"),
        StandardCharsets.UTF_8);
    String section = section();
    String table = section.substring(section.indexOf("| property | default | meaning |"));
    table = table.substring(0, table.indexOf("\n\n"));
    List<String> names = new ArrayList<>();
    Matcher m = Pattern.compile("`([a-z][a-z.-]*)`").matcher(table);
    while (m.find()) {
      String name = m.group(1);
      if (name.contains("-") || !name.contains(".") && name.matches("[a-z-]+")) {
        names.add(name);
      }
    }
    names.removeIf(n -> List.of("sustainable", "xfetch", "none", "spymemcached", "arcus", "true")
        .contains(n));
    assertThat(names).contains("addresses", "settings", "value-type", "codec-bean", "enabled");
    for (String name : names) {
      String full = name.startsWith("caches.") ? "sustainable-cache.caches" : "sustainable-cache."
          + name;
      assertThat(metadata).as(name).contains("\"name\": \"" + full + "\"");
    }
  }

  /** The settings table lists every key of CacheSettings, each read with a value of its form. */
  @Test
  void everyKeyInTheSettingsTableIsACacheSettingsKey() throws IOException {
    String section = section();
    String table = section.substring(section.indexOf("| key | default | value |"));
    table = table.substring(0, table.indexOf("\n\n"));
    List<String> keys = new ArrayList<>();
    for (String row : table.lines().skip(2).toList()) {
      Matcher m = Pattern.compile("`([a-z][a-z-]*)`").matcher(row.split("\\|")[1]);
      while (m.find()) {
        keys.add(m.group(1));
      }
    }
    assertThat(keys).containsExactlyInAnyOrderElementsOf(CacheSettings.keys());
    for (String key : keys) {
      assertThatCode(() -> CacheSettings.from(Map.of(key, sample(key)))).as(key)
          .doesNotThrowAnyException();
    }
  }

  private static String sample(String key) {
    return switch (key) {
      case "refresh-policy" -> "xfetch:2";
      case "fleet-lease", "serve-stale-on-error", "near-cache-copy",
          "fail-writes-when-store-down" -> "true";
      case "refresh-threads", "refresh-queue-capacity" -> "8";
      case "max-value-size" -> "65536";
      case "ttl-jitter" -> "0.1";
      case "failure-backoff" -> "1s:20s";
      case "coalesce" -> "100";
      case "near-cache" -> "10000:1s";
      default -> "5s";
    };
  }

  @Test
  void namesTheVersionsOnTheClassPath() throws IOException {
    String section = section();
    assertThat(section).contains("Spring Boot " + SpringBootVersion.getVersion())
        .contains("`spring-boot-dependencies` " + SpringBootVersion.getVersion())
        .contains("Spring Framework " + SpringVersion.getVersion())
        .contains("Micrometer " + MeterRegistry.class.getPackage().getImplementationVersion())
        .contains("Jackson " + JsonMapper.builder().build().version().toString());
  }
}
