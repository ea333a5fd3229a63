package io.sustainablecache.memcached;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.PartialReadException;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import net.spy.memcached.CachedData;
import net.spy.memcached.MemcachedConnection;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.ops.CASOperationStatus;
import net.spy.memcached.ops.GetsOperation;
import net.spy.memcached.ops.Operation;
import net.spy.memcached.ops.OperationCallback;
import net.spy.memcached.ops.OperationException;
import net.spy.memcached.ops.OperationStatus;
import net.spy.memcached.ops.StatusCode;
import net.spy.memcached.ops.StoreType;
import net.spy.memcached.protocol.ascii.AsciiOperationFactory;

/**
 * The memcached text-protocol operations of a {@link io.sustainablecache.spi.CacheStore} ({@code
 * gets}, a bulk {@code gets}, {@code add}, {@code set}, {@code cas}, {@code delete}), written
 * once and compiled into each store adapter against its own client: arcus-java-client and
 * spymemcached both ship {@code net.spy.memcached.*} and never share a classpath, so this source
 * is compiled twice instead of linked once. What differs between the two clients is the
 * adapter's {@link Client}: the callback types of its operation factory, how it cancels, routes
 * and queues, and its key rules.
 *
 * <p>Each returned future is the client's callback and the deadline queue's entry at once (a
 * {@link PendingOperation}); it completes within the operation timeout whatever the client does.
 * Interrupted callers get their answer and keep their interrupt flag: the client refuses to
 * queue for a thread whose flag is set, so the flag is cleared while queueing and set again
 * (inline: a store operation allocates nothing for it).
 *
 * <p>Exptimes are sent as given, except a negative one, which is sent as an absolute time in
 * 1970 ({@link Exptimes}): every memcached and ARCUS server expires that at once, while ARCUS
 * reads {@code -1} as "sticky" (never expires).
 *
 * <p>Internal to the adapters; not an API. Thread-safe.
 *
 * @param <C> the adapter's connection type
 */
public final class MemcachedOperations<C extends MemcachedOperations.Connection> {

  /** The most keys one request of a bulk read names, as ARCUS's {@code asyncGetsBulk}. */
  public static final int BULK_CHUNK = 200;

  /** The client's text-protocol operation factory for {@code gets}: stateless, shared. */
  private static final AsciiOperationFactory OPERATIONS = new AsciiOperationFactory();

  private final Client<C> client;
  private final OperationDeadlines deadlines;
  private final OperationName getsName;
  private final OperationName getsAllName;
  private final OperationName addName;
  private final OperationName setName;
  private final OperationName casName;
  private final OperationName deleteName;
  private final OperationName incrName;
  /** The node every operation goes to, or {@code null}: each key's own node. */
  private final MemcachedNode pinnedNode;
  /** The connection of {@link #pinnedNode}; {@code null} when not pinned. */
  private final C pinnedConnection;

  /**
   * Creates the operations of one store.
   *
   * @param clientName names the client in failure messages, e.g. {@code "ARCUS"}
   * @param operationTimeout how long each operation may take before its future fails
   * @param client what the adapter's client does its own way
   */
  public MemcachedOperations(String clientName, Duration operationTimeout, Client<C> client) {
    this.client = requireNonNull(client, "client");
    this.deadlines = OperationDeadlines.forTimeout(operationTimeout);
    this.getsName = OperationName.of(clientName, "gets");
    this.getsAllName = OperationName.of(clientName, "getsAll");
    this.addName = OperationName.of(clientName, "add");
    this.setName = OperationName.of(clientName, "set");
    this.casName = OperationName.of(clientName, "cas");
    this.deleteName = OperationName.of(clientName, "delete");
    this.incrName = OperationName.of(clientName, "incr");
    this.pinnedNode = null;
    this.pinnedConnection = null;
  }

  private MemcachedOperations(MemcachedOperations<C> all, MemcachedNode node, C connection) {
    this.client = all.client;
    this.deadlines = all.deadlines;
    this.getsName = all.getsName;
    this.getsAllName = all.getsAllName;
    this.addName = all.addName;
    this.setName = all.setName;
    this.casName = all.casName;
    this.deleteName = all.deleteName;
    this.incrName = all.incrName;
    this.pinnedNode = node;
    this.pinnedConnection = connection;
  }

  /**
   * The same operations sent to one node whatever their keys hash to (for the near cache's log
   * per node, {@link io.sustainablecache.spi.StoreNodes#on}): they fail at once while {@link
   * Client#unreachable} names a problem with the node.
   *
   * @param node a node of {@code connection}'s client
   * @param connection the connection that owns {@code node}, used for every operation
   * @return operations pinned to the node, sharing this store's deadlines
   */
  public MemcachedOperations<C> on(MemcachedNode node, C connection) {
    return new MemcachedOperations<>(this, requireNonNull(node, "node"),
        requireNonNull(connection, "connection"));
  }

  /**
   * The connection of one operation, as the adapter's client offers it. ARCUS's client pool hands
   * out one per operation; spymemcached has one.
   */
  public interface Connection {

    /** Whether the client still runs; an operation on a shut-down client fails at once. */
    boolean isRunning();

    /** Queues an operation for the server of a key; may throw when the client refuses it. */
    void enqueue(String key, Operation operation);

    /** Queues an operation for a server; may throw when the client refuses it. */
    void enqueue(MemcachedNode node, Operation operation);
  }

  /**
   * What a store adapter's client does its own way. Implementations are thread-safe.
   *
   * @param <C> the adapter's connection type
   */
  public interface Client<C extends Connection> {

    /**
     * The connection for the next operation.
     *
     * @throws RuntimeException if there is none; the operation fails with it
     */
    C connection();

    /** The problem with a key (never {@code null}), or {@code null} if the store accepts it. */
    String keyProblem(String key);

    /**
     * The server a bulk read sends a key to.
     *
     * @throws IllegalStateException naming the problem when no server can take the key; the read
     *     fails with its message
     */
    MemcachedNode nodeFor(C connection, String key);

    /**
     * Why an operation pinned to a node ({@link MemcachedOperations#on}) must fail at once, or
     * {@code null} if it may be queued: the node is down, as {@link #nodeFor} judges it.
     */
    String unreachable(MemcachedNode node);

    /** A {@code gets} of several keys of one server, reporting to {@code callback}. */
    Operation bulkGets(MemcachedNode node, List<String> keys, GetsOperation.Callback callback);

    /** A {@code set} or {@code add}, reporting to {@code callback}. */
    Operation store(StoreType type, String key, CachedData data, int exptime,
        OperationCallback callback);

    /** A {@code cas}, reporting to {@code callback}. */
    Operation cas(String key, long casToken, CachedData data, int exptime,
        OperationCallback callback);

    /** A {@code delete}, reporting to {@code callback}. */
    Operation delete(String key, OperationCallback callback);

    /** A text-protocol {@code incr} without a default value, reporting to {@code callback}. */
    Operation incr(String key, int delta, OperationCallback callback);

    /** Called before a {@code delete} of a key is queued (ARCUS drops its front-cache copy). */
    default void beforeDelete(C connection, String key) {}

    /** Cancels a client operation the store gave up on. */
    void cancel(Operation operation, boolean timedOut);

    /** Why the client cancelled an operation. */
    String cancelCause(Operation operation);

    /** Whether the client dropped an operation on its own timeout (before sending it). */
    boolean timedOutInClient(Operation operation);
  }

  /**
   * The deadlines of this store's operations.
   *
   * @return the deadlines, with the operation timeout and the pending bound
   */
  public OperationDeadlines deadlines() {
    return deadlines;
  }

  // -------------------------------------------------------------------------------------------
  // The operations

  /**
   * Sends {@code gets}: the item's bytes whatever its flags, and its CAS token.
   *
   * @see io.sustainablecache.spi.CacheStore#gets
   */
  public CompletableFuture<Optional<StoreItem>> gets(String key) {
    requireNonNull(key, "key");
    Gets pending = new Gets();
    C connection = prepare(pending, key);
    if (connection != null) {
      pending.send(OPERATIONS.gets(key, pending), key, connection);
    }
    return pending;
  }

  /**
   * Groups the keys by server and sends one {@code gets} per server and per {@value #BULK_CHUNK}
   * keys. Fails as a whole if a key is invalid, the client is shut down or the timeout passes.
   * The keys of a server that is down ({@link Client#nodeFor} throws) are not sent, and a part
   * that fails (its connection was lost, say) fails its own keys only: if other keys were read,
   * the future fails with a {@link PartialReadException} that carries their items; if none
   * was, with a plain failure.
   *
   * @see io.sustainablecache.spi.CacheStore#getsAll
   */
  public CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
    requireNonNull(keys, "keys");
    for (String key : keys) {
      requireNonNull(key, "key");
    }
    if (keys.isEmpty()) {
      return CompletableFuture.completedFuture(new HashMap<>());
    }
    GetsAll pending = new GetsAll();
    for (String key : keys) {
      String problem = client.keyProblem(key);
      if (problem != null) {
        pending.fail(problem, null);
        return pending;
      }
    }
    C connection = connection(pending);
    if (connection == null) {
      return pending;
    }
    Map<MemcachedNode, List<String>> byNode = new LinkedHashMap<>();
    java.util.Set<String> distinct = new LinkedHashSet<>(keys);
    pending.requested = distinct.size();
    for (String key : distinct) {
      MemcachedNode node;
      try {
        node = pinnedNode != null ? pinnedNode : client.nodeFor(connection, key);
      } catch (IllegalStateException e) {
        pending.unsent(key, e.getMessage()); // its server is down: only its keys fail
        continue;
      }
      byNode.computeIfAbsent(node, n -> new ArrayList<>()).add(key);
    }
    List<MemcachedNode> nodes = new ArrayList<>();
    List<Operation> operations = new ArrayList<>();
    byNode.forEach((node, nodeKeys) -> {
      for (int from = 0; from < nodeKeys.size(); from += BULK_CHUNK) {
        List<String> chunk = nodeKeys.subList(from, Math.min(nodeKeys.size(), from + BULK_CHUNK));
        GetsAll.Part part = pending.new Part(chunk);
        part.operation = client.bulkGets(node, chunk, part);
        pending.add(part);
        nodes.add(node);
        operations.add(part.operation);
      }
    });
    pending.send(() -> {
      for (int i = 0; i < operations.size() && !pending.isDone(); i++) {
        connection.enqueue(nodes.get(i), operations.get(i));
      }
    });
    return pending;
  }

  /**
   * Sends {@code add} with a copy of the value: {@code true} if stored, {@code false} on {@code
   * NOT_STORED}; any other answer fails the future.
   */
  public CompletableFuture<Boolean> add(String key, byte[] value, int exptime) {
    return store(new Add(), StoreType.add, key, value, exptime);
  }

  /** Sends {@code set} with a copy of the value; any answer but {@code STORED} fails the future. */
  public CompletableFuture<Void> set(String key, byte[] value, int exptime) {
    return store(new Set(), StoreType.set, key, value, exptime);
  }

  /**
   * Sends {@code cas} with a copy of the value; any answer but {@code STORED}, {@code EXISTS} or
   * {@code NOT_FOUND} fails the future.
   */
  public CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value, int exptime) {
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    Cas pending = new Cas();
    C connection = prepare(pending, key);
    if (connection != null) {
      CachedData data = RawBytesTranscoder.INSTANCE.encode(value);
      pending.send(client.cas(key, casToken, data, Exptimes.toServer(exptime), pending),
          key, connection);
    }
    return pending;
  }

  /**
   * Sends {@code delete}: {@code true} if deleted, {@code false} on {@code NOT_FOUND}; any other
   * answer fails the future.
   */
  public CompletableFuture<Boolean> delete(String key) {
    requireNonNull(key, "key");
    Delete pending = new Delete();
    C connection = prepare(pending, key);
    if (connection != null) {
      client.beforeDelete(connection, key);
      pending.send(client.delete(key, pending), key, connection);
    }
    return pending;
  }

  /**
   * {@code incr}, then on {@code NOT_FOUND} an {@code add} of {@code initial}, then on {@code
   * NOT_STORED} (another client created it) {@code incr} again: memcached's text protocol has no
   * {@code incr} with a default value. See {@link io.sustainablecache.spi.CacheStore#incr}.
   */
  public CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
    requireNonNull(key, "key");
    if (delta < 0 || initial < 0) {
      throw new IllegalArgumentException(
          "delta and initial must not be negative: " + delta + ", " + initial);
    }
    return mutate(key, delta, false).thenCompose(value -> value != null
        ? CompletableFuture.completedFuture(value)
        : add(key, Long.toString(initial).getBytes(StandardCharsets.US_ASCII), exptime)
            .thenCompose(created -> created
                ? CompletableFuture.completedFuture(initial)
                : mutate(key, delta, true)));
  }

  /** One {@code incr}: the new value, or {@code null} on {@code NOT_FOUND} unless required. */
  private CompletableFuture<Long> mutate(String key, int delta, boolean mustExist) {
    Incr pending = new Incr(mustExist);
    C connection = prepare(pending, key);
    if (connection != null) {
      pending.send(client.incr(key, delta, pending), key, connection);
    }
    return pending;
  }

  private <T> CompletableFuture<T> store(Single<T> pending, StoreType type, String key,
      byte[] value, int exptime) {
    requireNonNull(key, "key");
    requireNonNull(value, "value");
    C connection = prepare(pending, key);
    if (connection != null) {
      CachedData data = RawBytesTranscoder.INSTANCE.encode(value);
      pending.send(client.store(type, key, data, Exptimes.toServer(exptime), pending),
          key, connection);
    }
    return pending;
  }

  /** Checks the key and gets the connection, or fails the operation and returns {@code null}. */
  private C prepare(PendingOperation<?> pending, String key) {
    String problem = client.keyProblem(key);
    if (problem != null) {
      pending.fail(problem, null);
      return null;
    }
    return connection(pending);
  }

  /**
   * The connection for an operation, or {@code null} after failing the operation when there is
   * none or the client is shut down.
   */
  public C connection(PendingOperation<?> pending) {
    C connection;
    try {
      connection = pinnedConnection != null ? pinnedConnection : client.connection();
    } catch (RuntimeException e) {
      pending.fail(e);
      return null;
    }
    if (!connection.isRunning()) {
      pending.fail("the client is shut down", null);
      return null;
    }
    String down = pinnedNode == null ? null : client.unreachable(pinnedNode);
    if (down != null) {
      pending.fail(down, null);
      return null;
    }
    return connection;
  }

  /** Describes a failed, cancelled or timed-out client operation, or returns {@code null}. */
  private String problemOf(Operation operation) {
    if (operation.isCancelled()) {
      return client.cancelCause(operation);
    }
    if (operation.hasErrored()) {
      OperationException exception = operation.getException();
      String message = exception == null ? null : exception.getMessage();
      return message == null || message.isBlank()
          ? "the server answered ERROR (it does not know the command)"
          : message;
    }
    if (client.timedOutInClient(operation)) {
      return "timed out in the client (not sent within its opTimeout)";
    }
    return null;
  }

  private Throwable causeOf(Operation operation) {
    return operation.isCancelled()
        ? new CancellationException(client.cancelCause(operation))
        : operation.getException();
  }

  private void abandon(Operation operation, boolean timedOut) {
    if (operation == null) {
      return;
    }
    if (timedOut) {
      MemcachedConnection.opTimedOut(operation);
    }
    client.cancel(operation, timedOut);
  }

  /**
   * Whether a read got a proper answer: {@code END} after a value is a success, and {@code END}
   * alone (a miss) is a success for ARCUS and {@code NOT_FOUND} for spymemcached.
   */
  private static boolean isReadAnswer(OperationStatus answer) {
    return answer.isSuccess() || answer.getStatusCode() == StatusCode.ERR_NOT_FOUND;
  }

  /**
   * Sets the caller's interrupt flag again after the client queued: the client refuses to queue
   * for an interrupted thread, so the flag is cleared ({@link Thread#interrupted()}) around it.
   */
  private static void restoreInterrupt(boolean interrupted) {
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  // -------------------------------------------------------------------------------------------
  // Pending operations: each is the returned future, the client's callback and the deadline
  // queue's entry at once.

  /** A single-key operation. */
  private abstract class Single<T> extends PendingOperation<T> implements OperationCallback {

    /** Set before the deadline starts. */
    private Operation operation;
    /** The server's answer; written and read on the client's I/O thread. */
    private OperationStatus status;

    Single(OperationName name) {
      super(name, deadlines);
    }

    final void send(Operation op, String key, C connection) {
      this.operation = op;
      startDeadline();
      if (isDone()) {
        return; // refused: too many operations pending
      }
      boolean interrupted = Thread.interrupted();
      try {
        if (pinnedNode != null) {
          connection.enqueue(pinnedNode, op);
        } else {
          connection.enqueue(key, op);
        }
      } catch (RuntimeException e) {
        fail(e);
      } finally {
        restoreInterrupt(interrupted);
      }
    }

    @Override
    public final void receivedStatus(OperationStatus received) {
      status = received;
    }

    @Override
    public final void complete() {
      if (isDone()) {
        return;
      }
      Operation op = operation;
      String problem = problemOf(op);
      if (problem != null) {
        fail(problem, causeOf(op));
        return;
      }
      OperationStatus answer = status;
      if (answer == null) {
        fail("the client completed the operation without an answer", null);
        return;
      }
      MemcachedConnection.opSucceeded(op);
      answered(answer);
    }

    /** Completes the future with what the server answered. */
    abstract void answered(OperationStatus answer);

    @Override
    protected final void abandon(boolean timedOut) {
      MemcachedOperations.this.abandon(operation, timedOut);
    }
  }

  private final class Gets extends Single<Optional<StoreItem>>
      implements GetsOperation.Callback {

    private StoreItem item;

    Gets() {
      super(getsName);
    }

    @Override
    public void gotData(String key, int flags, long cas, byte[] data) {
      item = new StoreItem(data, cas);
    }

    @Override
    void answered(OperationStatus answer) {
      if (isReadAnswer(answer)) {
        StoreItem found = item;
        succeed(found == null ? Optional.empty() : Optional.of(found));
      } else {
        fail(answer.getMessage(), null);
      }
    }
  }

  private final class Add extends Single<Boolean> {
    Add() {
      super(addName);
    }

    @Override
    void answered(OperationStatus answer) {
      if (answer.isSuccess()) {
        succeed(Boolean.TRUE);
      } else if ("NOT_STORED".equals(answer.getMessage())) {
        succeed(Boolean.FALSE);
      } else {
        fail(answer.getMessage(), null);
      }
    }
  }

  private final class Set extends Single<Void> {
    Set() {
      super(setName);
    }

    @Override
    void answered(OperationStatus answer) {
      if (answer.isSuccess()) {
        succeed(null);
      } else {
        fail(answer.getMessage(), null);
      }
    }
  }

  private final class Cas extends Single<CasOutcome> {
    Cas() {
      super(casName);
    }

    @Override
    void answered(OperationStatus answer) {
      if (!(answer instanceof CASOperationStatus cas)) {
        fail(answer.getMessage(), null);
        return;
      }
      switch (cas.getCASResponse()) {
        case OK -> succeed(CasOutcome.STORED);
        case EXISTS -> succeed(CasOutcome.EXISTS);
        case NOT_FOUND -> succeed(CasOutcome.NOT_FOUND);
        default -> fail(answer.getMessage(), null);
      }
    }
  }

  private final class Delete extends Single<Boolean> {
    Delete() {
      super(deleteName);
    }

    @Override
    void answered(OperationStatus answer) {
      if (answer.isSuccess()) {
        succeed(Boolean.TRUE);
      } else if ("NOT_FOUND".equals(answer.getMessage())) {
        succeed(Boolean.FALSE);
      } else {
        fail(answer.getMessage(), null);
      }
    }
  }

  private final class Incr extends Single<Long> {
    private final boolean mustExist;

    Incr(boolean mustExist) {
      super(incrName);
      this.mustExist = mustExist;
    }

    @Override
    void answered(OperationStatus answer) {
      String message = answer.getMessage();
      if (answer.isSuccess()) {
        try {
          succeed(Long.parseUnsignedLong(message.trim()));
        } catch (RuntimeException e) {
          fail("the server's answer is no number: " + message, null);
        }
      } else if ("NOT_FOUND".equals(message) && !mustExist) {
        succeed(null);
      } else if ("NOT_FOUND".equals(message)) {
        fail("NOT_FOUND: the counter another client created vanished before it was incremented",
            null);
      } else {
        fail(message, null);
      }
    }
  }

  /**
   * An operation in several parts, one client operation each: it succeeds once every part has
   * succeeded and fails with the first part that fails (cancelling the others). An adapter
   * extends it for an operation of its own (ARCUS's {@code flush_prefix} on every server).
   *
   * @param <T> the result
   */
  public abstract class MultiPart<T> extends PendingOperation<T> {

    /** Guards the parts' bookkeeping and the result. */
    protected final Object lock = new Object();
    /** Guarded by {@link #lock}. */
    private final List<Part> parts = new ArrayList<>();
    /** Parts not yet succeeded, plus one until every part is queued; guarded by {@link #lock}. */
    private int remaining = 1;
    /**
     * Set once the parts were cancelled, to whether the whole timed out: a part added later (the
     * deadline fired while the client was still creating them) is cancelled as it is added.
     * Guarded by {@link #lock}.
     */
    private Boolean cancelledAs;

    /**
     * Creates the whole, before its parts.
     *
     * @param name names the operation in failure messages
     */
    protected MultiPart(OperationName name) {
      super(name, deadlines);
    }

    /**
     * Registers a part whose operation is about to be queued; if the whole is over already (its
     * deadline passed while the client was creating the parts, or another part failed), the
     * part's operation is cancelled at once.
     *
     * @param part a new part with its operation set
     */
    public final void add(Part part) {
      Boolean cancelled;
      synchronized (lock) {
        parts.add(part);
        remaining++;
        cancelled = cancelledAs;
      }
      if (cancelled != null) {
        MemcachedOperations.this.abandon(part.operation, cancelled);
      }
    }

    /**
     * Starts the deadline and, unless the operation was refused, queues the parts with {@code
     * enqueue} (with the caller's interrupt flag cleared), cancelling them all if it throws;
     * from then on the last part to succeed completes the whole.
     *
     * @param enqueue queues every part's operation; parts may be {@link #add added} meanwhile
     */
    public final void send(Runnable enqueue) {
      startDeadline();
      if (isDone()) {
        return; // refused: too many operations pending
      }
      boolean interrupted = Thread.interrupted();
      try {
        enqueue.run();
      } catch (RuntimeException e) {
        fail(e);
        cancelParts(false);
      } finally {
        restoreInterrupt(interrupted);
      }
      partSucceeded(null);
    }

    /**
     * The result once every part succeeded; called on the thread of the last part.
     *
     * @return the result
     */
    protected abstract T result();

    private void partCompleted(Part part) {
      if (isDone()) {
        return;
      }
      Operation op = part.operation;
      String problem = problemOf(op);
      if (problem == null && part.status == null) {
        problem = "the client completed the operation without an answer";
      }
      if (problem == null && !part.accepts(part.status)) {
        problem = part.status.getMessage();
      }
      if (problem != null) {
        Throwable cause = causeOf(op);
        if (partFailed(part, problem, cause)) {
          partSucceeded(part); // the whole goes on without it: counted as done
        } else if (fail(problem, cause)) {
          cancelParts(false);
        }
        return;
      }
      MemcachedConnection.opSucceeded(op);
      partSucceeded(part);
    }

    /**
     * A part failed: whether the whole goes on without it ({@code true}: the part counts as done,
     * and {@link #completed} decides the outcome once every part is done) or fails with it at
     * once, cancelling the other parts ({@code false}, the default).
     *
     * @param part the part that failed
     * @param problem what went wrong, without a key or a value
     * @param cause the client's exception, may be {@code null}
     * @return whether the whole goes on
     */
    protected boolean partFailed(Part part, String problem, Throwable cause) {
      return false;
    }

    private void partSucceeded(Part part) {
      synchronized (lock) {
        if (part != null) {
          if (part.counted) {
            return;
          }
          part.counted = true;
        }
        if (--remaining > 0) {
          return;
        }
      }
      completed();
    }

    /**
     * Every part is done (succeeded, or failed and {@linkplain #partFailed absorbed}): completes
     * the whole, by default with {@link #result()}. Called on the thread of the last part.
     */
    protected void completed() {
      succeed(result());
    }

    /**
     * Fails the whole with an exception the subclass made, unless it is already complete.
     *
     * @param failure the failure
     * @return {@code true} if this call completed the future
     */
    protected final boolean failWith(StoreException failure) {
      return !isDone() && completeExceptionally(failure);
    }

    private void cancelParts(boolean timedOut) {
      List<Part> all;
      synchronized (lock) {
        cancelledAs = cancelledAs == null ? timedOut : cancelledAs;
        all = new ArrayList<>(parts);
      }
      for (Part part : all) {
        MemcachedOperations.this.abandon(part.operation, timedOut);
      }
    }

    @Override
    protected final void abandon(boolean timedOut) {
      cancelParts(timedOut);
    }

    /** One client operation of the whole, and its callback. */
    public class Part implements OperationCallback {

      /** The client operation; set before {@link MultiPart#add}. */
      public Operation operation;
      private OperationStatus status;
      /** Guarded by {@link #lock}. */
      private boolean counted;

      @Override
      public final void receivedStatus(OperationStatus received) {
        status = received;
      }

      @Override
      public final void complete() {
        partCompleted(this);
      }

      /**
       * Whether the server's answer is a success for this part: a read's answer unless
       * overridden.
       *
       * @param answer the server's answer
       * @return whether the part succeeded
       */
      protected boolean accepts(OperationStatus answer) {
        return isReadAnswer(answer);
      }
    }
  }

  /**
   * A bulk read: one part per server and chunk. A part that fails, and a key whose server is
   * down (never sent), fail their own keys only; once every part is done, the read succeeds if no
   * key failed, fails with a {@link PartialReadException} carrying the items read if some key
   * was read, and with the first problem if none was.
   */
  private final class GetsAll extends MultiPart<Map<String, StoreItem>> {

    /** Guarded by {@link #lock}. */
    private final Map<String, StoreItem> found = new HashMap<>();
    /** The keys that failed; guarded by {@link #lock}. */
    private final java.util.Set<String> failed = new LinkedHashSet<>();
    /** The first problem; guarded by {@link #lock}. */
    private String problem;
    private Throwable problemCause;
    /** The number of distinct keys asked for; set before any part is sent. */
    int requested;

    GetsAll() {
      super(getsAllName);
    }

    /** A key that is not sent: its server is down. Called before any part is sent. */
    void unsent(String key, String why) {
      synchronized (lock) {
        failed.add(key);
        if (problem == null) {
          problem = why;
        }
      }
    }

    @Override
    protected boolean partFailed(MultiPart<Map<String, StoreItem>>.Part part, String why,
        Throwable cause) {
      synchronized (lock) {
        for (String key : ((Part) part).keys) {
          failed.add(key);
          found.remove(key); // a value read before the part failed is not trusted
        }
        if (problem == null) {
          problem = why;
          problemCause = cause;
        }
      }
      return true;
    }

    @Override
    protected void completed() {
      StoreException partial = null;
      String whole = null;
      Throwable cause;
      synchronized (lock) { // decided under the lock, completed outside it
        cause = problemCause;
        if (failed.size() >= requested) {
          whole = problem;
        } else if (!failed.isEmpty()) {
          partial = new PartialReadException(operationName() + " failed for " + failed.size()
              + " of " + requested + " keys: " + problem, cause, found, failed);
        }
      }
      if (whole != null) {
        fail(whole, cause);
      } else if (partial != null) {
        failWith(partial);
      } else {
        succeed(result());
      }
    }

    @Override
    protected Map<String, StoreItem> result() {
      synchronized (lock) {
        return found;
      }
    }

    final class Part extends MultiPart<Map<String, StoreItem>>.Part
        implements GetsOperation.Callback {

      /** The keys this part asks for. */
      final List<String> keys;

      Part(List<String> keys) {
        this.keys = keys;
      }

      @Override
      public void gotData(String key, int flags, long cas, byte[] data) {
        synchronized (lock) {
          found.put(key, new StoreItem(data, cas));
        }
      }
    }
  }
}
