package io.sustainablecache.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.spy.memcached.FailureMode;
import org.junit.jupiter.api.Test;

/**
 * The cluster scenario's command line and its recovery measure (the run itself needs memcached).
 */
final class ClusterScenarioTest {

  @Test
  void defaults_killAt20s_backAt40s_zooKeeper_cancel() {
    ClusterScenario.Options o = ClusterScenario.parse(new String[] {"--cluster", "3"});

    assertThat(o.nodes()).isEqualTo(3);
    assertThat(o.killAtMillis()).isEqualTo(20_000);
    assertThat(o.returnAtMillis()).isEqualTo(40_000);
    assertThat(o.durationMillis()).isEqualTo(60_000);
    assertThat(o.zookeeper()).isTrue();
    assertThat(o.znodeRemovedAfterMillis()).isEqualTo(2_000);
    assertThat(o.failureMode()).isEqualTo(FailureMode.Cancel);
    assertThat(o.keys()).isEqualTo(60);
    assertThat(o.rate()).isEqualTo(300);
  }

  @Test
  void options() {
    ClusterScenario.Options o = ClusterScenario.parse(new String[] {"--cluster", "4",
        "--kill-node-at", "15s", "--return-node-at", "never", "--duration", "30",
        "--membership", "static", "--failure-mode", "redistribute", "--ttl", "1500ms",
        "--kill-node", "2", "--no-charts"});

    assertThat(o.nodes()).isEqualTo(4);
    assertThat(o.killAtMillis()).isEqualTo(15_000);
    assertThat(o.returnAtMillis()).isEqualTo(-1);
    assertThat(o.durationMillis()).isEqualTo(30_000);
    assertThat(o.zookeeper()).isFalse();
    assertThat(o.failureMode()).isEqualTo(FailureMode.Redistribute);
    assertThat(o.ttlMillis()).isEqualTo(1_500);
    assertThat(o.killNode()).isEqualTo(2);
    assertThat(o.charts()).isFalse();
  }

  @Test
  void rejectsImpossibleTimelines() {
    assertThatThrownBy(() -> ClusterScenario.parse(new String[] {"--cluster", "1"}))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ClusterScenario.parse(
        new String[] {"--cluster", "3", "--kill-node-at", "2s"}))
        .hasMessageContaining("warm-up");
    assertThatThrownBy(() -> ClusterScenario.parse(
        new String[] {"--cluster", "3", "--return-node-at", "10s"}))
        .hasMessageContaining("after the kill");
    assertThatThrownBy(() -> ClusterScenario.parse(
        new String[] {"--cluster", "3", "--kill-node-at", "soon"}))
        .hasMessageContaining("20s");
    assertThatThrownBy(() -> ClusterScenario.parse(new String[] {"--cluster", "3", "--full"}))
        .hasMessageContaining("unknown option");
  }

  @Test
  void theLabHandsTheClusterOptionsToTheScenario() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int status = StampedeLab.run(new String[] {"--cluster", "3", "--help"},
        new PrintStream(bytes, true, StandardCharsets.UTF_8));

    assertThat(status).isZero();
    assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("--kill-node-at");
    assertThat(StampedeLab.USAGE).contains("--cluster N");
  }

  @Test
  void recovery_isWhenEveryLaterWindowHasAboutOneLoadPerKey() {
    Set<String> keys = Set.of("a", "b");
    List<ClusterScenario.Load> loads = new ArrayList<>();
    // 10 loads per key per second from 0 to 1 s, then one load per key per 2 s period.
    for (long t = 0; t < 1_000; t += 100) {
      loads.add(load(t, "a"));
      loads.add(load(t, "b"));
    }
    for (long t = 1_000; t < 10_000; t += 2_000) {
      loads.add(load(t, "a"));
      loads.add(load(t + 500, "b"));
    }

    ClusterChecks record = new ClusterChecks(loads);

    assertThat(record.recovery(keys, 0, 10_000, 2_000)).isBetween(900L, 1_000L);
    assertThat(record.recovery(keys, 1_000, 10_000, 2_000)).isZero();
    assertThat(record.recovery(keys, 0, 2_500, 2_000)).isEqualTo(-1);
  }

  // -- the checks, each falsified by a made-up record -------------------------------------------

  private static final Set<String> SURVIVORS = Set.of("s1", "s2", "s3", "s4");
  private static final Set<String> DEAD = Set.of("d1", "d2");
  /** TTL 1 s; kill at 2 s, keys moved at 2.2 s (znode after 0.2 s), restart 5 s, back 5.1 s. */
  private static final ClusterChecks.Moments AT =
      new ClusterChecks.Moments(2_000, 2_000, 2_200, 5_000, 5_100, 8_000, 1_000, 200);
  private static final ClusterChecks.Outcome CLEAN = new ClusterChecks.Outcome(1_000, 0, 0, 0, 0);
  private static final ClusterChecks.Probes PROBES = new ClusterChecks.Probes(
      Map.of("warm", 0, "dead", 10, "moved", 3, "dead late", 0, "back", 3), 3, 0);

  /**
   * A run as it should go: every key refreshed every 900 ms; the dead node's keys missed on
   * every request (every 50 ms) until they moved, once after the move and once after the return.
   */
  private static List<ClusterScenario.Load> cleanRun() {
    List<ClusterScenario.Load> loads = new ArrayList<>();
    for (String key : SURVIVORS) {
      loads.add(new ClusterScenario.Load(0, key, false));
      for (long t = 900; t < 8_000; t += 900) {
        loads.add(load(t, key));
      }
    }
    for (String key : DEAD) {
      loads.add(new ClusterScenario.Load(0, key, false));
      for (long t = 900; t < 2_000; t += 900) {
        loads.add(load(t, key));
      }
      for (long t = 2_000; t < 2_200; t += 50) {
        loads.add(new ClusterScenario.Load(t, key, false));
      }
      loads.add(new ClusterScenario.Load(2_300, key, false));
      for (long t = 3_200; t < 5_000; t += 900) {
        loads.add(load(t, key));
      }
      loads.add(new ClusterScenario.Load(5_150, key, false));
      for (long t = 6_050; t < 8_000; t += 900) {
        loads.add(load(t, key));
      }
    }
    return loads;
  }

  private static List<ClusterChecks.Check> failed(List<ClusterScenario.Load> loads,
      ClusterChecks.Outcome outcome, ClusterChecks.Probes probes) {
    return new ClusterChecks(loads).check(SURVIVORS, DEAD, true, false, AT, outcome, probes)
        .stream().filter(c -> !c.passed()).toList();
  }

  @Test
  void aCleanRun_passesEveryCheck() {
    List<ClusterChecks.Check> checks = new ClusterChecks(cleanRun())
        .check(SURVIVORS, DEAD, true, false, AT, CLEAN, PROBES);

    assertThat(checks).hasSizeGreaterThanOrEqualTo(15).allMatch(ClusterChecks.Check::passed);
  }

  @Test
  void aSurvivorsMiss_aThirdLoadInOnePeriod_aStuckKey_eachFailTheirCheck() {
    List<ClusterScenario.Load> missed = cleanRun();
    missed.add(new ClusterScenario.Load(3_000, "s1", false));
    assertThat(failed(missed, CLEAN, PROBES)).extracting(ClusterChecks.Check::promise)
        .anyMatch(p -> p.contains("never miss"));

    List<ClusterScenario.Load> thrice = cleanRun();
    thrice.add(load(3_610, "s2"));
    thrice.add(load(3_620, "s2"));
    assertThat(failed(thrice, CLEAN, PROBES)).extracting(ClusterChecks.Check::promise)
        .containsExactly("the surviving nodes' keys: at most 2 loads per key in any TTL-long"
            + " window");
    assertThat(failed(thrice, CLEAN, PROBES).get(0).observed())
        .as("the worst key's loads, to tell which load was one too many")
        .contains("(s2); its loads").contains("3600 r, 3610 r, 3620 r");

    List<ClusterScenario.Load> stuck = new ArrayList<>(cleanRun().stream()
        .filter(l -> !(l.key().equals("d2") && l.millis() > 6_000)).toList());
    assertThat(failed(stuck, CLEAN, PROBES)).extracting(ClusterChecks.Check::promise)
        .anyMatch(p -> p.startsWith("no key is stuck"));
  }

  @Test
  void aLateRecovery_callerErrors_overlaps_andAGetAllThatLoadsTooMuch_failTheirChecks() {
    List<ClusterScenario.Load> late = cleanRun();
    for (long t = 2_200; t < 4_500; t += 50) {
      late.add(new ClusterScenario.Load(t, "d1", false));
    }
    assertThat(failed(late, CLEAN, PROBES)).extracting(ClusterChecks.Check::promise)
        .anyMatch(p -> p.startsWith("recovery from the kill"));

    assertThat(failed(cleanRun(), new ClusterChecks.Outcome(1_000, 1, 0, 2, 1), PROBES))
        .extracting(ClusterChecks.Check::promise).contains("no caller error",
            "one load per key at a time", "every key is cached on its node at the end");

    ClusterChecks.Probes greedy = new ClusterChecks.Probes(
        Map.of("warm", 0, "dead", 10, "moved", 10, "dead late", 0, "back", 3), 3, 0);
    assertThat(failed(cleanRun(), CLEAN, greedy)).hasSize(1);
  }

  private static ClusterScenario.Load load(long millis, String key) {
    return new ClusterScenario.Load(millis, key, true);
  }
}
