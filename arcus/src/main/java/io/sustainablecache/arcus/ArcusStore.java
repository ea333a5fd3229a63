package io.sustainablecache.arcus;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ArcusClientPool;
import net.spy.memcached.CASResponse;
import net.spy.memcached.CASValue;
import net.spy.memcached.MemcachedClientIF;
import net.spy.memcached.internal.OperationFuture;
import net.spy.memcached.ops.OperationStatus;
import net.spy.memcached.ops.StatusCode;

/**
 * A {@link CacheStore} over the <a href="https://github.com/naver/arcus-java-client">ARCUS Java
 * client</a>: an {@link ArcusClient} or an {@link ArcusClientPool}, connected to an ARCUS cluster
 * through ZooKeeper ({@code ArcusClient.createArcusClient}, {@code createArcusClientPool}) or
 * directly to memcached-protocol servers ({@code new ArcusClient(connectionFactory, addresses)}).
 *
 * <pre>{@code
 * ArcusClient client = ArcusClient.createArcusClient(zkAddresses, serviceCode,
 *     new ConnectionFactoryBuilder()
 *         .setFailureMode(FailureMode.Cancel)
 *         .setOpTimeout(700));
 * CacheStore store = ArcusStore.builder(client)
 *     .operationTimeout(Duration.ofMillis(700))
 *     .maxKeyLength(4000)             // ARCUS servers accept 4000-byte keys
 *     .build();
 * ...
 * client.shutdown();                  // the store does not own the client
 * }</pre>
 *
 * <h2>Operations</h2>
 * Each method issues one asynchronous client call ({@code asyncGets}, {@code add}, {@code set},
 * {@code asyncCAS}, {@code delete}) and waits for it for at most the {@linkplain
 * Builder#operationTimeout operation timeout}. On timeout the operation is cancelled and a
 * {@link StoreException} reports it; so does any other failure: the client refusing the call
 * ({@link IllegalStateException} once it is shut down or its queue is full, {@link
 * IllegalArgumentException} for a key it rejects), a cancelled operation (for example no node or
 * an inactive node under {@code FailureMode.Cancel}), a server error, or an interrupt (the
 * thread's interrupt flag is restored). Exception messages name the operation, never the value.
 *
 * <p>Values are stored raw: the client's default {@code SerializingTranscoder} (compression, Java
 * serialization) is never used. Items are written with flags {@code 0x800}, the "plain byte
 * array" marker of the client's own transcoder, and read back as their stored bytes whatever their
 * flags. The client never refuses a value on size; a value larger than the server's item size
 * (1 MiB by default) is refused by the server and reported as a {@link StoreException}. Note that
 * the client answers a {@code SERVER_ERROR} by dropping and re-opening that server's connection,
 * so oversized values are worth rejecting before they reach the store. The client's front cache,
 * if enabled, is bypassed: {@code gets} always asks the server.
 *
 * <h2>Keys</h2>
 * {@link #maxKeyLength()} is 250 bytes by default because a plain memcached server refuses longer
 * keys, while an ARCUS server accepts up to 4000 (the client's own limit); raise it with {@link
 * Builder#maxKeyLength} when every server is an ARCUS server. The ARCUS client additionally
 * treats the part of a key before its first {@code ':'} (the {@linkplain
 * net.spy.memcached.ConnectionFactoryBuilder#setDelimiter delimiter}) as an ARCUS prefix, which
 * must consist of {@code [A-Za-z0-9_+.-]} and must not start with {@code '-'}; other keys with a
 * {@code ':'} fail with a {@link StoreException}.
 *
 * <h2>Configuring the client</h2>
 * Build the client's connection factory with {@link net.spy.memcached.ConnectionFactoryBuilder};
 * its defaults suit this library: {@code FailureMode.Cancel} (operations for a failed node fail
 * at once, which the cache treats as a miss or a skipped write, instead of queueing behind the
 * reconnect), ARCUS consistent (ketama) hashing (a node joining or leaving moves only its share
 * of the keys), and a 700 ms operation timeout. The plain {@link
 * net.spy.memcached.DefaultConnectionFactory} instead uses {@code FailureMode.Redistribute} and
 * modulo hashing: a failed node's keys are served by another node, and any change in the node
 * list remaps most keys, which empties the cache for practical purposes and causes the very
 * stampede this library exists to prevent. Keep the factory's operation timeout
 * ({@code setOpTimeout}, milliseconds) equal to this store's {@linkplain Builder#operationTimeout
 * operation timeout}: the store waits for its own, the client uses its own for its queues and
 * counts consecutive timeouts ({@code setTimeoutExceptionThreshold}, 10 by default) before it
 * resets a connection.
 *
 * <p>The ARCUS client 1.13.2 depends on ZooKeeper 3.4.14, whose client cannot connect on Java 14
 * and later; this module replaces it with ZooKeeper 3.5.9, the version later ARCUS clients use.
 * The ARCUS client logs to standard error through its own facade unless the system property
 * {@code net.spy.log.LoggerImpl} is {@code net.spy.memcached.compat.log.SLF4JLogger}.
 *
 * <h2>Lifecycle and thread-safety</h2>
 * The store is immutable and thread-safe; it adds no threads, locks or state to the client's. It
 * does <b>not</b> own the client: the caller shuts the client down ({@code shutdown()}, which for
 * a client created through ZooKeeper also closes its ZooKeeper session) after the last use of the
 * store. Calls made after that fail with a {@link StoreException}.
 */
public final class ArcusStore implements CacheStore {

  /** The client's default operation timeout, {@code DefaultConnectionFactory}'s 700 ms. */
  static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofMillis(700);

  /** memcached's key length limit, the default. */
  static final int DEFAULT_MAX_KEY_LENGTH = 250;

  /** ARCUS's key length limit, the largest accepted value. */
  static final int ARCUS_MAX_KEY_LENGTH = 4000;

  private final MemcachedClientIF client;
  private final long timeoutMillis;
  private final int maxKeyLength;

  private ArcusStore(MemcachedClientIF client, long timeoutMillis, int maxKeyLength) {
    this.client = client;
    this.timeoutMillis = timeoutMillis;
    this.maxKeyLength = maxKeyLength;
  }

  /**
   * Creates a store over a single client with the defaults: a 700 ms operation timeout and
   * 250-byte keys.
   *
   * @param client a started client; the caller keeps ownership and shuts it down
   * @return a new store
   * @throws NullPointerException if {@code client} is {@code null}
   */
  public static ArcusStore of(ArcusClient client) {
    return builder(client).build();
  }

  /**
   * Creates a store over a client pool with the defaults: a 700 ms operation timeout and 250-byte
   * keys. Each operation runs on one of the pool's clients, picked by the pool.
   *
   * @param pool a started pool; the caller keeps ownership and shuts it down
   * @return a new store
   * @throws NullPointerException if {@code pool} is {@code null}
   */
  public static ArcusStore of(ArcusClientPool pool) {
    return builder(pool).build();
  }

  /**
   * Starts configuring a store over a single client.
   *
   * @param client a started client; the caller keeps ownership and shuts it down
   * @return a builder with the defaults
   * @throws NullPointerException if {@code client} is {@code null}
   */
  public static Builder builder(ArcusClient client) {
    return new Builder(requireNonNull(client, "client"));
  }

  /**
   * Starts configuring a store over a client pool.
   *
   * @param pool a started pool; the caller keeps ownership and shuts it down
   * @return a builder with the defaults
   * @throws NullPointerException if {@code pool} is {@code null}
   */
  public static Builder builder(ArcusClientPool pool) {
    return new Builder(requireNonNull(pool, "pool"));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Runs {@code asyncGets} and returns the stored bytes whatever their flags.
   */
  @Override
  public Optional<StoreItem> gets(String key) {
    requireNonNull(key, "key");
    CASValue<byte[]> found =
        await("gets", () -> client.asyncGets(key, RawBytesTranscoder.INSTANCE));
    return found == null
        ? Optional.empty()
        : Optional.of(new StoreItem(found.getValue(), found.getCas()));
  }

  /**
   * {@inheritDoc}
   *
   * @throws StoreException also when the server answers anything but {@code STORED} or
   *     {@code NOT_STORED}, for example when the value exceeds its item size
   */
  @Override
  public boolean add(String key, byte[] value, int exptime) {
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    return stored("add",
        call("add", () -> client.add(key, exptime, value, RawBytesTranscoder.INSTANCE)),
        StatusCode.ERR_NOT_STORED);
  }

  /**
   * {@inheritDoc}
   *
   * @throws StoreException also when the server answers anything but {@code STORED}; the
   *     message carries the server's answer
   */
  @Override
  public void set(String key, byte[] value, int exptime) {
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    stored("set",
        call("set", () -> client.set(key, exptime, value, RawBytesTranscoder.INSTANCE)),
        null);
  }

  /**
   * {@inheritDoc}
   *
   * @throws StoreException also when the client reports the operation as cancelled or its
   *     outcome as undefined
   */
  @Override
  public CasOutcome cas(String key, long casToken, byte[] value, int exptime) {
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    Future<CASResponse> future = call("cas",
        () -> client.asyncCAS(key, casToken, exptime, value, RawBytesTranscoder.INSTANCE));
    CASResponse response = await("cas", future);
    if (response == null) {
      throw new StoreException("ARCUS cas failed: no response");
    }
    return switch (response) {
      case OK -> CasOutcome.STORED;
      case EXISTS -> CasOutcome.EXISTS;
      case NOT_FOUND -> CasOutcome.NOT_FOUND;
      case CANCELED, UNDEFINED -> throw new StoreException(
          "ARCUS cas failed: " + response + statusSuffix(future));
    };
  }

  /**
   * {@inheritDoc}
   *
   * @throws StoreException also when the server answers anything but {@code DELETED} or
   *     {@code NOT_FOUND}
   */
  @Override
  public boolean delete(String key) {
    requireNonNull(key, "key");
    return stored("delete", call("delete", () -> client.delete(key)), StatusCode.ERR_NOT_FOUND);
  }

  /**
   * {@inheritDoc}
   *
   * <p>250 unless configured with {@link Builder#maxKeyLength}.
   */
  @Override
  public int maxKeyLength() {
    return maxKeyLength;
  }

  @Override
  public String toString() {
    return "ArcusStore[client=" + client.getClass().getSimpleName()
        + ", operationTimeout=" + timeoutMillis + "ms, maxKeyLength=" + maxKeyLength + "]";
  }

  /**
   * Waits for a store command and returns its Boolean result; a {@code false} answer is returned
   * only when its status is {@code expectedFailure}, any other {@code false} becomes a {@link
   * StoreException} naming the server's answer.
   */
  private boolean stored(String operation, Future<Boolean> future, StatusCode expectedFailure) {
    Boolean result = await(operation, future);
    if (Boolean.TRUE.equals(result)) {
      return true;
    }
    OperationStatus status = status(future);
    if (expectedFailure != null
        && (status == null || status.getStatusCode() == expectedFailure)) {
      return false;
    }
    throw new StoreException("ARCUS " + operation + " failed" + statusSuffix(future));
  }

  /** Submits an asynchronous call, turning the client's refusal into a {@link StoreException}. */
  private static <T> Future<T> call(String operation, Supplier<Future<T>> submit) {
    try {
      return submit.get();
    } catch (RuntimeException e) {
      throw new StoreException("ARCUS " + operation + " failed: " + describe(e), e);
    }
  }

  /** {@link #call} then {@link #await(String, Future)}. */
  private <T> T await(String operation, Supplier<Future<T>> submit) {
    return await(operation, call(operation, submit));
  }

  /** Waits for a submitted call for at most the operation timeout. */
  private <T> T await(String operation, Future<T> future) {
    try {
      return future.get(timeoutMillis, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw cancelled(future, new StoreException(
          "ARCUS " + operation + " timed out after " + timeoutMillis + " ms", e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw cancelled(future, new StoreException("ARCUS " + operation + " interrupted", e));
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new StoreException("ARCUS " + operation + " failed: " + describe(cause), cause);
    } catch (RuntimeException e) {
      // CancellationException, or anything else the client throws while waiting
      throw new StoreException("ARCUS " + operation + " failed: " + describe(e), e);
    }
  }

  /**
   * Cancels an operation the store no longer waits for, so that the client drops it if it has
   * not been sent yet; a failure to cancel is attached to {@code failure}, which is returned.
   */
  private static StoreException cancelled(Future<?> future, StoreException failure) {
    try {
      future.cancel(true);
    } catch (RuntimeException e) {
      failure.addSuppressed(e);
    }
    return failure;
  }

  /** Returns the server's status of a completed operation, or {@code null} if unknown. */
  private static OperationStatus status(Future<?> future) {
    return future instanceof OperationFuture<?> operation ? operation.getStatus() : null;
  }

  private static String statusSuffix(Future<?> future) {
    OperationStatus status = status(future);
    return status == null ? "" : ": " + status.getMessage();
  }

  private static String describe(Throwable t) {
    return t.getMessage() == null ? t.getClass().getName() : t.getMessage();
  }

  /**
   * Configures an {@link ArcusStore}. Not thread-safe; {@link #build()} may be called more than
   * once, each time creating an independent store over the same client.
   */
  public static final class Builder {

    private final MemcachedClientIF client;
    private long timeoutMillis = DEFAULT_OPERATION_TIMEOUT.toMillis();
    private int maxKeyLength = DEFAULT_MAX_KEY_LENGTH;

    private Builder(MemcachedClientIF client) {
      this.client = client;
    }

    /**
     * Sets how long each operation may take before it is cancelled and reported as a {@link
     * StoreException}. Defaults to 700 ms, the ARCUS client's own default operation timeout;
     * keep the two equal (see the {@linkplain ArcusStore class documentation}). The timeout is
     * used at millisecond precision; durations beyond {@link Long#MAX_VALUE} milliseconds are
     * capped.
     *
     * @param timeout a positive duration of at least one millisecond
     * @return this builder
     * @throws NullPointerException if {@code timeout} is {@code null}
     * @throws IllegalArgumentException if {@code timeout} is shorter than one millisecond
     */
    public Builder operationTimeout(Duration timeout) {
      requireNonNull(timeout, "timeout");
      long millis = TimeUnit.MILLISECONDS.convert(timeout);
      if (timeout.isNegative() || millis < 1) {
        throw new IllegalArgumentException(
            "operationTimeout must be at least 1 ms, was " + timeout);
      }
      this.timeoutMillis = millis;
      return this;
    }

    /**
     * Sets the longest key, in bytes, the store reports through {@link
     * ArcusStore#maxKeyLength()}. Defaults to 250, the limit of a plain memcached server; an
     * ARCUS server accepts up to 4000, so raise it only when every server is an ARCUS server.
     *
     * @param maxKeyLength the limit in bytes, from 1 to 4000 (the ARCUS client's limit)
     * @return this builder
     * @throws IllegalArgumentException if {@code maxKeyLength} is outside 1 to 4000
     */
    public Builder maxKeyLength(int maxKeyLength) {
      if (maxKeyLength < 1 || maxKeyLength > ARCUS_MAX_KEY_LENGTH) {
        throw new IllegalArgumentException("maxKeyLength must be between 1 and "
            + ARCUS_MAX_KEY_LENGTH + " bytes, was " + maxKeyLength);
      }
      this.maxKeyLength = maxKeyLength;
      return this;
    }

    /**
     * Creates the store.
     *
     * @return a new store over this builder's client
     */
    public ArcusStore build() {
      return new ArcusStore(client, timeoutMillis, maxKeyLength);
    }
  }
}
