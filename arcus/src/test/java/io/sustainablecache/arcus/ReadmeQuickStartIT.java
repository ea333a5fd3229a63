package io.sustainablecache.arcus;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ConnectionFactoryBuilder;
import org.junit.jupiter.api.Test;

/**
 * The README's quick start, compiled and run against a real memcached. The code between the
 * markers must equal the README's block, except for the line that names the server's address.
 */
class ReadmeQuickStartIT {

  private final List<String> names = new ArrayList<>();
  private long hits;

  @Test
  void quickStartRunsAsWritten() throws IOException {
    InetSocketAddress address = MemcachedServer.shared().address();
    // README:begin
    InetSocketAddress memcached = address;
    ArcusClient client = new ArcusClient(new ConnectionFactoryBuilder().build(), List.of(memcached));
    try (SustainableCache<String> names = SustainableCache.builder(ArcusStore.of(client))
        .namespace("user-name")
        .ttl(Duration.ofSeconds(30))
        .codec(ValueCodec.utf8())
        .build()) {
      String name = names.get("42", id -> "name of user " + id); // your DB query goes here
      String again = names.get("42", id -> "name of user " + id); // a hit: no query
      names.invalidate("42"); // after the user is renamed
      this.names.add(name);
      this.names.add(again);
      this.hits = names.stats().hitCount();
    } finally {
      client.shutdown();
    }
    // README:end
    assertThat(this.names).containsExactly("name of user 42", "name of user 42");
    assertThat(hits).as("the second read was answered by the server").isEqualTo(1);
  }

  @Test
  void readmeBlockIsTheCodeThisTestRuns() throws IOException {
    String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
    String source = Files.readString(
        Path.of("src/test/java/io/sustainablecache/arcus/ReadmeQuickStartIT.java"),
        StandardCharsets.UTF_8);

    List<String> tested = between(source, "    // README:begin", "    // README:end").stream()
        .filter(line -> !line.contains("this."))
        .map(line -> line.startsWith("    ") ? line.substring(4) : line)
        .toList();
    List<String> documented = between(readme, "## Quick start\n\n```java", "```");

    assertThat(documented.get(0))
        .isEqualTo("InetSocketAddress memcached = new InetSocketAddress(\"127.0.0.1\", 11211);");
    assertThat(documented.subList(1, documented.size()))
        .isEqualTo(tested.subList(1, tested.size()));
  }

  private static List<String> between(String text, String begin, String end) {
    int from = text.indexOf(begin);
    assertThat(from).as("marker %s", begin).isNotNegative();
    from += begin.length();
    int to = text.indexOf(end, from);
    return text.substring(from, to).strip().lines().toList();
  }
}
