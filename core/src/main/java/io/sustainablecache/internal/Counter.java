package io.sustainablecache.internal;

import io.sustainablecache.CacheStats;

/**
 * The cache's counters. Their public face is {@link CacheStats#count(String)}, by {@link
 * #counterName()}, so counters can be added without breaking binary compatibility.
 */
enum Counter {
  HIT,
  STALE_HIT,
  NO_VALUE_HIT,
  MISS,
  LOAD_SUCCESS,
  LOAD_FAILURE,
  NO_VALUE_LOAD,
  LOAD_TIME_MILLIS,
  LOAD_TIMEOUT,
  BULK_LOAD,
  FAILURE_REMEMBERED,
  REFRESH_SCHEDULED,
  REFRESH_DEDUPED,
  REFRESH_REJECTED,
  REFRESH_SUCCESS,
  REFRESH_FAILURE,
  REFRESH_BACKOFF,
  STALE_ON_ERROR,
  STALE_SET_DISCARD,
  SKIPPED_WRITE,
  STORE_ERROR,
  CORRUPT_ENTRY,
  PUT,
  INVALIDATION,
  LEASE_WON,
  LEASE_LOST,
  LEASE_TAKEOVER,
  LEASE_INVALID,
  LOADER_CALL,
  LOAD_WRITTEN,
  NEAR_HIT,
  NEAR_MISS,
  NEAR_RECORD_FAILURE,
  NEAR_POLL_FAILURE,
  NEAR_SAMPLE,
  NEAR_STALE_SAMPLE,
  NEAR_EVICTION,
  NEAR_INVALIDATION,
  NEAR_RESET,
  FENCE,
  FENCED_LOAD,
  FENCED_HIT,
  FENCE_RELEASE_FAILURE,
  UNFINISHED_AT_CLOSE,
  UNPROTECTED_WRITE,
  INVALIDATION_OWED,
  INVALIDATION_PAID,
  GENERATION_OWED,
  STORE_REJECTED,
  OUTAGE_LOAD;

  static final Counter[] ALL = values();

  /** The counter's name in {@link CacheStats#count(String)}: lower case. */
  String counterName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
