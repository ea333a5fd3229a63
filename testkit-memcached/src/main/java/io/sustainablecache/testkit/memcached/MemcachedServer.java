package io.sustainablecache.testkit.memcached;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.opentest4j.TestAbortedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A real memcached server for integration tests.
 *
 * <p>{@link #shared()} returns one server per JVM, found in this order:
 * <ol>
 *   <li>the server named by the environment variable {@code MEMCACHED_ADDRESS}
 *       ({@code host:port}, IPv6 hosts in brackets);</li>
 *   <li>a Testcontainers {@code memcached:1.6} container, if a Docker engine is available;</li>
 *   <li>the {@code memcached} binary found on {@code PATH}, in {@code /usr/bin} or in
 *       {@code /usr/local/bin}, started as a child process on a free loopback port.</li>
 * </ol>
 * {@link #startLocal()} always starts a new private process from the binary, for tests that must
 * stop the server or freeze it.
 *
 * <p>When no server can be obtained the test is <em>aborted</em> (reported as skipped) with
 * {@link TestAbortedException}, unless the environment variable {@code CI} is {@code true}: then
 * it fails with {@link IllegalStateException}, so that a CI job cannot pass without running its
 * integration tests. Either message says how to provide a server.
 *
 * <p>This class needs only SLF4J. Testcontainers and opentest4j (which JUnit brings) are optional:
 * without Testcontainers on the class path the Docker step is skipped, and without opentest4j a
 * missing server is always an {@link IllegalStateException}. So a program that is not a test,
 * such as the stampede lab, can use it without test frameworks.
 *
 * <p>Processes started by this class are destroyed by {@link #stop()} or, at the latest, by a JVM
 * shutdown hook. Thread-safe.
 */
public final class MemcachedServer {

  /** The environment variable that names an already running server as {@code host:port}. */
  static final String ADDRESS_ENV = "MEMCACHED_ADDRESS";

  /** The image Testcontainers runs. */
  static final String IMAGE = "memcached:1.6";

  /** Why {@link #shared()} found no server, and how to provide one. */
  public static final String SHARED_HOW_TO = "No memcached server is available for the integration"
      + " tests. Provide one in any of these ways: install the memcached binary"
      + " (apt-get install -y memcached, or brew install memcached); or set " + ADDRESS_ENV
      + "=host:port to use a running server; or run a Docker engine so that Testcontainers can"
      + " start " + IMAGE + ".";

  /** Why {@link #shared()} found no server when Testcontainers is not on the class path. */
  public static final String SHARED_HOW_TO_WITHOUT_TESTCONTAINERS = "No memcached server is available."
      + " Provide one in either of these ways: install the memcached binary (apt-get install -y"
      + " memcached, or brew install memcached); or set " + ADDRESS_ENV + "=host:port to use a"
      + " running server.";

  /** Why {@link #startLocal()} could not start a server, and how to fix it. */
  public static final String LOCAL_HOW_TO = "This test starts and stops its own memcached process, but"
      + " no memcached binary was found on PATH, in /usr/bin or in /usr/local/bin. Install it"
      + " (apt-get install -y memcached, or brew install memcached). " + ADDRESS_ENV
      + " and Docker are not enough for this test.";

  private static final Logger LOG = LoggerFactory.getLogger(MemcachedServer.class);

  private static final int CONTAINER_PORT = 11211;
  private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration PROCESS_EXIT_TIMEOUT = Duration.ofSeconds(5);
  private static final int PROBE_TIMEOUT_MILLIS = 2_000;
  private static final int PORT_ATTEMPTS = 3;
  private static final int MAX_OUTPUT_CHARS = 2_000;
  private static final List<Path> WELL_KNOWN_BINARIES =
      List.of(Path.of("/usr/bin/memcached"), Path.of("/usr/local/bin/memcached"));

  private static final String LOOPBACK = "127.0.0.1";

  private static final boolean TESTCONTAINERS_PRESENT =
      onClassPath("org.testcontainers.DockerClientFactory");
  private static final boolean OPENTEST4J_PRESENT =
      onClassPath("org.opentest4j.TestAbortedException");

  private static final Object SHARED_LOCK = new Object();
  // Guarded by SHARED_LOCK: the shared server, or why there is none (at most one is non-null).
  private static MemcachedServer shared;
  private static RuntimeException sharedUnavailable;

  private final InetSocketAddress address;
  private final String description;
  private final boolean isShared;
  private final LocalProcess process;
  private final Runnable release;
  private final AtomicBoolean released = new AtomicBoolean();
  private final Thread shutdownHook;

  private MemcachedServer(InetSocketAddress address, String description, boolean isShared,
      LocalProcess process, Runnable release) {
    this.address = address;
    this.description = description;
    this.isShared = isShared;
    this.process = process;
    this.release = release;
    if (release == null) {
      this.shutdownHook = null;
    } else {
      this.shutdownHook = new Thread(this::releaseOnce, "memcached-shutdown-" + address.getPort());
      Runtime.getRuntime().addShutdownHook(shutdownHook);
    }
  }

  /**
   * Returns the server that every integration test of this JVM shares, obtaining it on the first
   * call (see the class documentation for the order of sources). Later calls return the same
   * instance, or fail the same way. Tests must therefore isolate themselves by key, for example
   * with a random key prefix.
   *
   * @return the shared server; never {@code null}
   * @throws TestAbortedException if no server can be obtained and {@code CI} is not {@code true}
   * @throws IllegalStateException if no server can be obtained and {@code CI} is {@code true}, if
   *     {@code MEMCACHED_ADDRESS} is malformed or nothing accepts connections there, or if the
   *     memcached binary exists but does not start
   */
  public static MemcachedServer shared() {
    synchronized (SHARED_LOCK) {
      if (shared != null) {
        return shared;
      }
      if (sharedUnavailable != null) {
        throw sharedUnavailable;
      }
      try {
        shared = obtainShared();
      } catch (RuntimeException e) {
        sharedUnavailable = e;
        throw e;
      }
      LOG.info("Shared memcached: {}", shared.description);
      return shared;
    }
  }

  /**
   * Starts a new private memcached process from the local binary, on a free loopback port, with
   * 64 MiB of memory, 2 threads and UDP disabled. The caller owns it and should {@link #stop()}
   * it; a JVM shutdown hook destroys it otherwise. Blocks until the port accepts connections (at
   * most 10 seconds).
   *
   * @return a running server that only the caller uses; never {@code null}
   * @throws TestAbortedException if there is no memcached binary and {@code CI} is not
   *     {@code true}
   * @throws IllegalStateException if there is no memcached binary and {@code CI} is
   *     {@code true}, or if the binary does not start
   */
  public static MemcachedServer startLocal() {
    Path binary = findBinary().orElseThrow(() -> unavailable(LOCAL_HOW_TO, System.getenv("CI")));
    MemcachedServer server = startBinary(binary, false);
    LOG.info("Started {}", server.description);
    return server;
  }

  /**
   * The address clients connect to.
   *
   * @return a resolved socket address; never {@code null}
   */
  public InetSocketAddress address() {
    return address;
  }

  /**
   * Where this server comes from, for logs and assertion messages, for example
   * {@code "memcached binary /usr/bin/memcached on 127.0.0.1:41231"},
   * {@code "MEMCACHED_ADDRESS=cache:11211"} or
   * {@code "Testcontainers memcached:1.6 on localhost:32768"}.
   *
   * @return a human-readable description; never {@code null}
   */
  public String description() {
    return description;
  }

  /**
   * Stops a server started by {@link #startLocal()}: kills the process and waits until it has
   * exited, so that its port refuses connections and its clients' connections are closed when
   * this method returns. Idempotent. Does
   * nothing on the {@link #shared()} server, which other tests keep using and which is released
   * when the JVM exits.
   */
  public void stop() {
    if (isShared) {
      return;
    }
    releaseOnce();
    if (shutdownHook != null) {
      try {
        Runtime.getRuntime().removeShutdownHook(shutdownHook);
      } catch (IllegalStateException shutdownInProgress) {
        // The hook is running or about to run; releaseOnce() makes that harmless.
      }
    }
  }

  /**
   * Freezes the process with {@code SIGSTOP}: the kernel still accepts connections and buffers
   * requests, but nothing is answered until {@link #resume()}. Used to test operation timeouts.
   *
   * @throws IllegalStateException if this server is not a local process of this JVM, or the
   *     signal cannot be delivered
   */
  public void suspend() {
    requireProcess("suspend").signal("STOP");
  }

  /**
   * Lets a {@linkplain #suspend() suspended} process run again with {@code SIGCONT}.
   *
   * @throws IllegalStateException if this server is not a local process of this JVM, or the
   *     signal cannot be delivered
   */
  public void resume() {
    requireProcess("resume").signal("CONT");
  }

  /**
   * Returns the {@linkplain #description() description}.
   *
   * @return the description
   */
  @Override
  public String toString() {
    return description;
  }

  private LocalProcess requireProcess(String action) {
    if (process == null || isShared || released.get()) {
      throw new IllegalStateException(
          "Cannot " + action + " " + description + ": only a running process started by"
              + " startLocal() can be signalled");
    }
    return process;
  }

  private void releaseOnce() {
    if (release != null && released.compareAndSet(false, true)) {
      release.run();
    }
  }

  private static MemcachedServer obtainShared() {
    String configured = System.getenv(ADDRESS_ENV);
    if (configured != null && !configured.isBlank()) {
      return external(configured.trim());
    }
    MemcachedServer container = fromTestcontainers();
    if (container != null) {
      return container;
    }
    String howTo = TESTCONTAINERS_PRESENT ? SHARED_HOW_TO : SHARED_HOW_TO_WITHOUT_TESTCONTAINERS;
    Path binary = findBinary().orElseThrow(() -> unavailable(howTo, System.getenv("CI")));
    return startBinary(binary, true);
  }

  private static MemcachedServer external(String configured) {
    InetSocketAddress address = parseAddress(configured);
    if (!acceptsConnections(address, PROBE_TIMEOUT_MILLIS)) {
      throw new IllegalStateException(ADDRESS_ENV + "=" + configured + " is set, but nothing"
          + " accepts connections there within " + PROBE_TIMEOUT_MILLIS + " ms. Start memcached"
          + " at that address, or unset " + ADDRESS_ENV + " to use Docker or a local binary.");
    }
    return new MemcachedServer(address, ADDRESS_ENV + "=" + configured, true, null, null);
  }

  /**
   * Parses {@code MEMCACHED_ADDRESS}.
   *
   * @param value {@code host:port}, with an IPv6 host in brackets ({@code [::1]:11211})
   * @return the resolved address
   * @throws IllegalStateException if the value is malformed or the host cannot be resolved
   */
  static InetSocketAddress parseAddress(String value) {
    String expected = ADDRESS_ENV + " must be host:port, for example 127.0.0.1:11211 or"
        + " [::1]:11211, but was \"" + value + "\"";
    int colon = value.lastIndexOf(':');
    if (colon <= 0 || colon == value.length() - 1) {
      throw new IllegalStateException(expected);
    }
    String host = value.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]") && host.length() > 2) {
      host = host.substring(1, host.length() - 1);
    } else if (host.indexOf(':') >= 0 || host.indexOf('[') >= 0 || host.indexOf(']') >= 0) {
      throw new IllegalStateException(expected + " (write an IPv6 host in brackets)");
    }
    int port;
    try {
      port = Integer.parseInt(value.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalStateException(expected + " (the port is not a number)", e);
    }
    if (port < 1 || port > 65_535) {
      throw new IllegalStateException(expected + " (the port must be between 1 and 65535)");
    }
    InetSocketAddress address = new InetSocketAddress(host, port);
    if (address.isUnresolved()) {
      throw new IllegalStateException(
          ADDRESS_ENV + "=" + value + ": cannot resolve host \"" + host + "\"");
    }
    return address;
  }

  /**
   * The exception that reports a missing server: a failure on CI, an aborted test elsewhere.
   *
   * @param howTo the message, which says how to provide a server
   * @param ci the value of the {@code CI} environment variable, may be {@code null}
   * @return an {@link IllegalStateException} if {@code ci} is {@code true} (ignoring case and
   *     surrounding blanks), otherwise a {@link TestAbortedException} (an
   *     {@link IllegalStateException} when opentest4j is not on the class path)
   */
  public static RuntimeException unavailable(String howTo, String ci) {
    if (ci != null && ci.strip().equalsIgnoreCase("true")) {
      return new IllegalStateException(howTo + " (CI=true, so this is a failure, not a skip.)");
    }
    return OPENTEST4J_PRESENT ? TestAbort.of(howTo) : new IllegalStateException(howTo);
  }

  private static boolean onClassPath(String className) {
    try {
      Class.forName(className, false, MemcachedServer.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  private static MemcachedServer fromTestcontainers() {
    if (!TESTCONTAINERS_PRESENT) {
      LOG.debug("Testcontainers is not on the class path; looking for a memcached binary");
      return null;
    }
    return Container.start();
  }

  /** Creates the abort; a class of its own so that only it needs opentest4j. */
  private static final class TestAbort {
    static RuntimeException of(String message) {
      return new TestAbortedException(message);
    }
  }

  /** The Testcontainers step; a class of its own so that only it needs Testcontainers. */
  private static final class Container {

    static MemcachedServer start() {
      try {
        if (!DockerClientFactory.instance().isDockerAvailable()) {
          LOG.debug("No Docker engine for Testcontainers; looking for a memcached binary");
          return null;
        }
      } catch (RuntimeException | LinkageError e) {
        LOG.debug("Testcontainers cannot look for Docker; looking for a memcached binary", e);
        return null;
      }
      GenericContainer<?> container = null;
      try {
        container = new GenericContainer<>(DockerImageName.parse(IMAGE))
            .withExposedPorts(CONTAINER_PORT);
        container.start();
        InetSocketAddress address =
            new InetSocketAddress(container.getHost(), container.getMappedPort(CONTAINER_PORT));
        GenericContainer<?> started = container;
        return new MemcachedServer(address,
            "Testcontainers " + IMAGE + " on " + hostPort(address), true, null,
            () -> stopContainer(started));
      } catch (RuntimeException | LinkageError e) {
        LOG.warn("Docker is available, but Testcontainers could not start {}; looking for a"
            + " memcached binary", IMAGE, e);
        if (container != null) {
          stopContainer(container);
        }
        return null;
      }
    }

    private static void stopContainer(GenericContainer<?> container) {
      try {
        container.stop();
      } catch (RuntimeException | LinkageError e) {
        LOG.warn("Could not stop the {} container; Testcontainers' reaper will remove it", IMAGE,
            e);
      }
    }
  }

  /** The memcached binary on the PATH or in a well-known place (also for {@link MemcachedCluster}). */
  static Optional<Path> findBinary() {
    String path = System.getenv("PATH");
    Stream<Path> onPath = path == null
        ? Stream.empty()
        : Stream.of(path.split(File.pathSeparator))
            .filter(dir -> !dir.isEmpty())
            .map(dir -> Path.of(dir, "memcached"));
    return Stream.concat(onPath, WELL_KNOWN_BINARIES.stream())
        .filter(candidate -> Files.isRegularFile(candidate) && Files.isExecutable(candidate))
        .findFirst();
  }

  private static MemcachedServer startBinary(Path binary, boolean isShared) {
    List<String> busyPorts = new ArrayList<>();
    for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
      int port = freeLoopbackPort();
      LocalProcess process = LocalProcess.start(binary, port);
      if (process != null) {
        InetSocketAddress address = loopback(port);
        return new MemcachedServer(address,
            "memcached binary " + binary + " on " + hostPort(address), isShared, process,
            process::terminate);
      }
      busyPorts.add(Integer.toString(port));
    }
    throw new IllegalStateException("memcached binary " + binary + " could not listen on any of"
        + " the free ports " + String.join(", ", busyPorts) + ": another process took each of"
        + " them first");
  }

  /** A port free on the loopback interface right now (also for {@link MemcachedCluster}). */
  static int freeLoopbackPort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot find a free loopback port", e);
    }
  }

  private static InetSocketAddress loopback(int port) {
    return new InetSocketAddress(LOOPBACK, port);
  }

  private static boolean acceptsConnections(InetSocketAddress address, int timeoutMillis) {
    try (Socket socket = new Socket()) {
      socket.connect(address, timeoutMillis);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Evaluates the condition at once and then every {@code interval} until it holds or
   * {@code atMost} has passed.
   *
   * @return whether the condition held in time
   * @throws IllegalStateException if the condition throws, or the thread is interrupted
   */
  private static boolean poll(Duration atMost, Duration interval, Callable<Boolean> condition) {
    long deadline = System.nanoTime() + atMost.toNanos();
    while (true) {
      try {
        if (condition.call()) {
          return true;
        }
      } catch (Exception e) {
        throw new IllegalStateException("Cannot check a memcached process", e);
      }
      if (System.nanoTime() - deadline >= 0) {
        return false;
      }
      try {
        Thread.sleep(interval.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while waiting for a memcached process", e);
      }
    }
  }

  private static String hostPort(InetSocketAddress address) {
    String host = address.getHostString();
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + address.getPort();
  }

  /** A memcached child process and the file that collects its output. */
  private static final class LocalProcess {

    private final Process process;
    private final Path output;
    private final String command;

    private LocalProcess(Process process, Path output, String command) {
      this.process = process;
      this.output = output;
      this.command = command;
    }

    /**
     * Starts memcached on the port and waits until it accepts connections.
     *
     * @return the process, or {@code null} if the port was taken before memcached could bind it
     * @throws IllegalStateException if memcached does not start for any other reason
     */
    static LocalProcess start(Path binary, int port) {
      List<String> command = new ArrayList<>(List.of(binary.toString(),
          "-l", LOOPBACK, "-p", Integer.toString(port), "-U", "0", "-m", "64", "-t", "2"));
      if ("root".equals(System.getProperty("user.name"))) {
        // memcached refuses to run as root unless it is told which user to run as.
        command.addAll(List.of("-u", "root"));
      }
      String commandLine = String.join(" ", command);
      Path output;
      Process process;
      try {
        output = Files.createTempFile("sustainable-cache-memcached-", ".log");
        process = new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .start();
      } catch (IOException e) {
        throw new IllegalStateException("Cannot start " + commandLine, e);
      }
      LocalProcess local = new LocalProcess(process, output, commandLine);
      InetSocketAddress address = loopback(port);
      if (!poll(STARTUP_TIMEOUT, Duration.ofMillis(20),
          () -> !process.isAlive() || acceptsConnections(address, 200))) {
        String log = local.output();
        local.terminate();
        throw new IllegalStateException(commandLine + " did not accept connections within "
            + STARTUP_TIMEOUT.toSeconds() + " s; its output: " + log);
      }
      if (process.isAlive()) {
        return local;
      }
      String log = local.output();
      local.terminate();
      if (log.contains("Address already in use")) {
        return null;
      }
      throw new IllegalStateException(
          commandLine + " exited with code " + process.exitValue() + "; its output: " + log);
    }

    void signal(String signal) {
      String failure = "Cannot send SIG" + signal + " to " + command;
      try {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
        if (!kill.waitFor(PROCESS_EXIT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
          kill.destroyForcibly();
          throw new IllegalStateException(failure + ": kill did not exit");
        }
        if (kill.exitValue() != 0) {
          throw new IllegalStateException(failure + ": kill exited with " + kill.exitValue());
        }
      } catch (IOException e) {
        throw new IllegalStateException(failure, e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(failure + ": interrupted", e);
      }
      awaitState(signal.equals("STOP"));
    }

    /** Waits until Linux reports the process stopped (or running); a no-op without /proc. */
    private void awaitState(boolean stopped) {
      Path stat = Path.of("/proc", Long.toString(process.pid()), "stat");
      if (!Files.isReadable(stat)) {
        return;
      }
      if (!poll(PROCESS_EXIT_TIMEOUT, Duration.ofMillis(5), () -> isStopped(stat) == stopped)) {
        throw new IllegalStateException("memcached process " + process.pid() + " did not "
            + (stopped ? "stop" : "continue") + " within " + PROCESS_EXIT_TIMEOUT.toSeconds()
            + " s");
      }
    }

    private static boolean isStopped(Path stat) throws IOException {
      // The state is the first field after the parenthesised command name.
      String line = Files.readString(stat, StandardCharsets.US_ASCII);
      char state = line.charAt(line.lastIndexOf(')') + 2);
      return state == 'T' || state == 't';
    }

    void terminate() {
      try {
        // SIGKILL: memcached holds nothing worth a graceful shutdown, takes up to a second to
        // exit on SIGTERM, and ignores SIGTERM while suspended.
        process.destroyForcibly();
        if (!process.waitFor(PROCESS_EXIT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
          LOG.warn("{} (pid {}) did not exit within {} s of SIGKILL", command, process.pid(),
              PROCESS_EXIT_TIMEOUT.toSeconds());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        try {
          Files.deleteIfExists(output);
        } catch (IOException e) {
          LOG.debug("Cannot delete {}", output, e);
        }
      }
    }

    String output() {
      try {
        String text = Files.readString(output, StandardCharsets.UTF_8).strip();
        if (text.isEmpty()) {
          return "(none)";
        }
        return text.length() <= MAX_OUTPUT_CHARS
            ? text
            : "..." + text.substring(text.length() - MAX_OUTPUT_CHARS);
      } catch (IOException e) {
        return "(unreadable: " + e + ")";
      }
    }
  }
}
