package io.sustainablecache.internal;

import io.sustainablecache.CacheObserver.Kind;
import io.sustainablecache.CacheObserver.Span;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.slf4j.Logger;

/**
 * The {@link LoadPipeline}'s lease step, between beginning the flights and loading them: takes the
 * fleet lease of every flight that writes back ({@link FleetLease}, the requests issued together,
 * so pipelined), acts on each {@link LeaseStep} (load, another instance's write, its failure,
 * skip, or wait for a peer) and hands the winners to the pipeline's loads ({@link Start}), at once
 * or, for those that waited for a peer's write, once their waits ended. It
 * never completes a flight with a value of its own and holds no state: what the lease took is
 * recorded on the flight and in the {@link KeyRegistry}. It is also where a flight ends ({@link
 * #end}), since an end releases the lease the flight holds. Thread-safe.
 */
final class LeaseStage<V> {

  private static final Logger log = Log.LOGGER;

  /** The pipeline's loads: one loader call for the winners. */
  @FunctionalInterface
  interface Start<V> {
    /**
     * Starts one load of {@code legs} on {@code on}; completes {@code launched} once the loader
     * call returned, or at once if there is nothing to load.
     */
    void start(List<Leg<V>> legs, Batch<V> loader, Executor on,
        CompletableFuture<Void> launched);
  }

  private final KeyRegistry registry;
  private final FleetLease<V> lease;
  private final StatsCounter stats;
  private final Start<V> runs;
  /** Each leased flight's {@link Kind#LEASE} span, until what its lease decided. */
  private final Spans spans;

  LeaseStage(KeyRegistry registry, FleetLease<V> lease, StatsCounter stats, Start<V> runs,
      Spans spans) {
    this.spans = spans;
    this.registry = registry;
    this.lease = lease;
    this.stats = stats;
    this.runs = runs;
  }

  /**
   * The one "lease each, load the winners" step: takes the fleet lease of every flight that writes
   * back (all requests issued at once, so pipelined on the connection), acts on what each lease
   * decided, and starts one load of the winners (with the flights that take no lease) on {@code
   * on}. Misses that wait for peers' writes are decided later ({@link #afterPeers}).
   *
   * @return completes once the winners' loader call returned, or nothing is left to load now (for
   *     a refresh thread, which waits for it)
   */
  CompletableFuture<Void> leaseThenLoad(List<Leg<V>> legs, Batch<V> loader,
      Executor on) {
    CompletableFuture<Void> launched = new CompletableFuture<>();
    List<Leg<V>> winners = new ArrayList<>(legs.size());
    List<Leg<V>> leased = new ArrayList<>(legs.size());
    for (Leg<V> leg : legs) {
      (lease.enabled() && leg.flight().writeBack ? leased : winners).add(leg);
    }
    if (leased.isEmpty()) {
      runs.start(winners, loader, on, launched);
      return launched;
    }
    List<CompletableFuture<LeaseStep<V>>> steps = new ArrayList<>(leased.size());
    // a batch's winners re-read their items with one getsAll behind all the adds
    FleetLease.Rereads rereads = leased.size() > 1 ? new FleetLease.Rereads() : null;
    List<Flight<V>> leasedFlights = new ArrayList<>(leased.size());
    List<Span> leaseSpans = spans.on() ? new ArrayList<>(leased.size()) : null;
    for (Leg<V> leg : leased) {
      Flight<V> flight = leg.flight();
      if (leaseSpans != null) {
        leaseSpans.add(spans.begin(Kind.LEASE, List.of(flight.key), leg.refresh() != null,
            leg.refresh()));
      }
      flight.transition(Flight.State.LEASING);
      leasedFlights.add(flight);
      KeyRegistry.LeaseKnowledge memo = registry.lease(flight.storeKey);
      steps.add(flight.origin == Flight.Origin.MISS ? lease.beforeMiss(flight, memo, rereads)
          : lease.beforeRefresh(flight, memo, rereads));
    }
    if (rereads != null) {
      lease.send(rereads, leasedFlights);
    }
    CompletableFuture.allOf(steps.toArray(new CompletableFuture<?>[0]))
        .whenComplete((ignored, error) -> {
          List<Leg<V>> waiting = new ArrayList<>();
          List<Flight<V>> waitingFlights = new ArrayList<>();
          List<LeaseStep.WaitForPeer<V>> waitSteps = new ArrayList<>();
          List<CompletableFuture<LeaseStep<V>>> waits = new ArrayList<>();
          for (int i = 0; i < leased.size(); i++) {
            Leg<V> leg = leased.get(i);
            LeaseStep<V> step = steps.get(i).getNow(null);
            took(leg.flight(), step);
            if (leaseSpans != null) {
              leased(leaseSpans.get(i), step);
            }
            if (step instanceof LeaseStep.WaitForPeer<V> wait) {
              leg.flight().transition(Flight.State.WAITING_FOR_PEER);
              waiting.add(leg);
              waitingFlights.add(leg.flight());
              waitSteps.add(wait);
              waits.add(wait.decided());
            } else {
              afterLease(leg, step, winners);
            }
          }
          runs.start(winners, loader, on, launched);
          if (!waiting.isEmpty()) {
            afterPeers(waiting, waits, loader, on);
            lease.awaitPeers(waitingFlights, waitSteps); // one poll for the batch's items
          }
        });
    return launched;
  }

  /**
   * Misses that wait for peers' writes: each is answered as soon as its peer's write (or
   * failure) is seen; those whose wait ran out without one are loaded together, with one loader
   * call once every wait of the batch has ended (their bounds end together), not one call each.
   */
  private void afterPeers(List<Leg<V>> waiting, List<CompletableFuture<LeaseStep<V>>> waits,
      Batch<V> loader, Executor on) {
    for (int i = 0; i < waiting.size(); i++) {
      Leg<V> leg = waiting.get(i);
      waits.get(i).whenComplete((decided, error) -> {
        if (!loads(decided)) {
          took(leg.flight(), decided);
          afterLease(leg, decided, new ArrayList<>(0)); // a write, a failure or skip: at once
        }
      });
    }
    CompletableFuture.allOf(waits.toArray(new CompletableFuture<?>[0]))
        .whenComplete((ignored, error) -> {
          List<Leg<V>> load = new ArrayList<>();
          for (int i = 0; i < waiting.size(); i++) {
            LeaseStep<V> decided = waits.get(i).getNow(null);
            if (loads(decided)) {
              took(waiting.get(i).flight(), decided);
              load.add(waiting.get(i));
            }
          }
          runs.start(load, loader, on, new CompletableFuture<>());
        });
  }

  /**
   * Ends a flight's {@link Kind#LEASE} span with what its lease decided, or, if it waits for
   * another instance's value, once that wait was decided.
   */
  private void leased(Span span, LeaseStep<V> step) {
    if (step instanceof LeaseStep.WaitForPeer<V> wait) {
      wait.decided().whenComplete((decided, error) -> spans.end(span,
          decided instanceof LeaseStep.Load<V> load && !load.won() || decided == null
              ? "timed.out" : leaseOutcome(decided), null));
    } else {
      spans.end(span, leaseOutcome(step), null);
    }
  }

  /** The outcome of a {@link Kind#LEASE} span, for a lease step that is not a wait. */
  private static String leaseOutcome(LeaseStep<?> step) {
    if (step instanceof LeaseStep.Written<?>) {
      return "peer.value";
    } else if (step instanceof LeaseStep.Failed<?>) {
      return "peer.failure";
    } else if (step instanceof LeaseStep.Lost<?>) {
      return "lost";
    } else if (step instanceof LeaseStep.Skip<?>) {
      return "skipped";
    }
    return "acquired"; // Load, or none: the store failed and the lease fails open
  }

  /**
   * Records what the fleet lease took for a flight (the lease writes neither the flight nor the
   * registry): the lease this instance holds now, on the flight, which its end releases; and
   * another instance's failure marker it saw, with the key's other state in the registry. Each
   * step is taken once, before the pipeline acts on it.
   */
  private void took(Flight<V> flight, LeaseStep<V> step) {
    if (step == null) {
      return;
    }
    if (step.heldUntil() != 0) {
      flight.holdLease(step.heldUntil());
    }
    if (step.seen() != null) {
      registry.sighted(flight.storeKey, step.seen());
    }
  }

  /** Whether a lease's decision is to load: {@link LeaseStep.Load}, or none (fail open). */
  private static boolean loads(LeaseStep<?> step) {
    return step == null || step instanceof LeaseStep.Load<?>;
  }

  /**
   * Acts on what the fleet lease decided for one flight (the lease never completes a flight):
   * adds it to {@code winners}; or answers it with another instance's write; or fails it with
   * another instance's remembered failure; or ends it without loading (a refresh that lost the
   * lease, a flight completed meanwhile). A {@code null} step (a failed future, which the lease
   * never returns) loads: the lease fails open.
   */
  private void afterLease(Leg<V> leg, LeaseStep<V> step, List<Leg<V>> winners) {
    Flight<V> flight = leg.flight();
    if (step instanceof LeaseStep.Written<V> written) {
      flight.deliver(written.loaded());
      end(flight, Ending.PEER_DELIVERED);
    } else if (step instanceof LeaseStep.Failed<V> failed) {
      KeyRegistry.Failure failure = end(flight, failed.ending());
      if (failure == null) { // no longer registered (voided, timed out): its callers read again
        flight.endUnloaded();
      } else {
        stats.increment(Counter.FAILURE_REMEMBERED);
        flight.fail(Backoff.exception(failure, registry.tickMillis()));
      }
    } else if (step instanceof LeaseStep.Skip<V>) {
      abandon(flight);
    } else if (step instanceof LeaseStep.Lost<V> lost) {
      registry.leaseLost(flight.storeKey, flight.casToken, lost.rememberMillis());
      abandon(flight);
    } else {
      if (step instanceof LeaseStep.Load<V> load && load.won()
          && registry.leaseWon(flight.storeKey, flight.casToken)) {
        stats.increment(Counter.LEASE_TAKEOVER);
        log.debug("took over a lease that ran out without its holder writing");
      }
      winners.add(leg);
    }
  }

  /**
   * Ends a flight for {@code ending}, the one place the pipeline does: moves it to {@link
   * Flight.State#ENDED} (the gate refuses a second end, so a lease is released once),
   * deregisters it ({@link KeyRegistry#end}), and releases the fleet lease it held (or keeps it
   * as a failure marker, if the registry's record of the failure says so).
   *
   * @return the failure record the registry made, or {@code null}
   */
  KeyRegistry.Failure end(Flight<V> flight, Ending ending) {
    flight.transition(Flight.State.ENDED);
    KeyRegistry.Failure failure = registry.end(flight, ending);
    if (flight.leaseHeld()) {
      lease.release(flight, failure);
    }
    return failure;
  }

  /**
   * Ends a flight that will not load (a refresh that lost the lease, a load with no thread to run
   * on): its joined callers read again, and the fleet lease it holds is released.
   */
  void abandon(Flight<V> flight) {
    end(flight, Ending.NOT_LOADED);
  }
}
