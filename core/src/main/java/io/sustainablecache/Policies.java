package io.sustainablecache;

import io.sustainablecache.internal.RefreshWindow;
import java.util.random.RandomGenerator;

/** The built-in {@link RefreshPolicy} implementations, reached through its factories. */
final class Policies {

  private Policies() {}

  /** Whether the policy's refreshes run in the background (SUS), not on the reader (PER). */
  static boolean inBackground(RefreshPolicy policy) {
    return policy instanceof Sustainable;
  }

  /**
   * The XFetch test itself: {@code now - delta * beta * ln(U) >= expiry} with {@code U = 1 -
   * random.nextDouble()}, uniform in {@code (0, 1]}. Always {@code true} at or past the expiry;
   * always {@code false} before it when {@code deltaTimesBeta <= 0}. Draws one random number only
   * when the outcome is not already decided.
   *
   * @param nowMillis the reader's time, epoch milliseconds
   * @param expiresAtMillis the logical expiry, epoch milliseconds
   * @param deltaTimesBeta {@code delta * beta} in milliseconds
   * @param random the random source
   * @return whether to recompute
   */
  static boolean xfetch(long nowMillis, long expiresAtMillis, double deltaTimesBeta,
      RandomGenerator random) {
    if (nowMillis >= expiresAtMillis) {
      return true;
    }
    if (!(deltaTimesBeta > 0)) {
      return false;
    }
    double u = 1.0 - random.nextDouble();
    return nowMillis - deltaTimesBeta * Math.log(u) >= expiresAtMillis;
  }

  static double checkBeta(double beta) {
    if (!(beta > 0) || Double.isInfinite(beta)) {
      throw new IllegalArgumentException("beta must be finite and positive: " + beta);
    }
    return beta;
  }

  static double checkFraction(double fraction) {
    if (!(fraction > 0) || fraction > 1) {
      throw new IllegalArgumentException("ttlFraction must be in (0, 1]: " + fraction);
    }
    return fraction;
  }

  enum NoRefresh implements RefreshPolicy {
    INSTANCE;

    @Override
    public boolean shouldRefresh(long nowMillis, long fetchedAtMillis, long expiresAtMillis,
        long loadMillis, RandomGenerator random) {
      return false;
    }

    @Override
    public String toString() {
      return "none";
    }
  }

  record XFetch(double beta) implements RefreshPolicy {

    @Override
    public boolean shouldRefresh(long nowMillis, long fetchedAtMillis, long expiresAtMillis,
        long loadMillis, RandomGenerator random) {
      return xfetch(nowMillis, expiresAtMillis, loadMillis * beta, random);
    }

    @Override
    public String toString() {
      return "PER(beta=" + beta + ")";
    }
  }

  record Sustainable(double beta, double ttlFraction) implements RefreshPolicy, RefreshWindow {

    static final Sustainable DEFAULT = new Sustainable(1.0, 0.1);

    @Override
    public boolean shouldRefresh(long nowMillis, long fetchedAtMillis, long expiresAtMillis,
        long loadMillis, RandomGenerator random) {
      double window = window(fetchedAtMillis, expiresAtMillis, loadMillis);
      // Only the last `window` before expiry: at high request rates plain XFetch with this
      // large delta would fire ~delta * ln(rate * delta) early, several times per TTL.
      if (expiresAtMillis - nowMillis > window) {
        return false;
      }
      return xfetch(nowMillis, expiresAtMillis, window, random);
    }

    /** The last part of an entry's life in which a read may refresh it, milliseconds. */
    @Override
    public double window(long fetchedAtMillis, long expiresAtMillis, long loadMillis) {
      return beta * Math.max(loadMillis, (expiresAtMillis - fetchedAtMillis) * ttlFraction);
    }

    @Override
    public String toString() {
      return "SUS(beta=" + beta + ", ttlFraction=" + ttlFraction + ")";
    }
  }
}
