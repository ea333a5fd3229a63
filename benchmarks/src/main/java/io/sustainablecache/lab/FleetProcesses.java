package io.sustainablecache.lab;

import io.sustainablecache.arcus.ArcusStore;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ConnectionFactoryBuilder;

/**
 * A fleet of separate JVMs against one memcached ({@code --scenario fleet --processes N}): the
 * lab starts N child processes of its own class path ({@code java -cp <lab jar>
 * io.sustainablecache.lab.FleetProcesses ...}), each hosting one SUS instance with its own client
 * and issuing every N-th request of the run (1/N of the rate) from a common start instant, in a
 * common namespace. Each child writes what it saw to a part file; the parent merges the parts
 * into one result (fleet-wide loads per period, misses, latency percentiles, and the database
 * concurrency from every process's query intervals).
 *
 * <p>The same by hand, four shells (or one with {@code &}), a memcached at 127.0.0.1:11211:
 * <pre>
 * T=$(( $(date +%s%3N) + 5000 ))
 * for i in 0 1 2 3; do
 *   java -cp benchmarks/target/stampede-lab.jar io.sustainablecache.lab.FleetProcesses \
 *     127.0.0.1:11211 lab-manual $T $i 4 100 3 100 11 on 42 part-$i.txt &amp;
 * done; wait
 * </pre>
 */
final class FleetProcesses {

  private FleetProcesses() {}

  /** Runs one fleet run as {@code config.instances()} processes; returns the merged result. */
  static RunResult run(Scenarios.Context context, RunConfig config) throws IOException {
    InetSocketAddress address = context.handle().address;
    if (address == null) {
      throw new IllegalArgumentException("--processes needs --memcached");
    }
    int members = config.instances();
    Path dir = context.options().out().resolve("fleet-processes");
    Files.createDirectories(dir);
    String namespace = "lab-" + Long.toHexString(new SplittableRandom(System.nanoTime())
        .nextLong() & 0xFFFFFFFFL);
    // JVM start and the client connection take a second or two on a small machine.
    long startAt = System.currentTimeMillis() + 2_000L + 500L * members;
    context.out().printf("[fleet] %s ... ", config.describe());
    context.out().flush();
    long wallStart = System.nanoTime();
    List<Process> processes = new ArrayList<>();
    List<Path> parts = new ArrayList<>();
    for (int i = 0; i < members; i++) {
      Path part = dir.resolve(config.name() + "-seed" + config.seed() + "-member" + i + ".txt");
      Files.deleteIfExists(part);
      parts.add(part);
      processes.add(ChildJvm.start(List.of("-Xmx256m"), FleetProcesses.class, List.of(
          address.getHostString() + ":" + address.getPort(),
          namespace, Long.toString(startAt), Integer.toString(i), Integer.toString(members),
          Integer.toString(config.tps()), Integer.toString(config.ttlSeconds()),
          Integer.toString(config.dbMillis()), Integer.toString(config.periods()),
          Boolean.FALSE.equals(config.lease()) ? "off" : "on", Long.toString(config.seed()),
          part.toString()),
          dir.resolve(config.name() + "-seed" + config.seed() + "-member" + i + ".log")));
    }
    long limit = config.durationMillis() + 120_000;
    for (int i = 0; i < members; i++) {
      Process p = processes.get(i);
      try {
        if (!p.waitFor(limit, TimeUnit.MILLISECONDS)) {
          processes.forEach(Process::destroyForcibly);
          throw new IllegalStateException("fleet member " + i + " did not finish");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        processes.forEach(Process::destroyForcibly);
        throw new IllegalStateException("interrupted", e);
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException("fleet member " + i + " failed (exit " + p.exitValue()
            + "); see " + dir);
      }
    }
    List<LabRun.Part> read = new ArrayList<>();
    for (Path part : parts) {
      read.add(LabRun.Part.read(config, part));
    }
    RunResult result = LabRun.merge(config, read, System.nanoTime() - wallStart);
    context.out().printf(Locale.ROOT, "%d misses, %.2f loads/period, p99 %.0f ms (%.1f s)%n",
        result.misses(), result.loadsPerPeriod(), result.p99Ms(), result.wallMillis() / 1000.0);
    return result;
  }

  /**
   * A member: {@code host:port namespace startAtMillis member members tps ttlSeconds dbMillis
   * periods lease(on|off) seed partFile}.
   */
  public static void main(String[] args) throws Exception {
    if (args.length != 12) {
      System.err.println("usage: FleetProcesses host:port namespace startAtMillis member members"
          + " tps ttlSeconds dbMillis periods on|off seed partFile");
      System.exit(2);
    }
    InetSocketAddress address = StampedeLab.StoreHandle.parseAddress(args[0]);
    int member = Integer.parseInt(args[3]);
    int members = Integer.parseInt(args[4]);
    RunConfig config = new RunConfig(LabPolicy.Kind.SUS, members, Integer.parseInt(args[5]),
        Integer.parseInt(args[6]), Integer.parseInt(args[7]), Integer.parseInt(args[8]), 1, 1.0,
        0, 4, 1024, Long.parseLong(args[10]), "on".equals(args[9]));
    ArcusClient client = new ArcusClient(new ConnectionFactoryBuilder().build(),
        List.of(address));
    try {
      long startAt = Long.parseLong(args[2]);
      if (System.currentTimeMillis() > startAt) {
        System.err.println("warning: member " + member + " started "
            + (System.currentTimeMillis() - startAt) + " ms late");
      }
      LabRun.Part part = LabRun.member(config, ArcusStore.of(client), startAt, args[1], member,
          members);
      part.write(Path.of(args[11]));
    } finally {
      client.shutdown();
    }
    System.exit(0);
  }
}
