package io.sustainablecache.lab;

import java.io.IOException;
import java.io.PrintStream;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;

/**
 * What every scenario with an entry point of its own ({@code --near}, {@code --cluster}, {@code
 * --tx}) does first: answer {@code --help}, draw charts headless, and keep the clients' logs
 * quiet enough for the tables to stay readable ({@code -Dorg.slf4j.simpleLogger.log.<logger>}
 * overrides each level).
 */
final class ScenarioStart {

  private ScenarioStart() {}

  /**
   * Prints {@code usage} if the command line asks for help.
   *
   * @return whether it did: then the scenario does not run
   */
  static boolean help(String[] args, String usage, PrintStream out) {
    List<String> given = Arrays.asList(args);
    if (given.contains("--help") || given.contains("-h")) {
      out.print(usage);
      return true;
    }
    return false;
  }

  /**
   * Headless charts; the memcached clients log through SLF4J (the ARCUS client logs to standard
   * error otherwise); each of {@code loggersAndLevels} (logger, level, logger, level, ...) at its
   * level unless set already.
   */
  static void prepare(String... loggersAndLevels) {
    System.setProperty("java.awt.headless", "true");
    if (System.getProperty("net.spy.log.LoggerImpl") == null) {
      System.setProperty("net.spy.log.LoggerImpl", "net.spy.memcached.compat.log.SLF4JLogger");
    }
    for (int i = 0; i + 1 < loggersAndLevels.length; i += 2) {
      String property = "org.slf4j.simpleLogger.log." + loggersAndLevels[i];
      if (System.getProperty(property) == null) {
        System.setProperty(property, loggersAndLevels[i + 1]);
      }
    }
  }

  /** A scenario's run, which may fail on its files, its database or an interrupt. */
  @FunctionalInterface
  interface Body {
    int run() throws IOException, SQLException, InterruptedException;
  }

  /**
   * Runs {@code body}, its checked failures as {@link IllegalStateException}s that name the
   * scenario ({@code "the outage scenario"}); an interrupt is kept.
   *
   * @return the scenario's exit status
   */
  static int guarded(String scenario, Body body) {
    try {
      return body.run();
    } catch (IOException e) {
      throw new IllegalStateException(scenario + " could not write: " + e, e);
    } catch (SQLException e) {
      throw new IllegalStateException(scenario + "'s database failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(scenario + " was interrupted", e);
    }
  }
}
