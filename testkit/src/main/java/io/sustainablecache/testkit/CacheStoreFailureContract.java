package io.sustainablecache.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.PartialReadException;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * How a {@link CacheStore} adapter must fail: when its server goes away or stops answering, when
 * its client is shut down, or when a key is invalid, every operation returns a future at once
 * (the method itself throws nothing) and that future fails with a {@link StoreException} within
 * the operation timeout plus two seconds. It never hangs, it never reports a miss ({@code gets}
 * returning empty, {@code add} or {@code delete} returning {@code false}, {@code cas} returning
 * {@code NOT_FOUND}) that the server did not give, and its messages name neither the key nor the
 * value.
 *
 * <p>Each test starts a private memcached process with {@link MemcachedServer#startLocal()},
 * connects a store to it with {@link #storeConnectedTo}, writes an item, then for example stops
 * the server or freezes it with {@code SIGSTOP}. It therefore needs the memcached binary:
 * without it the tests are aborted, or fail when {@code CI=true}.
 *
 * <pre>{@code
 * class MyStoreFailureIT extends CacheStoreFailureContract {
 *   @Override
 *   protected CacheStore storeConnectedTo(List<InetSocketAddress> servers) {
 *     return MyStore.of(MyClient.connect(servers));
 *   }
 *
 *   @Override
 *   protected void closeStore(CacheStore store) {
 *     ((MyStore) store).client().shutdown();
 *   }
 *
 *   @Override
 *   protected Duration operationTimeout() {
 *     return Duration.ofMillis(700);
 *   }
 * }
 * }</pre>
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class CacheStoreFailureContract {

  private static final String SECRET = "secret-value-7f3a9c";
  private static final byte[] VALUE = SECRET.getBytes(StandardCharsets.US_ASCII);
  private static final Duration GRACE = Duration.ofSeconds(2);

  private MemcachedServer server;
  private CacheStore store;
  private boolean storeClosed;
  private String key;
  private long casToken;

  /** Creates the contract; subclasses are instantiated by JUnit. */
  protected CacheStoreFailureContract() {}

  /**
   * Creates a store with its own client connected to the given servers (keys distributed over
   * them as the client does), configured as the adapter recommends, and waits until the client
   * is connected to all of them. Called once per test with one server, and once more with two
   * by the test of bulk reads over a server that is down.
   *
   * @param servers private memcached servers' addresses; never empty
   * @return a new store whose operation timeout is {@link #operationTimeout()}; never {@code
   *     null}
   */
  protected abstract CacheStore storeConnectedTo(List<InetSocketAddress> servers);

  /**
   * Shuts down the client behind a store returned by {@link #storeConnectedTo}. Called once per
   * store, possibly after its servers have been stopped, so it must not wait for them.
   *
   * @param store the store to close; never {@code null}
   */
  protected abstract void closeStore(CacheStore store);

  /**
   * How many operations the store keeps pending before it refuses new ones at once (its
   * protection against callers that never wait for their answers).
   *
   * @return the store's bound
   */
  protected abstract int maxPendingOperations();

  /**
   * The operation timeout of the stores that {@link #storeConnectedTo} creates: every operation
   * must fail within this plus two seconds.
   *
   * @return a positive duration; one second unless overridden
   */
  protected Duration operationTimeout() {
    return Duration.ofSeconds(1);
  }

  @BeforeEach
  final void connectToAPrivateServerAndWriteAnItem() {
    server = MemcachedServer.startLocal();
    store = storeConnectedTo(List.of(server.address()));
    key = "sc-failure-" + Long.toHexString(ThreadLocalRandom.current().nextLong() | 1L << 62)
        + ":item";
    StoreFutures.completed(store.set(key, VALUE, 0), bound(), "the first set");
    StoreItem item = StoreFutures.completed(store.gets(key), bound(), "the first gets")
        .orElseThrow(() -> new AssertionError("the store lost an item while " + server
            + " was running"));
    assertThat(item.value()).isEqualTo(VALUE);
    casToken = item.casToken();
  }

  @AfterEach
  final void closeStoreAndStopServer() {
    try {
      if (store != null && !storeClosed) {
        closeStore(store);
      }
    } finally {
      if (server != null) {
        server.stop();
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"gets", "getsAll", "add", "set", "cas", "delete"})
  void anOperationFailsInsteadOfReportingAMissWhenTheServerIsGone(String operation) {
    server.stop();
    assertFailsFast(operation, operations().get(operation));
  }

  @Test
  void everyOperationKeepsFailingWhileTheServerIsGone() {
    server.stop();
    for (int round = 0; round < 3; round++) {
      operations().forEach(this::assertFailsFast);
    }
  }

  /**
   * A frozen server accepts the requests but never answers: only the adapter's deadline ends
   * them, every one with a timeout message, and all at about the same time.
   */
  @Test
  void everyOperationTimesOutWhenTheServerStopsAnswering() {
    server.suspend();
    Map<String, CompletableFuture<?>> started = new LinkedHashMap<>();
    operations().forEach((operation, call) -> started.put(operation, call.get()));
    String timedOut = "timed out after " + operationTimeout().toMillis() + " ms";
    started.forEach((operation, future) -> assertThat(StoreFutures.failure(future, bound(),
        operation + " against " + server))
        .as("the outcome of %s against a frozen server", operation)
        .isInstanceOf(StoreException.class)
        .hasMessageEndingWith(timedOut)
        .hasMessageNotContaining(key)
        .hasMessageNotContaining(SECRET));
  }

  /**
   * Issue 15: callers that do not wait for their answers piled up pending operations against a
   * frozen server until the heap ran out. Beyond {@link #maxPendingOperations()} pending
   * operations, a new one fails at once (and says why); the store answers again once the server
   * resumes.
   */
  @Test
  void aFloodAgainstAFrozenServer_failsBeyondThePendingBoundAtOnce() {
    server.suspend();
    int bound = maxPendingOperations();
    List<CompletableFuture<?>> flood = new java.util.ArrayList<>();
    for (int i = 0; i < bound + 1_000; i++) {
      flood.add(store.gets(key));
    }
    long refusedAtOnce = flood.stream().filter(CompletableFuture::isCompletedExceptionally)
        .filter(f -> StoreFutures.failure(f, bound(), "gets").getMessage()
            .contains("pending already"))
        .count();
    assertThat(refusedAtOnce).as("reads refused at once of %d", flood.size())
        .isGreaterThanOrEqualTo(1_000);
    server.resume();
    await().atMost(operationTimeout().plusSeconds(10)).pollInterval(Duration.ofMillis(100))
        .ignoreExceptionsMatching(e -> e instanceof StoreException
            || e.getCause() instanceof StoreException)
        .untilAsserted(() -> assertThat(store.gets(key).join()).isPresent());
  }

  @Test
  void theStoreAnswersCorrectlyAgainOnceTheServerResumes() {
    server.suspend();
    assertFailsFast("gets", () -> store.gets(key));
    assertFailsFast("set", () -> store.set(key, "lost?".getBytes(StandardCharsets.US_ASCII), 0));
    server.resume();

    // A request that timed out may still be executed once the server resumes, so the value is
    // either the old one or the one of the timed-out set, but the next write must win.
    byte[] fresh = "fresh".getBytes(StandardCharsets.US_ASCII);
    await().atMost(operationTimeout().plusSeconds(10))
        .pollInterval(Duration.ofMillis(100))
        .ignoreExceptionsMatching(e -> e instanceof StoreException
            || e.getCause() instanceof StoreException)
        .untilAsserted(() -> {
          store.set(key, fresh, 0).join();
          assertThat(store.gets(key).join()).hasValueSatisfying(
              item -> assertThat(item.value()).isEqualTo(fresh));
        });
    assertThat(StoreFutures.completed(store.delete(key), bound(), "delete")).isTrue();
    assertThat(StoreFutures.completed(store.gets(key), bound(), "gets")).isEmpty();
  }

  /**
   * With two servers, one of which is down: a bulk read of keys on both fails at once for the
   * keys on the server that is down, instead of reporting them absent, with a {@link
   * PartialReadException} that names exactly those keys and carries the items of the others (a
   * dead node costs a {@code getAll} its own keys only, issue 31); it succeeds when all its keys
   * live on the server that is up, and fails with a plain {@link StoreException} when all live
   * on the server that is down.
   */
  @Test
  void getsAllFailsOnlyTheKeysThatLiveOnAServerThatIsDown() {
    MemcachedServer second = MemcachedServer.startLocal();
    CacheStore both = null;
    try {
      both = storeConnectedTo(List.of(server.address(), second.address()));
      List<String> keys = new ArrayList<>();
      List<CompletableFuture<Void>> writes = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        String spread = key + "-" + i;
        keys.add(spread);
        writes.add(both.set(spread, VALUE, 0));
      }
      StoreFutures.completed(CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)),
          bound(), "writes to both servers");

      second.stop();
      List<String> onTheServerUp = new ArrayList<>();
      Map<String, Integer> failures = new LinkedHashMap<>();
      for (String spread : keys) {
        CompletableFuture<?> read = both.gets(spread);
        try {
          read.get(bound().toMillis(), TimeUnit.MILLISECONDS);
          onTheServerUp.add(spread);
        } catch (Exception e) {
          assertThat(e.getCause()).as("a gets of a key on the server that is down")
              .isInstanceOf(StoreException.class);
          failures.merge(e.getCause().getMessage(), 1, Integer::sum);
        }
      }
      assertThat(onTheServerUp)
          .as("keys readable with one of two servers down; failures: %s", failures)
          .isNotEmpty().hasSizeLessThan(keys.size());

      CacheStore store2 = both;
      List<String> onTheServerDown = new ArrayList<>(keys);
      onTheServerDown.removeAll(onTheServerUp);
      assertThat(assertFailsFast("getsAll over both servers", () -> store2.getsAll(keys)))
          .as("the failure of a bulk read over both servers")
          .isInstanceOfSatisfying(PartialReadException.class, partial -> {
            assertThat(partial.failedKeys()).as("the keys that failed")
                .containsExactlyInAnyOrderElementsOf(onTheServerDown);
            assertThat(partial.found()).as("the items read")
                .containsOnlyKeys(onTheServerUp)
                .allSatisfy((k, item) -> assertThat(item.value()).isEqualTo(VALUE));
          });
      assertThat(assertFailsFast("getsAll of the keys on the server that is down",
          () -> store2.getsAll(onTheServerDown)))
          .as("no key read: a plain failure").isNotInstanceOf(PartialReadException.class);
      assertThat(StoreFutures.completed(both.getsAll(onTheServerUp), bound(),
          "getsAll of the keys on the server that is up"))
          .containsOnlyKeys(onTheServerUp)
          .allSatisfy((k, item) -> assertThat(item.value()).isEqualTo(VALUE));
    } finally {
      try {
        if (both != null) {
          closeStore(both);
        }
      } finally {
        second.stop();
      }
    }
  }

  @Test
  void everyOperationFailsOnceTheClientIsShutDown() {
    storeClosed = true;
    closeStore(store);
    operations().forEach(this::assertFailsFast);
  }

  /**
   * Keys the memcached text protocol cannot carry fail the future, with a message that does not
   * repeat the key, in every operation.
   */
  @ParameterizedTest
  @ValueSource(strings = {"", "has space", "line\nfeed", "carriage\rreturn", "nul\0byte",
      "too-long"})
  void anInvalidKeyFailsTheFutureWithAStoreException(String invalid) {
    String bad = invalid.equals("too-long") ? "k".repeat(store.maxKeyLength() + 1) : invalid;
    Map<String, Supplier<CompletableFuture<?>>> calls = new LinkedHashMap<>();
    calls.put("gets", () -> store.gets(bad));
    calls.put("getsAll", () -> store.getsAll(List.of(key, bad)));
    calls.put("add", () -> store.add(bad, VALUE, 0));
    calls.put("set", () -> store.set(bad, VALUE, 0));
    calls.put("cas", () -> store.cas(bad, casToken, VALUE, 0));
    calls.put("delete", () -> store.delete(bad));
    calls.put("incr", () -> store.incr(bad, 1, 0, 0));
    calls.forEach((operation, call) -> {
      Throwable failure = StoreFutures.failure(call.get(), bound(), operation);
      assertThat(failure).as("%s of an invalid key", operation)
          .isInstanceOf(StoreException.class)
          .hasMessageNotContaining(SECRET);
      if (!bad.isEmpty()) {
        assertThat(failure.getMessage()).as("message of %s", operation).doesNotContain(bad);
      }
    });
    assertThat(StoreFutures.completed(store.gets(key), bound(), "gets of the valid key"))
        .as("the item written before").get().extracting(StoreItem::value).isEqualTo(VALUE);
  }

  private Map<String, Supplier<CompletableFuture<?>>> operations() {
    Map<String, Supplier<CompletableFuture<?>>> operations = new LinkedHashMap<>();
    operations.put("gets", () -> store.gets(key));
    operations.put("getsAll", () -> store.getsAll(List.of(key, key + "-other")));
    operations.put("add", () -> store.add(key, VALUE, 0));
    operations.put("set", () -> store.set(key, VALUE, 0));
    operations.put("cas", () -> store.cas(key, casToken, VALUE, 0));
    operations.put("delete", () -> store.delete(key));
    operations.put("incr", () -> store.incr(key, 1, 0, 0));
    return operations;
  }

  private Duration bound() {
    return operationTimeout().plus(GRACE);
  }

  private Throwable assertFailsFast(String operation,
      Supplier<? extends CompletableFuture<?>> call) {
    Duration bound = bound();
    long started = System.nanoTime();
    CompletableFuture<?> future;
    try {
      future = call.get();
    } catch (RuntimeException e) {
      throw new AssertionError(operation + " threw instead of failing its future", e);
    }
    Duration returnedAfter = Duration.ofNanos(System.nanoTime() - started);
    assertThat(returnedAfter).as("time until %s returned", operation).isLessThan(bound);
    Throwable failure = StoreFutures.failure(future, bound.minus(returnedAfter),
        operation + " against " + server);
    assertThat(failure)
        .as("the outcome of %s against %s", operation, server)
        .isInstanceOf(StoreException.class)
        .hasMessageNotContaining(key)
        .hasMessageNotContaining(SECRET);
    return failure;
  }
}
