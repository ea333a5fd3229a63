package io.sustainablecache.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

/**
 * The behaviour every {@link CacheStore} adapter must show against a real memcached: the
 * semantics that {@code SustainableCache} relies on for stampede protection.
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
 * and may share one server (and run in parallel) with other suites. The expiry tests wait for
 * memcached's one-second clock, which makes the suite take about six seconds; they assume that
 * the server's clock agrees with the test JVM's to within a second, which holds for a local
 * process or container. Every test is bounded by a 30 second timeout, so a store that hangs fails
 * instead of blocking the build.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
public abstract class CacheStoreContract {

  /** memcached's boundary between relative and absolute exptimes, in seconds. */
  private static final int MAX_RELATIVE_EXPTIME = 60 * 60 * 24 * 30;

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
   * The server's item size limit in bytes: a value one byte longer must be refused with
   * {@link StoreException}. Override it for a server started with a different {@code -I}.
   *
   * @return the limit in bytes; memcached's default, 1 MiB, unless overridden
   */
  protected int serverItemSizeLimit() {
    return 1024 * 1024;
  }

  @BeforeEach
  final void chooseKeyPrefix(TestInfo test) {
    // The random part comes first so that even a truncated key stays unique.
    String random = Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
    String method = test.getTestMethod().map(m -> m.getName()).orElse("test");
    keyPrefix = "sc-" + random + ":" + method + ":";
  }

  @Test
  void getsOfAnAbsentKeyIsEmpty() {
    assertThat(store().gets(key("absent"))).isEmpty();
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
    CacheStore store = store();
    String key = key("replaced");
    store.set(key, bytes("first"), 0);
    store.set(key, bytes("second"), 0);
    assertThat(valueOf(key)).isEqualTo(bytes("second"));
  }

  @Test
  void valuesAreNotSharedWithTheCaller() {
    CacheStore store = store();
    String key = key("copied");
    byte[] written = bytes("original");
    store.set(key, written, 0);
    written[0] = 'X';
    byte[] read = valueOf(key);
    read[1] = 'Y';
    assertThat(valueOf(key)).isEqualTo(bytes("original"));
  }

  @Test
  void casTokenIsStableUntilTheItemIsWrittenAndThenChanges() {
    CacheStore store = store();
    String key = key("tokens");
    store.set(key, bytes("v1"), 0);
    long afterSet = tokenOf(key);
    assertThat(tokenOf(key)).as("token of an unchanged item").isEqualTo(afterSet);

    store.set(key, bytes("v2"), 0);
    long afterSecondSet = tokenOf(key);
    assertThat(afterSecondSet).as("token after set").isNotEqualTo(afterSet);

    assertThat(store.cas(key, afterSecondSet, bytes("v3"), 0)).isEqualTo(CasOutcome.STORED);
    long afterCas = tokenOf(key);
    assertThat(afterCas).as("token after cas").isNotIn(afterSet, afterSecondSet);

    assertThat(store.delete(key)).isTrue();
    assertThat(store.add(key, bytes("v4"), 0)).isTrue();
    assertThat(tokenOf(key)).as("token after delete and add")
        .isNotIn(afterSet, afterSecondSet, afterCas);
  }

  @Test
  void addStoresWhenTheKeyIsAbsent() {
    CacheStore store = store();
    String key = key("added");
    assertThat(store.add(key, bytes("value"), 0)).isTrue();
    assertThat(valueOf(key)).isEqualTo(bytes("value"));
  }

  @Test
  void addKeepsTheExistingValueWhenTheKeyIsPresent() {
    CacheStore store = store();
    String key = key("kept");
    store.set(key, bytes("old"), 0);
    long token = tokenOf(key);
    assertThat(store.add(key, bytes("new"), 0)).isFalse();
    StoreItem item = store.gets(key).orElseThrow();
    assertThat(item.value()).isEqualTo(bytes("old"));
    assertThat(item.casToken()).as("token after a refused add").isEqualTo(token);
  }

  @Test
  void casWithTheCurrentTokenStoresTheNewValue() {
    CacheStore store = store();
    String key = key("cas-stored");
    store.set(key, bytes("old"), 0);
    long token = tokenOf(key);
    assertThat(store.cas(key, token, bytes("new"), 0)).isEqualTo(CasOutcome.STORED);
    assertThat(valueOf(key)).isEqualTo(bytes("new"));
  }

  @Test
  void casWithAStaleTokenIsExistsAndKeepsTheOtherWrite() {
    CacheStore store = store();
    String key = key("cas-exists");
    store.set(key, bytes("first"), 0);
    long stale = tokenOf(key);
    store.set(key, bytes("other writer"), 0);
    assertThat(store.cas(key, stale, bytes("lost update"), 0)).isEqualTo(CasOutcome.EXISTS);
    assertThat(valueOf(key)).isEqualTo(bytes("other writer"));
  }

  @Test
  void casAfterDeleteIsNotFoundAndStoresNothing() {
    CacheStore store = store();
    String key = key("cas-deleted");
    store.set(key, bytes("value"), 0);
    long token = tokenOf(key);
    assertThat(store.delete(key)).isTrue();
    assertThat(store.cas(key, token, bytes("resurrected"), 0)).isEqualTo(CasOutcome.NOT_FOUND);
    assertThat(store.gets(key)).isEmpty();
  }

  @Test
  void casOnAKeyNeverWrittenIsNotFound() {
    CacheStore store = store();
    String key = key("cas-never");
    assertThat(store.cas(key, 1L, bytes("value"), 0)).isEqualTo(CasOutcome.NOT_FOUND);
    assertThat(store.gets(key)).isEmpty();
  }

  @Test
  void deleteReportsWhetherAnItemWasRemoved() {
    CacheStore store = store();
    String key = key("deleted");
    store.set(key, bytes("value"), 0);
    assertThat(store.delete(key)).isTrue();
    assertThat(store.gets(key)).isEmpty();
    assertThat(store.delete(key)).isFalse();
  }

  @Test
  void anItemWithExptimeOneIsGoneWithinTwoAndAHalfSeconds() {
    CacheStore store = store();
    String key = key("exp-1");
    store.set(key, bytes("short-lived"), 1);
    // memcached's clock ticks once a second: the item lives between 0 and 1 s.
    await().atMost(Duration.ofMillis(2_500))
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(() -> assertThat(store.gets(key)).isEmpty());
  }

  @Test
  void anItemWithExptimeThreeIsPresentRightAfterWriting() {
    CacheStore store = store();
    String set = key("exp-3-set");
    String added = key("exp-3-add");
    String cased = key("exp-3-cas");
    store.set(set, bytes("value"), 3);
    assertThat(store.add(added, bytes("value"), 3)).isTrue();
    store.set(cased, bytes("old"), 0);
    assertThat(store.cas(cased, tokenOf(cased), bytes("new"), 3)).isEqualTo(CasOutcome.STORED);

    assertThat(valueOf(set)).isEqualTo(bytes("value"));
    assertThat(valueOf(added)).isEqualTo(bytes("value"));
    assertThat(valueOf(cased)).isEqualTo(bytes("new"));
  }

  @Test
  void anExptimeAboveThirtyDaysIsAnAbsoluteUnixTime() {
    CacheStore store = store();
    String key = key("exp-absolute");
    int inThreeSeconds = Math.toIntExact(Instant.now().getEpochSecond() + 3);
    assertThat(inThreeSeconds).isGreaterThan(MAX_RELATIVE_EXPTIME);
    store.set(key, bytes("value"), inThreeSeconds);
    assertThat(valueOf(key)).isEqualTo(bytes("value"));
    await().atMost(Duration.ofMillis(4_500))
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(() -> assertThat(store.gets(key)).isEmpty());
  }

  @Test
  void anAbsoluteExptimeInThePastIsNotRetrievable() {
    CacheStore store = store();
    String key = key("exp-past");
    int aMinuteAgo = Math.toIntExact(Instant.now().getEpochSecond() - 60);
    store.set(key, bytes("value"), aMinuteAgo);
    assertThat(store.gets(key)).isEmpty();
  }

  @Test
  void aNegativeExptimeIsNotRetrievable() {
    CacheStore store = store();
    String key = key("exp-negative");
    store.set(key, bytes("value"), -1);
    assertThat(store.gets(key)).isEmpty();
  }

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
    assertThat(store.add(longest, bytes("first"), 0)).isTrue();
    store.set(longest, bytes("second"), 0);
    assertThat(store.cas(longest, tokenOf(longest), bytes("third"), 0))
        .isEqualTo(CasOutcome.STORED);
    assertThat(valueOf(longest)).isEqualTo(bytes("third"));
    assertThat(store.delete(longest)).isTrue();
  }

  @Test
  void aValueLargerThanTheServerAcceptsIsAStoreExceptionAndTheStoreRecovers() {
    CacheStore store = store();
    String key = key("oversize");
    byte[] tooLarge = new byte[serverItemSizeLimit() + 1];
    assertThatThrownBy(() -> store.set(key, tooLarge, 0)).isInstanceOf(StoreException.class);

    // Some clients reconnect after a server error; the store must work again afterwards.
    String next = key("after-oversize");
    await().atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(100))
        .ignoreException(StoreException.class)
        .untilAsserted(() -> {
          store.set(next, bytes("small"), 0);
          assertThat(valueOf(next)).isEqualTo(bytes("small"));
        });
    assertThat(store.gets(key)).isEmpty();
  }

  @Test
  void exactlyOneOfManyConcurrentAddsWins() throws Exception {
    CacheStore store = store();
    String key = key("contended");
    int threads = 8;
    CyclicBarrier start = new CyclicBarrier(threads);
    ExecutorService executor = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Boolean>> adds = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        byte[] value = bytes("writer-" + i);
        adds.add(executor.submit(() -> {
          start.await(10, TimeUnit.SECONDS);
          return store.add(key, value, 0);
        }));
      }
      List<Integer> winners = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        if (adds.get(i).get(10, TimeUnit.SECONDS)) {
          winners.add(i);
        }
      }
      assertThat(winners).as("writers whose add returned true").hasSize(1);
      assertThat(valueOf(key)).isEqualTo(bytes("writer-" + winners.get(0)));
    } finally {
      executor.shutdownNow();
    }
  }

  /**
   * A key under this test's random prefix.
   *
   * @param name distinguishes keys within one test; printable ASCII without spaces
   * @return a key no other test uses
   */
  protected final String key(String name) {
    return keyPrefix + name;
  }

  private void assertRoundTrip(String key, byte[] value) {
    store().set(key, value, 0);
    assertThat(valueOf(key)).isEqualTo(value);
  }

  private byte[] valueOf(String key) {
    return item(key).value();
  }

  private long tokenOf(String key) {
    return item(key).casToken();
  }

  private StoreItem item(String key) {
    return store().gets(key).orElseThrow(
        () -> new AssertionError("expected an item under " + key + ", found none"));
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
