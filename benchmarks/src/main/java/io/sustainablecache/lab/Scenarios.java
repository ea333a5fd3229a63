package io.sustainablecache.lab;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The scenarios beyond the policy comparison ({@code --scenario}): each runs its own set of
 * runs, prints a table with its goals, and writes {@code DIR/<name>.csv} and comparison charts
 * {@code DIR/charts/<name>-*.png}; {@code DIR/scenarios.txt} collects the tables.
 */
final class Scenarios {

  /** The scenarios, in the order {@code all} runs them. */
  static final List<String> NAMES = List.of("fleet", "coldstart", "zipf", "getall", "absent",
      "failingdb", "jitter");

  /** What a scenario produced. */
  record Report(String name, String csvHeader, List<String> csvRows, String table) {}

  /** What a scenario runs with. */
  record Context(StampedeLab.Options options, StampedeLab.StoreHandle handle, PrintStream out,
      Path chartDir) {

    boolean realTime() {
      return handle != null;
    }

    /** Writes charts only if asked to. */
    boolean charts() {
      return chartDir != null;
    }
  }

  /** A scenario. */
  interface Scenario {
    Report run(Context context) throws IOException;
  }

  private Scenarios() {}

  static List<String> parse(String text) {
    Set<String> names = new LinkedHashSet<>();
    for (String name : text.split(",")) {
      String n = name.trim().toLowerCase(Locale.ROOT);
      if (n.isEmpty()) {
        continue;
      }
      if (n.equals("all")) {
        names.addAll(NAMES);
      } else if (n.equals("compare") || NAMES.contains(n)) {
        names.add(n);
      } else {
        throw new IllegalArgumentException("unknown scenario '" + name.trim()
            + "'; expected compare, " + String.join(", ", NAMES) + " or all");
      }
    }
    return List.copyOf(names);
  }

  static Scenario of(String name) {
    return switch (name) {
      case "fleet" -> new FleetScenario();
      case "coldstart" -> new ColdStartScenario();
      case "zipf" -> new ZipfScenario();
      case "getall" -> new BulkScenario();
      case "absent" -> new AbsentScenario();
      case "failingdb" -> new FailingDbScenario();
      case "jitter" -> new JitterScenario();
      default -> throw new IllegalArgumentException("not a scenario: " + name);
    };
  }

  /** Runs the scenarios of {@code options} (but compare); returns the exit status. */
  static int run(StampedeLab.Options options, PrintStream out) {
    Path dir = options.out();
    List<String> names = options.scenarios().stream().filter(n -> !n.equals("compare"))
        .toList();
    try {
      Files.createDirectories(dir.resolve("charts"));
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot create output directory " + dir + ": " + e);
    }
    StampedeLab.StoreHandle handle = options.realTime()
        ? StampedeLab.StoreHandle.open(options, out) : null;
    out.printf("stampede-lab: scenarios %s, %s, seed %d, output in %s%n",
        String.join(", ", names), handle == null
            ? "virtual time (in-memory memcached model with a 1 s expiry tick)"
            : "real time against " + handle.description + " (virtual-only parts in virtual time)",
        options.seed(), dir.toAbsolutePath());
    Context context = new Context(options, handle, out,
        options.charts() ? dir.resolve("charts") : null);
    StringBuilder tables = new StringBuilder();
    try {
      for (String name : names) {
        out.printf("%n== %s ==%n", name);
        Report report = of(name).run(context);
        StringBuilder csv = new StringBuilder(report.csvHeader()).append('\n');
        report.csvRows().forEach(row -> csv.append(row).append('\n'));
        Files.writeString(dir.resolve(name + ".csv"), csv, StandardCharsets.UTF_8);
        out.println();
        out.print(report.table());
        tables.append("== ").append(name).append(" ==\n").append(report.table()).append('\n');
      }
      Files.writeString(dir.resolve("scenarios.txt"), tables, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot write results: " + e, e);
    } finally {
      if (handle != null) {
        handle.close();
      }
    }
    out.printf("%nWrote %s%n", names.stream().map(n -> dir.resolve(n + ".csv").toString())
        .reduce((a, b) -> a + ", " + b).orElse(""));
    return 0;
  }

  // -- helpers shared by the scenarios ---------------------------------------------------------

  /** Runs configs (virtual or real, repeated as asked), printing progress; medians if repeated. */
  static List<RunResult> runs(Context context, List<RunConfig> configs, List<RunResult> all,
      boolean virtualOnly) {
    StampedeLab.StoreHandle handle = virtualOnly ? null : context.handle();
    int repeat = handle == null ? 1 : context.options().repeat();
    StampedeLab.runAll(configs, repeat, handle, context.out(), all);
    return Repeats.medians(all, repeat);
  }

  /**
   * Waits until a child JVM wrote {@code file} (its ready signal), polling every 10 ms.
   *
   * @throws IllegalStateException with {@code failure} if {@code process} ended first or after
   *     3 minutes without the file
   * @throws InterruptedException if interrupted while waiting
   */
  static void awaitFile(Path file, Process process, String failure)
      throws InterruptedException {
    long limit = System.currentTimeMillis() + 180_000;
    while (!Files.exists(file)) {
      if (!process.isAlive() || System.currentTimeMillis() > limit) {
        throw new IllegalStateException(failure);
      }
      Thread.sleep(10);
    }
  }

  static String yesNo(boolean met) {
    return met ? "met" : "NOT met";
  }

  /** A fixed-width table: a header row and rows, columns right-aligned but the first. */
  static String table(List<String> header, List<List<String>> rows) {
    int[] width = new int[header.size()];
    for (int c = 0; c < width.length; c++) {
      width[c] = header.get(c).length();
      for (List<String> row : rows) {
        width[c] = Math.max(width[c], row.get(c).length());
      }
    }
    StringBuilder b = new StringBuilder();
    List<List<String>> all = new ArrayList<>();
    all.add(header);
    all.addAll(rows);
    for (List<String> row : all) {
      for (int c = 0; c < width.length; c++) {
        String cell = row.get(c);
        String pad = " ".repeat(width[c] - cell.length());
        b.append(c == 0 ? cell + pad : pad + cell).append(c == width.length - 1 ? "" : "  ");
      }
      b.append('\n');
    }
    return b.toString();
  }

  static List<String> row(Object... cells) {
    return Arrays.stream(cells).map(c -> c instanceof Double d ? String.format(Locale.ROOT,
        "%.2f", d) : String.valueOf(c)).toList();
  }

  static String csv(Object... cells) {
    return String.join(",", row(cells));
  }
}
