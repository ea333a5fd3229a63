package io.sustainablecache.spymemcached;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.memcached.AdapterSettings;
import io.sustainablecache.memcached.MemcachedOperations;
import io.sustainablecache.memcached.MemcachedStore;
import io.sustainablecache.memcached.NodeSnapshot;
import io.sustainablecache.memcached.OperationDeadlines;
import io.sustainablecache.memcached.StoreKeys;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreNodes;
import java.time.Duration;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.spy.memcached.CachedData;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.FailureMode;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.MemcachedConnection;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.NodeLocator;
import net.spy.memcached.ops.DeleteOperation;
import net.spy.memcached.ops.GetsOperation;
import net.spy.memcached.ops.Mutator;
import net.spy.memcached.ops.Operation;
import net.spy.memcached.ops.OperationCallback;
import net.spy.memcached.ops.OperationStatus;
import net.spy.memcached.ops.StoreOperation;
import net.spy.memcached.ops.StoreType;
import net.spy.memcached.protocol.ascii.AsciiOperationFactory;
import net.spy.memcached.protocol.ascii.BaseGetOpImpl;
import net.spy.memcached.protocol.binary.BinaryMemcachedNodeImpl;

/**
 * A {@link CacheStore} over a spymemcached {@link MemcachedClient} (2.12) on the text protocol.
 *
 * <h2>Asynchronous operations</h2>
 * spymemcached's futures can take listeners, but those run on the client's listener executor,
 * one more thread hop and several objects per operation. This store instead does what the
 * client's {@code asyncGets}, {@code add}, {@code set}, {@code asyncCAS} and {@code delete} do
 * internally, with its own completion callbacks: it builds the client's text-protocol operations
 * with {@link AsciiOperationFactory} and hands them to the client's connection with the public
 * {@link MemcachedConnection#enqueueOperation}, which validates the key, refuses operations once
 * the client is shut down and applies the failure mode, exactly as for the client's own calls.
 * The caller's thread never waits for the network.
 *
 * <p>Each returned future completes
 * <ul>
 *   <li>on the <b>client's I/O thread</b> (the {@link MemcachedConnection} thread), when the
 *       server answers or the connection is lost;</li>
 *   <li>on the <b>calling thread</b>, before the method returns, when the operation fails before
 *       it is sent: an invalid key, a client that is shut down, a full queue, or, under {@code
 *       FailureMode.Cancel}, a server that is down;</li>
 *   <li>on the <b>deadline thread</b> shared by the stores with the same timeout (named {@code
 *       sustainable-cache-deadlines-<timeout>}) when the {@linkplain Builder#operationTimeout
 *       operation timeout} passes first: the future fails with {@code "spymemcached <op> timed out
 *       after <n> ms"}, and the client's operation is cancelled (it is dropped if not yet sent) and
 *       counted as a timeout by the client, which re-opens a connection after {@code
 *       setTimeoutExceptionThreshold} consecutive ones, exactly as if its own future had timed
 *       out.</li>
 * </ul>
 * Dependent actions registered without an executor run on that thread: keep them short and
 * non-blocking, above all on the I/O thread, which serves every operation of the client.
 * Cancelling a returned future cancels the client's operation, which is then dropped if not yet
 * sent; a cancelled operation that was sent still has its answer read, so the connection stays
 * in step.
 *
 * <p>What this relies on, besides the operations' public API: that the client's own calls are
 * an operation from its factory plus {@code enqueueOperation}, and that an operation calls
 * {@code complete()} on its callback exactly when it completes, is cancelled or times out in the
 * client's queue. These hold for 2.12.x.
 *
 * <h2>Failures</h2>
 * Every failure completes the future with a {@link io.sustainablecache.spi.StoreException} whose
 * message names the operation and never the key or the value (the cache logs these messages;
 * keys may be personal data); the methods themselves throw nothing but {@link
 * NullPointerException} for {@code null} arguments. Failures include: a key that is empty,
 * longer than {@link #maxKeyLength()} or contains a space, line break or NUL; a client that is
 * shut down; a server that is down under {@code FailureMode.Cancel}; a server error such as
 * {@code SERVER_ERROR object too large for cache}; an unexpected answer; and the timeout.
 *
 * <h2>Values</h2>
 * Values are stored raw, with flags {@code 2048} (what spymemcached's default transcoder uses
 * for a {@code byte[]}); items are read back as bytes whatever their flags. The client's own
 * transcoder is never used, so it neither compresses nor Java-deserializes anything. The store
 * copies a value before queueing it, so the caller's array is neither retained nor read once the
 * method has returned; every array it returns is new and belongs to the caller. A value larger
 * than the server's item size fails the future with a {@link
 * io.sustainablecache.spi.StoreException} for {@code add}, {@code set} and {@code cas} alike.
 *
 * <h2>Bulk reads</h2>
 * spymemcached 2.12 has no bulk read with CAS tokens ({@code getBulk} returns no tokens, and its
 * {@code gets} operation takes one key), so {@link #getsAll} groups the keys by server and sends
 * one multi-key {@code gets} per server and per {@value #BULK_CHUNK} keys, through the client's
 * own get operation ({@code BaseGetOpImpl}). (One {@code gets} per key overflowed the client's
 * bounded queue when several callers read thousands of keys together, and the overflow failed
 * those reads.) A key whose server is not connected is not sent and fails at once, unless the
 * client's failure mode is {@code Redistribute}, which sends it to the next connected server of
 * its ketama sequence as the client does (a key none of whose 7 tries lands on a connected
 * server fails), or {@code Retry}, which queues it for its server. A failed key or part fails
 * only its own keys: the read then fails with a {@link
 * io.sustainablecache.spi.PartialReadException} that carries the other keys' items, and the
 * cache loads only the failed keys. {@link #flushPrefix} is not supported (memcached has no
 * such command).
 *
 * <h2>Configuring the client</h2>
 * <pre>{@code
 * MemcachedClient client = new MemcachedClient(
 *     SpymemcachedStore.recommendedSettings().build(), // the settings below
 *     AddrUtil.getAddresses("cache1:11211 cache2:11211"));
 * CacheStore store = SpymemcachedStore.builder(client)
 *     .operationTimeout(Duration.ofMillis(700))
 *     .build();
 * // ... and client.shutdown() once the cache is closed
 * }</pre>
 * <ul>
 *   <li>{@code Protocol.TEXT} (required: the builder rejects a binary-protocol client):
 *       memcached's native protocol, supported by every memcached and ARCUS server; memcached
 *       1.6 deprecates the binary protocol.</li>
 *   <li>{@code FailureMode.Cancel}: while a server is disconnected, requests for its keys fail at
 *       once, which the cache treats as misses. The default, {@code Redistribute}, sends them to
 *       another server, which then holds a second, diverging copy of the item and whose CAS tokens
 *       do not match the first; with a single server it just waits for the reconnect until the
 *       timeout.</li>
 *   <li>{@code setOpTimeout} equal to this store's operation timeout: the client drops requests
 *       that waited that long without being sent. The client's default is 2.5 s.</li>
 *   <li>{@code setOpQueueMaxBlockTime}: how long submitting a request may block the calling
 *       thread when the client's queue is full. The default, 10 s, would block far beyond the
 *       operation timeout; 0 fails the operation at once.</li>
 *   <li>{@code setMaxReconnectDelay} (seconds): the client reconnects with exponential back-off up
 *       to this delay, 30 s by default, during which a recovered server stays unused.</li>
 *   <li>{@code Locator.CONSISTENT} with {@code DefaultHashAlgorithm.KETAMA_HASH} (ketama) when
 *       there are several servers, so that adding or removing one remaps few keys. The hash
 *       matters: with the builder's default, {@code NATIVE_HASH} ({@code String.hashCode}), the
 *       consistent locator spreads keys very unevenly (in a test with two servers on one host,
 *       every key went to the same server).</li>
 * </ul>
 *
 * <p>The client connects in the background. With {@code FailureMode.Cancel}, requests made before
 * a server's connection is up fail at once. To start warm, wait until {@code
 * client.getAvailableServers()} lists the servers.
 *
 * <p>Two behaviours of spymemcached to be aware of. A server error such as {@code SERVER_ERROR
 * object too large for cache} makes the client drop the connection and re-open it after its
 * first reconnect delay, one second: meanwhile, with {@code FailureMode.Cancel}, every request to
 * that server fails. Keep values below the server's item size ({@code -I}, 1 MiB by default,
 * which includes the key and about 60 bytes of item header). And after {@code
 * setTimeoutExceptionThreshold} (998 by default) consecutive timeouts the client also re-opens
 * the connection.
 *
 * <h2>Lifecycle and thread-safety</h2>
 * The store is immutable and thread-safe. It does <b>not</b> own the client: several stores may
 * share one, and the caller shuts it down after the last store is no longer used. Operations
 * started after that fail.
 * A cache's writes that nobody waits for (a load's write-back, the fleet lease's delete) may
 * still be queued in the client when the cache's last call returns, and an immediate {@code
 * shutdown()} drops them: nothing stale is served, but the next reader loads again and other
 * instances wait out the lease (found by the lab's four-JVM scenario, whose members lost their
 * last round's writes this way). Close the caches first: {@code SustainableCache.close()} waits,
 * at most its {@code closeTimeout}, until the store answered every write it issued. Other users
 * of the store (code that calls it directly) drain the client's queues before the shutdown
 * ({@code client.waitForQueues(timeout, unit)}), as the store factory's {@code
 * OpenedStore.close()} does.
 */
public final class SpymemcachedStore extends MemcachedStore {

  /** memcached's longest key, in bytes. */
  static final int MEMCACHED_MAX_KEY_LENGTH = 250;

  /** The operation timeout unless configured. */
  static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofMillis(700);

  /** The most keys one {@code gets} request of a bulk read names, as the ARCUS client does. */
  static final int BULK_CHUNK = MemcachedOperations.BULK_CHUNK;

  /** The client's text-protocol operation factory: stateless, shared. */
  private static final AsciiOperationFactory OPERATIONS = new AsciiOperationFactory();

  private final Duration operationTimeout;
  private final int maxKeyLength;
  private final MemcachedOperations<Spymemcached> operations;
  /** The client's fixed node list, under {@code FailureMode.Cancel} only; else empty. */
  private final Optional<StoreNodes> nodes;

  private SpymemcachedStore(Builder builder) {
    this.operationTimeout = builder.operationTimeout;
    this.maxKeyLength = builder.maxKeyLength;
    Spymemcached client = new Spymemcached(builder.client.getConnection(), maxKeyLength);
    this.operations = new MemcachedOperations<>("spymemcached", operationTimeout, client);
    NodeLocator locator = builder.client.getConnection().getLocator();
    this.nodes = client.failureMode != FailureMode.Cancel ? Optional.empty()
        : Optional.of(NodeSnapshot.of(List.copyOf(locator.getAll()), locator::getPrimary,
            node -> operations.on(node, client), this));
  }

  @Override
  protected MemcachedOperations<?> operations() {
    return operations;
  }

  /**
   * Creates a store with the default settings: a 700 ms operation timeout and memcached's 250
   * byte key limit.
   *
   * @param client a started client on the text protocol; not owned by the store
   * @return a new store
   * @throws NullPointerException if {@code client} is {@code null}
   * @throws IllegalArgumentException if the client uses the binary protocol
   */
  public static SpymemcachedStore of(MemcachedClient client) {
    return builder(client).build();
  }

  /**
   * Starts configuring a store.
   *
   * @param client a started client on the text protocol; not owned by the store
   * @return a new builder with the default settings
   * @throws NullPointerException if {@code client} is {@code null}
   * @throws IllegalArgumentException if the client uses the binary protocol
   */
  public static Builder builder(MemcachedClient client) {
    requireNonNull(client, "client");
    for (MemcachedNode node : client.getConnection().getLocator().getAll()) {
      if (node instanceof BinaryMemcachedNodeImpl) {
        throw new IllegalArgumentException("SpymemcachedStore needs a client on the text"
            + " protocol (ConnectionFactoryBuilder.Protocol.TEXT), but this client uses the"
            + " binary protocol");
      }
    }
    return new Builder(client);
  }

  /**
   * A connection factory builder with the settings this store recommends (see the {@linkplain
   * SpymemcachedStore class documentation}): the text protocol, {@code FailureMode.Cancel}, the
   * store's default 700 ms operation timeout, no blocking on a full queue, reconnect attempts at
   * most a second apart (the client's default backs off to 30 s, leaving a returned server
   * unused that long), and ketama consistent hashing. Adjust it further as needed, e.g. {@code
   * setOpTimeout}, keeping it equal to the store's {@link Builder#operationTimeout}.
   *
   * @return a new builder; each call returns an independent one
   */
  public static ConnectionFactoryBuilder recommendedSettings() {
    return new ConnectionFactoryBuilder()
        .setProtocol(ConnectionFactoryBuilder.Protocol.TEXT)
        .setFailureMode(FailureMode.Cancel)
        .setOpTimeout(DEFAULT_OPERATION_TIMEOUT.toMillis())
        .setOpQueueMaxBlockTime(0)
        .setMaxReconnectDelay(1)
        .setLocatorType(ConnectionFactoryBuilder.Locator.CONSISTENT)
        .setHashAlg(DefaultHashAlgorithm.KETAMA_HASH);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Offered only when the client's failure mode is {@code FailureMode.Cancel} (the {@linkplain
   * #recommendedSettings recommended settings}): then a dead server's operations fail at once and
   * the near cache keeps a log per server. With {@code Redistribute} or {@code Retry}, empty. A
   * spymemcached client's node list never changes: the same snapshot every time.
   *
   * @return {@inheritDoc}
   */
  @Override
  public Optional<StoreNodes> nodes() {
    return nodes;
  }

  /**
   * {@inheritDoc} Here: a spymemcached client's I/O thread (its {@link
   * MemcachedConnection}, of any client), or a deadline thread of any timeout.
   *
   * @param thread {@inheritDoc}
   * @return {@inheritDoc}
   */
  @Override
  public boolean isCompletionThread(Thread thread) {
    return thread instanceof MemcachedConnection || OperationDeadlines.isDeadlineThread(thread);
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
   * How long each operation may take before its future fails.
   *
   * @return a positive duration; 700 ms unless configured
   */
  public Duration operationTimeout() {
    return operationTimeout;
  }

  /**
   * Describes the configuration, for logs.
   *
   * @return for example {@code SpymemcachedStore[operationTimeout=700 ms, maxKeyLength=250]}
   */
  @Override
  public String toString() {
    return "SpymemcachedStore[operationTimeout=" + AdapterSettings.describe(operationTimeout)
        + ", maxKeyLength=" + maxKeyLength + "]";
  }

  /** What spymemcached does its own way; it is also the store's one connection. */
  private static final class Spymemcached
      implements MemcachedOperations.Client<Spymemcached>, MemcachedOperations.Connection {

    private final MemcachedConnection connection;
    private final FailureMode failureMode;
    private final int maxKeyLength;

    Spymemcached(MemcachedConnection connection, int maxKeyLength) {
      this.connection = connection;
      this.failureMode = failureModeOf(connection);
      this.maxKeyLength = maxKeyLength;
    }

    @Override
    public Spymemcached connection() {
      return this;
    }

    @Override
    public boolean isRunning() {
      return !connection.isShutDown();
    }

    @Override
    public void enqueue(String key, Operation operation) {
      connection.enqueueOperation(key, operation);
    }

    @Override
    public void enqueue(MemcachedNode node, Operation operation) {
      connection.addOperations(Map.of(node, operation));
    }

    @Override
    public String keyProblem(String key) {
      return StoreKeys.problem(key, maxKeyLength);
    }

    /** The server a key's operation goes to, as the client's failure mode picks it. */
    @Override
    public MemcachedNode nodeFor(Spymemcached self, String key) {
      NodeLocator locator = connection.getLocator();
      MemcachedNode primary = locator.getPrimary(key);
      if (primary.isActive() || failureMode == FailureMode.Retry) {
        return primary;
      }
      if (failureMode == FailureMode.Redistribute) {
        Iterator<MemcachedNode> sequence = locator.getSequence(key);
        while (sequence.hasNext()) {
          MemcachedNode next = sequence.next();
          if (next.isActive()) {
            return next;
          }
        }
      }
      throw new IllegalStateException("the server of a key is not connected");
    }

    @Override
    public String unreachable(MemcachedNode node) {
      return node.isActive() ? null
          : "the server " + node.getSocketAddress() + " is not connected";
    }

    @Override
    public Operation bulkGets(MemcachedNode node, List<String> keys,
        GetsOperation.Callback callback) {
      return new MultiGets(keys, callback);
    }

    @Override
    public Operation store(StoreType type, String key, CachedData data, int exptime,
        OperationCallback callback) {
      return OPERATIONS.store(type, key, data.getFlags(), exptime, data.getData(),
          new Answer(callback));
    }

    @Override
    public Operation cas(String key, long casToken, CachedData data, int exptime,
        OperationCallback callback) {
      return OPERATIONS.cas(StoreType.set, key, casToken, data.getFlags(), exptime,
          data.getData(), new Answer(callback));
    }

    @Override
    public Operation delete(String key, OperationCallback callback) {
      return OPERATIONS.delete(key, new Answer(callback));
    }

    @Override
    public Operation incr(String key, int delta, OperationCallback callback) {
      return OPERATIONS.mutate(Mutator.incr, key, delta, -1L, 0, callback);
    }

    @Override
    public void cancel(Operation operation, boolean timedOut) {
      operation.cancel();
    }

    @Override
    public String cancelCause(Operation operation) {
      return "cancelled by the client (its connection to the server is down or was lost)";
    }

    @Override
    public boolean timedOutInClient(Operation operation) {
      return operation.isTimedOut();
    }

    /**
     * The client's failure mode, which it keeps in a protected field of its connection; {@code
     * Cancel} (fail at once) if it cannot be read.
     */
    private static FailureMode failureModeOf(MemcachedConnection connection) {
      try {
        java.lang.reflect.Field field =
            MemcachedConnection.class.getDeclaredField("failureMode");
        field.setAccessible(true);
        FailureMode mode = (FailureMode) field.get(connection);
        return mode == null ? FailureMode.Cancel : mode;
      } catch (ReflectiveOperationException | RuntimeException e) {
        return FailureMode.Cancel;
      }
    }
  }

  /**
   * The callback spymemcached's store and delete operations take: it reports the answer to the
   * shared operation and ignores the CAS token, which the text protocol never sends with these.
   */
  private record Answer(OperationCallback target)
      implements StoreOperation.Callback, DeleteOperation.Callback {

    @Override
    public void gotData(String key, long cas) {}

    @Override
    public void gotData(long cas) {}

    @Override
    public void receivedStatus(OperationStatus status) {
      target.receivedStatus(status);
    }

    @Override
    public void complete() {
      target.complete();
    }
  }

  /** A multi-key {@code gets}: spymemcached's own get operation, with the {@code gets} command. */
  private static final class MultiGets extends BaseGetOpImpl implements GetsOperation {
    MultiGets(Collection<String> keys, GetsOperation.Callback callback) {
      super("gets", callback, new LinkedHashSet<>(keys));
    }
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
     * How long each operation may take before its future fails with a {@link
     * io.sustainablecache.spi.StoreException} and the client's operation is cancelled.
     * Independent of the client's own {@code opTimeout}, which should be set to the same value.
     *
     * @param timeout from 1 ms to 10 minutes; 700 ms by default
     * @return this builder
     * @throws NullPointerException if {@code timeout} is {@code null}
     * @throws IllegalArgumentException if {@code timeout} is out of range
     */
    public Builder operationTimeout(Duration timeout) {
      this.operationTimeout = AdapterSettings.checkOperationTimeout(timeout);
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
      this.maxKeyLength = AdapterSettings.checkMaxKeyLength(bytes, MEMCACHED_MAX_KEY_LENGTH);
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
