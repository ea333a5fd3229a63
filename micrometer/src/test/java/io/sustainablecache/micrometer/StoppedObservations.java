package io.sustainablecache.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.ObservationView;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The observations a registry stopped, in the order they stopped (a handler of every context),
 * and what the tests read of them. Thread-safe. Public for the ARCUS module's {@code
 * ArcusObservationsIT}, which reads it from this module's test jar.
 */
public final class StoppedObservations implements ObservationHandler<Observation.Context> {

  private final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

  private StoppedObservations() {}

  /** Records the observations {@code registry} stops from now on. */
  public static StoppedObservations in(ObservationRegistry registry) {
    StoppedObservations recorder = new StoppedObservations();
    registry.observationConfig().observationHandler(recorder);
    return recorder;
  }

  @Override
  public void onStop(Observation.Context context) {
    stopped.add(context);
  }

  @Override
  public boolean supportsContext(Observation.Context context) {
    return true;
  }

  /** Every observation stopped so far. */
  List<Observation.Context> all() {
    return List.copyOf(stopped);
  }

  /** Forgets the observations stopped so far. */
  public void clear() {
    stopped.clear();
  }

  /** The observations of {@code name} stopped so far, in order. */
  public List<Observation.Context> named(String name) {
    return stopped.stream().filter(c -> name.equals(c.getName())).toList();
  }

  /** The one observation of {@code name}; fails if there is none or more. */
  Observation.Context only(String name) {
    List<Observation.Context> named = named(name);
    assertThat(named).as("observations named " + name).hasSize(1);
    return named.get(0);
  }

  /** The context of the observation's parent, or {@code null} for a root. */
  public static Object parentOf(Observation.ContextView context) {
    ObservationView parent = context.getParentObservation();
    return parent == null ? null : parent.getContextView();
  }

  /** A low-cardinality value of the observation, or {@code null}. */
  public static String low(Observation.ContextView context, String key) {
    KeyValue value = context.getLowCardinalityKeyValue(key);
    return value == null ? null : value.getValue();
  }

  /** A high-cardinality value of the observation, or {@code null}. */
  static String high(Observation.ContextView context, String key) {
    KeyValue value = context.getHighCardinalityKeyValue(key);
    return value == null ? null : value.getValue();
  }
}
