/**
 * Micrometer meters for {@link io.sustainablecache.SustainableCache}: {@link
 * io.sustainablecache.micrometer.SustainableCacheMetrics} binds Micrometer's standard cache meters
 * ({@code cache.gets}, {@code cache.puts}, {@code cache.evictions}) and this library's own,
 * whose names are the constants of {@link io.sustainablecache.micrometer.SustainableCacheMeters}.
 * Every meter is a function of {@link io.sustainablecache.SustainableCache#stats()}, read when the
 * registry publishes: nothing is added to the cache's hit path. {@link
 * io.sustainablecache.micrometer.SustainableCacheObservations} observes the cache's slow steps
 * (loads, refreshes, fleet leases, write fences) through Micrometer's Observation API, for
 * tracing.
 */
package io.sustainablecache.micrometer;
