/**
 * Public for other modules of this project and for tooling, but not part of the supported API:
 * it may change in any release. Currently the {@link io.sustainablecache.internal.Envelope}
 * wire format.
 */
package io.sustainablecache.internal;
