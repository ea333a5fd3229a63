package io.sustainablecache.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The lab's virtual-time mode on a tiny grid: the claims the README makes, checked in CI. */
final class StampedeLabTest {

  private static RunConfig config(LabPolicy.Kind policy, int instances, int tps, int ttl, int db,
      int periods) {
    return new RunConfig(policy, instances, tps, ttl, db, periods, 1, 1.0, 0, 4, 1024, 42,
        null);
  }

  @ParameterizedTest(name = "{0} req/s")
  @ValueSource(ints = {10, 100})
  void sus_neverMissesAfterWarmUpAndLoadsAtMostOncePerPeriod(int tps) {
    RunResult result = LabRun.virtual(config(LabPolicy.Kind.SUS, 1, tps, 3, 100, 8));

    assertThat(result.requests()).isEqualTo(7L * 3 * tps);
    assertThat(result.misses()).isZero();
    // One load per refresh cycle; a cycle is a TTL minus at most the 10% window, so at most
    // periods / 0.9 loads, rounded up for the load that straddles the end of the run.
    assertThat(result.loads()).isLessThanOrEqualTo((long) Math.ceil(result.periods() / 0.9))
        .isGreaterThanOrEqualTo(result.periods() - 1);
    assertThat(result.maxDbConcurrency()).isEqualTo(1);
    assertThat(result.p99Ms()).isZero(); // nobody waits for the database
    assertThat(result.errors()).isZero();
  }

  @ParameterizedTest(name = "{0} req/s")
  @ValueSource(ints = {10, 100})
  void plainTtl_missesInEveryPeriod(int tps) {
    RunResult result = LabRun.virtual(config(LabPolicy.Kind.NONE, 1, tps, 3, 100, 8));

    assertThat(result.misses()).isGreaterThanOrEqualTo(result.periods() - 1);
    assertThat(result.p99Ms()).isGreaterThan(0);
  }

  @Test
  void plainTtl_stampedesAtHighRate_lockDoesNot() {
    RunResult none = LabRun.virtual(config(LabPolicy.Kind.NONE, 1, 100, 3, 100, 8));
    RunResult lock = LabRun.virtual(config(LabPolicy.Kind.LOCK, 1, 100, 3, 100, 8));

    assertThat(none.maxDbConcurrency()).isGreaterThan(5); // every request in the gap loads
    assertThat(lock.maxDbConcurrency()).isEqualTo(1);
    assertThat(lock.misses()).as("the lock still leaves the miss latency")
        .isGreaterThanOrEqualTo(lock.periods() - 1);
  }

  @Test
  void per_missesAtLowRateWithAFastLoader_becauseOfTheOneSecondTick() {
    RunResult per = LabRun.virtual(config(LabPolicy.Kind.PER, 1, 10, 3, 10, 8));
    RunResult sus = LabRun.virtual(config(LabPolicy.Kind.SUS, 1, 10, 3, 10, 8));

    assertThat(per.misses()).isGreaterThanOrEqualTo(per.periods() - 1);
    assertThat(sus.misses()).isZero();
  }

  @Test
  void fourSusInstancesLoadAtMostOncePerPeriodEach() {
    RunResult result = LabRun.virtual(config(LabPolicy.Kind.SUS, 4, 100, 3, 100, 8));

    assertThat(result.misses()).isZero();
    assertThat(result.loadsPerPeriod()).isLessThanOrEqualTo(4.0);
  }

  @Test
  void virtualRunsAreExactlyRepeatableFromTheSeed() {
    RunConfig config = config(LabPolicy.Kind.SUS, 2, 100, 3, 100, 6);
    assertThat(LabRun.virtual(config).csvRow()).isEqualTo(LabRun.virtual(config).csvRow());
  }

  @Test
  void zipfKeysFollowTheSeed() {
    RunConfig config = new RunConfig(LabPolicy.Kind.SUS, 1, 100, 3, 10, 4, 50, 1.0, 0, 4, 1024,
        7, null);
    String[] keys = LabRun.keySequence(config);
    assertThat(keys).containsExactly(LabRun.keySequence(config));
    long hottest = java.util.Arrays.stream(keys).filter("k0"::equals).count();
    long coldest = java.util.Arrays.stream(keys).filter("k49"::equals).count();
    assertThat(hottest).isGreaterThan(10 * Math.max(1, coldest));
  }

  @Test
  void mainWritesTheCsvWithTheExactHeaderAndTheCharts(@TempDir Path dir) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int status = StampedeLab.run(new String[] {"--policies", "none,SUS", "--rates", "10",
        "--periods", "3", "--out", dir.toString()}, new PrintStream(bytes, true,
        StandardCharsets.UTF_8));

    assertThat(status).isZero();
    List<String> csv = Files.readAllLines(dir.resolve("results.csv"));
    assertThat(csv.get(0)).isEqualTo("policy,instances,tps,ttl_s,db_ms,requests,misses,loads,"
        + "periods,loads_per_period,p50_ms,p99_ms,max_ms,max_db_concurrency,rejected,"
        + "variant,lease,hit_p99_ms,writes,errors,stale_hits,refresh_writes,wasted_refreshes,"
        + "heap_mib,seed");
    assertThat(csv).hasSize(3);
    assertThat(csv.get(1)).startsWith("none,1,10,3,100,");
    assertThat(csv.get(2)).startsWith("SUS,1,10,3,100,");
    assertThat(dir.resolve("charts/SUS-x1-10tps-ttl3s-db100ms-latency.png")).isNotEmptyFile();
    assertThat(dir.resolve("charts/SUS-x1-10tps-ttl3s-db100ms-db.png")).isNotEmptyFile();
    // one comparison per group of runs, every policy on the same axes
    assertThat(dir.resolve("charts/compare-x1-10tps-ttl3s-db100ms-db.png")).isNotEmptyFile();
    assertThat(dir.resolve("charts/compare-x1-10tps-ttl3s-db100ms-latency.png"))
        .isNotEmptyFile();
    assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("[  2/2] SUS").contains("p99");
  }

  @Test
  void quickPresetCoversTheRequiredRuns() {
    List<RunConfig> runs = StampedeLab.plan(StampedeLab.parse(new String[] {"--quick"}));
    assertThat(runs).hasSize(10);
    assertThat(runs).filteredOn(r -> r.instances() == 4)
        .allMatch(r -> r.policy() == LabPolicy.Kind.SUS).hasSize(2);
    assertThat(StampedeLab.plan(StampedeLab.parse(new String[] {"--full"}))).hasSize(288);
  }

  @Test
  void realTimeQuickPresetMeasuresTenPeriodsInUnderFiveMinutes() {
    List<RunConfig> runs = StampedeLab.plan(StampedeLab.parse(
        new String[] {"--quick", "--memcached", "127.0.0.1:1"}));

    assertThat(runs).hasSize(7).allMatch(r -> r.measuredPeriods() == 10);
    assertThat(runs.stream().mapToLong(RunConfig::durationMillis).sum())
        .isLessThan(5 * 60_000L);
    assertThat(runs).filteredOn(r -> r.policy() == LabPolicy.Kind.SUS)
        .extracting(RunConfig::tps).containsExactlyInAnyOrder(10, 100);
  }

  @Test
  void faultsCsvHasTheExactHeaderAndOneRowPerScenario() {
    FaultSuite.FaultResult down = new FaultSuite.FaultResult("down", 1250, 0, 532, 32, 143, 0, 0);

    FaultSuite.FaultResult fleet = new FaultSuite.FaultResult("loader_failing_x4", 1251, 300,
        400, 30, 5, 0, 150, 4, 61, 2.5);

    assertThat(FaultSuite.CSV_HEADER).isEqualTo(
        "scenario,requests,caller_errors,loads,max_latency_ms,recovery_ms,rejected,stale_served,"
        + "instances,fault_loads,fault_loads_per_key_window");
    assertThat(down.csvRow()).isEqualTo("down,1250,0,532,32,143,0,0,1,,");
    assertThat(fleet.csvRow()).isEqualTo("loader_failing_x4,1251,300,400,30,5,0,150,4,61,2.50");
    assertThat(FaultSuite.table(List.of(down, fleet))).contains("down").contains("1250")
        .contains("loader_failing_x4").contains("2.50");
    assertThat(FailingDbScenario.backoffWindows(List.of(0L), 10_000, 1_000, 3_000))
        .as("windows start at 0, 1, 3, 6 and 9 s").isEqualTo(5);
    assertThat(StampedeLab.parse(new String[] {"--faults"}).faults()).isTrue();
    assertThatThrownBy(() -> StampedeLab.parse(new String[] {"--faults", "--arcus", "zk:1/s"}))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--memcached");
  }

  @Test
  void outageReads_reportsTheMedianOfEachFigure_perPhaseAndVariant() {
    List<OutageReadScenario.Row> runs = List.of(
        new OutageReadScenario.Row("defaults", "hung", 200, 19, 40, 15, 17, 5),
        new OutageReadScenario.Row("defaults", "hung", 210, 21, 30, 16, 18, 9),
        new OutageReadScenario.Row("defaults", "hung", 190, 20, 50, 14, 16, 7),
        new OutageReadScenario.Row("no cache", "hung", 180, 20, 30, 180, 199, -1));

    List<OutageReadScenario.Row> medians = OutageReadScenario.medians(runs);

    assertThat(medians).containsExactly(
        new OutageReadScenario.Row("defaults", "hung", 200, 20, 40, 15, 17, 7),
        new OutageReadScenario.Row("no cache", "hung", 180, 20, 30, 180, 199, -1));
    assertThat(OutageReadScenario.table(medians, 3)).contains("defaults").contains("no cache")
        .contains("medians of 3");
    assertThat(OutageReadScenario.requested(new String[] {"--outage-reads"})).isTrue();
    assertThat(StampedeLab.USAGE).contains("--outage-reads");
  }

  @Test
  void badOptionsFailWithAMessage() {
    assertThatThrownBy(() -> StampedeLab.parse(new String[] {"--rates", "ten"}))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'ten'");
    assertThatThrownBy(() -> StampedeLab.parse(new String[] {"--policies", "magic"}))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("magic");
    assertThatThrownBy(() -> StampedeLab.parse(new String[] {"--bogus"}))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--bogus");
    assertThatThrownBy(() -> StampedeLab.plan(StampedeLab.parse(new String[] {"--periods", "1"})))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("periods");
  }
}
