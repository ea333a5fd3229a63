package io.sustainablecache.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
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

    long recovery = ClusterScenario.recovery(loads, keys, 0, 10_000, 2_000);

    assertThat(recovery).isBetween(900L, 1_000L);
    assertThat(ClusterScenario.recovery(loads, keys, 1_000, 10_000, 2_000)).isZero();
    assertThat(ClusterScenario.recovery(loads, keys, 0, 2_500, 2_000)).isEqualTo(-1);
  }

  private static ClusterScenario.Load load(long millis, String key) {
    return new ClusterScenario.Load(millis, key, true);
  }
}
