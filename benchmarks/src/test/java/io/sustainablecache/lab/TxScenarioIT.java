package io.sustainablecache.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
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
 * four writes a second apart holding 50 ms before the commit; the new fence and the previous
 * release's, whose JVMs run with {@code fenceWithoutPrior}): the new fence answers every read
 * while the transaction is open (no load began there) and leaves nothing stale, and it costs
 * fewer loads per write than the previous release's fence, which loads under the open
 * transaction (that shows that the measurement can fail). Every figure is counted, none timed.
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

  @Test
  void hotKey_theNewFenceLoadsNothingWhileTheTransactionIsOpen_andFewerTimesThanTheOldFence(
      @TempDir Path out) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream print = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    int status = TxScenario.run(new String[] {"--tx", "--hot", "--quick", "--no-charts",
        "--out", out.toString()}, print);

    String report = bytes.toString(StandardCharsets.UTF_8);
    System.out.print(report);
    List<String> lines = Files.readAllLines(out.resolve("tx-hot.csv"));
    List<String> header = Arrays.asList(lines.get(0).split(","));
    Map<String, Function<String, Double>> rows = lines.stream().skip(1)
        .map(line -> line.split(","))
        .collect(Collectors.toMap(cells -> cells[0], cells -> column -> Double.parseDouble(
            cells[header.indexOf(column)])));
    Function<String, Double> fenced = rows.get("fenced");
    Function<String, Double> old = rows.get("fenced-noprior");

    assertThat(fenced.apply("writes")).as(report).isGreaterThanOrEqualTo(3);
    assertThat(fenced.apply("reads")).as(report).isGreaterThan(1_000);
    assertThat(fenced.apply("stale_after_write")).as(report).isZero();
    assertThat(fenced.apply("stale_keys")).as(report).isZero();
    assertThat(fenced.apply("loads_open")).as(report).isZero();
    assertThat(fenced.apply("fenced_hits")).as(report).isPositive();
    assertThat(old.apply("writes")).as(report).isGreaterThanOrEqualTo(3);
    assertThat(old.apply("stale_after_write")).as(report).isZero();
    assertThat(old.apply("loads_open")).as(report).isPositive();
    assertThat(old.apply("fenced_hits")).as(report).isZero();
    assertThat(fenced.apply("loads_per_write")).as(report)
        .isLessThan(old.apply("loads_per_write"));
    // the loads of reads that did not find the fence (the reload of the committed row, one for
    // the fleet under the lease): at most 1.5 per write. The fenced loads on top (reads between
    // beforeCommit() and the release, and reads that saw the fence and loaded after it) are not
    // bounded here: 1 to 1.4 per write in this preset on a loaded 2-core machine
    // (docs/results.md), above issue 30's 1.1
    assertThat((fenced.apply("loads") - fenced.apply("fenced_loads")) / fenced.apply("writes"))
        .as(report).isLessThanOrEqualTo(1.5);
    assertThat(status).isZero();
  }
}
