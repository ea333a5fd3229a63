package io.sustainablecache.testkit.memcached;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cluster of private memcached processes on free loopback ports, whose nodes a test (or the
 * lab) can kill and bring back, and whose contents it can read without any client library.
 *
 * <ul>
 *   <li>{@link #kill(int)} sends {@code SIGKILL} and waits for the process to exit: the kernel
 *       closes its connections and its port refuses new ones, which is what a client sees when a
 *       cache server crashes or its host dies with a reset.</li>
 *   <li>{@link #restart(int)} starts a new, empty process on the same port: the crashed server
 *       coming back (its items are gone, as after a real restart).</li>
 *   <li>{@link #holds(int, String)} sends a text-protocol {@code get} to one node and {@link
 *       #itemCount(int)} reads its {@code curr_items}: where the keys really are, whatever the
 *       clients' locators say.</li>
 * </ul>
 *
 * <p>Each node is started like {@link MemcachedServer#startLocal()} does (64 MiB, UDP off) with
 * one worker thread, so that three nodes fit a two-core machine. The processes are killed by
 * {@link #close()} or, at the latest, by a JVM shutdown hook. Needs the memcached binary (on
 * {@code PATH}, in {@code /usr/bin} or {@code /usr/local/bin}); without it {@link #start(int)}
 * aborts the test (fails on CI), as {@link MemcachedServer#startLocal()} does. Thread-safe.
 */
public final class MemcachedCluster implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(MemcachedCluster.class);

  private static final String LOOPBACK = "127.0.0.1";
  private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(5);
  /**
   * How long a probe ({@link #holds}, {@link #itemCount}) waits to connect and for the answer: a
   * local node answers within milliseconds, so this is how long a paused node gets to prove it
   * answers nothing.
   */
  private static final int PROBE_TIMEOUT_MILLIS = 1_000;
  private static final int PORT_ATTEMPTS = 3;

  private final Path binary;
  private final List<InetSocketAddress> addresses;
  private final Process[] processes;
  private final Thread shutdownHook;
  private boolean closed;

  private MemcachedCluster(Path binary, List<InetSocketAddress> addresses, Process[] processes) {
    this.binary = binary;
    this.addresses = List.copyOf(addresses);
    this.processes = processes;
    this.shutdownHook = new Thread(this::killAll, "memcached-cluster-shutdown");
    Runtime.getRuntime().addShutdownHook(shutdownHook);
  }

  /**
   * Starts {@code nodes} memcached processes on free loopback ports and waits until each accepts
   * connections.
   *
   * @param nodes how many, at least 1
   * @return the running cluster; close it to kill the processes
   * @throws org.opentest4j.TestAbortedException if there is no memcached binary and {@code CI}
   *     is not {@code true} (an {@link IllegalStateException} without opentest4j)
   * @throws IllegalStateException if there is no binary and {@code CI} is {@code true}, or a
   *     process does not start
   */
  public static MemcachedCluster start(int nodes) {
    if (nodes < 1) {
      throw new IllegalArgumentException("nodes must be at least 1: " + nodes);
    }
    Path binary = MemcachedServer.findBinary().orElseThrow(
        () -> MemcachedServer.unavailable(MemcachedServer.LOCAL_HOW_TO, System.getenv("CI")));
    List<InetSocketAddress> addresses = new ArrayList<>();
    Process[] processes = new Process[nodes];
    try {
      for (int i = 0; i < nodes; i++) {
        Process process = null;
        for (int attempt = 0; attempt < PORT_ATTEMPTS && process == null; attempt++) {
          int port = MemcachedServer.freeLoopbackPort();
          process = launch(binary, port);
          if (process != null) {
            addresses.add(new InetSocketAddress(LOOPBACK, port));
          }
        }
        if (process == null) {
          throw new IllegalStateException("memcached could not bind any of " + PORT_ATTEMPTS
              + " free loopback ports: other processes took them first");
        }
        processes[i] = process;
      }
    } catch (RuntimeException e) {
      for (Process process : processes) {
        if (process != null) {
          terminate(process);
        }
      }
      throw e;
    }
    MemcachedCluster cluster = new MemcachedCluster(binary, addresses, processes);
    LOG.info("Started a memcached cluster of {} nodes: {}", nodes, addresses);
    return cluster;
  }

  /** How many nodes the cluster has, dead or alive. */
  public int size() {
    return addresses.size();
  }

  /** Every node's address, in node order; a node keeps its address across restarts. */
  public List<InetSocketAddress> addresses() {
    return addresses;
  }

  /** One node's address. */
  public InetSocketAddress address(int node) {
    return addresses.get(node);
  }

  /**
   * The node with this address.
   *
   * @return its index, or -1 if no node has it
   */
  public int indexOf(InetSocketAddress address) {
    return addresses.indexOf(address);
  }

  /**
   * Kills a node's process with {@code SIGKILL} and waits until it has exited. Idempotent.
   *
   * @throws IllegalStateException if the cluster is closed
   */
  public synchronized void kill(int node) {
    requireOpen();
    Process process = processes[node];
    if (process != null) {
      terminate(process);
      processes[node] = null;
      LOG.info("Killed memcached node {} ({})", node, addresses.get(node));
    }
  }

  /**
   * Starts a new, empty process for a node on the node's port, after {@link #kill(int)}, and waits
   * until it accepts connections. Retries for a few seconds if the port is not free yet.
   *
   * @throws IllegalStateException if the node is running, the cluster is closed, or the port
   *     cannot be bound again
   */
  public synchronized void restart(int node) {
    requireOpen();
    if (processes[node] != null) {
      throw new IllegalStateException("node " + node + " is running");
    }
    int port = addresses.get(node).getPort();
    long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
    Process process = launch(binary, port);
    while (process == null && System.nanoTime() - deadline < 0) {
      sleep(Duration.ofMillis(100));
      process = launch(binary, port);
    }
    if (process == null) {
      throw new IllegalStateException("memcached could not bind port " + port + " again within "
          + STARTUP_TIMEOUT.toSeconds() + " s");
    }
    processes[node] = process;
    LOG.info("Restarted memcached node {} ({})", node, addresses.get(node));
  }

  /**
   * Stops a node's process with {@code SIGSTOP}: it keeps its items and its connections, but
   * answers nothing (a server that hangs, or a network partition without resets) until {@link
   * #resume(int)}; requests sent meanwhile are queued and answered then.
   *
   * @throws IllegalStateException if the node is not running, the cluster is closed, or the
   *     signal could not be sent
   */
  public synchronized void pause(int node) {
    signal(node, "STOP");
    LOG.info("Paused memcached node {} ({})", node, addresses.get(node));
  }

  /**
   * Continues a node's process stopped by {@link #pause(int)} ({@code SIGCONT}); harmless on a
   * node that is not paused.
   *
   * @throws IllegalStateException if the node is not running, the cluster is closed, or the
   *     signal could not be sent
   */
  public synchronized void resume(int node) {
    signal(node, "CONT");
    LOG.info("Resumed memcached node {} ({})", node, addresses.get(node));
  }

  private void signal(int node, String signal) {
    requireOpen();
    Process process = processes[node];
    if (process == null || !process.isAlive()) {
      throw new IllegalStateException("node " + node + " is not running");
    }
    try {
      Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!kill.waitFor(EXIT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot run kill -" + signal + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while sending SIG" + signal, e);
    }
  }

  /** Whether the node's process is running. */
  public synchronized boolean isRunning(int node) {
    Process process = processes[node];
    return process != null && process.isAlive();
  }

  /**
   * Whether the node holds an item under the key: a text-protocol {@code get} on a connection of
   * its own. The key is sent as ISO-8859-1 bytes, so keys with a DEL byte (lease keys) work.
   *
   * @throws UncheckedIOException if the node cannot be reached or answers something unexpected
   */
  public boolean holds(int node, String key) {
    return !request(node, "get " + key + "\r\n", "END\r\n").equals("END\r\n");
  }

  /**
   * The node's {@code curr_items} (items stored, including expired ones not yet reclaimed).
   *
   * @throws UncheckedIOException if the node cannot be reached or answers something unexpected
   */
  public long itemCount(int node) {
    String stats = request(node, "stats\r\n", "END\r\n");
    for (String line : stats.split("\r\n")) {
      if (line.startsWith("STAT curr_items ")) {
        return Long.parseLong(line.substring("STAT curr_items ".length()).trim());
      }
    }
    throw new UncheckedIOException(new IOException("no curr_items in the stats of node " + node));
  }

  /** Kills every process. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    killAll();
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException shutdownInProgress) {
      // the hook runs or will run; killing twice is harmless
    }
  }

  @Override
  public String toString() {
    return "MemcachedCluster" + addresses;
  }

  private synchronized void killAll() {
    for (int i = 0; i < processes.length; i++) {
      if (processes[i] != null) {
        terminate(processes[i]);
        processes[i] = null;
      }
    }
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException("the cluster is closed");
    }
  }

  /** Sends a request and reads the answer up to and including the line {@code end}. */
  private String request(int node, String request, String end) {
    InetSocketAddress address = addresses.get(node);
    try (Socket socket = new Socket()) {
      socket.connect(address, PROBE_TIMEOUT_MILLIS);
      socket.setSoTimeout(PROBE_TIMEOUT_MILLIS);
      OutputStream out = socket.getOutputStream();
      out.write(request.getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      InputStream in = new BufferedInputStream(socket.getInputStream());
      ByteArrayOutputStream answer = new ByteArrayOutputStream();
      byte[] terminator = ("\r\n" + end).getBytes(StandardCharsets.ISO_8859_1);
      byte[] first = end.getBytes(StandardCharsets.ISO_8859_1);
      while (true) {
        int b = in.read();
        if (b < 0) {
          throw new IOException("node " + node + " closed the connection; answer so far: "
              + answer.toString(StandardCharsets.ISO_8859_1));
        }
        answer.write(b);
        if (b != '\n') {
          continue;
        }
        byte[] sofar = answer.toByteArray();
        if (endsWith(sofar, terminator) || Arrays.equals(sofar, first)) {
          String text = answer.toString(StandardCharsets.ISO_8859_1);
          if (text.startsWith("ERROR") || text.startsWith("CLIENT_ERROR")
              || text.startsWith("SERVER_ERROR")) {
            throw new IOException("node " + node + " answered " + text.strip());
          }
          return text;
        }
        if (sofar.length > 4 * 1024 * 1024) {
          throw new IOException("node " + node + " answered more than 4 MiB");
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot query memcached node " + node + " at " + address, e);
    }
  }

  private static boolean endsWith(byte[] bytes, byte[] suffix) {
    if (bytes.length < suffix.length) {
      return false;
    }
    for (int i = 0; i < suffix.length; i++) {
      if (bytes[bytes.length - suffix.length + i] != suffix[i]) {
        return false;
      }
    }
    return true;
  }

  /**
   * Starts memcached on the port and waits until it accepts connections.
   *
   * @return the process, or {@code null} if the port was taken
   */
  private static Process launch(Path binary, int port) {
    List<String> command = new ArrayList<>(List.of(binary.toString(),
        "-l", LOOPBACK, "-p", Integer.toString(port), "-U", "0", "-m", "64", "-t", "1"));
    if ("root".equals(System.getProperty("user.name"))) {
      command.addAll(List.of("-u", "root")); // memcached refuses to run as root otherwise
    }
    Path output;
    Process process;
    try {
      output = Files.createTempFile("sustainable-cache-cluster-", ".log");
      process = new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(output.toFile())
          .start();
    } catch (IOException e) {
      throw new IllegalStateException("Cannot start " + String.join(" ", command), e);
    }
    try {
      InetSocketAddress address = new InetSocketAddress(LOOPBACK, port);
      long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
      while (process.isAlive() && !acceptsConnections(address)) {
        if (System.nanoTime() - deadline >= 0) {
          terminate(process);
          throw new IllegalStateException(String.join(" ", command) + " did not accept"
              + " connections within " + STARTUP_TIMEOUT.toSeconds() + " s; its output: "
              + read(output));
        }
        sleep(Duration.ofMillis(20));
      }
      if (process.isAlive()) {
        return process;
      }
      String log = read(output);
      if (log.contains("Address already in use")) {
        return null;
      }
      throw new IllegalStateException(String.join(" ", command) + " exited with code "
          + process.exitValue() + "; its output: " + log);
    } finally {
      try {
        Files.deleteIfExists(output); // the process keeps its open file; nothing is read later
      } catch (IOException e) {
        LOG.debug("Cannot delete {}", output, e);
      }
    }
  }

  private static String read(Path output) {
    try {
      String text = Files.readString(output, StandardCharsets.UTF_8).strip();
      return text.isEmpty() ? "(none)" : text;
    } catch (IOException e) {
      return "(unreadable: " + e + ")";
    }
  }

  private static void terminate(Process process) {
    process.destroyForcibly(); // SIGKILL: a crash, not a shutdown
    try {
      if (!process.waitFor(EXIT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        LOG.warn("memcached (pid {}) did not exit within {} s of SIGKILL", process.pid(),
            EXIT_TIMEOUT.toSeconds());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static boolean acceptsConnections(InetSocketAddress address) {
    try (Socket socket = new Socket()) {
      socket.connect(address, 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static void sleep(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for memcached", e);
    }
  }
}
