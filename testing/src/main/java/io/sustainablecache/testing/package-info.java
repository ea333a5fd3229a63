/**
 * Test fixtures ({@code sustainable-cache-testing}, for a test scope) that the cache's own tests,
 * the stampede lab and users' tests share: an in-process memcached model with the server's
 * one-second expiry tick ({@link io.sustainablecache.testing.InMemoryStore}), a wall clock and a
 * ticker that move only when told to ({@link io.sustainablecache.testing.FakeClock}; the wall
 * clock alone may be stepped), an executor that runs refreshes on demand ({@link
 * io.sustainablecache.testing.ManualExecutor}), a pinned random
 * source ({@link io.sustainablecache.testing.FixedRandom}), stores that fail, hold or count
 * operations ({@link io.sustainablecache.testing.ScriptedStore}, {@link
 * io.sustainablecache.testing.ForwardingStore}), and one that counts the round trips a call
 * waits for over a real store ({@link io.sustainablecache.testing.RoundTripStore}). None of them
 * belongs in production code.
 */
package io.sustainablecache.testing;
