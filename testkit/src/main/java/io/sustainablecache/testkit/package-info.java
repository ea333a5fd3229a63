/**
 * Test support shared by every {@link io.sustainablecache.spi.CacheStore} adapter.
 *
 * <ul>
 *   <li>{@link io.sustainablecache.testkit.memcached.MemcachedServer} obtains a real memcached: the server
 *       named by {@code MEMCACHED_ADDRESS}, a Testcontainers container, or a local
 *       {@code memcached} binary started as a child process.</li>
 *   <li>{@link io.sustainablecache.testkit.CacheStoreContract} is the JUnit 5 suite that pins
 *       down the memcached semantics an adapter must deliver through its asynchronous API
 *       (bytes, CAS tokens, {@code add}, {@code cas}, {@code delete}, bulk reads, prefix
 *       flushes, expiry, keys with DEL bytes, concurrency) and the points on which adapters must
 *       agree (array ownership, oversized values, cancellation, interrupted callers).</li>
 *   <li>{@link io.sustainablecache.testkit.CacheStoreFailureContract} checks that an adapter's
 *       futures fail with {@link io.sustainablecache.spi.StoreException} within its operation
 *       timeout when its server goes away or stops answering, when its client is shut down or
 *       when a key is invalid, instead of hanging, throwing or reporting a miss.</li>
 *   <li>{@link io.sustainablecache.testkit.memcached.FaultProxy} is a TCP proxy in front of a real server
 *       that a test turns into a faulty network at run time: added latency, a hanging server,
 *       dropped connections, refused connections.</li>
 *   <li>{@link io.sustainablecache.testkit.FaultToleranceContract} runs a cache over an adapter
 *       through such faults under steady load (server down, slow, hanging): runs of {@link
 *       io.sustainablecache.testkit.memcached.FaultExperiment}, which the stampede lab's fault
 *       suite runs too.</li>
 *   <li>{@link io.sustainablecache.testkit.SustainableCacheContract} runs a cache over an adapter
 *       end to end, including the invalidation races across two hosts. It does not depend on the
 *       adapter beyond what {@link io.sustainablecache.testkit.CacheStoreContract} checks, so
 *       this project runs it over one adapter (ARCUS).</li>
 *   <li>{@link io.sustainablecache.testkit.ClusterContract} is a cluster smoke test: a cache over
 *       three memcached processes ({@link io.sustainablecache.testkit.memcached.MemcachedCluster}), one
 *       killed and brought back, with exact counts of where the client sends the dead node's keys
 *       and what reloads. (The same experiment under load runs once, in the stampede lab.)</li>
 *   <li>{@link io.sustainablecache.testkit.CompletionThreadContract} calls every method of a
 *       cache on the adapter's client I/O thread and on the shared scheduler's thread, and
 *       asserts each returns promptly; {@link io.sustainablecache.testkit.ClientThreads} runs code
 *       there, for the Spring contract too.</li>
 * </ul>
 *
 * <p>An adapter module depends on this artifact in {@code test} scope and extends the contracts
 * from integration tests ({@code *IT}) run by the failsafe plugin.
 *
 * <p>{@code MemcachedServer}, {@code MemcachedCluster} and {@code FaultProxy} are in the artifact
 * {@code sustainable-cache-testkit-memcached}, which this one depends on and which needs no test
 * framework (the stampede lab uses it too).
 * {@link io.sustainablecache.testkit.MissingMemcachedReport} prints one line at the end of a test
 * run when tests were skipped for lack of a memcached.
 */
package io.sustainablecache.testkit;
