package io.sustainablecache.testkit;

import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Prints one line at the end of a test run when tests were skipped (or, with {@code CI=true},
 * failed) because {@link MemcachedServer} found no memcached, saying how many and how to provide
 * one. Without it the reason is only in the test reports: Maven prints a count of skipped tests,
 * not why.
 *
 * <p>Registered with the JUnit Platform through {@code META-INF/services}, so every test run with
 * this artifact on its class path reports it; nothing to configure. Prints nothing when no test
 * was affected.
 */
public final class MissingMemcachedReport implements TestExecutionListener {

  private static final List<String> REASONS = List.of(MemcachedServer.SHARED_HOW_TO,
      MemcachedServer.SHARED_HOW_TO_WITHOUT_TESTCONTAINERS, MemcachedServer.LOCAL_HOW_TO);

  private final PrintStream out;
  private TestPlan plan;
  // The first message seen for each outcome, and how many tests it affected.
  private final Map<String, String> messages = new LinkedHashMap<>();
  private final Map<String, Integer> counts = new LinkedHashMap<>();
  private boolean needsBinary;

  /** Creates the listener that the JUnit Platform loads; it prints to standard output. */
  public MissingMemcachedReport() {
    this(System.out);
  }

  MissingMemcachedReport(PrintStream out) {
    this.out = out;
  }

  @Override
  public synchronized void testPlanExecutionStarted(TestPlan testPlan) {
    plan = testPlan;
    messages.clear();
    counts.clear();
    needsBinary = false;
  }

  @Override
  public synchronized void executionFinished(TestIdentifier identifier,
      TestExecutionResult result) {
    if (result.getStatus() == TestExecutionResult.Status.SUCCESSFUL) {
      return;
    }
    String message = result.getThrowable().map(MissingMemcachedReport::reason).orElse(null);
    if (message == null) {
      return;
    }
    String outcome = result.getStatus() == TestExecutionResult.Status.ABORTED ? "skipped"
        : "failed";
    // Preferring the general message (install memcached, MEMCACHED_ADDRESS or Docker) to the one
    // of tests that start their own process: installing the binary answers both.
    if (message.startsWith(MemcachedServer.LOCAL_HOW_TO)) {
      needsBinary = true;
      messages.putIfAbsent(outcome, message);
    } else if (messages.get(outcome) == null
        || messages.get(outcome).startsWith(MemcachedServer.LOCAL_HOW_TO)) {
      messages.put(outcome, message);
    }
    counts.merge(outcome, testsIn(identifier), Integer::sum);
  }

  @Override
  public synchronized void testPlanExecutionFinished(TestPlan testPlan) {
    for (Map.Entry<String, Integer> count : counts.entrySet()) {
      String message = messages.get(count.getKey());
      String level = count.getKey().equals("failed") ? "[ERROR]" : "[WARNING]";
      String binary = needsBinary && !message.startsWith(MemcachedServer.LOCAL_HOW_TO)
          ? " Tests that start their own memcached need the binary itself." : "";
      int tests = count.getValue();
      out.println(level + " " + tests + (tests == 1 ? " test " : " tests ") + count.getKey()
          + ": " + message + binary);
    }
    out.flush();
  }

  /** A test counts as one; a class or other container as the tests it holds, at least one. */
  private int testsIn(TestIdentifier identifier) {
    if (identifier.isTest() || plan == null) {
      return 1;
    }
    long tests = plan.getDescendants(identifier).stream().filter(TestIdentifier::isTest).count();
    return (int) Math.max(1, tests);
  }

  /**
   * The message of the missing-server exception in the throwable, its causes or its suppressed
   * exceptions (where a clean-up that failed after an aborted set-up puts it).
   */
  private static String reason(Throwable thrown) {
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    List<Throwable> pending = new ArrayList<>(List.of(thrown));
    while (!pending.isEmpty()) {
      Throwable next = pending.remove(pending.size() - 1);
      if (next == null || !seen.add(next)) {
        continue;
      }
      String message = next.getMessage();
      if (message != null && REASONS.stream().anyMatch(message::startsWith)) {
        return message;
      }
      pending.add(next.getCause());
      pending.addAll(List.of(next.getSuppressed()));
    }
    return null;
  }
}
