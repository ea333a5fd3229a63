package io.sustainablecache.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testing.ForwardingStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The near cache ({@code SustainableCacheBuilder.nearCache}) over an adapter and a real
 * memcached, in real time, with two "hosts" (two caches, each with a client of its own, one
 * namespace): near hits make no store read, and a change on one host ({@code invalidate}, {@code
 * put}, {@code invalidateAll}) ends the other host's near hits of the previous value within the
 * bound ({@value #DELTA_MILLIS} ms here), measured from
 * when the change returned to before the read that served it. The invalidation log needs the
 * store's counters ({@code CacheStore.incr}); the bound's argument and its faults are tested
 * deterministically in the core.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class NearCacheContract extends ServerContract {

  static final long DELTA_MILLIS = 300;
  private static final Duration DELTA = Duration.ofMillis(DELTA_MILLIS);

  private final String namespace = "near-" + UUID.randomUUID().toString().substring(0, 8);

  /** Creates the contract; subclasses are instantiated by JUnit. */
  protected NearCacheContract() {}


  private CacheStore newStore() {
    return newStore(Duration.ofSeconds(2));
  }

  private SustainableCache<String> host(CacheStore store) {
    SustainableCache<String> cache = SustainableCache.builder(store).namespace(namespace)
        .ttl(Duration.ofMinutes(5)).codec(ValueCodec.utf8())
        .nearCache(1_000, DELTA, 0) // no sampling: every store read here is a near miss's
        .build();
    closeAfter(cache);
    return cache;
  }

  /** Waits until the cache's near cache has confirmed itself once (its first poll). */
  private static void awaitNearHit(SustainableCache<String> cache, String key) {
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    long before = cache.stats().count("near_hit");
    while (cache.stats().count("near_hit") == before) {
      assertThat(System.nanoTime()).as("a near hit within 10 s").isLessThan(giveUp);
      cache.get(key, k -> "v1");
      sleep(5);
    }
  }

  /**
   * Issue 24, defect 6: a near cache without a namespace is refused when built, over this adapter
   * as over any store (over ARCUS it used to build and then never serve near: its log's keys are
   * no valid ARCUS prefix), with a message that says why.
   */
  @Test
  void aNearCacheWithoutANamespace_isRefusedAtBuild() {
    CacheStore store = newStore();
    assertThatThrownBy(() -> SustainableCache.builder(store).ttl(Duration.ofMinutes(5))
        .codec(ValueCodec.utf8()).nearCache(1_000, DELTA, 0).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("nearCache needs a namespace");
  }

  @Test
  void nearHits_makeNoStoreRead() {
    AtomicLong reads = new AtomicLong();
    CacheStore counting = new ForwardingStore(newStore()) {
      @Override
      public CompletableFuture<Optional<StoreItem>> gets(String key) {
        reads.incrementAndGet();
        return super.gets(key);
      }
    };
    SustainableCache<String> a = host(counting);
    awaitNearHit(a, "k");
    long readsBefore = reads.get();
    long hitsBefore = a.stats().count("near_hit");

    for (int i = 0; i < 1_000; i++) {
      assertThat(a.get("k", k -> "loaded again")).isEqualTo("v1");
    }

    assertThat(a.stats().count("near_hit") - hitsBefore).as("near hits").isGreaterThan(900);
    assertThat(reads.get() - readsBefore).as("store reads of those reads")
        .isEqualTo(1_000 - (a.stats().count("near_hit") - hitsBefore));
  }

  @Test
  void aChangeOnAnotherHost_endsThisHostsNearHitsOfThePreviousValue_withinTheBound() {
    SustainableCache<String> a = host(newStore());
    SustainableCache<String> b = host(newStore());
    for (String change : List.of("invalidate", "put", "invalidateAll")) {
      String key = "k-" + change;
      awaitNearHit(a, key);

      switch (change) {
        case "invalidate" -> b.invalidate(key);
        case "put" -> b.put(key, "v2");
        default -> b.invalidateAll(); // a new generation: memcached has no prefix flush
      }
      assertTheOldValueEndsWithinTheBound(a, key, System.nanoTime(), change);
    }
  }

  /**
   * A number of 2<sup>63</sup> or more under the log's sequence (memcached 1.6.18 may refuse to
   * {@code incr} it, depending on its leftover memory) or no number at all: a poll replaces it,
   * and changes reach the other host within the bound again.
   */
  @Test
  void aSequenceNoCounterCanUse_isReplacedByAPoll_andChangesReachOtherHostsAgain() {
    CacheStore raw = newStore();
    SustainableCache<String> a = host(newStore());
    SustainableCache<String> b = host(raw);
    String sequenceKey = namespace + ":\u007Fnear:seq";
    for (String planted : List.of("18446744073709551615", "garbage")) {
      String key = "k-" + planted.charAt(0);
      awaitNearHit(a, key);
      raw.set(sequenceKey, planted.getBytes(StandardCharsets.US_ASCII), 0).join();
      long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      // an incr may wrap the planted 2^64 - 1 to 0 first (memcached pads it with spaces to the
      // old length), which the next poll replaces as well
      for (byte[] seen = raw.gets(sequenceKey).join().orElseThrow().value(); !freshSequence(seen);
          seen = raw.gets(sequenceKey).join().orElseThrow().value()) {
        assertThat(System.nanoTime()).as("replaced by a fresh sequence (2^40 to 2^50) within 10 s,"
            + " now %s", new String(seen, StandardCharsets.US_ASCII)).isLessThan(giveUp);
        sleep(5);
      }
      awaitNearHit(a, key);

      b.invalidate(key);
      assertTheOldValueEndsWithinTheBound(a, key, System.nanoTime(), "invalidate");
    }
  }

  /** Whether a sequence's bytes are a number a poll starts a fresh sequence at. */
  private static boolean freshSequence(byte[] value) {
    try {
      long n = Long.parseLong(new String(value, StandardCharsets.US_ASCII).trim());
      return n >= 1L << 40 && n <= 1L << 50;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  /** Reads {@code key} on {@code a} until it no longer serves "v1", checking the bound. */
  private static void assertTheOldValueEndsWithinTheBound(SustainableCache<String> a, String key,
      long returned, String change) {
    long lastOld = returned;
    while (true) {
      long before = System.nanoTime();
      String seen = a.get(key, k -> "v2");
      if (!seen.equals("v1")) {
        break;
      }
      lastOld = before;
      assertThat(TimeUnit.NANOSECONDS.toMillis(before - returned))
          .as("%s: ms from the change's return to a read that served the old value", change)
          .isLessThanOrEqualTo(DELTA_MILLIS);
      sleep(2);
    }
    assertThat(TimeUnit.NANOSECONDS.toMillis(lastOld - returned)).isLessThanOrEqualTo(
        DELTA_MILLIS);
    assertThat(a.get(key, k -> "v2")).isEqualTo("v2");
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }
}
