package io.sustainablecache.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The near scenario's checks on made-up records: each figure the scenario reports can be made to
 * move, and a stale read past the bound is a violation while one within it is not.
 */
final class NearChecksTest {

  private static final long MS = 1_000_000L;
  private static final long BOUND = 1_000 * MS;

  private static NearChecks.Staleness check(List<NearChecks.Change> changes, long[][] reads) {
    int[] keys = new int[reads.length];
    long[] versions = new long[reads.length];
    long[] starts = new long[reads.length];
    for (int i = 0; i < reads.length; i++) {
      keys[i] = (int) reads[i][0];
      versions[i] = reads[i][1];
      starts[i] = reads[i][2];
    }
    return NearChecks.check(changes, keys, versions, starts, reads.length, BOUND);
  }

  @Test
  void aReadOfTheCurrentVersion_orOfAnOldOneBeforeItsReplacementReturned_isNotStale() {
    List<NearChecks.Change> changes = List.of(new NearChecks.Change(7, 1, 100 * MS),
        new NearChecks.Change(7, 2, 200 * MS));
    NearChecks.Staleness s = check(changes, new long[][] {
        {7, 2, 5_000 * MS}, // the current version
        {7, 0, 50 * MS}, // the initial version, before its replacement returned
        {8, 0, 9_000 * MS}}); // a key never changed

    assertThat(s).isEqualTo(new NearChecks.Staleness(3, 0, 0, 0, 0, 0));
  }

  @Test
  void aReplacedValue_isStaleFromItsReplacementsReturn_andAViolationPastTheBound() {
    List<NearChecks.Change> changes = List.of(new NearChecks.Change(1, 1, 100 * MS),
        new NearChecks.Change(1, 2, 2_000 * MS));
    NearChecks.Staleness s = check(changes, new long[][] {
        {1, 0, 600 * MS}, // stale by 500 ms: within the bound
        {1, 1, 3_001 * MS}, // stale by 1,001 ms: a violation
        {1, 0, 1_100 * MS}}); // stale by exactly the bound: not a violation

    assertThat(s.stale()).isEqualTo(3);
    assertThat(s.violations()).isEqualTo(1);
    assertThat(s.maxStaleNanos()).isEqualTo(1_001 * MS);
    assertThat(s.p999OfStaleNanos()).isEqualTo(1_001 * MS);
  }

  @Test
  void aChangeThatThrew_isSkipped_theNextOneThatReturnedBoundsTheOldValue() {
    // version 1 was written to the source but its invalidate threw: not in the log
    List<NearChecks.Change> changes = List.of(new NearChecks.Change(3, 2, 5_000 * MS));
    NearChecks.Staleness s = check(changes, new long[][] {
        {3, 0, 4_000 * MS}, // no promise yet
        {3, 0, 6_500 * MS}}); // 1.5 s after version 2's change returned

    assertThat(s.stale()).isEqualTo(1);
    assertThat(s.violations()).isEqualTo(1);
  }

  @Test
  void percentiles_areNearestRank() {
    long[] values = new long[1000];
    for (int i = 0; i < values.length; i++) {
      values[i] = i + 1;
    }
    assertThat(NearChecks.percentile(values, 0.999)).isEqualTo(999);
    assertThat(NearChecks.percentile(values, 1.0)).isEqualTo(1000);
    assertThat(NearChecks.percentile(new long[0], 0.5)).isZero();
  }

  @Test
  void recovery_isTheEndOfTheFirstWindowAfterTheFault_atNinetyPercentOfTheRatioBefore() {
    List<long[]> samples = new ArrayList<>();
    long reads = 0;
    long hits = 0;
    for (long t = 0; t <= 10_000; t += 50) {
      samples.add(new long[] {t * MS, reads, hits, 0});
      reads += 100;
      boolean fault = t >= 4_000 && t < 6_300; // nothing served near until 6.3 s
      hits += fault ? 0 : 99;
    }

    long back = NearChecks.recoveryNanos(samples, 1_000 * MS, 4_000 * MS, 6_000 * MS, 200 * MS,
        0.9);
    assertThat(back).as("windows from 6.0 and 6.1 s still include the fault; 6.3 s does not")
        .isBetween(450 * MS, 550 * MS);
    assertThat(NearChecks.recoveryNanos(samples, 1_000 * MS, 4_000 * MS, 6_000 * MS, 200 * MS,
        1.01)).as("never above what it was").isEqualTo(-1);
  }

  @Test
  void theZipfSequence_isTheSeeds_andTheSavableReadsAreAllButTheFirstOfTheMostRequested() {
    assertThat(NearScenario.zipfSequence(1_000, 0.99, 500, 3))
        .isEqualTo(NearScenario.zipfSequence(1_000, 0.99, 500, 3));
    int[] sequence = {0, 0, 0, 1, 1, 2, 3, 0};
    assertThat(NearScenario.savableReads(sequence, 1)).isEqualTo(3);
    assertThat(NearScenario.savableReads(sequence, 2)).isEqualTo(4);
    assertThat(NearScenario.savableReads(sequence, 10)).isEqualTo(4);
  }

  @Test
  void theStormOption_setsTheExtraInvalidationsPerSecond_offByDefault() {
    assertThat(NearScenario.parse(new String[] {"--near"}).storm()).isZero();
    assertThat(NearScenario.parse(new String[] {"--near", "--runs", "churn", "--storm", "3000"})
        .storm()).isEqualTo(3_000);
  }
}
