package io.sustainablecache;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.function.Function;

/**
 * The text forms of {@link CacheSettings}' spec format: durations, booleans, numbers, refresh
 * policies, and the two settings made of two values. Each parser throws {@link
 * IllegalArgumentException} saying what form it expected. Stateless.
 */
final class SettingText {

  private SettingText() {}

  /** The failure back-off: a base, and a cap or {@code null} for the builder's default cap. */
  record FailureBackoff(Duration base, Duration max) {
    static FailureBackoff parse(String text) {
      int colon = text.indexOf(':');
      return colon < 0
          ? new FailureBackoff(duration(text), null)
          : new FailureBackoff(duration(text.substring(0, colon)),
              duration(text.substring(colon + 1)));
    }

    @Override
    public String toString() {
      return max == null ? base.toString() : base + ":" + max;
    }
  }

  /**
   * The coalescing of bulk loads (a loading cache's misses and refreshes, {@code getAll}'s
   * background refreshes): at most this many keys per bulk loader call, a batch waiting at most
   * {@code maxWait} for a running call ({@code null}: no bound). Written
   * {@code <maxBatchSize>} or {@code <maxBatchSize>:<maxWait>}.
   */
  record Coalesce(int maxBatchSize, Duration maxWait) {
    static Coalesce parse(String text) {
      int colon = text.indexOf(':');
      return colon < 0
          ? new Coalesce(number(text, Integer::valueOf), null)
          : new Coalesce(number(text.substring(0, colon), Integer::valueOf),
              duration(text.substring(colon + 1)));
    }

    @Override
    public String toString() {
      return maxWait == null ? String.valueOf(maxBatchSize) : maxBatchSize + ":" + maxWait;
    }
  }

  /**
   * The near cache: at most this many entries (or stored bytes, if {@code bytes}), served at most
   * this long unconfirmed, and the share of near hits checked against the store ({@code null}:
   * the builder's default). The size is a number of entries, or of bytes with a unit: {@code B},
   * {@code KiB}/{@code KB}, {@code MiB}/{@code MB}, {@code GiB}/{@code GB} (powers of 1,024).
   */
  record NearCache(long maximumSize, boolean bytes, Duration staleness, Double sampling) {
    private static final String[] UNITS = {"gib", "gb", "mib", "mb", "kib", "kb", "b"};
    private static final int[] SHIFTS = {30, 30, 20, 20, 10, 10, 0};

    static NearCache parse(String text) {
      String[] parts = text.split(":", -1);
      if (parts.length < 2 || parts.length > 3) {
        throw new IllegalArgumentException("expected <maximumSize>:<staleness>[:<sampling>],"
            + " e.g. 10000:1s, 10000:1s:0.001 or 64MiB:1s (bytes)");
      }
      String size = parts[0].strip().toLowerCase(Locale.ROOT);
      for (int i = 0; i < UNITS.length; i++) {
        if (size.endsWith(UNITS[i])) {
          long amount = number(size.substring(0, size.length() - UNITS[i].length()).strip(),
              Long::valueOf);
          if (amount < 0 || amount > Long.MAX_VALUE >> SHIFTS[i]) {
            throw new IllegalArgumentException("size out of range: " + parts[0]);
          }
          return new NearCache(amount << SHIFTS[i], true, duration(parts[1]), sampling(parts));
        }
      }
      return new NearCache(number(size, Long::valueOf), false, duration(parts[1]),
          sampling(parts));
    }

    private static Double sampling(String[] parts) {
      return parts.length == 3 ? number(parts[2], Double::valueOf) : null;
    }

    @Override
    public String toString() {
      return (bytes ? bytesText(maximumSize) : Long.toString(maximumSize)) + ":" + staleness
          + (sampling == null ? "" : ":" + sampling);
    }

    /** The size in the largest unit that divides it exactly. */
    private static String bytesText(long bytes) {
      String[] names = {"GiB", "MiB", "KiB"};
      for (int i = 0; i < names.length; i++) {
        int shift = 30 - 10 * i;
        if (bytes % (1L << shift) == 0) {
          return (bytes >> shift) + names[i];
        }
      }
      return bytes + "B";
    }
  }

  /**
   * A duration: a number with a unit ({@code ms}, {@code s}, {@code m}, {@code h}, {@code d}) or
   * ISO-8601; {@code 0} needs none (the docs turn settings off with {@code =0}).
   *
   * @throws IllegalArgumentException if it is neither, or too long for a {@link Duration}
   */
  static Duration duration(String text) {
    try {
      return parseDuration(text.strip().toLowerCase(Locale.ROOT));
    } catch (ArithmeticException | DateTimeParseException e) {
      throw new IllegalArgumentException(e instanceof ArithmeticException
          ? "too long for a duration" : e.getMessage(), e);
    }
  }

  private static Duration parseDuration(String t) {
    if (t.equals("0")) {
      return Duration.ZERO;
    }
    if (t.startsWith("p") || t.startsWith("-p")) {
      return Duration.parse(t.toUpperCase(Locale.ROOT));
    }
    int unit = 0;
    while (unit < t.length() && (Character.isDigit(t.charAt(unit)) || t.charAt(unit) == '-')) {
      unit++;
    }
    if (unit == 0 || unit == t.length()) {
      throw new IllegalArgumentException("a duration is a number with a unit (ms, s, m, h, d)"
          + " or ISO-8601, e.g. 500ms, 10m, PT10M");
    }
    long amount = number(t.substring(0, unit), Long::valueOf);
    return switch (t.substring(unit)) {
      case "ms" -> Duration.ofMillis(amount);
      case "s" -> Duration.ofSeconds(amount);
      case "m" -> Duration.ofMinutes(amount);
      case "h" -> Duration.ofHours(amount);
      case "d" -> Duration.ofDays(amount);
      default -> throw new IllegalArgumentException("unknown duration unit '" + t.substring(unit)
          + "' (ms, s, m, h, d)");
    };
  }

  static Boolean bool(String text) {
    return switch (text.strip().toLowerCase(Locale.ROOT)) {
      case "true" -> Boolean.TRUE;
      case "false" -> Boolean.FALSE;
      default -> throw new IllegalArgumentException("expected true or false");
    };
  }

  static <N> N number(String text, Function<String, N> parse) {
    try {
      return parse.apply(text.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a number: " + text.strip());
    }
  }

  static RefreshPolicy policy(String text) {
    String[] parts = text.strip().toLowerCase(Locale.ROOT).split(":", -1);
    return switch (parts[0]) {
      case "none" -> {
        requireParts(parts, 1, "none");
        yield RefreshPolicy.none();
      }
      case "xfetch", "per" -> {
        requireParts(parts, 2, "xfetch:<beta>");
        yield RefreshPolicy.xfetch(number(parts[1], Double::valueOf));
      }
      case "sustainable", "sus" -> {
        if (parts.length == 1) {
          yield RefreshPolicy.sustainable();
        }
        requireParts(parts, 3, "sustainable:<beta>:<ttlFraction>");
        yield RefreshPolicy.sustainable(number(parts[1], Double::valueOf),
            number(parts[2], Double::valueOf));
      }
      default -> throw new IllegalArgumentException(
          "expected sustainable, sustainable:<beta>:<ttlFraction>, xfetch:<beta> or none");
    };
  }

  private static void requireParts(String[] parts, int count, String form) {
    if (parts.length != count) {
      throw new IllegalArgumentException("expected " + form);
    }
  }

  static String format(RefreshPolicy policy) {
    if (policy instanceof Policies.Sustainable sus) {
      return sus.equals(Policies.Sustainable.DEFAULT)
          ? "sustainable"
          : "sustainable:" + sus.beta() + ":" + sus.ttlFraction();
    }
    if (policy instanceof Policies.XFetch per) {
      return "xfetch:" + per.beta();
    }
    return "none";
  }
}
