/**
 * Test fixtures shipped with the core, for the cache's own tests, the stampede lab and users'
 * tests: an in-process memcached model with the server's one-second expiry tick ({@link
 * io.sustainablecache.testing.InMemoryStore}), a clock that moves only when told to ({@link
 * io.sustainablecache.testing.FakeClock}), an executor that runs refreshes on demand ({@link
 * io.sustainablecache.testing.ManualExecutor}) and a pinned random source ({@link
 * io.sustainablecache.testing.FixedRandom}). None of them belongs in production code.
 */
package io.sustainablecache.testing;
