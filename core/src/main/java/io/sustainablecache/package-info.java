/**
 * The sustainable-cache API: {@link io.sustainablecache.SustainableCache} and its builder, the
 * {@link io.sustainablecache.RefreshPolicy refresh policies} (none, PER/XFetch, SUS), {@link
 * io.sustainablecache.ValueCodec value codecs}, {@link io.sustainablecache.Loader} and {@link
 * io.sustainablecache.CacheStats}. Everything else in this package is package-private; the store
 * SPI is {@code io.sustainablecache.spi}, the engine {@code io.sustainablecache.internal} (not
 * API).
 */
package io.sustainablecache;
