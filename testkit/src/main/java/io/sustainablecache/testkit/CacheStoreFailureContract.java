package io.sustainablecache.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How a {@link CacheStore} adapter must fail: when its server goes away or stops answering,
 * every operation throws {@link StoreException} within the operation timeout plus two seconds. It
 * never hangs, and it never reports a miss ({@code gets} returning empty, {@code add} or
 * {@code delete} returning {@code false}, {@code cas} returning {@code NOT_FOUND}) that the
 * server did not give.
 *
 * <p>Each test starts a private memcached process with {@link MemcachedServer#startLocal()},
 * connects a store to it with {@link #storeConnectedTo}, writes an item, then either stops the
 * server or freezes it with {@code SIGSTOP}. It therefore needs the memcached binary: without it
 * the tests are aborted, or fail when {@code CI=true}.
 *
 * <pre>{@code
 * class MyStoreFailureIT extends CacheStoreFailureContract {
 *   @Override
 *   protected CacheStore storeConnectedTo(InetSocketAddress address) {
 *     return MyStore.of(MyClient.connect(address));
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

  private static final byte[] VALUE = "value".getBytes(StandardCharsets.US_ASCII);
  private static final Duration GRACE = Duration.ofSeconds(2);

  private MemcachedServer server;
  private CacheStore store;
  private String key;
  private long casToken;

  /** Creates the contract; subclasses are instantiated by JUnit. */
  protected CacheStoreFailureContract() {}

  /**
   * Creates a store with its own client connected to the given server. Called once per test,
   * while the server is running.
   *
   * @param address a private memcached's address; never {@code null}
   * @return a new store; never {@code null}
   */
  protected abstract CacheStore storeConnectedTo(InetSocketAddress address);

  /**
   * Releases the client behind a store returned by {@link #storeConnectedTo}. Called once per
   * test, after the server has been stopped, so it must not wait for the server.
   *
   * @param store the store to close; never {@code null}
   */
  protected abstract void closeStore(CacheStore store);

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
    store = storeConnectedTo(server.address());
    key = "sc-failure-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    store.set(key, VALUE, 0);
    StoreItem item = store.gets(key)
        .orElseThrow(() -> new AssertionError("the store lost an item while " + server
            + " was running"));
    assertThat(item.value()).isEqualTo(VALUE);
    casToken = item.casToken();
  }

  @AfterEach
  final void closeStoreAndStopServer() {
    try {
      if (store != null) {
        closeStore(store);
      }
    } finally {
      if (server != null) {
        server.stop();
      }
    }
  }

  @Test
  void getsThrowsInsteadOfReportingAMissWhenTheServerIsGone() {
    server.stop();
    assertFailsFast("gets", () -> store.gets(key));
  }

  @Test
  void addThrowsWhenTheServerIsGone() {
    server.stop();
    assertFailsFast("add", () -> store.add(key, VALUE, 0));
  }

  @Test
  void setThrowsWhenTheServerIsGone() {
    server.stop();
    assertFailsFast("set", () -> {
      store.set(key, VALUE, 0);
      return "normally";
    });
  }

  @Test
  void casThrowsWhenTheServerIsGone() {
    server.stop();
    assertFailsFast("cas", () -> store.cas(key, casToken, VALUE, 0));
  }

  @Test
  void deleteThrowsWhenTheServerIsGone() {
    server.stop();
    assertFailsFast("delete", () -> store.delete(key));
  }

  @Test
  void everyOperationKeepsFailingWhileTheServerIsGone() {
    server.stop();
    for (int round = 0; round < 3; round++) {
      operations().forEach(this::assertFailsFast);
    }
  }

  @Test
  void everyOperationTimesOutWhenTheServerStopsAnswering() {
    server.suspend();
    operations().forEach(this::assertFailsFast);
  }

  @Test
  void theStoreAnswersCorrectlyAgainOnceTheServerResumes() {
    server.suspend();
    assertFailsFast("gets", () -> store.gets(key));
    assertFailsFast("set", () -> {
      store.set(key, "lost?".getBytes(StandardCharsets.US_ASCII), 0);
      return "normally";
    });
    server.resume();

    // A request that timed out may still be executed once the server resumes, so the value is
    // either the old one or the one of the timed-out set, but the next write must win.
    byte[] fresh = "fresh".getBytes(StandardCharsets.US_ASCII);
    await().atMost(operationTimeout().plusSeconds(10))
        .pollInterval(Duration.ofMillis(100))
        .ignoreException(StoreException.class)
        .untilAsserted(() -> {
          store.set(key, fresh, 0);
          assertThat(store.gets(key)).hasValueSatisfying(
              item -> assertThat(item.value()).isEqualTo(fresh));
        });
    assertThat(store.delete(key)).isTrue();
    assertThat(store.gets(key)).isEmpty();
  }

  private Map<String, Callable<?>> operations() {
    Map<String, Callable<?>> operations = new LinkedHashMap<>();
    operations.put("gets", () -> store.gets(key));
    operations.put("add", () -> store.add(key, VALUE, 0));
    operations.put("set", () -> {
      store.set(key, VALUE, 0);
      return "normally";
    });
    operations.put("cas", () -> store.cas(key, casToken, VALUE, 0));
    operations.put("delete", () -> store.delete(key));
    return operations;
  }

  private void assertFailsFast(String operation, Callable<?> call) {
    Duration bound = operationTimeout().plus(GRACE);
    Object outcome = assertTimeoutPreemptively(bound, () -> {
      try {
        return "returned " + call.call();
      } catch (Exception e) {
        return e;
      }
    }, () -> operation + " neither returned nor threw within " + bound.toMillis()
        + " ms (the operation timeout plus " + GRACE.toSeconds() + " s)");
    assertThat(outcome)
        .as("the outcome of %s against %s", operation, server)
        .isInstanceOf(StoreException.class);
  }
}
