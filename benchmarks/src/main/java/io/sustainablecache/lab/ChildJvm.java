package io.sustainablecache.lab;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts the JVMs a scenario runs beside its own (readers, writers, fleet members): this JVM's
 * {@code java} and class path, the scenario's options (a heap limit, system properties), then
 * the options of the system property {@value #OPTIONS_PROPERTY} (separated by white space), the
 * main class and its arguments; the child's output and errors go to a log file.
 *
 * <p>{@value #OPTIONS_PROPERTY} is for the build: the lab's integration tests run each scenario
 * for a few seconds, too short for the C2 compiler's work to pay back on two cores, so they set
 * it to the C1 compiler and the serial collector (the test JVMs' own options, the root pom's
 * {@code argLine}). The lab's own runs leave it unset: their figures are the default JVM's.
 */
final class ChildJvm {

  /** The system property whose options every child JVM gets (none when unset). */
  static final String OPTIONS_PROPERTY = "sustainablecache.lab.child-jvm-options";

  private ChildJvm() {}

  /**
   * Starts {@code main} in a new JVM.
   *
   * @param options the JVM's options before {@value #OPTIONS_PROPERTY}'s, e.g. {@code -Xmx256m}
   * @param main the class whose {@code main} runs
   * @param arguments its arguments
   * @param log where the JVM's output and errors go (replaced)
   * @return the started process
   * @throws IOException if it cannot be started
   */
  static Process start(List<String> options, Class<?> main, List<String> arguments, Path log)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(options);
    String extra = System.getProperty(OPTIONS_PROPERTY, "").trim();
    if (!extra.isEmpty()) {
      command.addAll(List.of(extra.split("\\s+")));
    }
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
    command.addAll(arguments);
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile())
        .start();
  }
}
