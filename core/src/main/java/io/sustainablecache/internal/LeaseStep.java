package io.sustainablecache.internal;

/**
 * What the fleet lease took for a flight before it loads: a value that {@link LoadPipeline} acts
 * on. The lease never completes a flight, and writes neither the flight nor the registry: the
 * pipeline records what a step says, the lease this instance now holds ({@link #heldUntil}, on
 * the flight) and another instance's failure marker seen for the first time ({@link #seen}, in
 * the {@link KeyRegistry}).
 *
 * @param <V> the value type
 */
sealed interface LeaseStep<V> {

  /**
   * Until when (epoch ms) this instance holds the key's lease now, which the flight's end
   * releases (or keeps as a failure marker); {@code 0} if it holds none.
   */
  default long heldUntil() {
    return 0;
  }

  /**
   * Another instance's failure marker as the lease judged it, to be remembered with the key
   * ({@link KeyRegistry#sighted}); {@code null} if none was seen.
   */
  default KeyRegistry.Sighting seen() {
    return null;
  }

  /**
   * Load now: this instance won the key's lease ({@code won}: the pipeline tells the registry,
   * which recognises a takeover of a lease it lost before), or holds it from a failed load of its
   * own, until {@code heldUntil} ({@code 0}: the store failed, and the lease fails open).
   */
  record Load<V>(boolean won, long heldUntil) implements LeaseStep<V> {}

  /**
   * A refresh lost the lease to another instance: it does not load, and the pipeline remembers
   * the loss for {@code rememberMillis} (past the lease's longest life) to recognise a takeover.
   */
  record Lost<V>(long rememberMillis, KeyRegistry.Sighting seen) implements LeaseStep<V> {}

  /**
   * Do not load: the flight was completed meanwhile (timed out, or voided and answered). {@code
   * seen}: another instance's failure marker the lease met before it noticed, or {@code null};
   * recorded all the same, since the marker is honoured from when this instance first saw it.
   */
  record Skip<V>(KeyRegistry.Sighting seen) implements LeaseStep<V> {}

  /**
   * Another instance wrote the key since this flight's read: its value answers the flight. If
   * this instance had won the lease meanwhile ({@code heldUntil} not 0), the flight's end
   * releases it at once.
   */
  record Written<V>(Loaded<V> loaded, long heldUntil) implements LeaseStep<V> {}

  /**
   * Another instance's load failed and the key backs off fleet-wide (its failure marker, {@code
   * seen}): the pipeline ends the flight with {@code ending} (the registry remembers the failure,
   * so this instance backs off too) and fails its callers with it.
   */
  record Failed<V>(Ending.PeerFailed ending, KeyRegistry.Sighting seen)
      implements LeaseStep<V> {}

  /**
   * A miss lost the lease to a holder that is loading: wait for its write, polled on the
   * scheduler by {@link FleetLease#awaitPeers} from {@code begun} until {@code deadline} (ticker
   * ms), together with the other misses of its batch, at intervals that grow with the time waited
   * up to {@code pollMillis}; {@code decided} completes with the step that ends the wait (another
   * instance's write or failure, load after all, or skip), never failing. {@code seen} is the
   * failure marker known when the wait began (the polls judge a marker they read against it), or
   * {@code null}. {@code takingOver}: set while the miss tries to take a lease that a poll found
   * gone with no value written ({@link FleetLease}'s {@code takeOver}).
   */
  record WaitForPeer<V>(java.util.concurrent.CompletableFuture<LeaseStep<V>> decided,
      long begun, long deadline, long pollMillis, KeyRegistry.Sighting seen,
      java.util.concurrent.atomic.AtomicBoolean takingOver) implements LeaseStep<V> {

    WaitForPeer(java.util.concurrent.CompletableFuture<LeaseStep<V>> decided, long begun,
        long deadline, long pollMillis, KeyRegistry.Sighting seen) {
      this(decided, begun, deadline, pollMillis, seen,
          new java.util.concurrent.atomic.AtomicBoolean());
    }
  }

  /** {@link Load} without the lease: the store failed while taking it (fail open). */
  @SuppressWarnings("unchecked")
  static <V> LeaseStep<V> load() {
    return (LeaseStep<V>) Holder.LOAD;
  }

  @SuppressWarnings("unchecked")
  static <V> LeaseStep<V> skip() {
    return (LeaseStep<V>) Holder.SKIP;
  }

  /** {@link Skip}, recording {@code seen} ({@code null}: none, the shared instance). */
  static <V> LeaseStep<V> skip(KeyRegistry.Sighting seen) {
    return seen == null ? skip() : new Skip<>(seen);
  }

  /** The shared instances of the two steps without data. */
  final class Holder {
    static final Load<?> LOAD = new Load<>(false, 0);
    static final Skip<?> SKIP = new Skip<>(null);

    private Holder() {}
  }
}
