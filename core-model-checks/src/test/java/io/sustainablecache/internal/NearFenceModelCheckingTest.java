package io.sustainablecache.internal;

import static io.sustainablecache.internal.LincheckScenarios.scenario;

import io.sustainablecache.KeyPolicy;
import io.sustainablecache.testing.InMemoryStore;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Model-checks the near tier's insertion fence with Lincheck (issue 24): the fence keeps, per
 * stripe of keys, the highest version a drop of any of its keys took. Drops of three keys that
 * share one stripe, from three threads, in every interleaving Lincheck explores, must leave the
 * fence refusing, for each of those keys, a read whose ticket was taken just before the last
 * drop. A drop takes its version, then records it; a stripe written with a plain {@code set}
 * instead of a maximum lets a drop that took its version first and records it last lower the
 * stripe below a later drop's version, and this check fails (verified by making {@code drop} use
 * {@code set}).
 *
 * <p>The same holds for drops of everything: two {@code dropAll}s racing each other (a poll's
 * reset and a local {@code invalidateAll}) must leave the fence refusing a read begun before the
 * later one; written with a plain {@code set}, the one that took the lower version and records it
 * last lowered it (review finding 5; verified by reverting {@code dropAll} to a {@code set}).
 */
@Param(name = "key", gen = IntGen.class, conf = "0:2")
public final class NearFenceModelCheckingTest {

  private final NearTier<String> tier = new NearTier<>(
      new NearLog(InMemoryStore.create(), new Keys("ns", 250, KeyPolicy.REJECT),
          new SplittableRandom(1)),
      new NearTierTest.Entries(), Duration.ofSeconds(1), Duration.ofSeconds(30), () -> 0L,
      UnaryOperator.identity(), new Generation(() -> 0L, Duration.ofSeconds(1)), NearTier.MIN_FENCE_STRIPES, failure -> { });
  private final List<String> keys = sameStripe(tier);

  @Operation
  public void drop(@Param(name = "key") int key) {
    tier.drop(keys.get(key));
  }

  @Operation
  public void dropAll() {
    tier.dropAll();
  }

  /** After the run: a read that began before the last drop is refused for every key. */
  @Validate
  public void aReadBegunBeforeTheLastDrop_isRefusedForEveryKeyOfTheStripe() {
    NearTier.Ticket now = tier.ticket();
    if (now.version() == 0) {
      return; // nothing dropped
    }
    NearTier.Ticket beforeTheLastDrop = new NearTier.Ticket(now.version() - 1, 0);
    for (String key : keys) {
      if (tier.offer(key, "old", beforeTheLastDrop)) {
        throw new IllegalStateException("the fence let in " + key + " read before drop "
            + now.version());
      }
    }
  }

  @Test
  void dropsOfKeysSharingAStripe_neverLowerItsVersion() {
    LincheckScenarios.modelChecking()
        .threads(3)
        .actorsPerThread(2)
        .actorsBefore(0)
        .actorsAfter(0)
        // three random scenarios besides the hand-written race; scale 3 explores nine, deeper
        .iterations(3 * LincheckScenarios.SCALE)
        .invocationsPerIteration(200 * LincheckScenarios.SCALE)
        // the race: a drop that took the lower version records it after one that took a higher
        .addCustomScenario(scenario(NearFenceModelCheckingTest.class, List.of(), List.of(
            List.of("drop(0)"), List.of("drop(1)"), List.of("drop(2)"))))
        .check(NearFenceModelCheckingTest.class);
  }

  @Test
  void dropAllsRacingEachOther_neverLowerTheFence() {
    LincheckScenarios.modelChecking()
        .threads(2)
        .actorsPerThread(1)
        .actorsBefore(0)
        .actorsAfter(0)
        // one random pair besides the hand-written one (two threads of one operation each);
        // scale 3 explores three, deeper
        .iterations(1 * LincheckScenarios.SCALE)
        .invocationsPerIteration(200 * LincheckScenarios.SCALE)
        // the race: the dropAll that took the lower version records it after the other
        .addCustomScenario(scenario(NearFenceModelCheckingTest.class, List.of(), List.of(
            List.of("dropAll"), List.of("dropAll"))))
        .check(NearFenceModelCheckingTest.class);
  }

  private static List<String> sameStripe(NearTier<?> tier) {
    int stripe = tier.stripe("ns:k0");
    return IntStream.iterate(0, i -> i + 1).mapToObj(i -> "ns:k" + i)
        .filter(key -> tier.stripe(key) == stripe).limit(3).toList();
  }
}
