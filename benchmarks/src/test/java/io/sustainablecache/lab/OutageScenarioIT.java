package io.sustainablecache.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The outage scenario, run once for the project on its short preset ({@code --outage --quick}:
 * the library's defaults only; two reader JVMs at 400 reads/s in total, a writer JVM committing a
 * transaction every 100 ms, a memcached the lab starts hung with SIGSTOP for 3 s and, 4 s later,
 * killed for 3 s and started again; an H2 server). The goals of issue 31 that do not depend on
 * the machine's speed, each counted, none timed:
 *
 * <ul>
 *   <li>99 % or more of the writes that began while memcached was down commit (the fence's
 *       invalidation is owed, not refused);</li>
 *   <li>no read that began more than 2 s (docs/failures.md) after memcached answered again got
 *       an older row than a write that had returned, after the hang (memcached keeps the entries
 *       it had) and after the kill; and more than 50 such reads were checked each time;</li>
 *   <li>while memcached was down no reader JVM loaded the hot key more than about 20 times a
 *       second (the outage reuse of 50 ms), where each of its reads would otherwise load:
 *       about 200 a second here;</li>
 *   <li>and no read while memcached was killed got a row older than a write that had returned
 *       more than the outage reuse's 50 ms before it began.</li>
 * </ul>
 *
 * The latency and throughput goals depend on the machine and are reported, not asserted
 * ({@code docs/results.md} has the full run). Needs the memcached binary.
 */
final class OutageScenarioIT {

  @Test
  void throughAHangAndAKill_writesCommit_theDatabaseIsSpared_andNothingIsStalePastTheBound(
      @TempDir Path out) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream print = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    int status = OutageScenario.run(new String[] {"--outage", "--quick", "--no-charts", "--out",
        out.toString()}, print);

    String report = bytes.toString(StandardCharsets.UTF_8);
    System.out.print(report);
    List<String> lines = Files.readAllLines(out.resolve("outage-phases.csv"));
    List<String> header = Arrays.asList(lines.get(0).split(","));
    Map<String, Function<String, Double>> phases = new LinkedHashMap<>();
    for (String line : lines.subList(1, lines.size())) {
      String[] cells = line.split(",");
      assertThat(cells[0]).isEqualTo("default");
      phases.put(cells[1], column -> Double.parseDouble(cells[header.indexOf(column)]));
    }
    assertThat(phases).containsOnlyKeys(OutageScenario.PHASES);

    double committed = 0;
    double failed = 0;
    for (String down : List.of("hung", "killed")) {
      Function<String, Double> phase = phases.get(down);
      committed += phase.apply("writes_committed");
      failed += phase.apply("writes_failed");
      // 20 a second from the reuse, plus loads registered just before the phase that a
      // descheduled JVM started in it: 2 a second over the 3 s is 300 ms of such delay
      assertThat(phase.apply("loads_per_s_per_jvm")).as(down + "\n" + report)
          .isLessThanOrEqualTo(OutageScenario.LOADS_GOAL + 2);
      assertThat(phase.apply("reads")).as(down + "\n" + report).isGreaterThan(100);
    }
    // killed, a read loads, and may share a load begun up to 50 ms before it (the outage
    // reuse). Not asserted for the hang: the reads of the first milliseconds after memcached
    // resumes may get the entry it held since the hang began (docs/failures.md)
    assertThat(phases.get("killed").apply("stale_past_reuse")).as(report).isZero();
    assertThat(committed + failed).as(report).isGreaterThanOrEqualTo(20);
    assertThat(committed / (committed + failed)).as(report)
        .isGreaterThanOrEqualTo(OutageScenario.COMMIT_GOAL);
    for (String after : List.of("healthy after hang", "healthy after kill")) {
      Function<String, Double> phase = phases.get(after);
      // the last 2 s of each 4 s healthy phase: 800 reads offered, 139 in 1 s at load 11
      assertThat(phase.apply("checked_after_bound")).as(after + "\n" + report)
          .isGreaterThan(50);
      assertThat(phase.apply("stale_after_bound")).as(after + "\n" + report).isZero();
    }
    assertThat(status).as(report).isZero();
  }
}
