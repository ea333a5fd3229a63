package io.sustainablecache.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bulk-fleet scenario (issue 23) on its short preset ({@code --bulk-fleet --quick --lease
 * on}: four JVMs, two cold pages of 100 keys, a 50 ms bulk loader): a real memcached the lab
 * starts. With the fleet lease each page is loaded about once fleet-wide (at most 105 keys, where
 * four JVMs loading it each would be 400) and every value is the page's own. The full-length
 * figures are in {@code docs/results.md}. Needs the memcached binary.
 */
final class BulkFleetScenarioIT {

  @Test
  void fourJvmsReadingTheSameColdPage_loadEachKeyAboutOnceFleetWide_withNoWrongValue(
      @TempDir Path out) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream print = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    int status = BulkFleetScenario.run(new String[] {"--bulk-fleet", "--quick", "--lease", "on",
        "--out", out.toString()}, print);

    String report = bytes.toString(StandardCharsets.UTF_8);
    System.out.print(report);
    List<String> lines = Files.readAllLines(out.resolve("bulk-fleet.csv"));
    List<String> header = Arrays.asList(lines.get(0).split(","));
    assertThat(lines).as(report).hasSize(3); // two rounds
    for (String line : lines.subList(1, lines.size())) {
      String[] cells = line.split(",");
      assertThat(cells[header.indexOf("lease")]).isEqualTo("on");
      assertThat(Long.parseLong(cells[header.indexOf("keys")])).isEqualTo(100);
      assertThat(Long.parseLong(cells[header.indexOf("loaded")])).as(report)
          .isBetween(100L, 105L);
      assertThat(Long.parseLong(cells[header.indexOf("wrong")])).as(report).isZero();
    }
    assertThat(status).isZero();
  }
}
