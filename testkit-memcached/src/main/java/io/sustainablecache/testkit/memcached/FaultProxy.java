package io.sustainablecache.testkit.memcached;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TCP proxy on a free loopback port in front of a real server, which a test turns into a
 * faulty network at run time: added latency, a server that hangs, dropped connections, a port
 * that refuses connections.
 *
 * <pre>{@code
 * try (FaultProxy proxy = FaultProxy.start(MemcachedServer.shared().address())) {
 *   MemcachedClient client = connect(proxy.address());
 *   proxy.refuse();            // the server is "down": no new connections...
 *   proxy.dropConnections();   // ...and the open ones are closed
 *   ...
 *   proxy.passThrough();       // back on the same port; the client reconnects
 * }
 * }</pre>
 *
 * <h2>Modes</h2>
 * Each accepted connection is paired with a new connection to the upstream server and bytes are
 * copied in both directions, chunk by chunk (whatever one {@code read} returns, at most 16 KiB).
 * A chunk is forwarded once the current forwarding mode allows it, re-evaluated whenever the mode
 * changes, and always in order within its direction:
 * <ul>
 *   <li>{@link #passThrough()}: at once (the initial mode);</li>
 *   <li>{@link #delay(Duration)}: {@code d} after the proxy read it, in both directions, so a
 *       request-response round trip takes at least {@code 2 d} longer;</li>
 *   <li>{@link #blackhole()}: never, while connections stay open and new ones are accepted: a
 *       server that hangs. Nothing is discarded: what was held is forwarded, in order, once the
 *       mode allows it again, just as a frozen server that resumes would answer. (Dropping bytes
 *       instead would desynchronize the protocol stream and make a client pair responses with the
 *       wrong requests, which no real fault does.)</li>
 * </ul>
 * Independently of the mode, {@link #dropConnections()} closes every open connection now (a
 * server crash or a network reset) and {@link #refuse()} closes the listening socket, so that
 * connection attempts are refused (a server that is down). {@link #passThrough()} listens again
 * on the same port and clears any delay or blackhole.
 *
 * <h2>Threads and resources</h2>
 * The proxy uses plain blocking sockets and a cached pool of daemon threads named
 * {@code fault-proxy-<port>-...}: one thread accepts, and each connection uses four (a reader and
 * a writer per direction). {@link #close()} closes every socket and waits until every one of
 * these threads has ended, so tests can check for thread leaks of the code under test without
 * seeing the proxy's. It binds to the loopback interface only and makes outbound connections
 * only to its upstream address. All methods are thread-safe.
 */
public final class FaultProxy implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(FaultProxy.class);

  private static final int CHUNK_SIZE = 16 * 1024;
  /** Chunks a direction may hold before its reader stops reading (the kernel buffers the rest). */
  private static final int QUEUE_CHUNKS = 64;
  private static final int UPSTREAM_CONNECT_TIMEOUT_MILLIS = 2_000;
  private static final int LISTEN_BACKLOG = 50;
  private static final int REBIND_ATTEMPTS = 20;
  private static final Duration REBIND_PAUSE = Duration.ofMillis(50);
  private static final Duration THREAD_STOP_TIMEOUT = Duration.ofSeconds(5);

  /** The longest delay {@link #delay} accepts: longer is a {@link #blackhole()}. */
  static final Duration MAX_DELAY = Duration.ofHours(1);

  private final InetSocketAddress upstream;
  private final InetSocketAddress address;
  private final String threadPrefix;
  private final ExecutorService threads;
  private final Set<Link> links = ConcurrentHashMap.newKeySet();
  /** Every thread the pool created, so close() can wait until each has really terminated. */
  private final Set<Thread> started = ConcurrentHashMap.newKeySet();
  private final AtomicLong accepted = new AtomicLong();

  /** Guards {@link #listener}, {@link #closed} and the mode changes that waiting writers see. */
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition modeChanged = lock.newCondition();
  private volatile Forwarding forwarding = Forwarding.PASS_THROUGH;
  private ServerSocket listener;
  private Future<?> acceptor;
  private volatile boolean closed;

  /** How chunks are forwarded: at once, after a delay, or not at all. */
  private record Forwarding(boolean blackhole, long delayNanos) {

    static final Forwarding PASS_THROUGH = new Forwarding(false, 0);
    static final Forwarding BLACKHOLE = new Forwarding(true, 0);

    @Override
    public String toString() {
      return blackhole ? "blackhole"
          : delayNanos == 0 ? "pass-through"
          : "delay " + TimeUnit.NANOSECONDS.toMillis(delayNanos) + " ms";
    }
  }

  private FaultProxy(InetSocketAddress upstream, ServerSocket listener) {
    this.upstream = upstream;
    this.listener = listener;
    this.address = new InetSocketAddress(listener.getInetAddress(), listener.getLocalPort());
    this.threadPrefix = "fault-proxy-" + address.getPort() + "-";
    AtomicInteger counter = new AtomicInteger();
    ThreadFactory factory = runnable -> {
      Thread thread = new Thread(runnable, threadPrefix + counter.incrementAndGet());
      thread.setDaemon(true);
      started.add(thread);
      return thread;
    };
    this.threads = Executors.newCachedThreadPool(factory);
    this.acceptor = acceptOn(listener);
  }

  /**
   * Starts a proxy on a free loopback port that forwards every connection to {@code upstream},
   * in pass-through mode.
   *
   * @param upstream the real server, for example {@link MemcachedServer#address()}; it need not
   *     be running yet, since each accepted connection connects to it anew
   * @return a running proxy; close it to release its port and threads
   * @throws UncheckedIOException if no loopback port can be bound
   * @throws IllegalArgumentException if {@code upstream} is unresolved
   * @throws NullPointerException if {@code upstream} is {@code null}
   */
  public static FaultProxy start(InetSocketAddress upstream) {
    requireNonNull(upstream, "upstream");
    if (upstream.isUnresolved()) {
      throw new IllegalArgumentException("upstream must be resolved: " + upstream);
    }
    ServerSocket listener = null;
    try {
      listener = new ServerSocket();
      listener.setReuseAddress(true);
      listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), LISTEN_BACKLOG);
      return new FaultProxy(upstream, listener);
    } catch (IOException e) {
      closeQuietly(listener);
      throw new UncheckedIOException("Cannot bind a loopback port for a proxy to " + upstream, e);
    }
  }

  /**
   * The address clients connect to: a loopback address and the port chosen at start, which stays
   * the same for the proxy's lifetime, across {@link #refuse()} and {@link #passThrough()}.
   *
   * @return the proxy's address; never {@code null}
   */
  public InetSocketAddress address() {
    return address;
  }

  /**
   * The server this proxy forwards to.
   *
   * @return the upstream address; never {@code null}
   */
  public InetSocketAddress upstream() {
    return upstream;
  }

  /**
   * Restores a healthy network: listens again (on the same port) if {@link #refuse()} closed the
   * listener, and forwards every chunk at once, including those that a {@link #delay} or {@link
   * #blackhole()} is still holding.
   *
   * @throws IllegalStateException if the proxy is closed
   * @throws UncheckedIOException if the port cannot be bound again (another process took it)
   */
  public void passThrough() {
    lock.lock();
    try {
      checkOpen();
      if (listener == null) {
        listener = rebind();
        acceptor = acceptOn(listener);
      }
      setForwarding(Forwarding.PASS_THROUGH);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Adds latency: from now on every chunk, in both directions, is forwarded {@code delay} after
   * the proxy read it. Chunks already held are re-timed against their own arrival. Connections
   * are still accepted, and a {@linkplain #refuse() refusing} proxy keeps refusing.
   *
   * @param delay the added latency per chunk and direction, from zero (pass-through) to an hour
   * @throws IllegalArgumentException if {@code delay} is negative or longer than an hour
   * @throws IllegalStateException if the proxy is closed
   */
  public void delay(Duration delay) {
    requireNonNull(delay, "delay");
    if (delay.isNegative() || delay.compareTo(MAX_DELAY) > 0) {
      throw new IllegalArgumentException("delay must be between 0 and " + MAX_DELAY
          + " (use blackhole() for a server that never answers): " + delay);
    }
    lock.lock();
    try {
      checkOpen();
      setForwarding(delay.isZero() ? Forwarding.PASS_THROUGH
          : new Forwarding(false, delay.toNanos()));
    } finally {
      lock.unlock();
    }
  }

  /**
   * Makes the server hang: connections stay open and new ones are accepted, but nothing is
   * forwarded in either direction until {@link #passThrough()} or {@link #delay} (then the held
   * bytes are forwarded in order). A {@linkplain #refuse() refusing} proxy keeps refusing.
   *
   * @throws IllegalStateException if the proxy is closed
   */
  public void blackhole() {
    lock.lock();
    try {
      checkOpen();
      setForwarding(Forwarding.BLACKHOLE);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Closes every open connection now, on both sides: the client sees its connection reset or
   * ended, the upstream server sees the proxy go away. Bytes the proxy was holding are discarded.
   * New connections are still accepted unless the proxy {@linkplain #refuse() refuses} them, and
   * the forwarding mode is unchanged. Returns after every socket is closed.
   *
   * <p>A connection whose handshake the kernel has completed but that the proxy has not accepted
   * yet (a client's {@code connect} returns before the proxy's accept loop runs) is not affected;
   * when that matters, wait until {@link #openConnections()} counts it first.
   *
   * @throws IllegalStateException if the proxy is closed
   */
  public void dropConnections() {
    lock.lock();
    try {
      checkOpen();
    } finally {
      lock.unlock();
    }
    for (Link link : links) {
      link.close();
    }
  }

  /**
   * Closes the listening socket, so that new connection attempts are refused at once (a server
   * that is down or restarting). Open connections are not affected (except any that the kernel
   * had completed but the proxy not yet accepted: closing the listener resets those): combine
   * with {@link #dropConnections()} to take the server down completely. {@link #passThrough()} listens again
   * on the same port. Idempotent.
   *
   * @throws IllegalStateException if the proxy is closed
   */
  public void refuse() {
    lock.lock();
    try {
      checkOpen();
      closeListener();
    } finally {
      lock.unlock();
    }
  }

  /**
   * How many client connections the proxy has accepted since it started.
   *
   * @return a non-negative count
   */
  public long connectionsAccepted() {
    return accepted.get();
  }

  /**
   * How many client connections are open now (each paired with one upstream connection).
   *
   * @return a non-negative count
   */
  public int openConnections() {
    return links.size();
  }

  /**
   * Stops the proxy: closes the listener and every connection, and waits until all of the
   * proxy's threads have ended. Idempotent.
   *
   * @throws IllegalStateException if a thread of the proxy is still running five seconds after
   *     its sockets were closed (it would be reported as a leak otherwise)
   */
  @Override
  public void close() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      closeListener();
      modeChanged.signalAll();
    } finally {
      lock.unlock();
    }
    for (Link link : links) {
      link.close();
    }
    threads.shutdownNow();
    try {
      long deadline = System.nanoTime() + THREAD_STOP_TIMEOUT.toNanos();
      boolean stopped = threads.awaitTermination(THREAD_STOP_TIMEOUT.toMillis(),
          TimeUnit.MILLISECONDS);
      // A terminated pool may still have worker threads on their way out: wait for each.
      for (Thread thread : started) {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        thread.join(Math.max(1, left));
        stopped &= !thread.isAlive();
      }
      if (!stopped) {
        throw new IllegalStateException("Threads of " + this + " did not stop within "
            + THREAD_STOP_TIMEOUT.toSeconds() + " s of close()");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while closing " + this, e);
    }
  }

  /**
   * Describes the proxy and its state, for assertion messages.
   *
   * @return for example {@code "FaultProxy[127.0.0.1:40123 -> 127.0.0.1:11211, pass-through,
   *     listening, 1 open of 3 accepted]"}
   */
  @Override
  public String toString() {
    String listening;
    lock.lock();
    try {
      listening = closed ? "closed" : listener == null ? "refusing" : "listening";
    } finally {
      lock.unlock();
    }
    return "FaultProxy[" + hostPort(address) + " -> " + hostPort(upstream) + ", " + forwarding
        + ", " + listening + ", " + links.size() + " open of " + accepted.get() + " accepted]";
  }

  // -------------------------------------------------------------------------------------------
  // Listening

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException(this + " is closed");
    }
  }

  /** Changes the mode and wakes every writer that waits for it. Caller holds the lock. */
  private void setForwarding(Forwarding next) {
    forwarding = next;
    modeChanged.signalAll();
  }

  /**
   * Closes the listening socket and waits until its accept loop has ended: only then has the
   * kernel released the socket (the JDK defers the close of a socket that a thread is blocked
   * in), so only then are connection attempts refused. Caller holds the lock.
   */
  private void closeListener() {
    if (listener == null) {
      return;
    }
    closeQuietly(listener);
    listener = null;
    try {
      acceptor.get(THREAD_STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while closing the listener of " + address, e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("The accept loop of the proxy on " + hostPort(address)
          + " did not end", e);
    } catch (CancellationException e) {
      // close() stopped the pool first; the listener is closed either way
    }
  }

  /**
   * Binds the proxy's port again. {@code SO_REUSEADDR} lets it bind while old connections of the
   * port linger in {@code TIME_WAIT}; a few retries absorb a port that is briefly unavailable.
   * Caller holds the lock.
   */
  private ServerSocket rebind() {
    IOException last = null;
    for (int attempt = 0; attempt < REBIND_ATTEMPTS; attempt++) {
      ServerSocket socket = null;
      try {
        socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(address, LISTEN_BACKLOG);
        return socket;
      } catch (IOException e) {
        closeQuietly(socket);
        last = e;
        pause(REBIND_PAUSE);
      }
    }
    throw new UncheckedIOException("Cannot listen on " + hostPort(address) + " again", last);
  }

  private Future<?> acceptOn(ServerSocket socket) {
    return threads.submit(() -> {
      while (true) {
        Socket client;
        try {
          client = socket.accept();
        } catch (IOException e) {
          if (!socket.isClosed()) {
            LOG.warn("The proxy on {} stopped accepting connections", hostPort(address), e);
            closeQuietly(socket);
          }
          return; // refuse() or close() closed the listener
        }
        accepted.incrementAndGet();
        connect(client);
      }
    });
  }

  /** Pairs an accepted connection with a new upstream connection and starts copying. */
  private void connect(Socket client) {
    Socket server = new Socket();
    try {
      client.setTcpNoDelay(true);
      server.setTcpNoDelay(true);
      server.connect(upstream, UPSTREAM_CONNECT_TIMEOUT_MILLIS);
    } catch (IOException e) {
      LOG.debug("The proxy on {} cannot reach {}; closing the client connection",
          hostPort(address), hostPort(upstream), e);
      closeQuietly(client);
      closeQuietly(server);
      return;
    }
    Link link = new Link(client, server);
    links.add(link);
    if (closed) { // close() may have missed this link
      link.close();
      return;
    }
    try {
      link.start();
    } catch (RejectedExecutionException e) {
      link.close(); // close() shut the pool down meanwhile
    }
  }

  // -------------------------------------------------------------------------------------------
  // Forwarding

  /** One accepted connection, its upstream connection and the four threads that copy. */
  private final class Link {

    private final Socket client;
    private final Socket server;
    /** Directions still open; the link is closed when both have ended. */
    private final AtomicInteger openDirections = new AtomicInteger(2);
    /** Guarded by itself: the copying tasks, cancelled (interrupted) when the link closes. */
    private final List<Future<?>> tasks = new ArrayList<>(4);
    private boolean closed;

    Link(Socket client, Socket server) {
      this.client = client;
      this.server = server;
    }

    void start() {
      Direction up = new Direction(this, client, server);
      Direction down = new Direction(this, server, client);
      submit(up::read);
      submit(up::write);
      submit(down::read);
      submit(down::write);
    }

    private void submit(Runnable task) {
      Future<?> future = threads.submit(task);
      synchronized (tasks) {
        if (!closed) {
          tasks.add(future);
          return;
        }
      }
      future.cancel(true);
    }

    /** A direction ended cleanly (end of stream forwarded as a half-close). */
    void directionEnded() {
      if (openDirections.decrementAndGet() == 0) {
        close();
      }
    }

    /**
     * Closes both sockets, which ends blocking reads and writes, and interrupts the tasks, which
     * ends waits for a chunk or for the mode to change.
     */
    void close() {
      closeQuietly(client);
      closeQuietly(server);
      links.remove(this);
      List<Future<?>> running;
      synchronized (tasks) {
        closed = true;
        running = new ArrayList<>(tasks);
        tasks.clear();
      }
      for (Future<?> task : running) {
        task.cancel(true);
      }
    }
  }

  /** A chunk read from one side, or the end of its stream ({@code bytes == null}). */
  private record Chunk(byte[] bytes, long readAtNanos) {}

  /** Copies one direction of a link: a reader queues chunks, a writer forwards them in order. */
  private final class Direction {

    private final Link link;
    private final Socket from;
    private final Socket to;
    private final BlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(QUEUE_CHUNKS);

    Direction(Link link, Socket from, Socket to) {
      this.link = link;
      this.from = from;
      this.to = to;
    }

    void read() {
      byte[] buffer = new byte[CHUNK_SIZE];
      try {
        InputStream in = from.getInputStream();
        while (true) {
          int n = in.read(buffer);
          long now = System.nanoTime();
          if (n < 0) {
            queue.put(new Chunk(null, now));
            return;
          }
          queue.put(new Chunk(Arrays.copyOf(buffer, n), now));
        }
      } catch (IOException e) {
        link.close(); // reset by a peer, or closed by dropConnections() or close()
      } catch (InterruptedException e) {
        link.close(); // close() stops the pool
      }
    }

    void write() {
      try {
        OutputStream out = to.getOutputStream();
        while (true) {
          Chunk chunk = queue.take();
          awaitForwardable(chunk.readAtNanos());
          if (chunk.bytes() == null) {
            to.shutdownOutput();
            link.directionEnded();
            return;
          }
          out.write(chunk.bytes());
          out.flush();
        }
      } catch (IOException e) {
        link.close();
      } catch (InterruptedException e) {
        link.close();
      }
    }

    /** Waits until the current mode lets a chunk read at {@code readAtNanos} through. */
    private void awaitForwardable(long readAtNanos) throws InterruptedException, SocketException {
      lock.lock();
      try {
        while (true) {
          if (closed || to.isClosed()) {
            throw new SocketException("closed");
          }
          Forwarding mode = forwarding;
          if (mode.blackhole()) {
            modeChanged.await();
            continue;
          }
          long remaining = readAtNanos + mode.delayNanos() - System.nanoTime();
          if (remaining <= 0) {
            return;
          }
          modeChanged.awaitNanos(remaining);
        }
      } finally {
        lock.unlock();
      }
    }
  }

  // -------------------------------------------------------------------------------------------

  private static void closeQuietly(AutoCloseable closeable) {
    if (closeable == null) {
      return;
    }
    try {
      closeable.close();
    } catch (Exception e) {
      LOG.debug("Cannot close {}", closeable, e);
    }
  }

  /** Waits before retrying a bind: real time has to pass for the port to become free. */
  private static void pause(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while binding again", e);
    }
  }

  private static String hostPort(InetSocketAddress address) {
    String host = address.getAddress() == null ? address.getHostString()
        : address.getAddress().getHostAddress();
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + address.getPort();
  }
}
