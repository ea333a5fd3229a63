package io.sustainablecache.micrometer;

import static java.util.Objects.requireNonNull;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.docs.ObservationDocumentation;
import io.sustainablecache.CacheObserver;
import io.sustainablecache.SustainableCacheBuilder;
import java.util.Collection;

/**
 * The observations of a cache's slow steps, through Micrometer's Observation API: a {@link
 * CacheObserver} over an {@link ObservationRegistry}, so that a trace shows the loads, background
 * refreshes, fleet leases and write fences a request's time went to (with a tracing bridge, each
 * is a span; with Micrometer's default meter handler, each is also a timer of its name). A read
 * answered from the cache makes no observation.
 *
 * <pre>{@code
 * SustainableCache.builder(store).ttl(Duration.ofMinutes(5))
 *     .observer(SustainableCacheObservations.observer(observationRegistry))
 *     .build();
 * }</pre>
 *
 * <p>The observations ({@link #getName()}) and their key values: every one has the
 * low-cardinality {@value #NAMESPACE} (the cache's namespace; {@code none} without one) and {@value
 * #OUTCOME} (how it ended: the words of {@link CacheObserver.Kind}), and the high-cardinality
 * {@value #KEY} (the caller's key, when the step is for one key) and {@value #KEYS} (how many
 * keys).
 * A failure is the observation's error (its exception class). A load on the thread of a
 * synchronous caller is a child of that thread's current observation (a Spring MVC request's,
 * say) and is current itself while the loader runs, so the loader's own observations (a database
 * query) are its children; a background refresh is a root, the parent of its lease and its load.
 *
 * <p>Thread-safe; an observer never blocks.
 */
public enum SustainableCacheObservations implements ObservationDocumentation {

  /**
   * {@code sustainable.cache.load}: one loader call. Low-cardinality keys: {@value #NAMESPACE},
   * {@value #OUTCOME} ({@code success}, {@code failure}) and {@value #THREAD} ({@code caller}: on
   * the thread of the synchronous caller that waits for it; {@code background}: on a refresh
   * thread).
   */
  LOAD("sustainable.cache.load", CacheObserver.Kind.LOAD),

  /**
   * {@code sustainable.cache.refresh}: a background refresh of one key, from the decision to
   * its load's end; a root. {@value #OUTCOME}: {@code success}, {@code failure}, {@code
   * not.loaded}.
   */
  REFRESH("sustainable.cache.refresh", CacheObserver.Kind.REFRESH),

  /**
   * {@code sustainable.cache.lease}: taking a key's fleet lease, and waiting for another
   * instance's value. {@value #OUTCOME}: {@code acquired}, {@code peer.value}, {@code
   * peer.failure}, {@code lost}, {@code skipped}, {@code timed.out}.
   */
  LEASE("sustainable.cache.lease", CacheObserver.Kind.LEASE),

  /**
   * {@code sustainable.cache.fence}: a write fence's step, on the transaction's thread, by
   * {@value #FENCE_STEP}: {@code place} ({@value #OUTCOME} {@code placed} or {@code
   * unprotected}), {@code before.commit} ({@code success}, {@code unprotected}) and {@code
   * release} ({@code committed}, {@code rolled.back}); {@code failure} if it threw.
   */
  FENCE("sustainable.cache.fence", CacheObserver.Kind.FENCE);

  /**
   * The low-cardinality key of the cache's namespace ({@code none} without one): not {@code
   * cache}, which the meters ({@link SustainableCacheMeters#TAG_CACHE}) give the cache's name
   * (in Spring, the namespace is a prefix and the derived name).
   */
  public static final String NAMESPACE = "cache.namespace";

  /** The low-cardinality key of how the step ended. */
  public static final String OUTCOME = "outcome";

  /** The low-cardinality key of where a load ran: {@code caller} or {@code background}. */
  public static final String THREAD = "thread";

  /**
   * The low-cardinality key of a fence's step: {@code place}, {@code before.commit}, {@code
   * release}.
   */
  public static final String FENCE_STEP = "fence.step";

  /** The high-cardinality key of the caller's key, for a step of one key. */
  public static final String KEY = "key";

  /** The high-cardinality key of how many keys the step is for. */
  public static final String KEYS = "keys";

  private final String name;
  private final CacheObserver.Kind kind;

  SustainableCacheObservations(String name, CacheObserver.Kind kind) {
    this.name = name;
    this.kind = kind;
  }

  @Override
  public String getName() {
    return name;
  }

  @Override
  public KeyName[] getLowCardinalityKeyNames() {
    return this == LOAD ? KeyName.merge(keys(NAMESPACE, OUTCOME), keys(THREAD))
        : this == FENCE ? KeyName.merge(keys(NAMESPACE, OUTCOME), keys(FENCE_STEP))
        : keys(NAMESPACE, OUTCOME);
  }

  @Override
  public KeyName[] getHighCardinalityKeyNames() {
    return keys(KEY, KEYS);
  }

  /**
   * An observer that makes these observations in {@code registry}; give it to {@link
   * SustainableCacheBuilder#observer}. With a no-op registry nothing is observed.
   *
   * @param registry the registry
   * @return the observer; thread-safe
   * @throws NullPointerException if {@code registry} is {@code null}
   */
  public static CacheObserver observer(ObservationRegistry registry) {
    requireNonNull(registry, "registry");
    return step -> begin(registry, step);
  }

  private static CacheObserver.Span begin(ObservationRegistry registry, CacheObserver.Step step) {
    CacheObserver.Kind kind = step.kind();
    SustainableCacheObservations doc = kind == CacheObserver.Kind.LOAD ? LOAD
        : kind == CacheObserver.Kind.REFRESH ? REFRESH
        : kind == CacheObserver.Kind.LEASE ? LEASE : FENCE;
    Observation observation = doc.observation(registry);
    if (kind == CacheObserver.Kind.REFRESH) {
      observation.parentObservation(null); // begun by a read that does not wait for it
    }
    step.parent().ifPresent(parent -> {
      if (parent instanceof Span span) {
        observation.parentObservation(span.observation);
      }
    });
    observation.lowCardinalityKeyValue(NAMESPACE,
        step.namespace().isEmpty() ? "none" : step.namespace());
    if (doc == LOAD) {
      observation.lowCardinalityKeyValue(THREAD, step.background() ? "background" : "caller");
    } else if (doc == FENCE) {
      observation.lowCardinalityKeyValue(FENCE_STEP, kind == CacheObserver.Kind.FENCE ? "place"
          : kind == CacheObserver.Kind.FENCE_BEFORE_COMMIT ? "before.commit" : "release");
    }
    Collection<String> keys = step.keys();
    if (keys.size() == 1) {
      observation.highCardinalityKeyValue(KEY, keys.iterator().next());
    }
    observation.highCardinalityKeyValue(KEYS, Integer.toString(keys.size()));
    return new Span(observation.start());
  }

  private static KeyName[] keys(String... names) {
    KeyName[] keys = new KeyName[names.length];
    for (int i = 0; i < names.length; i++) {
      String name = names[i];
      keys[i] = () -> name;
    }
    return keys;
  }

  /** An observation as a cache's span. */
  private static final class Span implements CacheObserver.Span {
    private final Observation observation;

    Span(Observation observation) {
      this.observation = observation;
    }

    @Override
    public void error(Throwable error) {
      observation.error(error);
    }

    @Override
    public CacheObserver.Scope open() {
      Observation.Scope scope = observation.openScope();
      return scope::close;
    }

    @Override
    public void end(String outcome) {
      observation.lowCardinalityKeyValue(OUTCOME, outcome);
      observation.stop();
    }
  }
}
