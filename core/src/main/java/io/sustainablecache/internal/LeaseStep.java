package io.sustainablecache.internal;

/**
 * What the fleet lease decided about a flight before it loads: a value that {@link
 * LoadPipeline} acts on. The lease never completes a flight itself.
 *
 * @param <V> the value type
 */
sealed interface LeaseStep<V> {

  /**
   * Load now: this instance won the key's lease ({@code won}: the pipeline tells the registry,
   * which recognises a takeover of a lease it lost before), or holds it from a failed load of its
   * own, or the store failed (the lease fails open).
   */
  record Load<V>(boolean won) implements LeaseStep<V> {}

  /**
   * A refresh lost the lease to another instance: it does not load, and the pipeline remembers
   * the loss for {@code rememberMillis} (past the lease's longest life) to recognise a takeover.
   */
  record Lost<V>(long rememberMillis) implements LeaseStep<V> {}

  /** Do not load: the flight was completed meanwhile (timed out, or voided and answered). */
  record Skip<V>() implements LeaseStep<V> {}

  /** Another instance wrote the key since this flight's read: its value answers the flight. */
  record Written<V>(Loaded<V> loaded) implements LeaseStep<V> {}

  /**
   * Another instance's load failed and the key backs off fleet-wide (its failure marker): the
   * pipeline ends the flight with {@code ending} (the registry remembers the failure, so this
   * instance backs off too) and fails its callers with it.
   */
  record Failed<V>(Ending.PeerFailed ending) implements LeaseStep<V> {}

  /**
   * A miss lost the lease to a holder that is loading: wait for its write, polled on the
   * scheduler every {@code pollMillis} until {@code deadline} (ticker ms) by {@link
   * FleetLease#awaitPeers}, together with the other misses of its batch; {@code decided}
   * completes with the step that ends the wait (another instance's write or failure, load after
   * all, or skip), never failing.
   */
  record WaitForPeer<V>(java.util.concurrent.CompletableFuture<LeaseStep<V>> decided,
      long deadline, long pollMillis) implements LeaseStep<V> {}

  @SuppressWarnings("unchecked")
  static <V> LeaseStep<V> load() {
    return (LeaseStep<V>) Holder.LOAD;
  }

  /** {@link Load} of a lease this instance won. */
  @SuppressWarnings("unchecked")
  static <V> LeaseStep<V> won() {
    return (LeaseStep<V>) Holder.WON;
  }

  @SuppressWarnings("unchecked")
  static <V> LeaseStep<V> skip() {
    return (LeaseStep<V>) Holder.SKIP;
  }

  /** The shared instances of the two steps without data. */
  final class Holder {
    static final Load<?> LOAD = new Load<>(false);
    static final Load<?> WON = new Load<>(true);
    static final Skip<?> SKIP = new Skip<>();

    private Holder() {}
  }
}
