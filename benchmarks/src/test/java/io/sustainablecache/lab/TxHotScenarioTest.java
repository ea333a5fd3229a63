package io.sustainablecache.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The hot-key transactions scenario's bookkeeping on made-up records: where each load and read
 * falls against the writes' windows, loads per write beyond the baseline, the options.
 */
final class TxHotScenarioTest {

  // a write: began at 1,000, its commit step at 1,050, committed at 1,060, returned at 1,070
  private static final TxHotScenario.Write WRITE =
      new TxHotScenario.Write(1, 1_000, 1_050, 1_060, 1_070);

  @Test
  void loads_areSplitByWhenTheyBegan_beforeTheWrites_whileOpen_inTheCommitStep_andAfter() {
    List<long[]> loads = List.of(new long[] {500, 520}, // before the first write
        new long[] {1_000, 1_020}, new long[] {1_049, 1_070}, // open
        new long[] {1_050, 1_080}, new long[] {1_069, 1_090}, // the commit step
        new long[] {1_070, 1_100}, new long[] {5_000, 5_010}); // after it returned

    TxHotScenario.Result r = TxHotScenario.measure("fenced", 1, 300, 50, 10, List.of(WRITE),
        new TxScenario.Reads(), loads, new long[8], new long[5], 0);

    assertThat(r.loadsBefore()).isEqualTo(1);
    assertThat(r.loadsOpen()).isEqualTo(2);
    assertThat(r.loadsClosing()).isEqualTo(2);
    assertThat(r.loadsAfter()).isEqualTo(2);
    assertThat(r.loads()).isEqualTo(7);
    assertThat(r.closingMsP50()).isEqualTo(20 / 1e6);
  }

  @Test
  void readsDuringAWrite_areThoseThatBeganFromItsBeginningUntilTheWholeWriteReturned() {
    TxScenario.Reads reads = new TxScenario.Reads();
    reads.add(0, 0, 999, 1_000_000); // before: outside
    reads.add(0, 0, 1_000, 9_000_000); // at the beginning: during
    reads.add(0, 0, 1_069, 7_000_000); // before the return: during
    reads.add(0, 1, 1_070, 2_000_000); // at the return: outside, and the new version

    TxHotScenario.Result r = TxHotScenario.measure("fenced", 1, 300, 50, 10, List.of(WRITE),
        reads, List.of(), new long[8], new long[5], 0);

    assertThat(r.readsDuring()).isEqualTo(2);
    assertThat(r.p99DuringMs()).isEqualTo(9.0);
    assertThat(r.p50DuringMs()).isEqualTo(7.0);
    assertThat(r.p99OutsideMs()).isEqualTo(2.0);
    assertThat(r.staleAfterWrite()).isZero();
  }

  @Test
  void aReadOfTheOldRowThatBeganAfterTheWriteReturned_isStale() {
    TxScenario.Reads reads = new TxScenario.Reads();
    reads.add(0, 0, 1_065, 1); // after the commit, before the write returned
    reads.add(0, 0, 1_071, 1); // after the write returned

    TxHotScenario.Result r = TxHotScenario.measure("fenced", 1, 300, 50, 10, List.of(WRITE),
        reads, List.of(), new long[8], new long[5], 0);

    assertThat(r.staleAfterCommit()).isEqualTo(2);
    assertThat(r.staleAfterWrite()).isEqualTo(1);
    assertThat(r.ok()).isFalse();
  }

  @Test
  void loadsPerWrite_countOnlyTheLoadsBeyondTheNoWriteBaseline() {
    List<long[]> loads = List.of(new long[] {1_060, 1_070}, new long[] {1_080, 1_090},
        new long[] {3_000, 3_010});
    TxHotScenario.Result r = TxHotScenario.measure("after-commit", 3, 1_800, 10, 10,
        List.of(WRITE, new TxHotScenario.Write(2, 2_000, 2_010, 2_020, 2_030)),
        new TxScenario.Reads(), loads, new long[8], new long[5], 0);

    assertThat(r.loadsPerWrite()).isEqualTo(1.5);
    assertThat(r.withBaseline(1).loadsPerWrite()).isEqualTo(1.0);
  }

  @Test
  void theLastWriteAtOrBeforeAnInstant() {
    long[] begins = {10, 20, 30};

    assertThat(TxHotScenario.lastAtOrBefore(begins, 5)).isEqualTo(-1);
    assertThat(TxHotScenario.lastAtOrBefore(begins, 10)).isZero();
    assertThat(TxHotScenario.lastAtOrBefore(begins, 29)).isEqualTo(1);
    assertThat(TxHotScenario.lastAtOrBefore(begins, 99)).isEqualTo(2);
  }

  @Test
  void options() {
    TxHotScenario.Options quick = TxHotScenario.parse(new String[] {"--tx", "--hot", "--quick"});
    assertThat(quick.modes()).containsExactly("fenced");
    assertThat(quick.seconds()).isEqualTo(4);
    assertThat(quick.baseline()).isFalse();

    TxHotScenario.Options full = TxHotScenario.parse(new String[] {"--tx", "--hot"});
    assertThat(full.modes()).containsExactly("fenced", "fenced-noprior", "after-commit",
        "plain");
    assertThat(full.holds()).containsExactly(10, 50, 200);
    assertThat(full.jvms()).containsExactly(1, 3);
    assertThat(full.rates()).containsExactly(300, 1_800);

    assertThatThrownBy(() -> TxHotScenario.parse(new String[] {"--hot", "--runs", "lazy"}))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lazy");
    assertThatThrownBy(() -> TxHotScenario.parse(new String[] {"--hot", "--hold", "900"}))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("800");
    assertThatThrownBy(() -> TxHotScenario.parse(new String[] {"--hot", "--rates", "10",
        "--jvms", "3"})).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--threads");
  }

  @Test
  void aCsvRow_readsBackAsTheResultThatWroteIt() {
    TxHotScenario.Result r = TxHotScenario.measure("fenced", 3, 1_800, 50, 10, List.of(WRITE),
        new TxScenario.Reads(), List.of(new long[] {1_060, 1_070}, new long[] {1_080, 1_090}),
        new long[] {0, 0, 2, 0, 7, 1, 1, 0}, new long[] {0, 0, 7, 0, 0}, 0).withBaseline(0.5);

    TxHotScenario.Result back = TxHotScenario.fromCsv(List.of(TxHotScenario.CSV_HEADER,
        r.csvRow())).get(0);

    assertThat(back.mode()).isEqualTo("fenced");
    assertThat(back.jvms()).isEqualTo(3);
    assertThat(back.loadsPerWrite()).isEqualTo(1.5);
    assertThat(back.fencedHits()).isEqualTo(7);
    assertThat(back.fencedLoads()).isEqualTo(1);
    assertThat(back.loadsClosing()).isEqualTo(1);
    assertThat(back.loadsAfter()).isEqualTo(1);
  }
}
