package io.sustainablecache.spymemcached;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import net.spy.memcached.CASResponse;
import net.spy.memcached.CASValue;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.internal.OperationFuture;
import net.spy.memcached.ops.OperationStatus;

/**
 * A {@link CacheStore} over a spymemcached {@link MemcachedClient}.
 *
 * <p>Values are stored raw, with flags {@code 2048} (what spymemcached's default transcoder uses
 * for a {@code byte[]}); items are read back as bytes whatever their flags. The client's own
 * transcoder is never used, so it neither compresses nor Java-deserializes anything.
 *
 * <p>Every operation waits at most the {@linkplain Builder#operationTimeout operation timeout}
 * for the server's answer. On timeout it cancels the request and throws {@link StoreException};
 * a request already sent may still be executed by the server. Any failure of the client (lost
 * connection, cancelled request, server error such as an item larger than the server's item
 * size, interruption) is also a {@link StoreException}, whose message names the operation but
 * never the key or the value (the cache logs these messages; keys may be personal data).
 *
 * <p>The store does <b>not</b> own the client: several stores may share one, and the caller
 * shuts it down after the last store is no longer used. Thread-safe.
 *
 * <h2>Configuring the client</h2>
 * <pre>{@code
 * MemcachedClient client = new MemcachedClient(
 *     new ConnectionFactoryBuilder()
 *         .setProtocol(ConnectionFactoryBuilder.Protocol.TEXT)
 *         .setFailureMode(FailureMode.Cancel)
 *         .setOpTimeout(700)
 *         .setOpQueueMaxBlockTime(700)
 *         .setMaxReconnectDelay(1)
 *         .setLocatorType(ConnectionFactoryBuilder.Locator.CONSISTENT)
 *         .build(),
 *     AddrUtil.getAddresses("cache1:11211 cache2:11211"));
 * CacheStore store = SpymemcachedStore.builder(client)
 *     .operationTimeout(Duration.ofMillis(700))
 *     .build();
 * // ... and client.shutdown() once the cache is closed
 * }</pre>
 * <ul>
 *   <li>{@code Protocol.TEXT}: memcached's native protocol, supported by every memcached and
 *       ARCUS server; memcached 1.6 deprecates the binary protocol.</li>
 *   <li>{@code FailureMode.Cancel}: while a server is disconnected, requests for its keys fail at
 *       once, which the cache treats as misses. The default, {@code Redistribute}, sends them to
 *       another server, which then holds a second, diverging copy of the item and whose CAS tokens
 *       do not match the first; with a single server it just waits for the reconnect until the
 *       timeout.</li>
 *   <li>{@code setOpTimeout} equal to this store's operation timeout: the client drops requests
 *       that waited that long without being sent. The client's default is 2.5 s.</li>
 *   <li>{@code setOpQueueMaxBlockTime}: how long submitting a request may block when the client's
 *       queue is full. The default, 10 s, would block the caller far beyond the operation
 *       timeout.</li>
 *   <li>{@code setMaxReconnectDelay} (seconds): the client reconnects with exponential back-off up
 *       to this delay, 30 s by default, during which a recovered server stays unused.</li>
 *   <li>{@code Locator.CONSISTENT} (ketama) when there are several servers, so that adding or
 *       removing one remaps few keys.</li>
 * </ul>
 * Do not set a transcoder: this store passes its own to every call.
 *
 * <p>The client connects in the background. With {@code FailureMode.Cancel}, requests made before
 * a server's connection is up fail at once, so right after creating the client the first
 * operations throw {@link StoreException} (which the cache counts as store errors and treats as
 * misses). To start warm, wait until {@code client.getAvailableServers()} lists the servers.
 *
 * <p>Two behaviours of spymemcached to be aware of. A server error such as
 * {@code SERVER_ERROR object too large for cache} makes the text protocol client drop the
 * connection and re-open it after its first reconnect delay, one second: meanwhile, with
 * {@code FailureMode.Cancel}, every request to that server fails. Keep values below the server's
 * item size ({@code -I}, 1 MiB by default, which includes the key and about 60 bytes of item
 * header). And after {@code setTimeoutExceptionThreshold} (998 by default) consecutive timeouts
 * the client also re-opens the connection.
 */
public final class SpymemcachedStore implements CacheStore {

  /** memcached's longest key, in bytes. */
  static final int MEMCACHED_MAX_KEY_LENGTH = 250;

  /** The operation timeout unless configured. */
  static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofMillis(700);

  private final MemcachedClient client;
  private final Duration operationTimeout;
  private final long operationTimeoutNanos;
  private final int maxKeyLength;

  private SpymemcachedStore(Builder builder) {
    this.client = builder.client;
    this.operationTimeout = builder.operationTimeout;
    this.operationTimeoutNanos = TimeUnit.NANOSECONDS.convert(builder.operationTimeout);
    this.maxKeyLength = builder.maxKeyLength;
  }

  /**
   * Creates a store with the default settings: a 700 ms operation timeout and memcached's 250
   * byte key limit.
   *
   * @param client a started client; not owned by the store
   * @return a new store
   * @throws NullPointerException if {@code client} is {@code null}
   */
  public static SpymemcachedStore of(MemcachedClient client) {
    return builder(client).build();
  }

  /**
   * Starts configuring a store.
   *
   * @param client a started client; not owned by the store
   * @return a new builder with the default settings
   * @throws NullPointerException if {@code client} is {@code null}
   */
  public static Builder builder(MemcachedClient client) {
    return new Builder(requireNonNull(client, "client"));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Sends {@code gets} with {@link MemcachedClient#asyncGets(String,
   * net.spy.memcached.transcoders.Transcoder)}.
   *
   * @param key {@inheritDoc}
   * @return {@inheritDoc}; the value is the item's bytes whatever its flags
   * @throws StoreException {@inheritDoc}
   * @throws NullPointerException if {@code key} is {@code null}
   */
  @Override
  public Optional<StoreItem> gets(String key) {
    requireNonNull(key, "key");
    OperationFuture<CASValue<byte[]>> future =
        submit("gets", key, () -> client.asyncGets(key, RawBytesTranscoder.INSTANCE));
    CASValue<byte[]> found = await("gets", key, future);
    return found == null
        ? Optional.empty()
        : Optional.of(new StoreItem(found.getValue(), found.getCas()));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Sends {@code add} with a copy of the value.
   *
   * @param key {@inheritDoc}
   * @param value {@inheritDoc}
   * @param exptime {@inheritDoc}
   * @return {@inheritDoc}
   * @throws StoreException {@inheritDoc}, or refuses the item
   * @throws NullPointerException if {@code key} or {@code value} is {@code null}
   */
  @Override
  public boolean add(String key, byte[] value, int exptime) {
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    OperationFuture<Boolean> future =
        submit("add", key, () -> client.add(key, exptime, value, RawBytesTranscoder.INSTANCE));
    return status("add", key, future, await("add", key, future));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Sends {@code set} with a copy of the value.
   *
   * @param key {@inheritDoc}
   * @param value {@inheritDoc}
   * @param exptime {@inheritDoc}
   * @throws StoreException {@inheritDoc}
   * @throws NullPointerException if {@code key} or {@code value} is {@code null}
   */
  @Override
  public void set(String key, byte[] value, int exptime) {
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    OperationFuture<Boolean> future =
        submit("set", key, () -> client.set(key, exptime, value, RawBytesTranscoder.INSTANCE));
    if (!status("set", key, future, await("set", key, future))) {
      throw new StoreException(
          describe("set", key) + " was not stored: " + statusMessage(future.getStatus()));
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Sends {@code cas} with a copy of the value.
   *
   * @param key {@inheritDoc}
   * @param casToken {@inheritDoc}
   * @param value {@inheritDoc}
   * @param exptime {@inheritDoc}
   * @return {@inheritDoc}
   * @throws StoreException {@inheritDoc}, refuses the item, or gives another answer
   * @throws NullPointerException if {@code key} or {@code value} is {@code null}
   */
  @Override
  public CasOutcome cas(String key, long casToken, byte[] value, int exptime) {
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    OperationFuture<CASResponse> future = submit("cas", key,
        () -> client.asyncCAS(key, casToken, exptime, value, RawBytesTranscoder.INSTANCE));
    CASResponse response = await("cas", key, future);
    if (response == null) {
      throw new StoreException(describe("cas", key) + " completed without a response");
    }
    switch (response) {
      case OK:
        return CasOutcome.STORED;
      case EXISTS:
        return CasOutcome.EXISTS;
      case NOT_FOUND:
        return CasOutcome.NOT_FOUND;
      default:
        throw new StoreException(describe("cas", key) + " got the unexpected response "
            + response + ": " + statusMessage(future.getStatus()));
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Sends {@code delete}.
   *
   * @param key {@inheritDoc}
   * @return {@inheritDoc}
   * @throws StoreException {@inheritDoc}
   * @throws NullPointerException if {@code key} is {@code null}
   */
  @Override
  public boolean delete(String key) {
    requireNonNull(key, "key");
    OperationFuture<Boolean> future = submit("delete", key, () -> client.delete(key));
    return status("delete", key, future, await("delete", key, future));
  }

  /**
   * The configured key limit.
   *
   * @return between 1 and 250 bytes; 250 unless configured
   */
  @Override
  public int maxKeyLength() {
    return maxKeyLength;
  }

  /**
   * How long each operation waits for the server.
   *
   * @return a positive duration; 700 ms unless configured
   */
  public Duration operationTimeout() {
    return operationTimeout;
  }

  /**
   * Describes the configuration, for logs.
   *
   * @return for example {@code SpymemcachedStore{operationTimeout=PT0.7S, maxKeyLength=250}}
   */
  @Override
  public String toString() {
    return "SpymemcachedStore{operationTimeout=" + operationTimeout
        + ", maxKeyLength=" + maxKeyLength + "}";
  }

  private static <F extends Future<?>> F submit(String operation, String key, Supplier<F> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      // Invalid key, client shut down, or its queue full for longer than opQueueMaxBlockTime.
      throw new StoreException(describe(operation, key) + " was rejected by the client: " + e, e);
    }
  }

  private <T> T await(String operation, String key, Future<T> future) {
    try {
      return future.get(operationTimeoutNanos, TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      future.cancel(true);
      throw new StoreException(
          describe(operation, key) + " timed out after " + formatTimeout(), e);
    } catch (InterruptedException e) {
      future.cancel(true);
      Thread.currentThread().interrupt();
      throw new StoreException(describe(operation, key) + " was interrupted", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new StoreException(describe(operation, key) + " failed: " + explain(cause), cause);
    } catch (CancellationException e) {
      throw new StoreException(describe(operation, key) + " failed: " + explain(e), e);
    } catch (RuntimeException e) {
      throw new StoreException(describe(operation, key) + " failed: " + e, e);
    }
  }

  /** The result of add, set or delete: {@code null} means the client lost the status. */
  private static boolean status(String operation, String key, OperationFuture<Boolean> future,
      Boolean success) {
    if (success == null) {
      throw new StoreException(describe(operation, key) + " completed without a status: "
          + statusMessage(future.getStatus()));
    }
    return success;
  }

  private static String explain(Throwable cause) {
    if (cause instanceof CancellationException) {
      return "cancelled by the client (its connection to the server is down or was lost)";
    }
    return cause.toString();
  }

  private static String statusMessage(OperationStatus status) {
    return status == null ? "no status" : status.getMessage();
  }

  private String formatTimeout() {
    long millis = TimeUnit.MILLISECONDS.convert(operationTimeout);
    return millis > 0 ? millis + " ms" : operationTimeout.toString();
  }

  /**
   * Names the operation for an exception message. Keys are left out on purpose: the cache logs
   * these messages, and keys (often user ids) may appear in logs only at debug level.
   */
  private static String describe(String operation, String key) {
    return "memcached " + operation;
  }

  /**
   * Configures a {@link SpymemcachedStore}. Not thread-safe; {@link #build()} may be called more
   * than once.
   */
  public static final class Builder {

    private final MemcachedClient client;
    private Duration operationTimeout = DEFAULT_OPERATION_TIMEOUT;
    private int maxKeyLength = MEMCACHED_MAX_KEY_LENGTH;

    private Builder(MemcachedClient client) {
      this.client = client;
    }

    /**
     * How long each operation waits for the server's answer before it is cancelled and fails
     * with {@link StoreException}. Independent of the client's own {@code opTimeout}, which
     * should be set to the same value.
     *
     * @param timeout a positive duration; 700 ms by default
     * @return this builder
     * @throws NullPointerException if {@code timeout} is {@code null}
     * @throws IllegalArgumentException if {@code timeout} is zero or negative
     */
    public Builder operationTimeout(Duration timeout) {
      requireNonNull(timeout, "operationTimeout");
      if (timeout.isZero() || timeout.isNegative()) {
        throw new IllegalArgumentException(
            "operationTimeout must be positive, but was " + timeout);
      }
      this.operationTimeout = timeout;
      return this;
    }

    /**
     * The longest key the store accepts, which the cache enforces before any network call. Lower
     * it when a proxy in front of memcached allows shorter keys.
     *
     * @param bytes between 1 and 250; 250 (memcached's limit) by default
     * @return this builder
     * @throws IllegalArgumentException if {@code bytes} is outside 1 to 250
     */
    public Builder maxKeyLength(int bytes) {
      if (bytes < 1 || bytes > MEMCACHED_MAX_KEY_LENGTH) {
        throw new IllegalArgumentException("maxKeyLength must be between 1 and "
            + MEMCACHED_MAX_KEY_LENGTH + " (memcached's limit), but was " + bytes);
      }
      this.maxKeyLength = bytes;
      return this;
    }

    /**
     * Creates the store.
     *
     * @return a new store over the builder's client
     */
    public SpymemcachedStore build() {
      return new SpymemcachedStore(this);
    }
  }
}
