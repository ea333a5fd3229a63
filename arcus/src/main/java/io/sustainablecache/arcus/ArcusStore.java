package io.sustainablecache.arcus;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.memcached.AdapterSettings;
import io.sustainablecache.memcached.MemcachedOperations;
import io.sustainablecache.memcached.MemcachedStore;
import io.sustainablecache.memcached.NodeSnapshot;
import io.sustainablecache.memcached.OperationDeadlines;
import io.sustainablecache.memcached.OperationName;
import io.sustainablecache.memcached.StoreFailures;
import io.sustainablecache.memcached.StoreKeys;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreNodes;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ArcusClientPool;
import net.spy.memcached.CachedData;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.FailureMode;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.ops.GetsOperation;
import net.spy.memcached.ops.Mutator;
import net.spy.memcached.ops.Operation;
import net.spy.memcached.ops.OperationCallback;
import net.spy.memcached.ops.OperationStatus;
import net.spy.memcached.ops.StoreType;
import net.spy.memcached.protocol.ascii.AsciiOperationFactory;

/**
 * A {@link CacheStore} over the <a href="https://github.com/naver/arcus-java-client">ARCUS Java
 * client</a> 1.13: an {@link ArcusClient} or an {@link ArcusClientPool}, connected to an ARCUS
 * cluster through ZooKeeper ({@code ArcusClient.createArcusClient}, {@code createArcusClientPool})
 * or directly to memcached-protocol servers ({@code new ArcusClient(connectionFactory,
 * addresses)}).
 *
 * <pre>{@code
 * ArcusClient client = ArcusClient.createArcusClient(zkAddresses, serviceCode,
 *     new ConnectionFactoryBuilder()
 *         .setFailureMode(FailureMode.Cancel)
 *         .setOpTimeout(700)
 *         .setOpQueueMaxBlockTime(0));
 * CacheStore store = ArcusStore.builder(client)
 *     .operationTimeout(Duration.ofMillis(700))
 *     .maxKeyLength(4000)             // ARCUS servers accept 4000-byte keys
 *     .build();
 * ...
 * client.shutdown();                  // the store does not own the client
 * }</pre>
 *
 * <h2>Asynchronous operations without blocking</h2>
 * The client's own futures ({@code OperationFuture}, {@code GetFuture}, {@code BulkFuture}) have
 * no completion listeners in 1.13: the only way to learn their outcome is a thread that blocks
 * in {@code get}. This store therefore does what the client's {@code asyncGets}, {@code add},
 * {@code set}, {@code asyncCAS}, {@code delete}, {@code asyncGetsBulk} and {@code flush(prefix)}
 * do internally, with its own completion callbacks: it builds the client's ASCII operations with
 * {@link AsciiOperationFactory} and queues them on the client's connection ({@code
 * MemcachedConnection.addOperation}, {@code getPrimaryNode}, {@code broadcastOperation}), after
 * the checks the client makes first (its key validation, including the ARCUS prefix rule, and
 * whether it is shut down). The caller's thread never waits for the network.
 *
 * <p>Each returned future completes
 * <ul>
 *   <li>on the <b>client's I/O thread</b>, when the server answers or the connection is lost;
 *   </li>
 *   <li>on the <b>calling thread</b>, before the method returns, when the operation fails before
 *       it is sent: an invalid key, a client that is shut down, a full queue, or, under {@code
 *       FailureMode.Cancel}, a server that is down;</li>
 *   <li>on the <b>deadline thread</b> shared by the stores with the same timeout (named {@code
 *       sustainable-cache-deadlines-<timeout>}) when the {@linkplain Builder#operationTimeout
 *       operation timeout} passes first: the future fails with {@code "ARCUS <op> timed out after
 *       <n> ms"}, the client's operation is cancelled (it is dropped if not yet sent) and counted
 *       as a timeout by the client, which re-opens a connection after {@code
 *       setTimeoutExceptionThreshold} consecutive ones, exactly as if its own future had timed
 *       out.</li>
 * </ul>
 * Dependent actions registered without an executor run on that thread: keep them short and
 * non-blocking, above all on the I/O thread, which serves every operation of the client.
 * Cancelling a returned future cancels the client's operation, which is then dropped if not yet
 * sent; a cancelled operation that was sent still has its answer read, so the connection stays
 * in step.
 *
 * <p>What this relies on, besides the operations' public API: that {@code
 * MemcachedClient.addOp} is validation, a shutdown check and {@code addOperation}; that the
 * client's own key delimiter is its private field {@code MemcachedClient.delimiter} (read once,
 * by reflection, when the store is built; {@code ':'} if it cannot be read); and that an
 * operation calls {@code complete()} on its callback exactly when it completes or is cancelled.
 * These hold for 1.13.x; another client version needs this class re-checked against its source.
 *
 * <h2>Failures</h2>
 * Every failure completes the future with a {@link io.sustainablecache.spi.StoreException} whose
 * message names the operation, never the key or the value; the methods themselves throw nothing
 * but {@link NullPointerException} for {@code null} arguments. Failures include: a key that is
 * empty, longer than {@link #maxKeyLength()}, contains a space, line break or NUL, or has an
 * invalid ARCUS prefix (see below); a client that is shut down (its I/O thread has ended; while
 * it stops, operations fail as for a server that is down); a node that is inactive under {@code
 * FailureMode.Cancel}; a server error such as {@code SERVER_ERROR object too large for cache};
 * an unexpected answer; and the timeout.
 *
 * <p>Note that the client answers a server error by dropping and re-opening that server's
 * connection (failing the other operations in flight on it), so oversized values are worth
 * rejecting before they reach the store. The client also blocks the calling thread when a node's
 * queue is full, for up to {@code setOpQueueMaxBlockTime} (10 s by default): set it to 0 so
 * that a full queue fails the operation at once instead.
 *
 * <h2>Values</h2>
 * Values are stored raw: the client's transcoders (compression, Java serialization) are never
 * used. Items are written with flags {@code 0x800}, the "plain byte array" marker of the client's
 * own transcoder, and read back as their stored bytes whatever their flags. The store copies a
 * value before queueing it, so the caller's array is neither retained nor read once the method
 * has returned; every array it returns is new and belongs to the caller. A value larger than
 * the server's item size (1 MiB by default) is refused by the server: the future fails with a
 * {@link io.sustainablecache.spi.StoreException} for {@code add}, {@code set} and {@code cas}
 * alike. The client's front cache, if enabled, is bypassed: {@code gets} always asks the server
 * ({@code delete} drops the key from it, as the client's own {@code delete} does).
 *
 * <h2>Keys</h2>
 * {@link #maxKeyLength()} is 250 bytes by default because a plain memcached server refuses longer
 * keys, while an ARCUS server accepts up to 4000 (the client's own limit); raise it with {@link
 * Builder#maxKeyLength} when every server is an ARCUS server. Any byte but space, line feed,
 * carriage return and NUL may appear in a key, including DEL ({@code 0x7F}). The ARCUS client
 * treats the part of a key before its first delimiter ({@code ':'} unless set with {@link
 * net.spy.memcached.ConnectionFactoryBuilder#setDelimiter}) as an ARCUS prefix, which must
 * consist of {@code [A-Za-z0-9_+.-]} and must not start with {@code '-'}; other keys with a
 * delimiter fail.
 *
 * <h2>Bulk reads and prefix flushes</h2>
 * {@link #getsAll} groups the keys by the node that owns them and sends one {@code gets} (or, to
 * ARCUS servers that support it, {@code mgets}) per node and per 200 keys, as {@code
 * asyncGetsBulk} does; unlike {@code asyncGetsBulk}, it fails a key at once when its node is
 * down instead of asking another node (which does not have the key), whatever the failure mode.
 * A failed key or part fails only its own keys: the read then fails with a {@link
 * io.sustainablecache.spi.PartialReadException} that carries the other keys' items, and the
 * cache loads only the failed keys. {@link #flushPrefix} sends ARCUS's {@code flush_prefix} to
 * every node, as {@code flush(prefix)} does, when the servers are ARCUS servers ({@link
 * Builder#prefixFlush}: by default, when the client was created through ZooKeeper); otherwise
 * it fails at once with {@link UnsupportedOperationException} and sends nothing, because a
 * plain memcached server answers the unknown command with {@code ERROR} and the client then
 * re-opens the connection, failing every other operation in flight on it.
 *
 * <h2>Configuring the client</h2>
 * Build the client's connection factory with {@link net.spy.memcached.ConnectionFactoryBuilder};
 * its defaults suit this library but for the queue block time: {@code FailureMode.Cancel}
 * (operations for a failed node fail at once, which the cache treats as a miss or a skipped
 * write, instead of queueing behind the reconnect), ARCUS consistent (ketama) hashing (a node
 * joining or leaving moves only its share of the keys), the ASCII protocol (required: the
 * builder rejects a binary-protocol client), and a 700 ms operation timeout. The plain {@link
 * net.spy.memcached.DefaultConnectionFactory} instead uses {@code FailureMode.Redistribute} and
 * modulo hashing: a failed node's keys are served by another node, and any change in the node
 * list remaps most keys, which empties the cache for practical purposes and causes the very
 * stampede this library exists to prevent. Keep the factory's operation timeout ({@code
 * setOpTimeout}, milliseconds) equal to this store's operation timeout.
 *
 * <p>The ARCUS client 1.13.2 depends on ZooKeeper 3.4.14, whose client cannot connect on Java 14
 * and later; this module replaces it with ZooKeeper 3.5.9, the version later ARCUS clients use.
 * The ARCUS client logs to standard error through its own facade unless the system property
 * {@code net.spy.log.LoggerImpl} is {@code net.spy.memcached.compat.log.SLF4JLogger}.
 *
 * <h2>Lifecycle and thread-safety</h2>
 * The store is immutable and thread-safe. It does <b>not</b> own the client: the caller shuts the
 * client down ({@code shutdown()}, which for a client created through ZooKeeper also closes its
 * ZooKeeper session) after the last use of the store. Operations started after that fail.
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
public final class ArcusStore extends MemcachedStore {

  /** The client's default operation timeout, {@code DefaultConnectionFactory}'s 700 ms. */
  static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofMillis(700);

  /** memcached's key length limit, the default. */
  static final int DEFAULT_MAX_KEY_LENGTH = 250;

  /** ARCUS's key length limit, the largest accepted value. */
  static final int ARCUS_MAX_KEY_LENGTH = 4000;

  private static final String CLIENT = "ARCUS";
  static final OperationName FLUSH_PREFIX = OperationName.of(CLIENT, "flushPrefix");

  /** The client's ASCII operation factory: stateless, shared. */
  private static final AsciiOperationFactory OPERATIONS = new AsciiOperationFactory();

  private final String clientDescription;
  private final char delimiter;
  private final Duration operationTimeout;
  private final int maxKeyLength;
  private final boolean prefixFlush;
  private final MemcachedOperations<ClientAccess> operations;
  /** The client's node list {@link #nodes()} offers; {@code null}: none offered. */
  private final ClientNodes nodes;

  private ArcusStore(Builder builder) {
    this.clientDescription = builder.clientDescription;
    this.delimiter = (char) (builder.delimiter & 0xff);
    this.operationTimeout = builder.operationTimeout;
    this.maxKeyLength = builder.maxKeyLength;
    this.prefixFlush = builder.prefixFlush;
    this.operations = new MemcachedOperations<>(CLIENT, operationTimeout,
        new Arcus(builder.clients));
    ClientAccess.Real nodesOf = builder.nodesOf;
    this.nodes = nodesOf != null
        && ClientAccess.Real.failureModeOf(nodesOf.client) == FailureMode.Cancel
        ? new ClientNodes(nodesOf::nodes, list -> NodeSnapshot.of(list, nodesOf::primaryNode,
            node -> operations.on(node, nodesOf), this), System::nanoTime)
        : null;
  }

  @Override
  protected MemcachedOperations<?> operations() {
    return operations;
  }

  /**
   * A connection factory builder with the settings this store recommends (see the {@linkplain
   * ArcusStore class documentation}): {@code FailureMode.Cancel}, the store's default 700 ms
   * operation timeout, no blocking on a full queue, and reconnect attempts at most a second
   * apart. Pass it to {@code new ArcusClient(...)} or {@code ArcusClient.createArcusClient(...)};
   * adjust it further as needed, keeping {@code setOpTimeout} equal to the store's {@link
   * Builder#operationTimeout}.
   *
   * @return a new builder; each call returns an independent one
   */
  public static ConnectionFactoryBuilder recommendedSettings() {
    return new ConnectionFactoryBuilder()
        .setFailureMode(FailureMode.Cancel)
        .setOpTimeout(DEFAULT_OPERATION_TIMEOUT.toMillis())
        .setOpQueueMaxBlockTime(0)
        .setMaxReconnectDelay(1);
  }

  /**
   * Creates a store over a single client with the defaults: a 700 ms operation timeout and
   * 250-byte keys.
   *
   * @param client a started client; the caller keeps ownership and shuts it down
   * @return a new store
   * @throws NullPointerException if {@code client} is {@code null}
   * @throws IllegalArgumentException if the client uses the binary protocol
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
   * @throws IllegalArgumentException if the pool's clients use the binary protocol
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
   * @throws IllegalArgumentException if the client uses the binary protocol
   */
  public static Builder builder(ArcusClient client) {
    requireNonNull(client, "client");
    ClientAccess.Real.requireAsciiProtocol(client);
    ClientAccess.Real access = new ClientAccess.Real(client);
    Builder builder = new Builder(access, ClientAccess.Real.delimiterOf(client),
        "ArcusClient", ClientAccess.Real.managedByZooKeeper(client));
    builder.nodesOf = access;
    return builder;
  }

  /**
   * Starts configuring a store over a client pool.
   *
   * @param pool a started pool; the caller keeps ownership and shuts it down
   * @return a builder with the defaults
   * @throws NullPointerException if {@code pool} is {@code null}
   * @throws IllegalArgumentException if the pool's clients use the binary protocol
   */
  public static Builder builder(ArcusClientPool pool) {
    requireNonNull(pool, "pool");
    ArcusClient[] members = pool.getAllClients();
    byte delimiter = net.spy.memcached.DefaultConnectionFactory.DEFAULT_DELIMITER;
    boolean arcusServers = false;
    if (members != null && members.length > 0) {
      for (ArcusClient member : members) {
        ClientAccess.Real.requireAsciiProtocol(member);
      }
      delimiter = ClientAccess.Real.delimiterOf(members[0]);
      arcusServers = ClientAccess.Real.managedByZooKeeper(members[0]);
    }
    ClientAccess.Pool access = new ClientAccess.Pool(pool);
    Builder builder = new Builder(access, delimiter, "ArcusClientPool", arcusServers);
    builder.nodesOf = access.first();
    return builder;
  }

  /** A builder over scripted clients, for the unit tests. */
  static Builder builder(Supplier<? extends ClientAccess> clients, byte delimiter,
      String description) {
    return new Builder(clients, delimiter, description, true);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Sends ARCUS's {@code flush_prefix} to every node of the client, as the client's {@code
   * flush(prefix)} does; a node answering {@code NOT_FOUND} (no item has the prefix) counts as
   * done. Without ARCUS servers ({@link Builder#prefixFlush}) the future fails at once with
   * {@link UnsupportedOperationException} and nothing is sent. The future fails if the prefix is
   * not a valid ARCUS prefix ({@code [A-Za-z0-9_+.-]}, not starting with {@code '-'}), if a node
   * is down, or if a node answers anything else ({@code ERROR}).
   */
  @Override
  public CompletableFuture<Void> flushPrefix(String prefix) {
    requireNonNull(prefix, "prefix");
    String problem = prefixProblem(prefix, prefix.length());
    if (problem == null && prefix.length() > maxKeyLength) {
      problem = "the prefix is longer than " + maxKeyLength + " bytes";
    }
    if (problem != null) {
      return CompletableFuture.failedFuture(StoreFailures.failed(FLUSH_PREFIX, problem, null));
    }
    if (!prefixFlush) {
      return CompletableFuture.failedFuture(new UnsupportedOperationException("flush_prefix is"
          + " sent only to ARCUS servers (ArcusStore.Builder.prefixFlush): a plain memcached"
          + " server does not know it, and its ERROR answer makes the client re-open the"
          + " connection, failing other operations"));
    }
    FlushPrefix pending = new FlushPrefix(operations);
    ClientAccess client = operations.connection(pending);
    if (client != null) {
      pending.send(() -> client.broadcast((node, latch) -> pending.newPart(node, prefix)));
    }
    return pending;
  }

  /**
   * {@inheritDoc} Here: an ARCUS client's I/O thread (the {@link MemcachedClient} thread
   * itself, of any client), or a deadline thread of any timeout.
   *
   * @param thread {@inheritDoc}
   * @return {@inheritDoc}
   */
  @Override
  public boolean isCompletionThread(Thread thread) {
    return thread instanceof MemcachedClient || OperationDeadlines.isDeadlineThread(thread);
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

  /**
   * How long each operation may take before its future fails.
   *
   * @return a positive duration; 700 ms unless configured
   */
  public Duration operationTimeout() {
    return operationTimeout;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Offered only when the client's failure mode is {@code FailureMode.Cancel} (the {@linkplain
   * #recommendedSettings recommended settings}): then a dead node's operations fail at once and
   * the near cache keeps a log per node. The snapshot follows the client's node list (ZooKeeper's
   * cache list): a new one after every change, at most 100 ms after the client took it (the
   * client's list is read at most every 100 ms: its only public view copies the hash ring). Over a pool, the nodes of its first client, whose
   * connection the per-node stores use. With {@code Redistribute}, empty.
   *
   * @return {@inheritDoc}
   */
  @Override
  public Optional<StoreNodes> nodes() {
    return nodes == null ? Optional.empty() : nodes.current();
  }

  /**
   * Describes the configuration, for logs.
   *
   * @return for example {@code ArcusStore[client=ArcusClient, operationTimeout=700 ms,
   *     maxKeyLength=250]}
   */
  @Override
  public String toString() {
    return "ArcusStore[client=" + clientDescription + ", operationTimeout="
        + AdapterSettings.describe(operationTimeout) + ", maxKeyLength=" + maxKeyLength + "]";
  }

  /** The client's key validation ({@code MemcachedClient.validateKey}) with this store's limit. */
  String keyProblem(String key) {
    String problem = StoreKeys.problem(key, maxKeyLength);
    if (problem != null) {
      return problem;
    }
    int end = key.indexOf(delimiter);
    // The client accepts an empty prefix in a key (":key"), so the store does too.
    return end <= 0 ? null : prefixProblem(key, end);
  }

  /** The ARCUS prefix rule on {@code text.substring(0, end)}, or {@code null} if it holds. */
  private String prefixProblem(String text, int end) {
    if (end == 0) {
      return "the ARCUS prefix is empty";
    }
    if (text.charAt(0) == '-') {
      return "the ARCUS prefix starts with '-'";
    }
    for (int i = 0; i < end; i++) {
      char c = text.charAt(i);
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || c == '_' || c == '-' || c == '+' || c == '.')) {
        return "the ARCUS prefix (before '" + delimiter + "') may contain only [A-Za-z0-9_+.-]";
      }
    }
    return null;
  }

  /** What the ARCUS client does its own way. */
  private final class Arcus implements MemcachedOperations.Client<ClientAccess> {

    private final Supplier<? extends ClientAccess> clients;

    Arcus(Supplier<? extends ClientAccess> clients) {
      this.clients = clients;
    }

    @Override
    public ClientAccess connection() {
      return clients.get();
    }

    @Override
    public String keyProblem(String key) {
      return ArcusStore.this.keyProblem(key);
    }

    @Override
    public MemcachedNode nodeFor(ClientAccess client, String key) {
      MemcachedNode node = client.primaryNode(key);
      if (node == null) {
        throw new IllegalStateException("the client has no server for a key");
      }
      if (!node.isActive() && !node.isFirstConnecting()) {
        throw new IllegalStateException(
            "the server of a key is down (" + node.getSocketAddress() + ")");
      }
      return node;
    }

    @Override
    public String unreachable(MemcachedNode node) {
      return node.isActive() || node.isFirstConnecting() ? null
          : "the server is down (" + node.getSocketAddress() + ")";
    }

    @Override
    public Operation bulkGets(MemcachedNode node, List<String> keys,
        GetsOperation.Callback callback) {
      return node.enabledMGetsOp()
          ? OPERATIONS.mgets(keys, callback)
          : OPERATIONS.gets(keys, callback);
    }

    @Override
    public Operation store(StoreType type, String key, CachedData data, int exptime,
        OperationCallback callback) {
      return OPERATIONS.store(type, key, data.getFlags(), exptime, data.getData(), callback);
    }

    @Override
    public Operation cas(String key, long casToken, CachedData data, int exptime,
        OperationCallback callback) {
      return OPERATIONS.cas(StoreType.set, key, casToken, data.getFlags(), exptime,
          data.getData(), callback);
    }

    @Override
    public Operation delete(String key, OperationCallback callback) {
      return OPERATIONS.delete(key, callback);
    }

    @Override
    public Operation incr(String key, int delta, OperationCallback callback) {
      return OPERATIONS.mutate(Mutator.incr, key, delta, -1L, 0, callback);
    }

    @Override
    public void beforeDelete(ClientAccess client, String key) {
      client.forgetLocally(key);
    }

    @Override
    public void cancel(Operation operation, boolean timedOut) {
      operation.cancel(timedOut ? "timed out" : "by application");
    }

    @Override
    public String cancelCause(Operation operation) {
      String cause = operation.getCancelCause();
      return cause == null ? "cancelled by the client" : cause;
    }

    @Override
    public boolean timedOutInClient(Operation operation) {
      return false; // the ARCUS client cancels such operations, with the cause "timed out"
    }
  }

  /** {@code flush_prefix} on every node: one part per node. */
  private static final class FlushPrefix extends MemcachedOperations<ClientAccess>.MultiPart<Void> {

    FlushPrefix(MemcachedOperations<ClientAccess> operations) {
      operations.super(FLUSH_PREFIX);
    }

    /** Creates the operation for one node; called by the client while it broadcasts. */
    Operation newPart(MemcachedNode node, String prefix) {
      Part part = new Part() {
        @Override
        protected boolean accepts(OperationStatus answer) {
          return answer.isSuccess() || "NOT_FOUND".equals(answer.getMessage());
        }
      };
      part.operation = OPERATIONS.flush(prefix, -1, false, part);
      add(part);
      if (!node.isActive() && !node.isFirstConnecting()) {
        part.operation.cancel("inactive node");
      }
      return part.operation;
    }

    @Override
    protected Void result() {
      return null;
    }
  }

  /**
   * Configures an {@link ArcusStore}. Not thread-safe; {@link #build()} may be called more than
   * once, each time creating an independent store over the same client.
   */
  public static final class Builder {

    private final Supplier<? extends ClientAccess> clients;
    private final byte delimiter;
    private final String clientDescription;
    private Duration operationTimeout = DEFAULT_OPERATION_TIMEOUT;
    private int maxKeyLength = DEFAULT_MAX_KEY_LENGTH;
    private boolean prefixFlush;
    /** The client whose nodes the store may offer ({@link ArcusStore#nodes()}), or none. */
    private ClientAccess.Real nodesOf;

    private Builder(Supplier<? extends ClientAccess> clients, byte delimiter,
        String clientDescription, boolean prefixFlush) {
      this.clients = clients;
      this.delimiter = delimiter;
      this.clientDescription = clientDescription;
      this.prefixFlush = prefixFlush;
    }

    /**
     * Says whether the servers are ARCUS servers, which know {@code flush_prefix}: only then
     * does {@link ArcusStore#flushPrefix} send it (and {@code invalidateAll} of a cache without a
     * generation work: one with {@code invalidateAllBound} zero; by default {@code invalidateAll}
     * is a new generation and sends no {@code flush_prefix}). A plain memcached server answers
     * the unknown command with {@code ERROR}, on which the client closes and re-opens the
     * connection, failing every other operation in flight on it; so without ARCUS servers {@code
     * flushPrefix} fails at once with {@link UnsupportedOperationException} and sends nothing.
     *
     * <p>Defaults to {@code true} for a client (or pool) created through ZooKeeper ({@code
     * ArcusClient.createArcusClient}), whose servers are ARCUS servers, and to {@code false} for
     * one created with server addresses; set it when those addresses are ARCUS servers.
     *
     * @param supported whether every server knows {@code flush_prefix}
     * @return this builder
     */
    public Builder prefixFlush(boolean supported) {
      this.prefixFlush = supported;
      return this;
    }

    /**
     * Sets how long each operation may take before its future fails with a {@link
     * io.sustainablecache.spi.StoreException} and the client's operation is cancelled. Defaults
     * to 700 ms, the ARCUS client's own default operation timeout; keep the two equal (see the
     * {@linkplain ArcusStore class documentation}).
     *
     * @param timeout from 1 ms to 10 minutes
     * @return this builder
     * @throws NullPointerException if {@code timeout} is {@code null}
     * @throws IllegalArgumentException if {@code timeout} is out of range
     */
    public Builder operationTimeout(Duration timeout) {
      this.operationTimeout = AdapterSettings.checkOperationTimeout(timeout);
      return this;
    }

    /**
     * Sets the longest key, in bytes, the store accepts and reports through {@link
     * ArcusStore#maxKeyLength()}. Defaults to 250, the limit of a plain memcached server; an
     * ARCUS server accepts up to 4000, so raise it only when every server is an ARCUS server.
     *
     * @param bytes from 1 to 4000 (the ARCUS client's limit)
     * @return this builder
     * @throws IllegalArgumentException if {@code bytes} is outside 1 to 4000
     */
    public Builder maxKeyLength(int bytes) {
      this.maxKeyLength = AdapterSettings.checkMaxKeyLength(bytes, ARCUS_MAX_KEY_LENGTH);
      return this;
    }

    /**
     * Creates the store.
     *
     * @return a new store over this builder's client
     */
    public ArcusStore build() {
      return new ArcusStore(this);
    }
  }
}
