package io.sustainablecache.internal;

/**
 * Why a flight ends: the one argument of {@link KeyRegistry#end}, the only way the load pipeline
 * deregisters a flight it ran (the registry itself ends flights that time out, and {@code
 * invalidate} detaches them). Immutable.
 */
sealed interface Ending {

  /** The flight's load delivered a value (or a loaded absence): the key's failures are forgotten. */
  record Succeeded() implements Ending {}

  /** Another instance wrote the key while this flight waited for its lease: as a success. */
  record PeerDelivered() implements Ending {}

  /** The flight's loader failed with {@code cause}: the key backs off. */
  record Failed(Throwable cause) implements Ending {}

  /**
   * Another instance's load of the key failed (its failure marker under the fleet lease): this
   * instance backs off too, {@code count} failures in a row, no load before {@code notBefore}
   * (epoch ms on another host's clock, clamped to the back-off cap from {@code now}, this host's
   * wall clock).
   */
  record PeerFailed(int count, long notBefore, Throwable cause, long now) implements Ending {}

  /**
   * The flight ends without loading (a refresh that lost the lease or was refused, a load with no
   * thread to run on): its callers read the key again.
   */
  record NotLoaded() implements Ending {}

  /** The shared {@link Succeeded}. */
  Ending SUCCEEDED = new Succeeded();

  /** The shared {@link PeerDelivered}. */
  Ending PEER_DELIVERED = new PeerDelivered();

  /** The shared {@link NotLoaded}. */
  Ending NOT_LOADED = new NotLoaded();
}
