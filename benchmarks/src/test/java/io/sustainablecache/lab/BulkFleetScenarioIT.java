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
 * on}: four JVMs, two cold pages of 100 keys, a {@value #DB_MILLIS} ms bulk loader): a real
 * memcached the lab starts. With the fleet lease each page is loaded about once fleet-wide (at
 * most 105 keys, where four JVMs loading it each would be 400) and every value is the page's own.
 * The full-length figures are in {@code docs/results.md}. Needs the memcached binary.
 *
 * <p>A miss that lost a key's lease waits for the holder's write at most twice the measured load
 * time plus 200 ms, then loads the key itself (the lease trades a duplicate load for never
 * waiting without bound). So the goal holds while a holder's load and write of the page finish
 * within that wait: with the lab's default 50 ms loader that leaves the holder 250 ms, which the
 * build's other JVMs on two cores once took from it (145 keys in a round, its page 480 ms). With
 * {@value #DB_MILLIS} ms the holder has 700 ms beyond its load. A round in which some JVM's page
 * took longer than that wait (load 28: 2.1 s) is held to what the design still promises there: no
 * wrong value and at most one load of a key per JVM.
 */
final class BulkFleetScenarioIT {

  /** The bulk loader's time, ms. */
  private static final int DB_MILLIS = 500;
  /** How long a miss that lost a key's lease waits for the holder's write: see the class. */
  private static final int WAIT_MILLIS = 2 * DB_MILLIS + 200;

  @Test
  void fourJvmsReadingTheSameColdPage_loadEachKeyAboutOnceFleetWide_withNoWrongValue(
      @TempDir Path out) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream print = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    int status = BulkFleetScenario.run(new String[] {"--bulk-fleet", "--quick", "--lease", "on",
        "--db-ms", Integer.toString(DB_MILLIS), "--out", out.toString()}, print);

    String report = bytes.toString(StandardCharsets.UTF_8);
    System.out.print(report);
    List<String> lines = Files.readAllLines(out.resolve("bulk-fleet.csv"));
    List<String> header = Arrays.asList(lines.get(0).split(","));
    assertThat(lines).as(report).hasSize(3); // two rounds
    boolean slowRound = false;
    for (String line : lines.subList(1, lines.size())) {
      String[] cells = line.split(",");
      assertThat(cells[header.indexOf("lease")]).isEqualTo("on");
      assertThat(Long.parseLong(cells[header.indexOf("keys")])).isEqualTo(100);
      assertThat(Long.parseLong(cells[header.indexOf("wrong")])).as(report).isZero();
      long loaded = Long.parseLong(cells[header.indexOf("loaded")]);
      double pageMax = Double.parseDouble(cells[header.indexOf("page_ms_max")]);
      if (pageMax <= WAIT_MILLIS) {
        // every JVM's page finished within a waiter's patience: the holders' loads were the
        // only ones
        assertThat(loaded).as(report).isBetween(100L, 105L);
      } else {
        // the machine held a page past the waiters' patience (at load 28 on two cores: 2.1 s):
        // waiters loaded their keys themselves, as designed; still no JVM loads a key twice
        slowRound = true;
        assertThat(loaded).as(report).isBetween(100L, 400L);
      }
    }
    if (!slowRound) {
      assertThat(status).as(report).isZero();
    }
  }
}
