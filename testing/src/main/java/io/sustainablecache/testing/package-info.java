/**
 * Test fixtures ({@code sustainable-cache-testing}, for a test scope) that the cache's own tests,
 * the stampede lab and users' tests share: an in-process memcached model with the server's
 * one-second expiry tick ({@link io.sustainablecache.testing.InMemoryStore}), a clock that moves
 * only when told to ({@link io.sustainablecache.testing.FakeClock}), an executor that runs
 * refreshes on demand ({@link io.sustainablecache.testing.ManualExecutor}), a pinned random
 * source ({@link io.sustainablecache.testing.FixedRandom}), and stores that fail, hold or count
 * operations ({@link io.sustainablecache.testing.ScriptedStore}, {@link
 * io.sustainablecache.testing.ForwardingStore}). None of them belongs in production code.
 */
package io.sustainablecache.testing;
