package io.sustainablecache;

import java.util.random.RandomGenerator;

/**
 * Decides, on every read of a cached entry, whether to recompute it before it expires, and where
 * the recomputation runs.
 *
 * <p>The built-in policies all use the XFetch test of Vattani, Chierichetti and Lowenstein,
 * "Optimal Probabilistic Cache Stampede Prevention" (VLDB 2015): a read at time {@code now}
 * recomputes when
 *
 * <pre>{@code now - delta * beta * ln(U) >= expiry      U uniform in (0, 1]}</pre>
 *
 * so that the probability of refreshing on a read {@code r} milliseconds before expiry is
 * {@code exp(-r / (delta * beta))}. They differ in {@code delta} and in where the refresh runs:
 *
 * <table class="striped">
 *   <caption>Built-in policies</caption>
 *   <tr><th>policy</th><th>delta</th><th>runs</th><th>past expiry</th></tr>
 *   <tr><td>{@link #none()}</td><td>-</td><td>never early</td><td>load inline (a miss)</td></tr>
 *   <tr><td>{@link #xfetch(double)} (PER)</td><td>measured load time</td><td>on the reading
 *     thread</td><td>load inline (a miss)</td></tr>
 *   <tr><td>{@link #sustainable()} (SUS)</td><td>max(load time, TTL/10), and only within the
 *     last delta</td><td>background executor, one per key</td><td>serve stale, refresh in
 *     background</td></tr>
 * </table>
 *
 * <p>The built-in policies are the only implementations (the interface is sealed): each is
 * immutable and thread-safe, and {@link #shouldRefresh} neither allocates nor blocks.
 */
public sealed interface RefreshPolicy
    permits Policies.NoRefresh, Policies.XFetch, Policies.Sustainable {

  /**
   * Decides whether a read of an entry that has not yet logically expired should refresh it.
   *
   * @param nowMillis the reader's wall-clock time, epoch milliseconds
   * @param fetchedAtMillis when the entry was loaded, epoch milliseconds
   * @param expiresAtMillis the entry's logical expiry, epoch milliseconds
   * @param loadMillis how long the entry's load took, milliseconds, {@code >= 0}
   * @param random the cache's random source
   * @return {@code true} to refresh now
   */
  boolean shouldRefresh(long nowMillis, long fetchedAtMillis, long expiresAtMillis,
      long loadMillis, RandomGenerator random);

  /**
   * Plain TTL demand-fill: no early refresh; a read after the logical expiry loads the value on
   * the caller's thread (concurrent callers in one JVM share that load). The baseline.
   *
   * @return a shared instance
   */
  static RefreshPolicy none() {
    return Policies.NoRefresh.INSTANCE;
  }

  /**
   * Probabilistic early recomputation exactly as the paper describes (PER, "XFetch"), with
   * {@code delta} the measured load time, executed on the reading thread. Concurrent readers of a
   * key that is being reloaded do not reload it too: they get the current value (one reload per
   * key at a time in this JVM). Provided as the honest baseline for SUS: with fast loaders and
   * low request rates its refresh window is too short to be hit.
   *
   * @param beta the paper's {@code beta}; {@code 1.0} is the paper's default, larger refreshes
   *     earlier
   * @return a new immutable policy
   * @throws IllegalArgumentException if {@code beta} is not finite and positive
   */
  static RefreshPolicy xfetch(double beta) {
    return new Policies.XFetch(Policies.checkBeta(beta));
  }

  /**
   * The sustainable policy (SUS), the default: XFetch with {@code beta = 1} and {@code delta =
   * max(load time, TTL / 10)}, applied only within the last {@code delta} before expiry, and
   * refreshed in the background. Entries are used untouched for the first 90% of their TTL and
   * refreshed probabilistically in the last 10%; with a TTL of 10 s or more the window is at
   * least 1 s, so even one read per second refreshes in time. A read that misses the window finds
   * the entry stale within the grace period and refreshes it then, so it is still not a miss.
   *
   * <p>The window bound matters at high request rates: the unbounded XFetch test with this large
   * {@code delta} would fire about {@code delta * ln(rate * delta)} before expiry (a second early
   * for a 3 s TTL at 100 reads/s, most of the TTL at 1000 reads/s), loading a hot key several
   * times per TTL. Bounded, a key is loaded at most {@code 1 / (1 - 1/10)}, about 1.11 times per
   * TTL, at any rate.
   *
   * @return a shared instance
   */
  static RefreshPolicy sustainable() {
    return Policies.Sustainable.DEFAULT;
  }

  /**
   * The sustainable policy with explicit parameters.
   *
   * @param beta the XFetch {@code beta}, finite and positive; scales the window too
   * @param ttlFraction the floor of {@code delta} (and so the window) as a fraction of the
   *     entry's TTL, in {@code (0, 1]}; SUS uses {@code 0.1}
   * @return a new immutable policy
   * @throws IllegalArgumentException if a parameter is out of range
   */
  static RefreshPolicy sustainable(double beta, double ttlFraction) {
    return new Policies.Sustainable(Policies.checkBeta(beta), Policies.checkFraction(ttlFraction));
  }
}
