package io.sustainablecache.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The Hibernate scenario's options and the medians of its repeated runs (no server needed). */
final class HibernateScenarioTest {

  @Test
  void quick_shortensTheRunsOnly_andBadOptionsAreRefused() {
    HibernateScenario.Options quick = HibernateScenario.parse(new String[] {"--hibernate",
        "--quick"});

    assertThat(quick.seconds()).isEqualTo(4);
    assertThat(quick.warm()).isEqualTo(1);
    assertThat(quick.phases()).containsExactly("reads", "churn", "multiload");
    assertThat(quick.churnRuns()).hasSize(6);
    assertThat(quick.multiloadProviders()).hasSize(3);
    assertThat(HibernateScenario.parse(new String[] {"--hibernate", "--phases", "multiload",
        "--entities", "500", "--near-bound", "250"}))
        .extracting(HibernateScenario.Options::phases, HibernateScenario.Options::entities,
            HibernateScenario.Options::nearMillis)
        .containsExactly(List.of("multiload"), 500, 250L);
    assertThatThrownBy(() -> HibernateScenario.parse(new String[] {"--hibernate", "--phases",
        "writes"})).hasMessageContaining("unknown phase writes");
    assertThatThrownBy(() -> HibernateScenario.parse(new String[] {"--hibernate", "--seconds",
        "3", "--warm", "3"})).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> HibernateScenario.parse(new String[] {"--hibernate", "--entities",
        "99"})).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> HibernateScenario.parse(new String[] {"--hibernate", "--lazy"}))
        .hasMessageContaining("unknown option --lazy");
  }

  @Test
  void churn_choosesTheChurnRuns_providerAndAccessType() {
    HibernateScenario.Options chosen = HibernateScenario.parse(new String[] {"--hibernate",
        "--phases", "churn", "--churn", "sustainable:nonstrict-read-write,none:read-write"});

    assertThat(chosen.churnRuns()).extracting(run -> run.provider().label + " " + run.access())
        .containsExactly("sustainable nonstrict-read-write", "none read-write");
    assertThatThrownBy(() -> HibernateScenario.parse(new String[] {"--hibernate", "--churn",
        "sustainable:transactional"})).hasMessageContaining("PROVIDER:ACCESS");
    assertThatThrownBy(() -> HibernateScenario.parse(new String[] {"--hibernate", "--churn",
        "redis:read-write"})).hasMessageContaining("unknown provider redis");
  }

  @Test
  void hang_onlyWhenAsked_andTheRunMustHoldTheWarmUpTheHangAndASecondEitherSide() {
    assertThat(HibernateScenario.parse(new String[] {"--hibernate"}).phases())
        .doesNotContain("hang");
    HibernateScenario.Options hang = HibernateScenario.parse(new String[] {"--hibernate",
        "--phases", "hang", "--seconds", "16", "--warm", "3", "--hang", "10"});
    assertThat(hang.phases()).containsExactly("hang");
    assertThat(hang.hang()).isEqualTo(10);
    assertThatThrownBy(() -> HibernateScenario.parse(new String[] {"--hibernate", "--phases",
        "hang", "--seconds", "14", "--warm", "3", "--hang", "10"}))
        .hasMessageContaining("--phases hang needs --seconds of at least --warm + --hang + 2");
    assertThatThrownBy(() -> HibernateScenario.parse(new String[] {"--hibernate", "--hang",
        "0"})).hasMessageContaining("a positive --hang");
  }

  @Test
  void smoke_runsOnlyWhatTheIntegrationTestAsserts_noCacheFirst() {
    HibernateScenario.Options smoke = HibernateScenario.parse(new String[] {"--hibernate",
        "--smoke", "--seconds", "3"});

    assertThat(smoke.phases()).containsExactly("churn", "multiload");
    assertThat(smoke)
        .extracting(HibernateScenario.Options::entities, HibernateScenario.Options::seconds,
            HibernateScenario.Options::warm, HibernateScenario.Options::readers,
            HibernateScenario.Options::nearMillis)
        .containsExactly(1_000, 3, 0, 1, 250L);
    assertThat(smoke.churnRuns()).extracting(run -> run.provider().label + " " + run.access())
        .containsExactly("none read-write", "sustainable nonstrict-read-write",
            "sustainable-near nonstrict-read-write", "sustainable read-write",
            "sustainable-near read-write", "jcache-caffeine read-write");
    assertThat(smoke.multiloadProviders()).containsExactly(HibernateScenario.Provider.SUSTAINABLE);
  }

  @Test
  void medians_takeEachFigureOverTheSeedsOfOneConfiguration_inFirstRunOrder() {
    List<HibernateScenario.Row> rows = List.of(row("none", 42, 10, 1), row("jcache", 42, 50, 0),
        row("none", 43, 30, 5), row("jcache", 43, 70, 2), row("none", 44, 20, 3));

    List<HibernateScenario.Row> medians = HibernateScenario.medians(rows);

    assertThat(medians).extracting(HibernateScenario.Row::config)
        .containsExactly("none", "jcache");
    assertThat(medians.get(0).get("reads_per_s")).isEqualTo(20);
    assertThat(medians.get(0).get("stale_entities")).isEqualTo(3);
    assertThat(medians.get(1).get("reads_per_s")).isEqualTo(60); // two runs: their mean
    assertThat(medians.get(1).get("stale_entities")).isEqualTo(1);
  }

  private static HibernateScenario.Row row(String config, long seed, double reads,
      double stale) {
    Map<String, Double> figures = new LinkedHashMap<>();
    figures.put("reads_per_s", reads);
    figures.put("stale_entities", stale);
    return new HibernateScenario.Row(config, seed, figures);
  }
}
