package io.sustainablecache.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

/**
 * The behaviour every {@link CacheStore} adapter must show against a real memcached: the
 * semantics that {@code SustainableCache} relies on for stampede protection, and the points on
 * which the adapters must agree (who owns the value arrays, how an oversized value fails,
 * which keys work, what cancelling a future does).
 *
 * <p>An adapter's integration test extends this class, connects its client once and returns a
 * store over it:
 *
 * <pre>{@code
 * class MyStoreIT extends CacheStoreContract {
 *   private static MyClient client;
 *
 *   @BeforeAll
 *   static void connect() {
 *     client = MyClient.connect(MemcachedServer.shared().address());
 *   }
 *
 *   @AfterAll
 *   static void disconnect() {
 *     client.shutdown();
 *   }
 *
 *   @Override
 *   protected CacheStore store() {
 *     return MyStore.of(client);
 *   }
 * }
 * }</pre>
 *
 * <p>Every test uses keys under its own random prefix, so tests never see each other's items
 * and may share one server (and run in parallel) with other suites. Keys have the form {@code
 * sc-<random hex>:<test>:<name>}, so the part before the first {@code ':'} is a valid ARCUS
 * prefix. The expiry tests wait for memcached's one-second clock; they assume that the server's
 * clock agrees with the test JVM's to within a second, which holds for a local process or
 * container. Every future is waited for at most 10 seconds, and every test is bounded by a 60
 * second timeout, so a store that hangs fails instead of blocking the build.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class CacheStoreContract {

  /** memcached's boundary between relative and absolute exptimes, in seconds. */
  private static final int MAX_RELATIVE_EXPTIME = 60 * 60 * 24 * 30;

  /** How long any single future may take before the test fails. */
  private static final Duration PATIENCE = Duration.ofSeconds(10);

  /** The byte that the cache appends to a key to name the key's lease. */
  private static final String DEL = "\u007F";

  /**
   * What {@link CacheStore#flushPrefix} does with the store under test.
   */
  protected enum FlushPrefixSupport {
    /** The items under the prefix are removed; the others stay (ARCUS servers, in-memory). */
    REMOVES_THE_PREFIX,
    /**
     * The future fails with an {@link UnsupportedOperationException} at once (the SPI's
     * default) and nothing is removed.
     */
    UNSUPPORTED
  }

  private String keyPrefix;

  /** Creates the contract; subclasses are instantiated by JUnit. */
  protected CacheStoreContract() {}

  /**
   * The store under test. Called at least once per test, after the subclass's
   * {@code @BeforeAll} and {@code @BeforeEach} methods; it may return the same instance every
   * time. The subclass owns the client behind it and closes it, typically in
   * {@code @AfterAll}.
   *
   * @return a store connected to a running memcached, for example
   *     {@link MemcachedServer#shared()}; never {@code null}
   */
  protected abstract CacheStore store();

  /**
   * A store like {@link #store()}, with a client of its own and the given operation timeout, for
   * the bulk read burst ({@link #concurrentBulkReadsBeyondTheClientQueue_allSucceed}: 80,000
   * items at once). With the default timeout a slow machine (a cold JIT, two cores shared with
   * the server) rather than the client's queue would decide that test, and a burst of timeouts
   * makes a client re-open its connection, failing the tests that share it. Closed with {@link
   * #closeOwnStore}. The default returns {@link #store()}, for a store without a client.
   *
   * @param operationTimeout the store's and its client's operation timeout
   * @return a new store
   */
  protected CacheStore ownStore(Duration operationTimeout) {
    return store();
  }

  /**
   * Closes a store {@link #ownStore} opened, and its client. The default does nothing.
   *
   * @param store the store
   */
  protected void closeOwnStore(CacheStore store) {}

  /**
   * The server's item size limit in bytes: a value one byte longer must be refused with
   * {@link StoreException}. Override it for a server started with a different {@code -I}.
   *
   * @return the limit in bytes; memcached's default, 1 MiB, unless overridden
   */
  protected int serverItemSizeLimit() {
    return 1024 * 1024;
  }

  /**
   * What {@link CacheStore#flushPrefix} does with this store and its server.
   *
   * @return {@link FlushPrefixSupport#UNSUPPORTED}, the SPI's default, unless overridden
   */
  protected FlushPrefixSupport flushPrefixSupport() {
    return FlushPrefixSupport.UNSUPPORTED;
  }

  @BeforeEach
  final void chooseKeyPrefix(TestInfo test) {
    // The random part comes first so that even a truncated key stays unique.
    String random = Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
    String method = test.getTestMethod().map(m -> m.getName()).orElse("test");
    keyPrefix = "sc-" + random + ":" + method + ":";
  }

  // -------------------------------------------------------------------------------------------
  // Reads and writes

  @Test
  void getsOfAnAbsentKeyIsEmpty() {
    assertThat(completed(store().gets(key("absent")))).isEmpty();
  }

  @Test
  void getsReturnsEveryByteValueExactly() {
    byte[] value = new byte[256];
    for (int i = 0; i < value.length; i++) {
      value[i] = (byte) i;
    }
    assertRoundTrip(key("all-bytes"), value);
  }

  @Test
  void getsReturnsAnEmptyValue() {
    assertRoundTrip(key("empty"), new byte[0]);
  }

  @Test
  void getsReturnsALargeValue() {
    byte[] value = new byte[100 * 1024];
    ThreadLocalRandom.current().nextBytes(value);
    assertRoundTrip(key("large"), value);
  }

  @Test
  void setReplacesAnExistingValue() {
    String key = key("replaced");
    set(key, bytes("first"));
    set(key, bytes("second"));
    assertThat(valueOf(key)).isEqualTo(bytes("second"));
  }

  @Test
  void casTokenIsStableUntilTheItemIsWrittenAndThenChanges() {
    CacheStore store = store();
    String key = key("tokens");
    set(key, bytes("v1"));
    long afterSet = tokenOf(key);
    assertThat(tokenOf(key)).as("token of an unchanged item").isEqualTo(afterSet);

    set(key, bytes("v2"));
    long afterSecondSet = tokenOf(key);
    assertThat(afterSecondSet).as("token after set").isNotEqualTo(afterSet);

    assertThat(completed(store.cas(key, afterSecondSet, bytes("v3"), 0)))
        .isEqualTo(CasOutcome.STORED);
    long afterCas = tokenOf(key);
    assertThat(afterCas).as("token after cas").isNotIn(afterSet, afterSecondSet);

    assertThat(completed(store.delete(key))).isTrue();
    assertThat(completed(store.add(key, bytes("v4"), 0))).isTrue();
    assertThat(tokenOf(key)).as("token after delete and add")
        .isNotIn(afterSet, afterSecondSet, afterCas);
  }

  @Test
  void addStoresWhenTheKeyIsAbsent() {
    String key = key("added");
    assertThat(completed(store().add(key, bytes("value"), 0))).isTrue();
    assertThat(valueOf(key)).isEqualTo(bytes("value"));
  }

  @Test
  void addKeepsTheExistingValueWhenTheKeyIsPresent() {
    CacheStore store = store();
    String key = key("kept");
    set(key, bytes("old"));
    long token = tokenOf(key);
    assertThat(completed(store.add(key, bytes("new"), 0))).isFalse();
    StoreItem item = item(key);
    assertThat(item.value()).isEqualTo(bytes("old"));
    assertThat(item.casToken()).as("token after a refused add").isEqualTo(token);
  }

  @Test
  void casWithTheCurrentTokenStoresTheNewValue() {
    String key = key("cas-stored");
    set(key, bytes("old"));
    long token = tokenOf(key);
    assertThat(completed(store().cas(key, token, bytes("new"), 0))).isEqualTo(CasOutcome.STORED);
    assertThat(valueOf(key)).isEqualTo(bytes("new"));
  }

  @Test
  void casWithAStaleTokenIsExistsAndKeepsTheOtherWrite() {
    String key = key("cas-exists");
    set(key, bytes("first"));
    long stale = tokenOf(key);
    set(key, bytes("other writer"));
    assertThat(completed(store().cas(key, stale, bytes("lost update"), 0)))
        .isEqualTo(CasOutcome.EXISTS);
    assertThat(valueOf(key)).isEqualTo(bytes("other writer"));
  }

  @Test
  void casAfterDeleteIsNotFoundAndStoresNothing() {
    CacheStore store = store();
    String key = key("cas-deleted");
    set(key, bytes("value"));
    long token = tokenOf(key);
    assertThat(completed(store.delete(key))).isTrue();
    assertThat(completed(store.cas(key, token, bytes("resurrected"), 0)))
        .isEqualTo(CasOutcome.NOT_FOUND);
    assertThat(completed(store.gets(key))).isEmpty();
  }

  @Test
  void casOnAKeyNeverWrittenIsNotFound() {
    String key = key("cas-never");
    assertThat(completed(store().cas(key, 1L, bytes("value"), 0)))
        .isEqualTo(CasOutcome.NOT_FOUND);
    assertThat(completed(store().gets(key))).isEmpty();
  }

  @Test
  void deleteReportsWhetherAnItemWasRemoved() {
    CacheStore store = store();
    String key = key("deleted");
    set(key, bytes("value"));
    assertThat(completed(store.delete(key))).isTrue();
    assertThat(completed(store.gets(key))).isEmpty();
    assertThat(completed(store.delete(key))).isFalse();
  }

  @Test
  void exactlyOneOfManyConcurrentAddsWins() throws Exception {
    CacheStore store = store();
    String key = key("contended");
    int threads = 8;
    CyclicBarrier start = new CyclicBarrier(threads);
    ExecutorService executor = Executors.newFixedThreadPool(threads);
    try {
      List<Future<CompletableFuture<Boolean>>> adds = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        byte[] value = bytes("writer-" + i);
        adds.add(executor.submit(() -> {
          start.await(10, TimeUnit.SECONDS);
          return store.add(key, value, 0);
        }));
      }
      List<Integer> winners = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        if (completed(adds.get(i).get(10, TimeUnit.SECONDS))) {
          winners.add(i);
        }
      }
      assertThat(winners).as("writers whose add returned true").hasSize(1);
      assertThat(valueOf(key)).isEqualTo(bytes("writer-" + winners.get(0)));
    } finally {
      executor.shutdownNow();
    }
  }

  // -------------------------------------------------------------------------------------------
  // Counters

  @Test
  void incrOfAnAbsentKeyCreatesTheCounter_thenAddsToIt() {
    CacheStore store = store();
    String key = key("counter");
    long base = 1L << 45;

    assertThat(store.hasCounters()).as("a store with incr says so").isTrue();
    assertThat(completed(store.incr(key, 1, base, 0))).as("the call that creates it")
        .isEqualTo(base);
    assertThat(valueOf(key)).as("the counter's bytes")
        .isEqualTo(Long.toString(base).getBytes(StandardCharsets.US_ASCII));
    assertThat(completed(store.incr(key, 5, 0, 0))).isEqualTo(base + 5);
    assertThat(completed(store.incr(key, 0, 7, 0))).isEqualTo(base + 5);

    completed(store.delete(key));
    assertThat(completed(store.incr(key, 1, 3, 0))).as("created again after a delete")
        .isEqualTo(3);
  }

  @Test
  void concurrentIncrsOnAnAbsentKey_getDistinctValues_noneLost() throws Exception {
    CacheStore store = store();
    String key = key("contended-counter");
    int threads = 8;
    int each = 50;
    CyclicBarrier start = new CyclicBarrier(threads);
    ExecutorService executor = Executors.newFixedThreadPool(threads);
    try {
      List<Future<List<Long>>> callers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        callers.add(executor.submit(() -> {
          start.await(10, TimeUnit.SECONDS);
          List<CompletableFuture<Long>> incrs = new ArrayList<>();
          for (int i = 0; i < each; i++) {
            incrs.add(store.incr(key, 1, 0, 0));
          }
          List<Long> values = new ArrayList<>();
          incrs.forEach(incr -> values.add(completed(incr, "incr")));
          return values;
        }));
      }
      TreeSet<Long> seen = new TreeSet<>();
      for (Future<List<Long>> caller : callers) {
        seen.addAll(caller.get(30, TimeUnit.SECONDS));
      }
      // One call created the counter (0); every other one added 1 and saw its own value.
      assertThat(seen).as("distinct values of %d incrs", threads * each)
          .hasSize(threads * each)
          .first().isEqualTo(0L);
      assertThat(seen.last()).isEqualTo(threads * each - 1L);
    } finally {
      executor.shutdownNow();
    }
  }

  /**
   * {@code incr} of an item that holds no number fails with a {@link StoreException} and leaves
   * the item alone; the store works again afterwards (the server answers {@code CLIENT_ERROR},
   * after which spymemcached re-opens its connection, as for an oversized value).
   */
  @Test
  void incrOfAValueThatIsNoNumber_failsAndLeavesItAlone_theStoreRecovers() {
    CacheStore store = store();
    String key = key("not-a-number");
    set(key, bytes("twelve"));

    assertThat(failure(store.incr(key, 1, 0, 0), "incr of text"))
        .isInstanceOf(StoreException.class);
    awaitRecovered();
    assertThat(valueOf(key)).isEqualTo(bytes("twelve"));
  }

  /**
   * Counters are 64-bit: the near cache's log starts its sequence between 2<sup>40</sup> and
   * 2<sup>50</sup>. It stays below 2<sup>63</sup> on purpose: memcached 1.6.18 (Debian 12) may
   * refuse to {@code incr} a value of 2<sup>63</sup> or more as "non-numeric", depending on the
   * bytes left after the value in its memory (its number parser looks for a minus sign past the
   * end of the value), so no test here relies on wrapping at 2<sup>64</sup>.
   */
  @Test
  void aCounterCountsBeyondThirtyTwoBits() {
    CacheStore store = store();
    String key = key("wide-counter");
    set(key, bytes(Long.toString((1L << 50) - 1)));

    assertThat(completed(store.incr(key, 1, 0, 0))).isEqualTo(1L << 50);
    assertThat(valueOf(key)).isEqualTo(bytes(Long.toString(1L << 50)));
  }

  @Test
  void incrRejectsNegativeArguments() {
    CacheStore store = store();
    assertThatThrownBy(() -> store.incr(key("n"), -1, 0, 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> store.incr(key("n"), 1, -1, 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(completed(store.gets(key("n")))).as("nothing was written").isEmpty();
  }

  // -------------------------------------------------------------------------------------------
  // Expiry

  @Test
  void anItemWithExptimeOneIsGoneWithinTwoAndAHalfSeconds() {
    CacheStore store = store();
    String key = key("exp-1");
    completed(store.set(key, bytes("short-lived"), 1));
    // memcached's clock ticks once a second: the item lives between 0 and 1 s.
    await().atMost(Duration.ofMillis(2_500))
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(() -> assertThat(completed(store.gets(key))).isEmpty());
  }

  @Test
  void anItemWithExptimeThreeIsPresentRightAfterWriting() {
    CacheStore store = store();
    String set = key("exp-3-set");
    String added = key("exp-3-add");
    String cased = key("exp-3-cas");
    completed(store.set(set, bytes("value"), 3));
    assertThat(completed(store.add(added, bytes("value"), 3))).isTrue();
    set(cased, bytes("old"));
    assertThat(completed(store.cas(cased, tokenOf(cased), bytes("new"), 3)))
        .isEqualTo(CasOutcome.STORED);

    assertThat(valueOf(set)).isEqualTo(bytes("value"));
    assertThat(valueOf(added)).isEqualTo(bytes("value"));
    assertThat(valueOf(cased)).isEqualTo(bytes("new"));
  }

  /**
   * The item lives until the Unix second it names, not for that many seconds: set to expire at
   * the second after next, it is there at once (the server's one-second clock lags real time by
   * less than a second, so it keeps the item for more than one second) and gone within three.
   */
  @Test
  void anExptimeAboveThirtyDaysIsAnAbsoluteUnixTime() {
    CacheStore store = store();
    String key = key("exp-absolute");
    int inTwoSeconds = Math.toIntExact(Instant.now().getEpochSecond() + 2);
    assertThat(inTwoSeconds).isGreaterThan(MAX_RELATIVE_EXPTIME);
    completed(store.set(key, bytes("value"), inTwoSeconds));
    assertThat(valueOf(key)).isEqualTo(bytes("value"));
    await().atMost(Duration.ofMillis(3_500))
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(() -> assertThat(completed(store.gets(key))).isEmpty());
  }

  @Test
  void anAbsoluteExptimeInThePastIsNotRetrievable() {
    CacheStore store = store();
    String key = key("exp-past");
    int aMinuteAgo = Math.toIntExact(Instant.now().getEpochSecond() - 60);
    completed(store.set(key, bytes("value"), aMinuteAgo));
    assertThat(completed(store.gets(key))).isEmpty();
  }

  /**
   * A negative exptime expires the item at once, whichever the write. Servers disagree about
   * negative exptimes, so an adapter may have to translate it: memcached 1.6 expires an item
   * with any negative exptime at once; ARCUS (arcus-memcached, sticky items built in by
   * default) reads {@code -1} as a <em>sticky</em> item that never expires (1.15 refuses it
   * with {@code SERVER_ERROR out of memory storing object} unless a sticky limit is configured,
   * and then keeps it for ever), and before 1.15 adds any other negative exptime to its clock,
   * which wraps to "almost never" once the sum is negative. Every memcached 1.4 or later and
   * every ARCUS release expires an absolute exptime at or before the server's start at once, so
   * the ARCUS and spymemcached adapters send 2592001 (1970-01-31T00:00:01Z) for any negative
   * exptime.
   */
  @Test
  void aNegativeExptimeExpiresTheItemAtOnceWhicheverTheWrite() {
    CacheStore store = store();
    String set = key("exp-negative-set");
    String added = key("exp-negative-add");
    String cased = key("exp-negative-cas");

    completed(store.set(set, bytes("value"), -1));
    assertThat(completed(store.add(added, bytes("value"), -1))).as("add").isTrue();
    set(cased, bytes("old"));
    assertThat(completed(store.cas(cased, tokenOf(cased), bytes("new"), -1)))
        .isEqualTo(CasOutcome.STORED);

    assertThat(completed(store.gets(set))).as("after set").isEmpty();
    assertThat(completed(store.gets(added))).as("after add").isEmpty();
    assertThat(completed(store.gets(cased))).as("after cas").isEmpty();
    assertThat(completed(store.add(added, bytes("again"), 0)))
        .as("an add over the expired item").isTrue();
  }

  // -------------------------------------------------------------------------------------------
  // Keys

  @Test
  void aKeyOfTheMaximumLengthWorks() {
    CacheStore store = store();
    int max = store.maxKeyLength();
    assertThat(max).isPositive();
    StringBuilder key = new StringBuilder(key("max-length"));
    while (key.length() < max) {
      key.append('k');
    }
    key.setLength(max);
    String longest = key.toString();

    assertThat(longest.getBytes(StandardCharsets.US_ASCII)).hasSize(max);
    assertThat(completed(store.add(longest, bytes("first"), 0))).isTrue();
    set(longest, bytes("second"));
    assertThat(completed(store.cas(longest, tokenOf(longest), bytes("third"), 0)))
        .isEqualTo(CasOutcome.STORED);
    assertThat(valueOf(longest)).isEqualTo(bytes("third"));
    assertThat(completed(store.getsAll(List.of(longest)))).containsOnlyKeys(longest);
    assertThat(completed(store.delete(longest))).isTrue();
  }

  /**
   * The cache names a key's lease {@code key + "\u007Flease"}: DEL ({@code 0x7F}) is a legal key
   * byte for memcached, and both the store's client and the server must treat such a key as a
   * key of its own, in every operation.
   */
  @Test
  void aKeyWithADelByteIsAKeyOfItsOwn() {
    CacheStore store = store();
    String key = key("leased");
    String lease = key + DEL + "lease";
    set(key, bytes("the item"));

    assertThat(completed(store.gets(lease))).as("the lease before it is taken").isEmpty();
    assertThat(completed(store.add(lease, bytes("owner-1"), 30))).isTrue();
    assertThat(completed(store.add(lease, bytes("owner-2"), 30))).isFalse();
    StoreItem taken = item(lease);
    assertThat(taken.value()).isEqualTo(bytes("owner-1"));
    assertThat(completed(store.cas(lease, taken.casToken(), bytes("owner-1 renewed"), 30)))
        .isEqualTo(CasOutcome.STORED);
    assertThat(completed(store.getsAll(List.of(key, lease))))
        .containsOnlyKeys(key, lease)
        .hasEntrySatisfying(key, item -> assertThat(item.value()).isEqualTo(bytes("the item")))
        .hasEntrySatisfying(lease,
            item -> assertThat(item.value()).isEqualTo(bytes("owner-1 renewed")));

    assertThat(completed(store.delete(lease))).isTrue();
    assertThat(completed(store.gets(lease))).isEmpty();
    assertThat(valueOf(key)).as("the item beside its lease").isEqualTo(bytes("the item"));
  }

  // -------------------------------------------------------------------------------------------
  // Bulk reads

  @Test
  void getsAllOfNoKeysIsAnEmptyMap() {
    assertThat(completed(store().getsAll(List.of()))).isEmpty();
  }

  @Test
  void getsAllOfAbsentKeysIsAnEmptyMap() {
    assertThat(completed(store().getsAll(List.of(key("a"), key("b"), key("c"))))).isEmpty();
  }

  @Test
  void getsAllReturnsThePresentKeysWithTheirValuesAndTokens() {
    CacheStore store = store();
    String first = key("first");
    String absent = key("absent");
    String second = key("second");
    set(first, bytes("one"));
    set(second, new byte[0]);
    long firstToken = tokenOf(first);
    long secondToken = tokenOf(second);

    Map<String, StoreItem> found = completed(store.getsAll(List.of(first, absent, second)));

    assertThat(found).containsOnlyKeys(first, second);
    assertThat(found.get(first).value()).isEqualTo(bytes("one"));
    assertThat(found.get(first).casToken()).isEqualTo(firstToken);
    assertThat(found.get(second).value()).isEmpty();
    assertThat(found.get(second).casToken()).isEqualTo(secondToken);
    assertThat(completed(store.cas(first, found.get(first).casToken(), bytes("uno"), 0)))
        .as("cas with a token from getsAll").isEqualTo(CasOutcome.STORED);
  }

  /** Clients split bulk reads into parts (ARCUS: 200 keys per request): the parts must add up. */
  @Test
  void getsAllReadsHundredsOfKeysInOneCall() {
    CacheStore store = store();
    List<String> keys = new ArrayList<>();
    Map<String, byte[]> written = new LinkedHashMap<>();
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (int i = 0; i < 450; i++) {
      String key = key("bulk-" + i);
      keys.add(key);
      if (i % 3 != 1) {
        byte[] value = bytes("value-" + i);
        written.put(key, value);
        writes.add(store.set(key, value, 60));
      }
    }
    completed(CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)));

    Map<String, StoreItem> found = completed(store.getsAll(keys));

    assertThat(found).hasSize(written.size()).containsOnlyKeys(written.keySet());
    written.forEach((key, value) -> assertThat(found.get(key).value()).as(key).isEqualTo(value));
  }

  /**
   * Issue 15: sixteen callers reading 5,000 keys each at once: 80,000 single-key {@code gets}
   * overflowed spymemcached's operation queue (16,384 by default) or outlasted the operation
   * timeout, and the reads failed (40 % of the keys reloaded in the report). Every bulk read must
   * succeed and find every key.
   */
  @Test
  void concurrentBulkReadsBeyondTheClientQueue_allSucceed() throws Exception {
    CacheStore store = ownStore(Duration.ofSeconds(10));
    try {
      concurrentBulkReads(store);
    } finally {
      closeOwnStore(store);
    }
  }

  private void concurrentBulkReads(CacheStore store) throws Exception {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 5_000; i++) {
      keys.add(key("many-" + i));
    }
    for (int from = 0; from < keys.size(); from += 1_000) {
      List<CompletableFuture<Void>> writes = new ArrayList<>();
      for (String key : keys.subList(from, from + 1_000)) {
        writes.add(store.set(key, bytes(key), 60));
      }
      completed(CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)));
    }
    java.util.concurrent.ExecutorService readers =
        java.util.concurrent.Executors.newFixedThreadPool(16);
    try {
      List<java.util.concurrent.Future<Map<String, StoreItem>>> reads = new ArrayList<>();
      java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
      for (int t = 0; t < 16; t++) {
        reads.add(readers.submit(() -> {
          start.await();
          return store.getsAll(keys).get(30, TimeUnit.SECONDS);
        }));
      }
      start.countDown();
      for (java.util.concurrent.Future<Map<String, StoreItem>> read : reads) {
        assertThat(read.get(60, TimeUnit.SECONDS)).hasSize(keys.size());
      }
    } finally {
      readers.shutdownNow();
    }
  }

  @Test
  void getsAllRejectsNullKeys() {
    CacheStore store = store();
    assertThatNullPointerException().isThrownBy(() -> store.getsAll(null));
    assertThatNullPointerException()
        .isThrownBy(() -> store.getsAll(Arrays.asList(key("a"), null)));
  }

  // -------------------------------------------------------------------------------------------
  // Who owns the arrays

  /**
   * A value array handed to a write is neither modified by the store nor read after the future
   * completed: the caller may reuse it at once.
   */
  @Test
  void valueArraysAreNeitherModifiedNorRetainedByTheStore() {
    CacheStore store = store();
    Map<String, Function<byte[], CompletableFuture<?>>> writes = new LinkedHashMap<>();
    writes.put("add", value -> store.add(key("add"), value, 0));
    writes.put("set", value -> store.set(key("set"), value, 0));
    set(key("cas"), bytes("before"));
    long token = tokenOf(key("cas"));
    writes.put("cas", value -> store.cas(key("cas"), token, value, 0));

    writes.forEach((operation, write) -> {
      byte[] value = bytes("original " + operation);
      completed(write.apply(value));
      assertThat(value).as("the array after %s", operation)
          .isEqualTo(bytes("original " + operation));
      Arrays.fill(value, (byte) 'X');
      assertThat(valueOf(key(operation))).as("the stored value after %s", operation)
          .isEqualTo(bytes("original " + operation));
    });
  }

  /** Every array a read returns is new: the caller may keep and modify it. */
  @Test
  void returnedArraysBelongToTheCaller() {
    CacheStore store = store();
    String key = key("owned");
    set(key, bytes("stored"));

    byte[] first = valueOf(key);
    byte[] second = valueOf(key);
    byte[] bulk = completed(store.getsAll(List.of(key))).get(key).value();
    assertThat(first).isNotSameAs(second).isNotSameAs(bulk);
    Arrays.fill(first, (byte) 'X');
    Arrays.fill(bulk, (byte) 'Y');
    assertThat(second).isEqualTo(bytes("stored"));
    assertThat(valueOf(key)).isEqualTo(bytes("stored"));
  }

  // -------------------------------------------------------------------------------------------
  // Agreement between adapters on failures

  /**
   * A value larger than the server's item size fails {@code add}, {@code set} and {@code cas}
   * alike with a {@link StoreException} (never {@code false} or {@code NOT_FOUND}), stores
   * nothing, and the store works again afterwards (some clients re-open the connection after a
   * server error).
   */
  @Test
  void aValueLargerThanTheServerAcceptsFailsEveryWriteAndTheStoreRecovers() {
    CacheStore store = store();
    byte[] tooLarge = new byte[serverItemSizeLimit() + 1];
    String casKey = key("oversize-cas");
    set(casKey, bytes("small"));
    long token = tokenOf(casKey);
    Map<String, CompletableFuture<?>> writes = new LinkedHashMap<>();

    writes.put("add", store.add(key("oversize-add"), tooLarge, 0));
    assertThat(failure(writes.get("add"), "add of an oversized value"))
        .isInstanceOf(StoreException.class);
    awaitRecovered();
    writes.put("set", store.set(key("oversize-set"), tooLarge, 0));
    assertThat(failure(writes.get("set"), "set of an oversized value"))
        .isInstanceOf(StoreException.class);
    awaitRecovered();
    writes.put("cas", store.cas(casKey, token, tooLarge, 0));
    assertThat(failure(writes.get("cas"), "cas of an oversized value"))
        .isInstanceOf(StoreException.class);
    awaitRecovered();

    assertThat(completed(store.gets(key("oversize-add")))).isEmpty();
    assertThat(completed(store.gets(key("oversize-set")))).isEmpty();
    assertThat(item(casKey)).satisfies(item -> {
      assertThat(item.value()).isEqualTo(bytes("small"));
      assertThat(item.casToken()).isEqualTo(token);
    });
  }

  /**
   * Cancelling returned futures, before or after they were sent, never puts the connection out
   * of step: every other operation gets its own answer. (A client that dropped a request it had
   * half sent, or lost track of an answer, would hand later operations the wrong values.)
   */
  @Test
  void cancellingFuturesNeverCorruptsTheConnection() {
    CacheStore store = store();
    int count = 300;
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      writes.add(store.set(key("c-" + i), bytes("value-" + i), 60));
    }
    completed(CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)));

    List<CompletableFuture<?>> kept = new ArrayList<>();
    List<Integer> keptIndexes = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String key = key("c-" + i);
      CompletableFuture<?> future = switch (i % 4) {
        case 0 -> store.gets(key);
        case 1 -> store.set(key, bytes("value-" + i), 60);
        case 2 -> store.getsAll(List.of(key, key("c-" + ((i + 1) % count))));
        default -> store.add(key, bytes("not stored"), 60);
      };
      if (i % 3 == 0) {
        if (future.cancel(true)) {
          assertThat(future).as("future %d after cancel returned true", i).isCancelled();
        }
      } else {
        kept.add(future);
        keptIndexes.add(i);
      }
    }
    for (int j = 0; j < kept.size(); j++) {
      int i = keptIndexes.get(j);
      Object result = completed(kept.get(j), "operation " + i);
      switch (i % 4) {
        case 0 -> assertThat(result).as("gets %d", i).isInstanceOfSatisfying(Optional.class,
            found -> assertThat(((StoreItem) found.orElseThrow()).value())
                .isEqualTo(bytes("value-" + i)));
        case 1 -> assertThat(result).as("set %d", i).isNull();
        case 2 -> assertThat(result).as("getsAll %d", i).isInstanceOfSatisfying(Map.class,
            found -> assertThat(((StoreItem) found.get(key("c-" + i))).value())
                .isEqualTo(bytes("value-" + i)));
        default -> assertThat(result).as("add %d over an existing item", i)
            .isEqualTo(Boolean.FALSE);
      }
    }
    Map<String, StoreItem> all = completed(store.getsAll(
        IntStream.range(0, count).mapToObj(i -> key("c-" + i)).toList()));
    assertThat(all).hasSize(count);
    for (int i = 0; i < count; i++) {
      assertThat(completed(store.gets(key("c-" + i)))).as("gets %d after the cancellations", i)
          .get().extracting(StoreItem::value).isEqualTo(bytes("value-" + i));
      assertThat(all.get(key("c-" + i)).value()).as("getsAll entry %d", i)
          .isEqualTo(bytes("value-" + i));
    }
  }

  /**
   * A caller whose interrupt flag is set (a request being abandoned, say) still gets a future
   * that completes normally: the store does not block, so it has no reason to refuse. The flag
   * stays set.
   */
  @Test
  void anInterruptedCallerStillGetsItsAnswerAndKeepsItsFlag() {
    CacheStore store = store();
    String key = key("interrupted");
    // Never wait while interrupted: waiting itself would throw.
    Thread.currentThread().interrupt();
    CompletableFuture<Void> write;
    boolean flagAfterWrite;
    try {
      write = store.set(key, bytes("value"), 0);
    } finally {
      flagAfterWrite = Thread.interrupted();
    }
    completed(write, "set by an interrupted caller");

    Thread.currentThread().interrupt();
    CompletableFuture<Optional<StoreItem>> read;
    boolean flagAfterRead;
    try {
      read = store.gets(key);
    } finally {
      flagAfterRead = Thread.interrupted();
    }
    assertThat(completed(read, "gets by an interrupted caller")).get()
        .extracting(StoreItem::value).isEqualTo(bytes("value"));
    assertThat(flagAfterWrite).as("interrupt flag after set").isTrue();
    assertThat(flagAfterRead).as("interrupt flag after gets").isTrue();
  }

  @Test
  void nullArgumentsAreRejectedWithNullPointerException() {
    CacheStore store = store();
    assertThatNullPointerException().isThrownBy(() -> store.gets(null));
    assertThatNullPointerException().isThrownBy(() -> store.add(null, bytes("v"), 0));
    assertThatNullPointerException().isThrownBy(() -> store.add(key("k"), null, 0));
    assertThatNullPointerException().isThrownBy(() -> store.set(null, bytes("v"), 0));
    assertThatNullPointerException().isThrownBy(() -> store.set(key("k"), null, 0));
    assertThatNullPointerException().isThrownBy(() -> store.cas(null, 1L, bytes("v"), 0));
    assertThatNullPointerException().isThrownBy(() -> store.cas(key("k"), 1L, null, 0));
    assertThatNullPointerException().isThrownBy(() -> store.delete(null));
    assertThatNullPointerException().isThrownBy(() -> store.flushPrefix(null));
    assertThatNullPointerException().isThrownBy(() -> store.incr(null, 1, 0, 0));
    assertThat(completed(store.gets(key("k")))).as("nothing was written").isEmpty();
  }

  // -------------------------------------------------------------------------------------------
  // flushPrefix

  @Test
  void flushPrefixBehavesAsDeclared() {
    CacheStore store = store();
    String random = Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
    String prefix = "scflush-" + random;
    String inside = prefix + ":inside";
    String alsoInside = prefix + ":also:inside";
    String similar = prefix + "x:similar";
    String outside = key("outside");
    for (String key : List.of(inside, alsoInside, similar, outside)) {
      set(key, bytes(key));
    }

    CompletableFuture<Void> flush = store.flushPrefix(prefix);

    switch (flushPrefixSupport()) {
      case REMOVES_THE_PREFIX -> {
        completed(flush, "flushPrefix");
        assertThat(completed(store.getsAll(List.of(inside, alsoInside, similar, outside))))
            .containsOnlyKeys(similar, outside);
      }
      case UNSUPPORTED -> {
        assertThat(flush).isCompletedExceptionally();
        assertThat(failure(flush, "flushPrefix"))
            .isInstanceOf(UnsupportedOperationException.class);
        assertThat(completed(store.getsAll(List.of(inside, alsoInside, similar, outside))))
            .containsOnlyKeys(inside, alsoInside, similar, outside);
      }
      default -> throw new AssertionError(flushPrefixSupport());
    }
    for (String key : List.of(inside, alsoInside, similar, outside)) {
      completed(store.delete(key));
    }
  }

  // -------------------------------------------------------------------------------------------

  /**
   * A key under this test's random prefix.
   *
   * @param name distinguishes keys within one test; printable ASCII without spaces
   * @return a key no other test uses
   */
  protected final String key(String name) {
    return keyPrefix + name;
  }

  /**
   * Waits for a future of the store under test that must succeed.
   *
   * @param future the future
   * @param <T> the result type
   * @return its value
   * @throws AssertionError if it fails or takes longer than 10 seconds
   */
  protected static <T> T completed(CompletableFuture<T> future) {
    return StoreFutures.completed(future, PATIENCE, "the store operation");
  }

  private static <T> T completed(CompletableFuture<T> future, String what) {
    return StoreFutures.completed(future, PATIENCE, what);
  }

  /**
   * Waits for a future of the store under test that must fail.
   *
   * @param future the future
   * @param what names the operation in assertion messages
   * @return what it failed with
   * @throws AssertionError if it succeeds or takes longer than 10 seconds
   */
  protected static Throwable failure(CompletableFuture<?> future, String what) {
    return StoreFutures.failure(future, PATIENCE, what);
  }

  /** Waits until writes and reads work again, after a server error made a client reconnect. */
  private void awaitRecovered() {
    String probe = key("recovery-probe");
    await("the store to work again").atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(100))
        .ignoreExceptionsMatching(CacheStoreContract::isStoreFailure)
        .untilAsserted(() -> {
          store().set(probe, bytes("small"), 0).join();
          assertThat(store().gets(probe).join()).get().extracting(StoreItem::value)
              .isEqualTo(bytes("small"));
        });
  }

  private static boolean isStoreFailure(Throwable e) {
    return e instanceof StoreException || e.getCause() instanceof StoreException;
  }

  private void set(String key, byte[] value) {
    completed(store().set(key, value, 0), "set");
  }

  private void assertRoundTrip(String key, byte[] value) {
    set(key, value);
    assertThat(valueOf(key)).isEqualTo(value);
  }

  private byte[] valueOf(String key) {
    return item(key).value();
  }

  private long tokenOf(String key) {
    return item(key).casToken();
  }

  private StoreItem item(String key) {
    return completed(store().gets(key), "gets").orElseThrow(
        () -> new AssertionError("expected an item under " + key + ", found none"));
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
