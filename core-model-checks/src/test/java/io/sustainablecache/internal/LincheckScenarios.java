package io.sustainablecache.internal;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import kotlin.Unit;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.DSLScenarioBuilder;
import org.jetbrains.lincheck.datastructures.DSLThreadScenario;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;

/**
 * Hand-written Lincheck scenarios from Java (the races the model checks must always explore, on
 * top of the random ones) and the size of the model checks. An operation is written {@code
 * "name"} or, with arguments, {@code "name(1, 0)"} (integers only).
 */
final class LincheckScenarios {

  /**
   * How much more the model checks explore than the build does: {@code
   * -Dsustainablecache.test.scale=N} runs N times more random scenarios, each under N times
   * more interleavings (so about N&sup2; times longer).
   */
  static final int SCALE = Integer.getInteger("sustainablecache.test.scale", 1);

  /**
   * How long one invocation may run before Lincheck reports "The execution has hung",
   * milliseconds. The first invocation's time includes instrumenting every class it loads: 30 s
   * (Lincheck's default) was too short at load 12, 120 s at load 20 to 35 (a report of "hung"
   * after 220 s). The whole model check took 553 s at load 15 on 2 cores, so the bound is ten
   * minutes: a true hang of the code under test still fails, and in the surefire run, not by the
   * CI's own timeout.
   */
  static final long INVOCATION_TIMEOUT_MILLIS = 600_000;

  private LincheckScenarios() {}

  /**
   * Model-checking options with {@link #INVOCATION_TIMEOUT_MILLIS}: the start of every model
   * check here. ({@code invocationTimeout} is Kotlin-{@code internal} in Lincheck 3.7, hence its
   * mangled name; an upgrade that renames it fails the build, not a run.)
   */
  static ModelCheckingOptions modelChecking() {
    return new ModelCheckingOptions().invocationTimeout$lincheck(INVOCATION_TIMEOUT_MILLIS);
  }

  /**
   * A scenario of {@code model}'s operations: an initial part run alone (may be empty), then one
   * list of operations per parallel thread.
   */
  static ExecutionScenario scenario(Class<?> model, List<String> initial,
      List<List<String>> threads) {
    DSLScenarioBuilder builder = new DSLScenarioBuilder();
    if (!initial.isEmpty()) {
      builder.initial(part -> actors(model, part, initial));
    }
    builder.parallel(parallel -> {
      for (List<String> operations : threads) {
        parallel.thread(thread -> actors(model, thread, operations));
      }
      return Unit.INSTANCE;
    });
    return builder.buildScenario();
  }

  private static Unit actors(Class<?> model, DSLThreadScenario thread, List<String> operations) {
    for (String operation : operations) {
      int open = operation.indexOf('(');
      String name = open < 0 ? operation : operation.substring(0, open);
      List<Object> arguments = open < 0 ? List.of()
          : Arrays.stream(operation.substring(open + 1, operation.length() - 1).split(","))
              .map(String::trim).filter(s -> !s.isEmpty()).<Object>map(Integer::valueOf)
              .toList();
      Method method = Arrays.stream(model.getMethods())
          .filter(m -> m.getName().equals(name) && m.getParameterCount() == arguments.size())
          .findFirst()
          .orElseThrow(() -> new IllegalArgumentException("no operation " + operation));
      thread.add(new Actor(method, arguments));
    }
    return Unit.INSTANCE;
  }
}
