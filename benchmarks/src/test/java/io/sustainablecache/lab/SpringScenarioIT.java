package io.sustainablecache.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The spring scenario (issue 33) on a short run against a real memcached the lab starts:
 * {@code @Cacheable(sync = true)} through a Spring proxy, a burst of 200 cold ids coalesced into
 * at most 10 database calls (200 per call), an idle miss without added latency, and a page of
 * 100 ids (90 cached) read with one database call. The full figures are in {@code
 * docs/results.md}. Needs the memcached binary.
 */
final class SpringScenarioIT {

  /**
   * A query's fixed time, ms (the full runs' are 5 and 20): long enough that the burst's 200
   * threads, which take tens of ms to reach their misses on two loaded cores, arrive within a few
   * calls (see {@code CoalesceScenarioIT}).
   */
  private static final int QUERY_MILLIS = 50;

  @Test
  void coalescedCacheableCallsAndAPageThroughSpring_meetTheirGoals() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream print = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    int status = SpringScenario.run(new String[] {"--spring", "--rounds", "2", "--idle", "7",
        "--query-ms", Integer.toString(QUERY_MILLIS)}, print);

    String report = bytes.toString(StandardCharsets.UTF_8);
    System.out.print(report);
    assertThat(status).as(report).isZero();
    assertThat(report).contains("database calls coalesced, 200 per call")
        .contains("getAll").contains("(1 database call), 100 @Cacheable calls");
  }
}
