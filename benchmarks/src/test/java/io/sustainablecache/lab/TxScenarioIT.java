package io.sustainablecache.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The transactions scenario, run once for the project on its short preset ({@code --tx --quick}:
 * 4 s per run, plain and fenced): a real memcached and an H2 server the lab starts, two reader
 * JVMs. The fenced writes keep their promise (no read that began once a write had returned got
 * an older row; nothing stale cached after quiescence); the plain invalidation inside the
 * transaction does not, which shows that the measurement can fail. The full-length figures are
 * in {@code docs/results.md}. Needs the memcached binary (aborted without it, failed on CI).
 *
 * <p>The hot-key mode's preset too ({@code --tx --hot --quick}: one reader JVM at 600 reads/s,
 * four writes a second apart holding 50 ms before the commit, the new fence; one run, to keep the
 * suite within its budget): while the transaction is open every read is answered with the value
 * the fence replaced (no load began there), nothing is stale after a write returned or cached
 * after quiescence, and the reads that did not find the fence load once per write (the reload of
 * the committed row); that figure also shows that the loads are counted. In all, fenced loads
 * included, a write costs at most 1.5 loads (reads during the commit step get the prior for the
 * commit window; those of a write whose commit step outlasted it are excused). The full
 * comparison (the previous release's fence, after-commit, plain) is in {@code docs/results.md}.
 * Every figure is counted, none timed.
 */
final class TxScenarioIT {

  @Test
  void fencedWrites_leaveNoStaleReadOrValue_whilePlainInvalidationsInsideTheTransactionDo(
      @TempDir Path out) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream print = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    int status = TxScenario.run(new String[] {"--tx", "--quick", "--no-charts", "--out",
        out.toString()}, print);

    String report = bytes.toString(StandardCharsets.UTF_8);
    System.out.print(report);
    List<String> lines = Files.readAllLines(out.resolve("tx.csv"));
    List<String> header = Arrays.asList(lines.get(0).split(","));
    Map<String, Function<String, Long>> rows = lines.stream().skip(1)
        .map(line -> line.split(","))
        .collect(Collectors.toMap(cells -> cells[0], cells -> column -> (long) Double.parseDouble(
            cells[header.indexOf(column)])));
    Function<String, Long> plain = rows.get("plain");
    Function<String, Long> fenced = rows.get("fenced");

    assertThat(fenced.apply("writes")).as(report).isPositive();
    assertThat(fenced.apply("reads")).as(report).isGreaterThan(1_000);
    assertThat(fenced.apply("stale_after_write")).as(report).isZero();
    assertThat(fenced.apply("stale_past_near_bound")).as(report).isZero();
    assertThat(fenced.apply("stale_keys_after_quiescence")).as(report).isZero();
    assertThat(plain.apply("stale_after_commit")).as(report).isPositive();
    assertThat(plain.apply("stale_after_write")).as(report).isPositive();
    assertThat(plain.apply("stale_keys_after_quiescence")).as(report).isPositive();
    assertThat(status).isZero();
  }

  /**
   * How long after {@code beforeCommit()} reads are answered with the value a fence replaced
   * (WriteFences.COMMIT_WINDOW_MILLIS).
   */
  private static final long COMMIT_WINDOW_MILLIS = 100;

  @Test
  void hotKey_theNewFenceLoadsNothingWhileTheTransactionIsOpen_andOnceAWriteOutsideTheFence(
      @TempDir Path out) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream print = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    int status = TxScenario.run(new String[] {"--tx", "--hot", "--quick", "--no-charts",
        "--out", out.toString()}, print);

    String report = bytes.toString(StandardCharsets.UTF_8);
    System.out.print(report);
    List<String> lines = Files.readAllLines(out.resolve("tx-hot.csv"));
    List<String> header = Arrays.asList(lines.get(0).split(","));
    String[] cells = lines.get(1).split(",");
    Function<String, Double> fenced = column -> Double.parseDouble(
        cells[header.indexOf(column)]);

    assertThat(cells[0]).isEqualTo("fenced");
    assertThat(fenced.apply("writes")).as(report).isGreaterThanOrEqualTo(3);
    assertThat(fenced.apply("reads")).as(report).isGreaterThan(1_000);
    assertThat(fenced.apply("stale_after_write")).as(report).isZero();
    assertThat(fenced.apply("stale_keys")).as(report).isZero();
    // the prior answered the reads while the transaction was open
    assertThat(fenced.apply("loads_open")).as(report).isZero();
    assertThat(fenced.apply("fenced_hits")).as(report).isPositive();
    // the loads of reads that did not find the fence: the reload of the committed row, once per
    // write for the fleet (the lease)
    double unfenced = (fenced.apply("loads") - fenced.apply("fenced_loads"))
        / fenced.apply("writes");
    assertThat(unfenced).as(report).isBetween(0.5, 1.5);
    // and in all: reads from beforeCommit() until the release are answered with the prior for
    // the commit window (100 ms), so a write costs about one load (issue 30: 1.1 on average). A
    // write whose release a descheduled writer delayed past the window (its commit step to its
    // return, as the writer measured it) lets the reads after the window load, fenced, until
    // the release: those are excused, counted from the writer's own record
    long slow = slowReleases(out, COMMIT_WINDOW_MILLIS);
    double excused = slow > 0 ? fenced.apply("fenced_loads") / fenced.apply("writes") : 0;
    assertThat(fenced.apply("loads_per_write") - excused).as("%s releases past the window: %d",
        report, slow).isLessThanOrEqualTo(1.5);
    assertThat(status).isZero();
  }

  /**
   * The fenced run's writes whose commit step (from {@code beforeCommit()}) to the writer's
   * return took longer than {@code boundMillis}: the writer's {@code .commits} lines are
   * version, begin, commit step, committed and returned, {@code System.nanoTime()} each.
   */
  private static long slowReleases(Path out, long boundMillis) throws IOException {
    try (var dirs = Files.list(out)) {
      Path dir = dirs.filter(d -> d.getFileName().toString().startsWith("tx-hot-fenced"))
          .findFirst().orElseThrow();
      return Files.readAllLines(dir.resolve("writer.commits")).stream()
          .map(line -> line.trim().split(" "))
          .filter(f -> Long.parseLong(f[4]) - Long.parseLong(f[2])
              > TimeUnit.MILLISECONDS.toNanos(boundMillis))
          .count();
    }
  }
}
