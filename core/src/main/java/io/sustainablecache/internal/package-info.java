/**
 * The engine behind {@link io.sustainablecache.SustainableCache}, and the {@link
 * io.sustainablecache.internal.Envelope} wire format. <b>Not part of the supported API:</b> it may
 * change in any release. The API is the package {@code io.sustainablecache}, the store SPI {@code
 * io.sustainablecache.spi}.
 *
 * <p>One flat package, package-private except four types the API package or other modules of
 * this project must reach, each documented as not supported: {@link
 * io.sustainablecache.internal.Engine} (the entry points the API package calls: the caches, the
 * shared scheduler, the counters' names), {@link io.sustainablecache.internal.CacheConfig} (the
 * resolved configuration the builder makes, by named setters), {@link
 * io.sustainablecache.internal.RefreshWindow} (what the sustainable policy tells the engine) and
 * {@link io.sustainablecache.internal.Envelope} (the wire format, which the testkit and the lab
 * read). A package per concern would make a dozen more types public, because the concerns share
 * a key's state ({@code Flight}, {@code KeyRegistry}, {@code Entry}, {@code Keys}, {@code
 * StatsCounter}).
 *
 * <p>Where each part lives (the data flow is in {@code docs/design.md}, "The data flow"):
 *
 * <table>
 *   <caption>The engine by concern</caption>
 *   <tr><th>concern</th><th>classes</th></tr>
 *   <tr><td>facade</td><td>{@code Engine}, {@code DefaultSustainableCache}, {@code
 *       DefaultLoadingSustainableCache}, {@code CacheConfig}</td></tr>
 *   <tr><td>read</td><td>{@code ReadPath} (the single-key read step), {@code AfterRead} and
 *       {@code Answer} (what follows the read step, once for single and bulk reads), {@code BulkLoads}
 *       ({@code getAll}), {@code PeekedKeys} ({@code peekAll}), {@code Decision}, {@code Entry},
 *       {@code EntryReader}, {@code Keys},
 *       {@code Waiting}</td></tr>
 *   <tr><td>load</td><td>{@code LoadPipeline} (every load, as a batch), {@code Leg} (a flight
 *       it runs), {@code KeyRegistry}
 *       and {@code Flight} (a key's in-flight work, back-off and invalidation), {@code Ending},
 *       {@code LoadRequest}, {@code Loaded}, {@code Failures}, {@code Backoff}, {@code
 *       LoadTimes}, {@code CallerRuns}, {@code Refresher}, {@code Refusable}, {@code Batch} (a
 *       loader as the pipeline calls it, handed explicitly from the reads), {@code Coalescer} (the
 *       one batcher: a loading cache's flights, and bulk loaders' refreshes)</td></tr>
 *   <tr><td>fleet lease</td><td>{@code LeaseStage} (the pipeline's lease step, and a flight's
 *       end), {@code FleetLease}, {@code LeaseStep}, {@code LeaseValues}</td></tr>
 *   <tr><td>write</td><td>{@code EntryWriter} (a load's write), {@code CallerWrites} ({@code
 *       put}, {@code invalidate}, {@code putLoaded}), {@code ChangeSightings} (changes {@code
 *       putLoaded} saw), {@code WriteFences}, {@code PendingWrites} (the writes in flight, which
 *       {@code close()} waits for), {@code Exptime}, {@code Envelope}</td></tr>
 *   <tr><td>near cache</td><td>{@code NearCache}, {@code NearTier}, {@code NearLog}, {@code
 *       NearEntry}, {@code CaffeineEntries}, {@code Generation}</td></tr>
 *   <tr><td>policy</td><td>{@code RefreshMode}, {@code RefreshWindow}</td></tr>
 *   <tr><td>observation</td><td>{@code StatsCounter}, {@code Counter}, {@code Log}, {@code
 *       RateLimitedLog}</td></tr>
 *   <tr><td>threads</td><td>{@code SystemScheduler}</td></tr>
 * </table>
 */
package io.sustainablecache.internal;
