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
 * The coalesce scenario (issue 23, part 3) on its short preset ({@code --coalesce --smoke
 * --query-ms 50}), against a real memcached the lab starts: 200 threads asking for 200 different cold keys at once
 * make at most 10 loader calls, where the per-call cache makes 200; a cold request of an idle loading cache adds no latency beyond a
 * per-call cache's by half its 50 ms maximum wait (no timer wait); under Zipf load the loading cache makes fewer
 * database calls. The lab's latency goals (a burst's p50 at most 1.5x one query of its ids, an
 * idle miss at most 5 ms slower) are speed targets, reported by the scenario and measured in
 * {@code docs/results.md}, not asserted here: beside other builds on two cores a 200-thread
 * burst's median moved to 3x one query (739 against 246 ms) and 7 idle requests' to 9.6 against
 * 4.4 ms. The full-length figures are in {@code docs/results.md}. Needs the memcached
 * binary.
 */
final class CoalesceScenarioIT {

  /**
   * A query's fixed time, ms (the full run's is 5). How many calls a burst makes depends on how
   * long its 200 threads take to reach their misses (S) against how long a call takes (Q): the
   * first call, up to four full batches of 50 that start at once, and about S / Q more. On two
   * quiet cores S is 30 to 60 ms, which a 5 ms query cuts into 12 or more calls in some runs;
   * beside other builds (load 8) it reached 300 ms, and a 50 ms query made 10 calls, the limit.
   * With 100 ms, about 8 there.
   */
  private static final int QUERY_MILLIS = 100;

  @Test
  void aBurstOfDifferentColdKeys_makesFewLoaderCalls_andAnIdleMissWaitsForNoTimer(
      @TempDir Path out) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream print = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    int status = CoalesceScenario.run(new String[] {"--coalesce", "--smoke", "--no-charts",
        "--query-ms", Integer.toString(QUERY_MILLIS), "--out", out.toString()}, print);

    String report = bytes.toString(StandardCharsets.UTF_8);
    System.out.print(report);
    List<String> lines = Files.readAllLines(out.resolve("coalesce.csv"));
    List<String> header = Arrays.asList(lines.get(0).split(","));
    int coalescedBursts = 0;
    long perCallZipf = -1;
    long coalescedZipf = -1;
    double[] idleAdded = {Double.NaN, Double.NaN};
    for (String line : lines.subList(1, lines.size())) {
      String[] cells = line.split(",");
      String part = cells[header.indexOf("part")];
      boolean coalesced = cells[header.indexOf("cache")].equals("coalesced");
      long calls = Long.parseLong(cells[header.indexOf("calls")]);
      if (part.equals("burst")) {
        if (coalesced) {
          coalescedBursts++;
          assertThat(calls).as(report).isBetween(1L, (long) CoalesceScenario.MAX_CALLS);
        } else {
          assertThat(calls).as("one call per key without coalescing: " + report)
              .isEqualTo(200);
        }
      } else if (part.equals("idle")) {
        idleAdded[coalesced ? 0 : 1] = Double.parseDouble(cells[header.indexOf("added_ms_p50")]);
      } else if (part.equals("zipf")) {
        if (coalesced) {
          coalescedZipf = calls;
        } else {
          perCallZipf = calls;
        }
      }
    }
    assertThat(coalescedBursts).isEqualTo(2);
    assertThat(coalescedZipf).as(report).isPositive().isLessThan(perCallZipf);
    // the idle miss waits for no timer: the 50 ms maximum wait would add 50 ms to the median;
    // half of it separates "waited" from "did not" on a loaded machine, where 7 requests' medians
    // move by more than the lab's 5 ms goal (9.6 against 4.4 ms once in CI, beside 4 builds)
    assertThat(idleAdded[0]).as(report)
        .isLessThan(idleAdded[1] + CoalesceScenario.IDLE_MAX_WAIT_MS / 2.0);
    // the scenario ran to its end: its exit status is 0, or 1 for a missed goal, never a crash
    assertThat(status).as(report).isBetween(0, 1);
  }
}
