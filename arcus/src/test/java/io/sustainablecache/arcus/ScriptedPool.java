package io.sustainablecache.arcus;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import java.util.function.Supplier;
import net.spy.memcached.BroadcastOpFactory;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.ops.Operation;
import net.spy.memcached.ops.OperationException;

/**
 * Stands in for the ARCUS client (or pool) behind an {@link ArcusStore}, without a network: the
 * store's real ASCII operations are initialized, their request bytes recorded, and then answered
 * from a script, by feeding the operation the bytes a server would send, by cancelling it as the
 * client does for an inactive node, by refusing it as a full or shut-down client does, or by
 * keeping it unanswered (to exercise the store's deadline).
 *
 * <p>Everything runs on the thread that calls the store, except what a test does with {@link
 * #silent()} operations. Thread-safe enough for that (lists are concurrent, fields volatile).
 */
final class ScriptedPool implements Supplier<ClientAccess>, ClientAccess {

  /** How the scripted server or client answers one operation. */
  sealed interface Answer {

    /** The server sends these bytes. */
    record Reply(byte[] bytes) implements Answer {}

    /** The client cancels the operation, as for an inactive node under FailureMode.Cancel. */
    record Cancel(String cause) implements Answer {}

    /** The client refuses to queue the operation. */
    record Refuse(RuntimeException failure) implements Answer {}

    /** Nobody answers; the operation waits in {@link #silent()}. */
    record Silence() implements Answer {}

    static Answer reply(String text) {
      return new Reply(text.getBytes(ISO_8859_1));
    }

    static Answer reply(byte[] bytes) {
      return new Reply(bytes.clone());
    }

    static Answer cancel(String cause) {
      return new Cancel(cause);
    }

    static Answer refuse(RuntimeException failure) {
      return new Refuse(requireNonNull(failure));
    }

    static Answer silence() {
      return new Silence();
    }
  }

  /** Every request the store queued, as the bytes it would write (ISO-8859-1). */
  final List<String> requests = new CopyOnWriteArrayList<>();
  /** Every operation the store queued, in order. */
  final List<Operation> operations = new CopyOnWriteArrayList<>();
  /** Operations left unanswered by {@link Answer#silence()}. */
  final List<Operation> silent = new CopyOnWriteArrayList<>();
  /** Keys the store dropped from the front cache. */
  final List<String> forgotten = new CopyOnWriteArrayList<>();
  /** Whether the calling thread's interrupt flag was set while an operation was queued. */
  final List<Boolean> interruptedWhileQueueing = new CopyOnWriteArrayList<>();

  private volatile Function<String, Answer> server = request -> Answer.reply("END\r\n");
  private volatile boolean running = true;
  /** Runs as a broadcast begins, before the client creates its operations. */
  volatile Runnable beforeBroadcast = () -> { };
  private volatile List<MemcachedNode> nodes = List.of(node("scripted-1", true, false));
  private volatile Function<String, MemcachedNode> router = key -> nodes.get(0);

  /** Answers every following operation the same way. */
  ScriptedPool answer(Answer answer) {
    requireNonNull(answer, "answer");
    this.server = request -> answer;
    return this;
  }

  /** Answers every following operation by its request text. */
  ScriptedPool answerWith(Function<String, Answer> server) {
    this.server = requireNonNull(server, "server");
    return this;
  }

  /** Makes {@link #isRunning()} report a client that was shut down. */
  void shutDown() {
    running = false;
  }

  /** The nodes of the scripted client, and which one owns a key. */
  void nodes(List<MemcachedNode> nodes, Function<String, MemcachedNode> router) {
    this.nodes = List.copyOf(nodes);
    this.router = requireNonNull(router);
  }

  /** The latest queued operation. */
  Operation lastOperation() {
    return operations.get(operations.size() - 1);
  }

  /** The latest request text. */
  String lastRequest() {
    return requests.get(requests.size() - 1);
  }

  /** Answers a {@linkplain #silent() silent} operation now, as a late server would. */
  static void replyLate(Operation operation, String text) {
    feed(operation, text.getBytes(ISO_8859_1));
  }

  /**
   * A fake node: active or not, with or without ARCUS's {@code mgets}. Only the methods the
   * store calls answer something meaningful.
   */
  static MemcachedNode node(String name, boolean active, boolean mgets) {
    InetSocketAddress address = InetSocketAddress.createUnresolved(name, 11211);
    return (MemcachedNode) Proxy.newProxyInstance(ScriptedPool.class.getClassLoader(),
        new Class<?>[] {MemcachedNode.class}, (proxy, method, args) -> switch (method.getName()) {
          case "isActive" -> active;
          case "isFirstConnecting" -> false;
          case "enabledMGetsOp", "enabledMGetOp" -> mgets;
          case "getSocketAddress" -> address;
          case "getNodeName" -> name;
          case "toString" -> "node " + name;
          case "hashCode" -> System.identityHashCode(proxy);
          case "equals" -> proxy == args[0];
          case "setContinuousTimeout", "addOp", "setHandlingNode" -> null;
          default -> throw new UnsupportedOperationException("ScriptedPool node: " + method);
        });
  }

  // -------------------------------------------------------------------------------------------
  // Supplier and ClientAccess

  @Override
  public ClientAccess get() {
    return this;
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public void enqueue(String key, Operation operation) {
    play(operation);
  }

  @Override
  public MemcachedNode primaryNode(String key) {
    return router.apply(key);
  }

  @Override
  public void enqueue(MemcachedNode node, Operation operation) {
    play(operation);
  }

  @Override
  public void broadcast(BroadcastOpFactory factory) {
    beforeBroadcast.run();
    for (MemcachedNode node : nodes) {
      play(factory.newOp(node, new CountDownLatch(1)));
    }
  }

  @Override
  public void forgetLocally(String key) {
    forgotten.add(key);
  }

  private void play(Operation operation) {
    interruptedWhileQueueing.add(Thread.currentThread().isInterrupted());
    operations.add(operation);
    if (operation.isCancelled()) {
      return; // cancelled before it was queued: the client never writes it
    }
    operation.initialize();
    ByteBuffer request = operation.getBuffer().duplicate();
    byte[] bytes = new byte[request.remaining()];
    request.get(bytes);
    String text = new String(bytes, ISO_8859_1);
    requests.add(text);
    Answer answer = server.apply(text);
    if (answer instanceof Answer.Reply reply) {
      feed(operation, reply.bytes());
    } else if (answer instanceof Answer.Cancel cancel) {
      operation.cancel(cancel.cause());
    } else if (answer instanceof Answer.Refuse refuse) {
      throw refuse.failure();
    } else {
      silent.add(operation);
    }
  }

  /** Plays the client's I/O thread: the request was written, the answer is read. */
  private static void feed(Operation operation, byte[] answer) {
    operation.writing();
    operation.writeComplete();
    try {
      operation.readFromBuffer(ByteBuffer.wrap(answer));
    } catch (OperationException e) {
      // The client drops the connection after an error line; the operation has completed.
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** Lines of a {@code gets} answer for the given items, then {@code END}. */
  static String getsAnswer(List<String> keysWithValues, int flags) {
    List<String> lines = new ArrayList<>();
    long cas = 100;
    for (String key : keysWithValues) {
      String value = "v:" + key;
      lines.add("VALUE " + key + " " + flags + " " + value.length() + " " + cas++ + "\r\n" + value
          + "\r\n");
    }
    return String.join("", lines) + "END\r\n";
  }
}
