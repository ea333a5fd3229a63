package io.sustainablecache.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request;

import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.platform.launcher.core.LauncherConfig;
import org.junit.platform.launcher.core.LauncherFactory;

class MissingMemcachedReportTest {

  @Test
  void printsNothingWhenNoTestMissedAServer() {
    assertThat(run(Unrelated.class)).isEmpty();
  }

  @Test
  void countsTheSkippedTestsInOneLineWithTheGeneralMessage() {
    assertThat(run(SharedAborts.class, LocalAbortsInBeforeAll.class, Unrelated.class))
        .isEqualTo("[WARNING] 5 tests skipped: " + MemcachedServer.SHARED_HOW_TO
            + " Tests that start their own memcached need the binary itself."
            + System.lineSeparator());
  }

  @Test
  void findsTheReasonWhereAFailingCleanUpPutIt() {
    // The clean-up's NullPointerException makes the test fail; the abort is a suppressed one.
    assertThat(run(CleanUpFailsAfterAbort.class))
        .isEqualTo("[ERROR] 1 test failed: " + MemcachedServer.SHARED_HOW_TO
            + System.lineSeparator());
  }

  @Test
  void reportsFailuresOnCi() {
    assertThat(run(FailsOnCi.class))
        .startsWith("[ERROR] 1 test failed: " + MemcachedServer.SHARED_HOW_TO)
        .contains("CI=true")
        .endsWith(System.lineSeparator())
        .hasLineCount(1);
  }

  private static String run(Class<?>... classes) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    LauncherFactory.create(LauncherConfig.builder()
            .enableTestExecutionListenerAutoRegistration(false)
            .build())
        .execute(request()
            .selectors(Arrays.stream(classes).map(c -> selectClass(c)).toList())
            .build(), new MissingMemcachedReport(out));
    return bytes.toString(StandardCharsets.UTF_8);
  }

  // Fixtures run by the launcher above, not by surefire (which skips nested classes).

  static class SharedAborts {
    @BeforeEach
    void noServer() {
      throw MemcachedServer.unavailable(MemcachedServer.SHARED_HOW_TO, null);
    }

    @Test
    void one() {}

    @Test
    void two() {}
  }

  static class LocalAbortsInBeforeAll {
    @BeforeAll
    static void noBinary() {
      throw MemcachedServer.unavailable(MemcachedServer.LOCAL_HOW_TO, null);
    }

    @Test
    void one() {}

    @Test
    void two() {}

    @Test
    void three() {}
  }

  static class Unrelated {
    @Test
    void fails() {
      throw new AssertionError("something else");
    }

    @Test
    void passes() {}
  }

  static class CleanUpFailsAfterAbort {
    private Object resource;

    @BeforeEach
    void noServer() {
      throw MemcachedServer.unavailable(MemcachedServer.SHARED_HOW_TO, null);
    }

    @AfterEach
    void close() {
      resource.hashCode();
    }

    @Test
    void test() {}
  }

  static class FailsOnCi {
    @Test
    void test() {
      throw MemcachedServer.unavailable(MemcachedServer.SHARED_HOW_TO, "true");
    }
  }
}
