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
}
