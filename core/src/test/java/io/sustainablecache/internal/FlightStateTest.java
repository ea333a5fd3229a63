package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.internal.Flight.State;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The flight's state table (issue 23): its one gate allows exactly the pairs of the table in
 * {@link Flight}'s Javadoc and refuses (counts, throws) every other, a second end included; the
 * voided mark is kept across transitions.
 */
final class FlightStateTest {

  private static final Map<State, Set<State>> TABLE = Map.of(
      State.REGISTERED, EnumSet.of(State.LEASING, State.LOADING, State.ENDED),
      State.LEASING, EnumSet.of(State.WAITING_FOR_PEER, State.LOADING, State.ENDED),
      State.WAITING_FOR_PEER, EnumSet.of(State.LOADING, State.ENDED),
      State.LOADING, EnumSet.of(State.WRITING, State.ENDED),
      State.WRITING, EnumSet.of(State.ENDED),
      State.ENDED, EnumSet.noneOf(State.class));

  private static Flight<String> flight() {
    return new Flight<>("k", "s:k", Flight.Origin.MISS, 0, 0, 0, 1, false, true);
  }

  /** A new flight moved along a legal path into {@code state}. */
  private static Flight<String> in(State state) {
    Flight<String> flight = flight();
    switch (state) {
      case REGISTERED -> { }
      case LEASING -> flight.transition(State.LEASING);
      case WAITING_FOR_PEER -> {
        flight.transition(State.LEASING);
        flight.transition(State.WAITING_FOR_PEER);
      }
      case LOADING -> flight.transition(State.LOADING);
      case WRITING -> {
        flight.transition(State.LOADING);
        flight.transition(State.WRITING);
      }
      case ENDED -> flight.transition(State.ENDED);
    }
    return flight;
  }

  @Test
  void theGateAllowsExactlyTheTablesPairs_andRefusesAndCountsEveryOther() {
    for (State from : State.values()) {
      for (State to : State.values()) {
        Flight<String> flight = in(from);
        if (TABLE.get(from).contains(to)) {
          assertThat(flight.transition(to)).as(from + " -> " + to).isEqualTo(from);
          assertThat(flight.state()).isEqualTo(to);
        } else {
          assertThatThrownBy(() -> flight.transition(to)).as(from + " -> " + to)
              .isInstanceOf(IllegalStateException.class);
          assertThat(flight.state()).isEqualTo(from);
          assertThat(flight.refusedTransitions()).isEqualTo(1);
        }
      }
    }
  }

  @Test
  void aFlightEndsOnce_aSecondEndIsRefused() {
    Flight<String> flight = in(State.WRITING);
    flight.transition(State.ENDED);
    assertThatThrownBy(() -> flight.transition(State.ENDED))
        .isInstanceOf(IllegalStateException.class);
    assertThat(flight.refusedTransitions()).isEqualTo(1);
  }

  @Test
  void voidingIsAMarkInAnyState_keptAcrossTransitions() {
    Flight<String> flight = in(State.LEASING);
    flight.voidIt();
    flight.transition(State.LOADING);
    assertThat(flight.voided()).isTrue();
    assertThat(flight.state()).isEqualTo(State.LOADING);
    flight.transition(State.ENDED);
    assertThat(flight.voided()).isTrue();
  }
}
