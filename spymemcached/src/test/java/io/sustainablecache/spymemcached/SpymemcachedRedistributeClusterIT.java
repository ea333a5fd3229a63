package io.sustainablecache.spymemcached;

import net.spy.memcached.FailureMode;

/**
 * {@link SpymemcachedClusterIT} with {@code FailureMode.Redistribute}: while a server is
 * disconnected, the client sends its keys to the next connected server of the key's ketama
 * sequence, where they miss once, are loaded and written, and are hits from then on; when the
 * server is back, they return to it (empty after a restart) and miss once more. {@code
 * docs/failures.md} explains why {@code Cancel} stays the recommendation.
 */
class SpymemcachedRedistributeClusterIT extends SpymemcachedClusterIT {

  @Override
  FailureMode failureMode() {
    return FailureMode.Redistribute;
  }

  @Override
  protected DeadNodeKeys deadNodeKeys() {
    return DeadNodeKeys.MOVE_AT_ONCE;
  }
}
