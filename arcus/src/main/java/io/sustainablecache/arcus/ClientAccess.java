package io.sustainablecache.arcus;

import io.sustainablecache.memcached.MemcachedOperations;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ArcusClientPool;
import net.spy.memcached.BroadcastOpFactory;
import net.spy.memcached.DefaultConnectionFactory;
import net.spy.memcached.FailureMode;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.MemcachedConnection;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.MemcachedNodeROImpl;
import net.spy.memcached.ops.Operation;
import net.spy.memcached.plugin.LocalCacheManager;
import net.spy.memcached.protocol.binary.BinaryMemcachedNodeImpl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The parts of an {@link ArcusClient} that {@link ArcusStore} uses to run its own operations on
 * the client's connection, in place of the client's blocking futures: the seam that the unit
 * tests script. Every method is a public API of ARCUS client 1.13.2.
 *
 * <p>Implementations are thread-safe.
 */
interface ClientAccess extends MemcachedOperations.Connection {

  /**
   * Whether the client's I/O thread still runs; {@code false} once {@code shutdown()} has
   * stopped it (the client's own "shutting down" flag is private).
   */
  @Override
  boolean isRunning();

  /**
   * Queues an operation on the node of the key, applying the client's failure mode ({@code
   * MemcachedConnection.addOperation(String, Operation)}): under {@code FailureMode.Cancel} an
   * operation for an inactive node is cancelled at once, on the calling thread.
   *
   * @throws IllegalStateException if the node's queue stays full for the client's {@code
   *     opQueueMaxBlockTime}, or the calling thread is interrupted
   */
  @Override
  void enqueue(String key, Operation operation);

  /** The node that owns the key ({@code MemcachedConnection.getPrimaryNode}), or {@code null}. */
  MemcachedNode primaryNode(String key);

  /** Queues an operation on a given node, whatever its state. */
  @Override
  void enqueue(MemcachedNode node, Operation operation);

  /** Queues one operation per node of the client ({@code broadcastOperation}). */
  void broadcast(BroadcastOpFactory factory);

  /** Drops the key from the client's front cache, if it has one, as the client's delete does. */
  void forgetLocally(String key);

  /** The access to a real client. */
  final class Real implements ClientAccess, Supplier<ClientAccess> {

    private static final Logger LOG = LoggerFactory.getLogger(ArcusStore.class);

    final ArcusClient client;
    private final MemcachedConnection connection;

    Real(ArcusClient client) {
      this.client = client;
      this.connection = client.getMemcachedConnection();
    }

    /** Returns itself: a store over a single client uses it for every operation. */
    @Override
    public ClientAccess get() {
      return this;
    }

    @Override
    public boolean isRunning() {
      return client.isAlive();
    }

    @Override
    public void enqueue(String key, Operation operation) {
      connection.addOperation(key, operation);
    }

    @Override
    public MemcachedNode primaryNode(String key) {
      return connection.getPrimaryNode(key);
    }

    @Override
    public void enqueue(MemcachedNode node, Operation operation) {
      connection.addOperation(node, operation);
    }

    @Override
    public void broadcast(BroadcastOpFactory factory) {
      connection.broadcastOperation(factory);
    }

    /** The client's nodes now, in its locator's order (its read-only copies unwrapped). */
    List<MemcachedNode> nodes() {
      List<MemcachedNode> nodes = new ArrayList<>();
      for (MemcachedNode node : client.getNodeLocator().getAll()) {
        nodes.add(node instanceof MemcachedNodeROImpl readOnly ? readOnly.getMemcachedNode()
            : node);
      }
      return nodes;
    }

    /**
     * The client's failure mode, which it keeps in a private field of its connection; {@code
     * null} if it cannot be read (then the store offers no nodes).
     */
    static FailureMode failureModeOf(ArcusClient client) {
      try {
        Field field = MemcachedConnection.class.getDeclaredField("failureMode");
        field.setAccessible(true);
        return (FailureMode) field.get(client.getMemcachedConnection());
      } catch (ReflectiveOperationException | RuntimeException e) {
        LOG.debug("Cannot read the ARCUS client's failure mode", e);
        return null;
      }
    }

    @Override
    public void forgetLocally(String key) {
      LocalCacheManager frontCache = client.getLocalCacheManager();
      if (frontCache != null) {
        frontCache.delete(key);
      }
    }

    /**
     * Rejects a client on the binary protocol: the store builds ASCII operations.
     *
     * @throws IllegalArgumentException if a node of the client speaks the binary protocol
     */
    static void requireAsciiProtocol(ArcusClient client) {
      for (MemcachedNode node : client.getNodeLocator().getAll()) {
        MemcachedNode real =
            node instanceof MemcachedNodeROImpl readOnly ? readOnly.getMemcachedNode() : node;
        if (real instanceof BinaryMemcachedNodeImpl) {
          throw new IllegalArgumentException("ArcusStore needs a client on the ASCII protocol"
              + " (ConnectionFactoryBuilder's default), but this client uses the binary protocol");
        }
      }
    }

    /**
     * Whether the client was created through ZooKeeper ({@code createArcusClient}), so that its
     * servers are ARCUS servers: such a client has a cache manager, kept in a private field. If
     * it cannot be read, {@code false}: the safe answer, under which no ARCUS-only command is
     * sent.
     */
    static boolean managedByZooKeeper(ArcusClient client) {
      try {
        Field field = ArcusClient.class.getDeclaredField("cacheManager");
        field.setAccessible(true);
        return field.get(client) != null;
      } catch (ReflectiveOperationException | RuntimeException e) {
        LOG.debug("Cannot read whether the ARCUS client was created through ZooKeeper", e);
        return false;
      }
    }

    /**
     * The client's key delimiter ({@code ConnectionFactoryBuilder.setDelimiter}, {@code ':'} by
     * default), which its key validation uses for the ARCUS prefix rule. The client keeps it in
     * a private field of {@code MemcachedClient}; if it cannot be read, the default is assumed
     * and a warning logged.
     */
    static byte delimiterOf(ArcusClient client) {
      try {
        Field field = MemcachedClient.class.getDeclaredField("delimiter");
        field.setAccessible(true);
        return field.getByte(client);
      } catch (ReflectiveOperationException | RuntimeException e) {
        LOG.warn("Cannot read the ARCUS client's key delimiter; ArcusStore assumes the default,"
            + " '{}', for the ARCUS prefix rule", (char) DefaultConnectionFactory.DEFAULT_DELIMITER,
            e);
        return DefaultConnectionFactory.DEFAULT_DELIMITER;
      }
    }
  }

  /**
   * The accesses of a pool's clients: one of the pool's clients per operation, picked by the
   * pool ({@link ArcusClientPool#getClient()}).
   */
  final class Pool implements Supplier<ClientAccess> {

    private final ArcusClientPool pool;
    private final Real[] members;

    Pool(ArcusClientPool pool) {
      this.pool = pool;
      ArcusClient[] clients = pool.getAllClients();
      this.members = new Real[clients == null ? 0 : clients.length];
      for (int i = 0; i < members.length; i++) {
        members[i] = new Real(clients[i]);
      }
    }

    /** The access to the pool's first client, or {@code null} for a pool without clients. */
    Real first() {
      return members.length == 0 ? null : members[0];
    }

    /**
     * The access to the client the pool picks.
     *
     * @throws RuntimeException whatever the pool throws, for example for a pool without clients
     */
    @Override
    public ClientAccess get() {
      ArcusClient client = pool.getClient();
      for (Real member : members) {
        if (member.client == client) {
          return member;
        }
      }
      return new Real(client);
    }
  }
}
