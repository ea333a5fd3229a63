package io.sustainablecache.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.sustainablecache.internal.Envelope;
import io.sustainablecache.testing.InMemoryStore;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The scenarios' bookkeeping, in virtual time: the issue's goals, checked in CI. */
final class LabScenariosTest {

  private static StampedeLab.Options options(String... args) {
    return StampedeLab.parse(args);
  }

  private static RunConfig sus(int instances, int tps, Boolean lease) {
    return new RunConfig(LabPolicy.Kind.SUS, instances, tps, 3, 100, 10, 1, 1.0, 0, 4, 1024, 42,
        lease);
  }

  // -- fleet -------------------------------------------------------------------------------------

  @ParameterizedTest(name = "{0} req/s")
  @ValueSource(ints = {10, 100})
  void fleet_sixteenInstancesWithTheLease_meetTheIssuesGoals(int tps) {
    RunResult r = LabRun.virtual(sus(16, tps, true));

    assertThat(r.misses()).isZero();
    assertThat(r.errors()).isZero();
    assertThat(r.loadsPerPeriod()).isLessThanOrEqualTo(FleetScenario.MAX_LOADS_PER_PERIOD);
    assertThat(r.maxDbConcurrency()).isEqualTo(1);
    assertThat(r.latencyGoalMet()).isTrue();
    assertThat(r.totals().leaseLost()).as("the other instances saw the lease").isPositive();
    assertThat(FleetScenario.goalsMet(r)).isTrue();
  }

  @Test
  void fleet_sixteenInstancesWithoutTheLease_loadTheKeySeveralTimesPerPeriod() {
    RunResult r = LabRun.virtual(sus(16, 100, false));

    assertThat(r.misses()).isZero(); // still SUS: nobody waits
    assertThat(r.loadsPerPeriod()).isGreaterThan(2 * FleetScenario.MAX_LOADS_PER_PERIOD);
    assertThat(r.maxDbConcurrency()).isGreaterThan(1);
    assertThat(r.totals().leaseWon()).isZero();
  }

  @Test
  void fleet_planCoversOneFourSixteenInstancesLeaseOnAndOff_realTimeFour() {
    List<RunConfig> virtual = FleetScenario.plan(options("--scenario", "fleet"), false);
    List<RunConfig> real = FleetScenario.plan(options("--scenario", "fleet"), true);

    assertThat(virtual).extracting(RunConfig::instances).containsOnly(1, 4, 16);
    assertThat(virtual).hasSize(2 * (1 + 2 + 2)); // 2 rates; one instance needs no lease off
    assertThat(virtual).filteredOn(c -> c.instances() == 16)
        .extracting(RunConfig::lease).containsExactlyInAnyOrder(true, false, true, false);
    assertThat(real).hasSize(4).allMatch(c -> c.instances() == 4 && c.measuredPeriods() == 10);
    assertThat(virtual).allMatch(c -> c.ttlSeconds() == 3 && c.dbMillis() == 100);
  }

  @Test
  void fleetScenario_writesItsCsvWithTheNewColumnsAndComparisonCharts(@TempDir Path dir)
      throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int status = StampedeLab.run(new String[] {"--scenario", "fleet", "--instances", "4",
        "--rates", "10", "--periods", "4", "--out", dir.toString()},
        new PrintStream(bytes, true, StandardCharsets.UTF_8));

    assertThat(status).isZero();
    List<String> csv = Files.readAllLines(dir.resolve("fleet.csv"));
    assertThat(csv.get(0)).isEqualTo(RunResult.CSV_HEADER).contains(",variant,lease,hit_p99_ms,")
        .contains(",wasted_refreshes,heap_mib,seed");
    assertThat(csv).hasSize(3);
    assertThat(csv.get(1)).startsWith("SUS,4,10,3,100,").contains(",on,");
    assertThat(csv.get(2)).startsWith("SUS,4,10,3,100,").contains(",off,");
    assertThat(dir.resolve("charts/fleet-10tps-db.png")).isNotEmptyFile();
    assertThat(dir.resolve("charts/fleet-10tps-latency.png")).isNotEmptyFile();
    assertThat(Files.readString(dir.resolve("scenarios.txt"))).contains("leases_won")
        .contains("met");
  }

  // -- processes: the parent's merge of the members' parts ---------------------------------------

  @Test
  void aPartWrittenAndReadBackMergesToTheSameResult(@TempDir Path dir) throws Exception {
    RunConfig config = sus(4, 100, true);
    RunResult direct = LabRun.virtual(config);
    // A virtual run's part is not kept; re-create one from the result's series and counters.
    RunResult.Series s = direct.series();
    LabRun.Part part = new LabRun.Part(s.arrivals(), LabRun.keySequence(config), s.latencies(),
        s.outcomes(), new boolean[s.arrivals().length], s.queries(), s.expiries(),
        direct.writes(), direct.refreshWrites(), direct.wastedRefreshes(), direct.rejected(),
        -1, direct.totals());
    part.write(dir.resolve("part.txt"));
    RunResult merged = LabRun.merge(config, List.of(LabRun.Part.read(config,
        dir.resolve("part.txt"))), 0);

    assertThat(merged.csvRow()).isEqualTo(direct.csvRow());
    assertThat(merged.series().queries()).isEqualTo(s.queries());
  }

  @Test
  void mergingMembersCountsFirstFillsFleetWide(@TempDir Path dir) throws Exception {
    RunConfig config = new RunConfig(LabPolicy.Kind.SUS, 2, 10, 3, 100, 2, 1, 1.0, 0, 4, 1024,
        42, true);
    // Member 0 filled the key (query 0-100 ms); member 1 never loaded it, and its first request
    // at 100 ms waited: with both parts merged that is the key's first fill, not a miss.
    int n = config.requests();
    long[] arrivals = new long[n];
    for (int i = 0; i < n; i++) {
      arrivals[i] = i * 100L;
    }
    byte[] outcomes0 = new byte[n];
    byte[] outcomes1 = new byte[n];
    for (int i = 0; i < n; i++) {
      (i % 2 == 0 ? outcomes0 : outcomes1)[i] = LabRun.HIT;
    }
    outcomes0[0] = LabRun.MISS;
    outcomes1[1] = LabRun.MISS;
    outcomes1[41] = LabRun.MISS; // after warm-up (3 s): a real miss
    String[] keys = LabRun.keySequence(config);
    LabRun.Part p0 = new LabRun.Part(arrivals, keys, new long[n], outcomes0, new boolean[n],
        List.of(new SimulatedDatabase.Query(0, 100, "hot", 1, false, false)), List.of(), 1, 0,
        0, 0, -1, RunResult.Totals.ZERO);
    LabRun.Part p1 = new LabRun.Part(arrivals, keys, new long[n], outcomes1, new boolean[n],
        List.of(new SimulatedDatabase.Query(4_000, 4_100, "hot", 1, false, true)), List.of(), 1,
        1, 0, 0, -1, RunResult.Totals.ZERO);
    p0.write(dir.resolve("0.txt"));
    p1.write(dir.resolve("1.txt"));

    RunResult r = LabRun.merge(config, List.of(LabRun.Part.read(config, dir.resolve("0.txt")),
        LabRun.Part.read(config, dir.resolve("1.txt"))), 0);

    assertThat(r.requests()).isEqualTo(30); // 3 s measured at 10 req/s, both members
    assertThat(r.misses()).isEqualTo(1);
    assertThat(r.loads()).isEqualTo(1);
    assertThat(r.writes()).isEqualTo(2);
  }

  @Test
  void maxConcurrencyComesFromTheQueryIntervals() {
    List<SimulatedDatabase.Query> queries = List.of(
        new SimulatedDatabase.Query(0, 100, "a", 1, false, false),
        new SimulatedDatabase.Query(50, 150, "a", 1, false, false),
        new SimulatedDatabase.Query(100, 200, "a", 1, false, false), // starts as the first ends
        new SimulatedDatabase.Query(120, 130, "a", 1, false, false));

    assertThat(LabRun.maxConcurrency(queries, 0)).isEqualTo(3);
    assertThat(LabRun.maxConcurrency(queries, 110)).isEqualTo(3);
    assertThat(LabRun.maxConcurrency(queries, 125)).isZero(); // no query starts after 125
    assertThat(LabRun.maxConcurrency(queries.subList(0, 3), 0)).isEqualTo(2);
  }

  // -- cold start ----------------------------------------------------------------------------------

  @ParameterizedTest(name = "{0} instances")
  @ValueSource(ints = {4, 16})
  void coldStart_withTheLease_loadsOnce_withoutIt_oncePerInstance(int n) {
    ColdStartScenario.Trial leased = ColdStartScenario.virtual(n, true, 42);
    ColdStartScenario.Trial unleased = ColdStartScenario.virtual(n, false, 42);

    assertThat(leased.dbLoads()).isEqualTo(1);
    assertThat(leased.errors()).isZero();
    assertThat(leased.latencies()).hasSize(n);
    assertThat(java.util.Arrays.stream(leased.latencies()).min().orElse(0)).isEqualTo(100);
    assertThat(leased.totals().leaseLost()).isEqualTo(n - 1);
    assertThat(unleased.dbLoads()).isEqualTo(n);
    assertThat(unleased.max()).isEqualTo(100);
  }

  // -- zipf: wasted refreshes --------------------------------------------------------------------

  @Test
  void aRefreshNobodyReadIsWasted_oneReadByACallerIsNot() {
    VirtualTimeline timeline = new VirtualTimeline(1_790_000_000_000L);
    long t0 = timeline.millis();
    CountingStore store = new CountingStore(InMemoryStore.create(timeline), timeline, "");
    store.measureFrom(t0);
    byte[] refreshA = Envelope.encode(t0, t0 + 3_000, 1,
        ("a@1#1" + SimulatedDatabase.REFRESH_SUFFIX).getBytes(StandardCharsets.UTF_8));
    byte[] refreshB = Envelope.encode(t0, t0 + 3_000, 1,
        ("b@1#2" + SimulatedDatabase.REFRESH_SUFFIX).getBytes(StandardCharsets.UTF_8));
    byte[] fill = Envelope.encode(t0, t0 + 3_000, 1, "c@1#3".getBytes(StandardCharsets.UTF_8));
    store.set("ns:a", refreshA, 5);
    store.set("ns:b", refreshB, 5);
    store.set("ns:c", fill, 5);
    store.gets("ns:b").join(); // the cache's own read (a lease check): not a caller's
    try (CountingStore.Request r = CountingStore.request()) {
      store.getsAll(List.of("ns:a")).join(); // a caller read a
    }
    timeline.runUntil(t0 + 10_000);

    assertThat(store.refreshWrites()).isEqualTo(2);
    assertThat(store.wastedRefreshes(timeline.millis())).isEqualTo(1); // b
    assertThat(store.wastedRefreshes(t0 + 1_000)).isZero(); // b still on the server then
    assertThat(store.callerReads()).isEqualTo(1);
  }

  @Test
  void aRequestIsAHitOnlyIfItsAnswerIsTheValueItsOwnReadFound() {
    VirtualTimeline timeline = new VirtualTimeline(1_790_000_000_000L);
    CountingStore store = new CountingStore(InMemoryStore.create(timeline), timeline, "");
    long t0 = timeline.millis();
    store.set("ns:k", Envelope.encode(t0, t0 + 3_000, 1,
        "k@1#1".getBytes(StandardCharsets.UTF_8)), 5);
    store.set("ns:gone", Envelope.encodeAbsent(t0, t0 + 3_000, 1), 5);
    CountingStore.Request hit;
    CountingStore.Request absent;
    CountingStore.Request none;
    try (CountingStore.Request r = CountingStore.request()) {
      store.gets("ns:k");
      store.gets("ns:k"); // a second read (a lease re-read) does not replace the first
      hit = r;
    }
    try (CountingStore.Request r = CountingStore.request()) {
      store.gets("ns:gone");
      absent = r;
    }
    try (CountingStore.Request r = CountingStore.request()) {
      store.gets("ns:nothing");
      none = r;
    }

    assertThat(hit.answeredFromRead(Optional.of("k@1#1"))).isTrue();
    assertThat(hit.answeredFromRead(Optional.of("k@5#2"))).isFalse(); // loaded for it
    assertThat(hit.reads()).isEqualTo(2);
    assertThat(absent.answeredFromRead(Optional.empty())).isTrue();
    assertThat(none.answeredFromRead(Optional.of("nothing@1#3"))).isFalse();
    assertThat(CountingStore.inRequest()).isFalse();
  }

  @Test
  void zipf_susMissesLessThanLock_andCountsItsRefreshes() {
    RunConfig base = new RunConfig(LabPolicy.Kind.SUS, 1, 500, 5, 20, 6, 5_000, 0.99, 0, 4,
        1024, 42, null).with(RunConfig.Tweaks.NONE.heap());
    RunResult sus = LabRun.virtual(base);
    RunResult lock = LabRun.virtual(new RunConfig(LabPolicy.Kind.LOCK, 1, 500, 5, 20, 6, 5_000,
        0.99, 0, 4, 1024, 42, null));

    assertThat(sus.misses()).isPositive().isLessThan(lock.misses());
    assertThat(sus.refreshWrites()).isPositive();
    assertThat(sus.wastedRefreshes()).isPositive().isLessThan(sus.refreshWrites());
    assertThat(lock.refreshWrites()).isZero();
    assertThat(sus.heapMiB()).isPositive();
    assertThat(lock.heapMiB()).isEqualTo(-1.0);
  }

  // -- getAll ----------------------------------------------------------------------------------

  @Test
  void getAll_readsAPageInOneRoundTrip_andRefreshesItInBulk() {
    BulkScenario.Figures all = BulkScenario.virtual(BulkScenario.Variant.GET_ALL, 4, 8, 5, 20, 4,
        42).figures();
    BulkScenario.Figures small = BulkScenario.virtual(BulkScenario.Variant.GET_ALL_SMALL,
        4, 8, 5, 20, 4, 42).figures();
    BulkScenario.Figures gets = BulkScenario.virtual(BulkScenario.Variant.GETS, 4, 8, 5, 20, 4,
        42).figures();

    assertThat(all.pageMisses()).isZero();
    assertThat(all.readsPerPage()).isEqualTo(1.0);
    assertThat(all.loaderCallsPerPage()).isLessThanOrEqualTo(1.0);
    assertThat(all.keysPerCall()).isGreaterThan(5);
    assertThat(all.refreshCalls()).isPositive();
    assertThat(small.keysPerCall()).isLessThanOrEqualTo(10);
    assertThat(small.refreshCallsPerPagePeriod()).isGreaterThan(all.refreshCallsPerPagePeriod());
    assertThat(gets.readsPerPage()).isEqualTo(100.0);
    assertThat(gets.keysPerCall()).isEqualTo(1.0);
    assertThat(gets.refreshCallsPerPagePeriod()).isGreaterThan(20 * all
        .refreshCallsPerPagePeriod());
  }

  // -- absent ----------------------------------------------------------------------------------

  @Test
  void absent_negativeCachingStopsTheRepeatedLoadsOfIdsWithoutARow() {
    List<RunConfig> configs = AbsentScenario.configs(options("--scenario", "absent",
        "--rates", "500", "--periods", "4"));
    RunResult cached = LabRun.virtual(configs.get(0));
    RunResult uncached = LabRun.virtual(configs.get(1));

    long[] cachedLoads = AbsentScenario.absentLoads(cached);
    long[] uncachedLoads = AbsentScenario.absentLoads(uncached);
    long absentRequests = AbsentScenario.absentRequests(cached);
    assertThat(absentRequests).isEqualTo(AbsentScenario.absentRequests(uncached))
        .isGreaterThan(1_000);
    assertThat(cachedLoads[0]).isLessThan(absentRequests / 10);
    assertThat(uncachedLoads[0]).isGreaterThan(absentRequests * 9 / 10);
    assertThat(cached.totals().absentHits()).isPositive();
    assertThat(uncached.totals().absentHits()).isZero();
    assertThat(cached.errors()).isZero(); // find: no value is an answer, not an error
  }

  // -- failing database --------------------------------------------------------------------------

  @Test
  void failingDb_oneInstanceLoadsAboutOncePerKeyPerBackoffWindow_callersFailFast() {
    List<RunConfig> configs = FailingDbScenario.configs(options("--scenario", "failingdb"));
    assertThat(configs).extracting(RunConfig::instances).containsExactly(1, 4, 4);
    RunResult one = LabRun.virtual(configs.get(0));

    FailingDbScenario.Failure f = FailingDbScenario.failure(one);
    assertThat(f.loads()).isPositive();
    assertThat(f.loadsPerWindow()).isBetween(0.7, 1.3);
    assertThat(f.hits()).as("stale values within grace").isPositive();
    assertThat(f.errors()).as("after the items left the server").isPositive();
    assertThat(f.maxErrorMs()).as("an error costs at most one failing query")
        .isLessThanOrEqualTo(one.config().dbMillis());
    assertThat(f.recoveryMs()).isBetween(0L, 1_000L);
  }

  // -- jitter ----------------------------------------------------------------------------------

  @Test
  void jitter_spreadsTheLoadsOfABatchWarmedCohort() {
    RunConfig base = new RunConfig(LabPolicy.Kind.SUS, 1, 2_000, 10, 10, 3, 2_000, 0, 0, 64,
        1024, 42, null);
    RunResult none = LabRun.virtual(base.with(RunConfig.Tweaks.NONE.preloaded(0)));
    RunResult half = LabRun.virtual(base.with(RunConfig.Tweaks.NONE.preloaded(0.5)));

    JitterScenario.Rate noneRate = JitterScenario.rate(none);
    JitterScenario.Rate halfRate = JitterScenario.rate(half);
    assertThat(none.series().queries()).anyMatch(q -> q.start() == 0 && q.keys() == 2_000);
    assertThat(noneRate.peakToMean()).isGreaterThan(JitterScenario.MAX_PEAK_TO_MEAN);
    assertThat(halfRate.peakToMean()).isLessThanOrEqualTo(JitterScenario.MAX_PEAK_TO_MEAN);
    assertThat(halfRate.mean()).isPositive();
  }

  // -- options ---------------------------------------------------------------------------------

  @Test
  void scenarioOptions() {
    assertThat(options("--scenario", "all").scenarios()).containsExactlyElementsOf(
        Scenarios.NAMES);
    assertThat(options("--scenario", "fleet, zipf").scenarios()).containsExactly("fleet",
        "zipf");
    assertThat(options().scenarios()).isEmpty();
    assertThat(options("--repeat", "3").repeat()).isEqualTo(3);
    assertThatThrownBy(() -> options("--scenario", "stampede"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("stampede")
        .hasMessageContaining("fleet");
    assertThatThrownBy(() -> options("--scenario", "fleet", "--processes", "4"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--memcached");
    assertThat(StampedeLab.USAGE).contains("--scenario").contains("--processes")
        .doesNotContain("Testcontainers,");
  }

  @Test
  void mediansOfRepeatedRuns() {
    RunResult a = LabRun.virtual(sus(1, 10, null).withSeed(1));
    RunResult b = LabRun.virtual(sus(1, 10, null).withSeed(2));
    RunResult c = LabRun.virtual(sus(1, 10, null).withSeed(3));

    List<RunResult> medians = Repeats.medians(List.of(a, b, c), 3);
    assertThat(medians).hasSize(1);
    double[] loads = {a.loads(), b.loads(), c.loads()};
    assertThat((double) medians.get(0).loads()).isCloseTo(Repeats.median(loads), within(0.5));
    assertThat(Repeats.median(new double[] {3, 1, 2, 10})).isEqualTo(2.5);
    assertThat(sus(1, 10, null).ttl()).isEqualTo(Duration.ofSeconds(3));
  }
}
