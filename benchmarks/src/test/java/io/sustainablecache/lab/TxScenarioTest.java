package io.sustainablecache.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The transactions scenario's check on made-up records: a read is stale once a newer version's
 * commit (or whole write) had returned before it began, not before; medians of repeated runs.
 */
final class TxScenarioTest {

  private static TxScenario.Reads reads(long[]... reads) {
    TxScenario.Reads r = new TxScenario.Reads();
    for (long[] read : reads) {
      r.add((int) read[0], read[1], read[2], 0);
    }
    return r;
  }

  @Test
  void aReadOfAnOlderVersion_isStaleOnlyIfItBeganAfterTheNewerOnesCommitOrWriteReturned() {
    // key 0: version 1 committed at 100, its write (the invalidation) returned at 150;
    // version 2 committed at 300, returned at 310
    List<TxScenario.Commit> commits = List.of(new TxScenario.Commit(0, 1, 100, 150),
        new TxScenario.Commit(0, 2, 300, 310));

    long[] stale = TxScenario.stale(commits, reads(
        new long[] {0, 0, 100}, // began at the commit's instant: not after it
        new long[] {0, 0, 120}, // after the commit, before the write returned
        new long[] {0, 0, 200}, // after both
        new long[] {0, 1, 305}, // version 1 after version 2's commit, before its return
        new long[] {0, 2, 305}, // the newest
        new long[] {1, 0, 1_000}), 2, 0); // a key never written

    assertThat(stale).containsExactly(3, 1, 1);
  }

  @Test
  void writesOfOtherKeys_doNotMakeAReadStale() {
    long[] stale = TxScenario.stale(List.of(new TxScenario.Commit(1, 5, 10, 20)),
        reads(new long[] {0, 0, 100}), 2, 0);

    assertThat(stale).containsExactly(0, 0, 0);
  }

  @Test
  void commitsOutOfOrderOfTheirReturn_countTheNewestVersionReturnedBeforeTheRead() {
    // version 2's write returned before version 1's (a slow invalidation after commit)
    List<TxScenario.Commit> commits = List.of(new TxScenario.Commit(0, 1, 100, 500),
        new TxScenario.Commit(0, 2, 200, 250));

    long[] stale = TxScenario.stale(commits, reads(new long[] {0, 1, 300}), 1, 0);

    assertThat(stale).containsExactly(1, 1, 1);
  }

  @Test
  void withANearCache_aStaleReadPastTheBoundAfterTheWriteReturned_isCountedApart() {
    // version 1 committed at 100, returned at 150; the bound is 1,000
    List<TxScenario.Commit> commits = List.of(new TxScenario.Commit(0, 1, 100, 150));

    long[] stale = TxScenario.stale(commits, reads(
        new long[] {0, 0, 1_150}, // exactly the bound after the return: within it
        new long[] {0, 0, 1_151}), 1, 1_000); // past it

    assertThat(stale).containsExactly(2, 2, 1);
  }

  @Test
  void medians_takeEachFigureOfAConfigurationsRunsApart() {
    List<TxScenario.Result> runs = List.of(result("fenced", 42, 10, 0.5),
        result("plain", 42, 900, 0.2), result("fenced", 43, 30, 0.9),
        result("fenced", 44, 20, 0.1));

    List<TxScenario.Result> medians = TxScenario.medians(runs);

    assertThat(medians).extracting(TxScenario.Result::mode).containsExactly("fenced", "plain");
    assertThat(medians.get(0).writes()).isEqualTo(20);
    assertThat(medians.get(0).p50Ms()).isEqualTo(0.5);
    assertThat(medians.get(1).writes()).isEqualTo(900);
  }

  @Test
  void theOutageNeedsRunsOfTenSecondsOrMore() {
    assertThat(TxScenario.parse(new String[] {"--tx", "--quick"}).seconds()).isEqualTo(4);
    assertThatThrownBy(() -> TxScenario.parse(new String[] {"--tx", "--seconds", "5"}))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("10 s");
    assertThatThrownBy(() -> TxScenario.parse(new String[] {"--tx", "--runs", "lazy"}))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lazy");
  }

  private static TxScenario.Result result(String mode, long seed, long writes, double p50) {
    return new TxScenario.Result(mode, false, seed, 60, 2, writes, 0, 0, 1_000, 0, 0, 0, 0, 0,
        2.0, p50, 10.0, 100, 0, 0, 0);
  }
}
