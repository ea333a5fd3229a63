package io.sustainablecache.lab;

import io.sustainablecache.arcus.ArcusStore;
import io.sustainablecache.hibernate.SustainableCacheRegionFactory;
import io.sustainablecache.hibernate.SustainableHibernate;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.testing.RoundTripStore;
import io.sustainablecache.testkit.memcached.MemcachedCluster;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import net.spy.memcached.ArcusClient;
import org.h2.tools.Server;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.Transaction;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.cfg.Configuration;
import org.hibernate.stat.Statistics;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * {@code --hibernate}: Hibernate's second-level cache (issue 22) against a real memcached and a
 * real database, side by side in one run: no second-level cache, this project's provider ({@code
 * sustainable-cache-hibernate}) without and with its near region, and Hibernate's JCache provider
 * over a local Caffeine cache in each JVM.
 *
 * <p>The lab starts one memcached process ({@link MemcachedCluster}) and an H2 TCP server holding
 * {@code lab_item}: 10,000 versioned rows ({@link LabItem}). Three phases, and a fourth when
 * asked:
 *
 * <ul>
 *   <li><b>reads</b>: reader JVMs ({@link HibernateReader}, each its own {@code
 *       SessionFactory}) find entities by id in a closed loop, ids Zipf-distributed: reads and SQL
 *       statements per second after a warm-up, per provider (READ_WRITE);</li>
 *   <li><b>churn</b>: the same readers while writer threads of this JVM update entities
 *       (Zipf-distributed too) in transactions, per provider and access type (NONSTRICT_READ_WRITE,
 *       READ_WRITE). A read is <em>older than the bound</em> if it began more than {@code bound}
 *       after a writer's {@code commit()} of a newer version of its entity had returned (Hibernate's
 *       after-completion work, the cache's, included) and returned an older version; the bound is
 *       the near region's ({@code --near-bound}) for the near region and the JCache provider, 0
 *       for the provider without near region. After the writers stopped (and the bound passed),
 *       each reader checks every entity it read that its second-level cache holds against the row:
 *       the <em>stale entities after quiescence</em> (entity x instance);</li>
 *   <li><b>multiload</b> (this JVM): {@code session.findMultiple} of 100 ids of which 90 are
 *       cached, on the instance that cached them (a new session) and on another instance (another
 *       {@code SessionFactory}, empty near region or local cache): store round trips the call
 *       waited for, its store operations and the reads among them (see {@link RoundTripStore}),
 *       SQL statements, second-level cache hits; for this project's providers also through {@code
 *       SustainableHibernate.findMultiple} (rows {@code <provider> +SustainableHibernate}).</li>
 *   <li><b>hang</b> ({@code --phases hang}): the reads phase's readers while memcached is stopped
 *       ({@code SIGSTOP}) for {@code --hang} seconds: reads per second and latency of the reads
 *       that began while it was, this project's provider against no second-level cache (issue
 *       31 §1: a hung node must cost a read no more than the database's own time).</li>
 * </ul>
 *
 * Exits 1 if a run of this project's provider had a read older than the bound or a stale entity
 * after quiescence.
 */
final class HibernateScenario {

  static final String USAGE = """
      stampede-lab --hibernate: Hibernate's second-level cache against a real memcached (the lab
      starts one; needs the memcached binary) and an H2 TCP server the lab starts, 10,000
      versioned entities. Providers: none (no second-level cache), sustainable (this project's,
      no near region), sustainable-near (with its near region), jcache-caffeine (Hibernate's
      JCache provider over a local Caffeine cache per JVM). Phases:
        reads      reader JVMs find entities by id (Zipf) in a closed loop: reads/s, SQL/s
        churn      the same while writer threads update entities in transactions, per access
                   type (nonstrict-read-write, read-write): reads older than the bound, stale
                   entities after quiescence
        multiload  session.findMultiple of 100 ids, 90 cached (and this project's providers
                   through SustainableHibernate.findMultiple): store round trips, SQL statements
        hang       (only when asked) the reads phase's readers while memcached is stopped
                   (SIGSTOP) for --hang s: reads/s and p50/p99 of the reads that began while
                   it was, this project's provider against no second-level cache
      Writes hibernate-reads.csv, hibernate-churn.csv, hibernate-multiload.csv, hibernate.txt and
      charts/hibernate-reads.png under --out.

        --quick            a short preset: --seconds 4 --warm 1
        --smoke            the integration test's preset: --phases churn,multiload --entities
                           1000 --seconds 2 --warm 0 --readers 1 --near-bound 250, and fewer
                           runs: churn without a second-level cache (read-write), sustainable
                           and sustainable-near (both access types), jcache-caffeine
                           (read-write only); multiload sustainable only
        --phases LIST      reads,churn,multiload,hang (default: the first three)
        --churn LIST       the churn phase's runs, PROVIDER:ACCESS,... (e.g.
                           sustainable:nonstrict-read-write,sustainable:read-write; default:
                           sustainable, sustainable-near and jcache-caffeine under both access
                           types); l2_hit_ratio is the readers' second-level cache hit ratio
                           under the writes
        --seconds N        each run's reading time, the warm-up included (default 12)
        --warm N           seconds of each run not measured (default 4)
        --entities N       rows (default 10000)   --zipf S  exponent (default 1.0)
        --readers N        reader JVMs (default 2)   --threads N  per reader JVM (default 4)
        --writers N        writer threads of the churn phase (default 2; each transaction finds
                           the entity, changes it and commits after 5-20 ms)
        --near-bound MS    the near region's bound (default 1000)
        --hang N           seconds memcached is stopped in the hang phase (default 10; needs
                           --seconds of at least --warm + N + 2)
        --repeat N         run each configuration N times (seeds S, S+1, ...); tables show
                           medians, the CSV files every run
        --out DIR          (default lab-results)   --no-charts   --seed N (default 42)
      """;

  /** A second-level cache configuration. */
  enum Provider {
    NONE("none"),
    SUSTAINABLE("sustainable"),
    SUSTAINABLE_NEAR("sustainable-near"),
    JCACHE("jcache-caffeine");

    final String label;

    Provider(String label) {
      this.label = label;
    }

    boolean cached() {
      return this != NONE;
    }

    boolean sustainable() {
      return this == SUSTAINABLE || this == SUSTAINABLE_NEAR;
    }

    static Provider of(String label) {
      return Arrays.stream(values()).filter(p -> p.label.equals(label)).findFirst()
          .orElseThrow(() -> new IllegalArgumentException("unknown provider " + label));
    }
  }

  static final List<String> PHASES = List.of("reads", "churn", "multiload", "hang");
  /** The phases run without {@code --phases}. */
  static final List<String> DEFAULT_PHASES = List.of("reads", "churn", "multiload");
  static final List<String> ACCESS_TYPES = List.of("nonstrict-read-write", "read-write");
  static final int MULTILOAD_IDS = 100;
  static final int MULTILOAD_CACHED = 90;

  /** A churn run's configuration: a provider and an access type (Hibernate's external name). */
  record ChurnRun(Provider provider, String access) {}

  /** The options; {@code smoke} for {@code --smoke}: the churn runs of {@link #churnRuns}. */
  record Options(List<String> phases, int seconds, int warm, int entities, double zipf,
      int readers, int threads, int writers, long nearMillis, int repeat, Path out,
      boolean charts, long seed, boolean smoke, List<ChurnRun> churn, int hang) {

    /**
     * The churn phase's runs: each access type with this project's provider without and with its
     * near region and the local JCache provider; with {@code --smoke}, first no second-level cache
     * (the SQL statements per read without one, under the same writes), then this project's
     * provider under both access types and the local JCache provider under {@code read-write}
     * only (once is enough to show that the measurement can fail). {@code --churn} chooses them
     * ({@code churn}, {@code null} when not given).
     */
    List<ChurnRun> churnRuns() {
      if (churn != null) {
        return churn;
      }
      if (smoke) {
        return List.of(new ChurnRun(Provider.NONE, "read-write"),
            new ChurnRun(Provider.SUSTAINABLE, "nonstrict-read-write"),
            new ChurnRun(Provider.SUSTAINABLE_NEAR, "nonstrict-read-write"),
            new ChurnRun(Provider.SUSTAINABLE, "read-write"),
            new ChurnRun(Provider.SUSTAINABLE_NEAR, "read-write"),
            new ChurnRun(Provider.JCACHE, "read-write"));
      }
      return ACCESS_TYPES.stream().flatMap(access -> Stream.of(Provider.SUSTAINABLE,
          Provider.SUSTAINABLE_NEAR, Provider.JCACHE).map(p -> new ChurnRun(p, access))).toList();
    }

    /** The multiload phase's providers: with {@code --smoke}, this project's without near. */
    List<Provider> multiloadProviders() {
      return smoke ? List.of(Provider.SUSTAINABLE)
          : List.of(Provider.SUSTAINABLE, Provider.SUSTAINABLE_NEAR, Provider.JCACHE);
    }
  }

  /** One run's figures, in column order. */
  record Row(String config, long seed, Map<String, Double> figures) {

    double get(String figure) {
      return figures.get(figure);
    }
  }

  private final Options options;
  private final PrintStream out;
  private ReaderJvms readerJvms;
  /** The scenario's memcached, which the hang phase stops and resumes. */
  private MemcachedCluster memcached;

  private HibernateScenario(Options options, PrintStream out) {
    this.options = options;
    this.out = out;
  }

  static boolean requested(String[] args) {
    return Arrays.asList(args).contains("--hibernate");
  }

  static int run(String[] args, PrintStream out) {
    if (ScenarioStart.help(args, USAGE, out)) {
      return 0;
    }
    if (System.getProperty("org.jboss.logging.provider") == null) {
      System.setProperty("org.jboss.logging.provider", "slf4j");
    }
    ScenarioStart.prepare("net.spy.memcached", "error", "io.sustainablecache", "error",
        "io.sustainablecache.testkit", "warn", "org.hibernate", "error", "com.zaxxer", "warn");
    return ScenarioStart.guarded("the Hibernate scenario",
        () -> new HibernateScenario(parse(args), out).run());
  }

  static Options parse(String[] args) {
    List<String> phases = DEFAULT_PHASES;
    int seconds = 12;
    int hang = 10;
    int warm = 4;
    int entities = 10_000;
    double zipf = 1.0;
    int readers = 2;
    int threads = 4;
    int writers = 2;
    long nearMillis = 1000;
    int repeat = 1;
    Path out = Path.of("lab-results");
    boolean charts = true;
    long seed = 42;
    boolean smoke = false;
    List<ChurnRun> churn = null;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--hibernate" -> { }
        case "--quick" -> {
          seconds = 4;
          warm = 1;
        }
        case "--smoke" -> {
          phases = List.of("churn", "multiload");
          entities = 1_000;
          seconds = 2;
          warm = 0;
          readers = 1;
          nearMillis = 250;
          smoke = true;
        }
        case "--phases" -> {
          phases = List.of(NearScenario.value(args, ++i, arg).split(","));
          for (String phase : phases) {
            if (!PHASES.contains(phase)) {
              throw new IllegalArgumentException("--phases: unknown phase " + phase
                  + "; known: " + String.join(",", PHASES));
            }
          }
        }
        case "--churn" -> churn = churnRuns(NearScenario.value(args, ++i, arg));
        case "--seconds" -> seconds = number(args, ++i, arg);
        case "--warm" -> warm = number(args, ++i, arg);
        case "--entities" -> entities = number(args, ++i, arg);
        case "--zipf" -> zipf = Double.parseDouble(NearScenario.value(args, ++i, arg));
        case "--readers" -> readers = number(args, ++i, arg);
        case "--threads" -> threads = number(args, ++i, arg);
        case "--writers" -> writers = number(args, ++i, arg);
        case "--near-bound" -> nearMillis = number(args, ++i, arg);
        case "--hang" -> hang = number(args, ++i, arg);
        case "--repeat" -> repeat = number(args, ++i, arg);
        case "--out" -> out = Path.of(NearScenario.value(args, ++i, arg));
        case "--no-charts" -> charts = false;
        case "--seed" -> seed = number(args, ++i, arg);
        default -> throw new IllegalArgumentException("--hibernate: unknown option " + arg
            + " (see --hibernate --help)");
      }
    }
    if (readers < 1 || threads < 1 || writers < 1 || entities < MULTILOAD_IDS || warm < 0
        || seconds <= warm || repeat < 1 || nearMillis < 1 || hang < 1) {
      throw new IllegalArgumentException("--hibernate needs a reader, a thread, a"
          + " writer, " + MULTILOAD_IDS + " or more entities, more seconds than --warm, a"
          + " positive --near-bound, a positive --hang and --repeat 1 or more");
    }
    if (phases.contains("hang") && seconds < warm + hang + 2) {
      throw new IllegalArgumentException("--phases hang needs --seconds of at least --warm +"
          + " --hang + 2 (the hang begins 1 s after the warm-up and ends 1 s before the run): "
          + seconds + " < " + (warm + hang + 2));
    }
    return new Options(phases, seconds, warm, entities, zipf, readers, threads, writers,
        nearMillis, repeat, out, charts, seed, smoke, churn, hang);
  }

  /** {@code --churn}'s value: {@code provider:access} pairs, comma-separated. */
  private static List<ChurnRun> churnRuns(String value) {
    List<ChurnRun> runs = new ArrayList<>();
    for (String pair : value.split(",")) {
      String[] parts = pair.trim().split(":");
      if (parts.length != 2 || !ACCESS_TYPES.contains(parts[1])) {
        throw new IllegalArgumentException("--churn: expected PROVIDER:ACCESS with ACCESS one of "
            + String.join(", ", ACCESS_TYPES) + ": '" + pair + "'");
      }
      runs.add(new ChurnRun(Provider.of(parts[0]), parts[1]));
    }
    return List.copyOf(runs);
  }

  private static int number(String[] args, int i, String option) {
    try {
      return Integer.parseInt(NearScenario.value(args, i, option).trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " expects a number: '" + args[i] + "'");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Shared with the reader JVMs

  /** The scenario's store: the ARCUS adapter, the transactions scenario's timeout. */
  static CacheStore store(ArcusClient client) {
    return ArcusStore.builder(client).operationTimeout(TxScenario.OPERATION_TIMEOUT).build();
  }

  /**
   * A session factory over the H2 server at {@code jdbcUrl} (Hibernate's own pool of 8
   * connections), {@link LabItem} cached by {@code provider} with {@code accessType} (Hibernate's
   * external name, e.g. {@code read-write}); {@code store} for this project's provider (else
   * ignored), regions under {@code prefix}; its near region of bound {@code nearMillis} for
   * {@link Provider#SUSTAINABLE_NEAR}. Statistics on.
   */
  static SessionFactory sessionFactory(Provider provider, String accessType, String jdbcUrl,
      CacheStore store, String prefix, long nearMillis) {
    Configuration configuration = new Configuration().addAnnotatedClass(LabItem.class);
    Map<Object, Object> p = configuration.getProperties();
    p.put(AvailableSettings.URL, jdbcUrl);
    p.put(AvailableSettings.USER, "sa");
    p.put(AvailableSettings.PASS, "");
    p.put(AvailableSettings.POOL_SIZE, "8");
    p.put(AvailableSettings.HBM2DDL_AUTO, "none");
    p.put(AvailableSettings.GENERATE_STATISTICS, "true");
    p.put(AvailableSettings.USE_QUERY_CACHE, "false");
    p.put(AvailableSettings.USE_SECOND_LEVEL_CACHE, Boolean.toString(provider.cached()));
    p.put(AvailableSettings.DEFAULT_CACHE_CONCURRENCY_STRATEGY, accessType);
    switch (provider) {
      case SUSTAINABLE, SUSTAINABLE_NEAR -> {
        p.put(AvailableSettings.CACHE_REGION_FACTORY, SustainableCacheRegionFactory.SHORT_NAME);
        p.put(SustainableCacheRegionFactory.STORE, store);
        p.put(SustainableCacheRegionFactory.NAMESPACE_PREFIX, prefix);
        p.put(SustainableCacheRegionFactory.SETTINGS, "ttl=10m" + (provider == Provider
            .SUSTAINABLE_NEAR ? ", near-cache=" + nearSpec(nearMillis) : ""));
      }
      case JCACHE -> {
        p.put(AvailableSettings.CACHE_REGION_FACTORY, "jcache");
        p.put("hibernate.javax.cache.provider",
            "com.github.benmanes.caffeine.jcache.spi.CaffeineCachingProvider");
        p.put("hibernate.javax.cache.missing_cache_strategy", "create");
        // One cache manager per JVM: distinct region names keep session factories apart.
        p.put(AvailableSettings.CACHE_REGION_PREFIX, prefix);
      }
      default -> { }
    }
    return configuration.buildSessionFactory();
  }

  /** The near region's spec: as many entries as the scenario has entities at most. */
  private static String nearSpec(long nearMillis) {
    return TxScenario.NEAR_SIZE + ":" + nearMillis + "ms";
  }

  // ---------------------------------------------------------------------------------------------
  // The run

  private int run() throws IOException, SQLException, InterruptedException {
    Path dir = options.out();
    Files.createDirectories(dir);
    out.printf("stampede-lab --hibernate: %,d entities, Zipf %.2f; %d reader JVMs x %d threads,"
        + " %d s per run (%d s warm-up); %d writer threads in the churn phase; near bound %d ms%n",
        options.entities(), options.zipf(), options.readers(), options.threads(),
        options.seconds(), options.warm(), options.writers(), options.nearMillis());
    Map<String, List<Row>> results = new LinkedHashMap<>();
    PHASES.forEach(phase -> results.put(phase, new ArrayList<>()));
    int port = freePort();
    Server h2 = Server.createTcpServer("-tcpPort", Integer.toString(port), "-ifNotExists")
        .start();
    String jdbcUrl = "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:hibernate;DB_CLOSE_DELAY=-1"
        + ";LOCK_TIMEOUT=10000";
    try (MemcachedCluster memcached = MemcachedCluster.start(1);
        ReaderJvms jvms = options.phases().contains("reads") || options.phases()
            .contains("churn") || options.phases().contains("hang")
            ? new ReaderJvms(dir.resolve("hibernate-readers"), options.readers()) : null) {
      readerJvms = jvms;
      this.memcached = memcached;
      InetSocketAddress address = memcached.address(0);
      for (int r = 0; r < options.repeat(); r++) {
        long seed = options.seed() + r;
        if (options.phases().contains("reads")) {
          for (Provider provider : Provider.values()) {
            results.get("reads").add(readers("reads", provider, "read-write", seed, address,
                jdbcUrl));
          }
        }
        if (options.phases().contains("churn")) {
          for (ChurnRun run : options.churnRuns()) {
            results.get("churn").add(readers("churn", run.provider(), run.access(), seed,
                address, jdbcUrl));
          }
        }
        if (options.phases().contains("hang")) {
          // the reader JVMs get faster run after run (their JIT), so the pairs alternate their
          // order: with an even --repeat each config runs first as often as second
          for (Provider provider : r % 2 == 0 ? List.of(Provider.NONE, Provider.SUSTAINABLE)
              : List.of(Provider.SUSTAINABLE, Provider.NONE)) {
            results.get("hang").add(readers("hang", provider, "read-write", seed, address,
                jdbcUrl));
          }
        }
        if (options.phases().contains("multiload")) {
          for (Provider provider : options.multiloadProviders()) {
            results.get("multiload").add(multiload(provider, false, seed, address, jdbcUrl));
            if (provider.sustainable()) {
              results.get("multiload").add(multiload(provider, true, seed, address, jdbcUrl));
            }
          }
        }
      }
    } finally {
      h2.stop();
    }
    StringBuilder text = new StringBuilder();
    for (String phase : PHASES) {
      List<Row> rows = results.get(phase);
      if (rows.isEmpty()) {
        continue;
      }
      text.append(report(phase, medians(rows)));
      StringBuilder csv = new StringBuilder("config,seed,")
          .append(String.join(",", rows.get(0).figures().keySet())).append('\n');
      for (Row row : rows) {
        csv.append(row.config()).append(',').append(row.seed());
        row.figures().values().forEach(v -> csv.append(',').append(format(v)));
        csv.append('\n');
      }
      Files.writeString(dir.resolve("hibernate-" + phase + ".csv"), csv,
          StandardCharsets.UTF_8);
    }
    if (options.repeat() > 1) {
      text.append("(medians of ").append(options.repeat()).append(" runs each)\n");
    }
    out.print(text);
    Files.writeString(dir.resolve("hibernate.txt"), text, StandardCharsets.UTF_8);
    if (options.charts() && !results.get("reads").isEmpty()) {
      Files.createDirectories(dir.resolve("charts"));
      Charts.save(chart(medians(results.get("reads"))),
          dir.resolve("charts").resolve("hibernate-reads.png"));
    }
    out.printf("Wrote %s and hibernate-*.csv%n", dir.resolve("hibernate.txt"));
    boolean ok = results.get("churn").stream()
        .filter(r -> r.config().startsWith("sustainable"))
        .allMatch(r -> r.get("older_than_bound") == 0 && r.get("stale_entities") == 0);
    if (!ok) {
      out.println("FAILED: a run of this project's provider had a read older than the bound or"
          + " a stale entity after quiescence");
    }
    return ok ? 0 : 1;
  }

  /** Empties and fills {@code lab_item}: version 0, a name and a 100-character payload. */
  private void table(String jdbcUrl) throws SQLException {
    try (Connection c = DriverManager.getConnection(jdbcUrl, "sa", "");
        Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS lab_item");
      s.execute("CREATE TABLE lab_item(id BIGINT PRIMARY KEY, version BIGINT NOT NULL,"
          + " name VARCHAR(64), payload VARCHAR(255))");
      s.execute("INSERT INTO lab_item SELECT x, 0, 'item-' || x, REPEAT('p', 100)"
          + " FROM SYSTEM_RANGE(0, " + (options.entities() - 1) + ")");
    }
  }

  /** A run of the reader JVMs, with writers in this JVM for the churn phase. */
  private Row readers(String phase, Provider provider, String access, long seed,
      InetSocketAddress address, String jdbcUrl)
      throws IOException, SQLException, InterruptedException {
    boolean churn = phase.equals("churn");
    String config = provider.label + (churn ? " " + access : "");
    long hungFrom = 0;
    long hungTo = 0;
    out.printf("[%s %s, seed %d] ... ", phase, config, seed);
    out.flush();
    table(jdbcUrl);
    Path dir = options.out().resolve("hibernate-" + phase + "-" + provider.label
        + (churn ? "-" + access : "") + "-" + seed);
    Files.createDirectories(dir);
    String prefix = "hb" + Long.toHexString(System.nanoTime() & 0xFFFFFFL) + "-";
    for (int r = 0; r < options.readers(); r++) {
      Path part = dir.resolve("reader-" + r);
      for (String suffix : List.of(".ready", ".go", ".done", ".reads", ".stats")) {
        Files.deleteIfExists(Path.of(part + suffix));
      }
      readerJvms.next(r, String.join(" ", provider.label, access,
          address.getHostString() + ":" + address.getPort(), jdbcUrl, prefix,
          Integer.toString(options.entities()), Double.toString(options.zipf()),
          Integer.toString(options.threads()), Integer.toString(options.seconds()),
          Integer.toString(options.warm()), Long.toString(seed * 100 + r), part.toString(),
          Long.toString(options.nearMillis())));
    }
    List<Process> readers = readerJvms.processes;
    Writers writers = churn ? new Writers(provider, access, address, jdbcUrl, prefix, seed)
        : null;
    try {
      for (int r = 0; r < readers.size(); r++) {
        Scenarios.awaitFile(dir.resolve("reader-" + r + ".ready"), readers.get(r),
            "reader " + r + " did not start; see " + readerJvms.dir);
      }
      long startAt = System.currentTimeMillis() + 100;
      for (int r = 0; r < readers.size(); r++) {
        signal(dir.resolve("reader-" + r + ".go"), Long.toString(startAt));
      }
      if (phase.equals("hang")) { // memcached stopped (SIGSTOP) 1 s after the warm-up
        FaultSuite.sleepUntil(startAt + TimeUnit.SECONDS.toMillis(options.warm() + 1L));
        hungFrom = System.nanoTime();
        memcached.pause(0);
        try {
          FaultSuite.sleepUntil(startAt + TimeUnit.SECONDS.toMillis(options.warm() + 1L
              + options.hang()));
        } finally {
          hungTo = System.nanoTime();
          memcached.resume(0);
        }
      }
      if (writers != null) {
        writers.run(startAt, startAt + TimeUnit.SECONDS.toMillis(options.seconds()));
      }
      for (int r = 0; r < readers.size(); r++) {
        signal(dir.resolve("reader-" + r + ".done"), "done");
      }
      for (int r = 0; r < readers.size(); r++) {
        Path stats = dir.resolve("reader-" + r + ".stats");
        long limit = System.currentTimeMillis() + TimeUnit.SECONDS.toMillis(
            options.seconds() + 120L);
        while (!Files.exists(stats)) {
          if (!readers.get(r).isAlive() || System.currentTimeMillis() > limit) {
            throw new IllegalStateException("reader " + r + " did not finish; see "
                + readerJvms.dir);
          }
          Thread.sleep(20);
        }
      }
    } finally {
      if (writers != null) {
        writers.close();
      }
    }
    TxScenario.Reads reads = new TxScenario.Reads();
    double readsPerSecond = 0;
    double statementsPerSecond = 0;
    long[] sums = new long[9];
    for (int r = 0; r < options.readers(); r++) {
      TxReader.readInto(dir.resolve("reader-" + r + ".reads"), reads);
      long[] stats = Arrays.stream(Files.readString(dir.resolve("reader-" + r + ".stats"))
          .trim().split(" ")).mapToLong(Long::parseLong).toArray();
      double windowSeconds = stats[2] / 1e9;
      readsPerSecond += stats[0] / windowSeconds;
      statementsPerSecond += stats[3] / windowSeconds;
      for (int i = 0; i < stats.length; i++) {
        sums[i] += stats[i];
      }
    }
    long[] sorted = Arrays.copyOf(reads.latencies, reads.size);
    Arrays.sort(sorted);
    Map<String, Double> figures = new LinkedHashMap<>();
    if (churn) {
      List<TxScenario.Commit> commits = List.copyOf(writers.commits);
      long bound = provider == Provider.SUSTAINABLE_NEAR || provider == Provider.JCACHE
          ? options.nearMillis() : 0;
      long[] stale = TxScenario.stale(commits, reads, options.entities(),
          TimeUnit.MILLISECONDS.toNanos(bound));
      figures.put("writes", (double) commits.size());
      figures.put("refused_writes", (double) writers.refused.get());
      figures.put("reads", (double) reads.size);
      figures.put("stale_after_commit", (double) stale[0]);
      figures.put("bound_ms", (double) bound);
      figures.put("older_than_bound", (double) stale[2]);
      figures.put("cached_checked", (double) sums[7]);
      figures.put("stale_entities", (double) sums[8]);
    }
    figures.put("reads_per_s", readsPerSecond);
    figures.put("sql_per_s", statementsPerSecond);
    figures.put("sql_per_read", sums[0] == 0 ? 0 : (double) sums[3] / sums[0]);
    figures.put("l2_hit_ratio", sums[4] + sums[5] == 0 ? 0 : (double) sums[4] / (sums[4]
        + sums[5]));
    figures.put("p50_ms", LabRun.percentile(sorted, 0.50) / 1e6);
    figures.put("p99_ms", LabRun.percentile(sorted, 0.99) / 1e6);
    figures.put("failed_reads", (double) sums[1]);
    if (phase.equals("hang")) {
      long[] hung = new long[reads.size];
      int n = 0;
      for (int i = 0; i < reads.size; i++) {
        if (reads.starts[i] >= hungFrom && reads.starts[i] < hungTo) {
          hung[n++] = reads.latencies[i];
        }
      }
      hung = Arrays.copyOf(hung, n);
      Arrays.sort(hung);
      figures.put("hung_reads_per_s", n / ((hungTo - hungFrom) / 1e9));
      figures.put("hung_p50_ms", LabRun.percentile(hung, 0.50) / 1e6);
      figures.put("hung_p99_ms", LabRun.percentile(hung, 0.99) / 1e6);
    }
    Row row = new Row(config, seed, figures);
    out.printf(Locale.ROOT, "%,.0f reads/s, %,.0f SQL/s%s%n", readsPerSecond,
        statementsPerSecond, churn ? String.format(Locale.ROOT, ", %,.0f writes, %,.0f older"
            + " than the bound, %,.0f stale entities", row.get("writes"),
            row.get("older_than_bound"), row.get("stale_entities")) : "");
    return row;
  }

  /** The reader JVMs, started once for every run of the reads and churn phases. */
  private static final class ReaderJvms implements AutoCloseable {
    final Path dir;
    final List<Process> processes = new ArrayList<>();
    private final int[] runs;

    /** Starts {@code readers} JVMs. */
    ReaderJvms(Path dir, int readers) throws IOException {
      this.dir = dir;
      this.runs = new int[readers];
      Files.createDirectories(dir);
      for (int r = 0; r < readers; r++) {
        for (int n = 0; Files.deleteIfExists(dir.resolve("control-" + r + "." + n)); n++) {
          // the control files of an earlier scenario in the same directory
        }
        processes.add(ChildJvm.start(List.of("-Xmx384m", "-Dorg.jboss.logging.provider=slf4j",
            "-Dorg.slf4j.simpleLogger.log.org.hibernate=error",
            "-Dorg.slf4j.simpleLogger.log.net.spy.memcached=error",
            "-Dnet.spy.log.LoggerImpl=net.spy.memcached.compat.log.SLF4JLogger"),
            HibernateReader.class, List.of(dir.resolve("control-" + r).toString()),
            dir.resolve("reader-" + r + ".log")));
      }
    }

    /** Gives reader {@code r} its next run. */
    void next(int r, String arguments) throws IOException {
      signal(dir.resolve("control-" + r + "." + runs[r]++), arguments);
    }

    @Override
    public void close() throws IOException {
      for (int r = 0; r < processes.size(); r++) {
        if (processes.get(r).isAlive()) {
          next(r, "stop");
        }
      }
      for (Process p : processes) {
        try {
          if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          p.destroyForcibly();
        }
      }
    }
  }

  /** Writes {@code content} to {@code file} whole: a temporary file moved into place. */
  static void signal(Path file, String content) throws IOException {
    Path temporary = Path.of(file + ".tmp");
    Files.writeString(temporary, content + "\n");
    Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  /** The writer threads of a churn run: their session factory and their commit log. */
  private final class Writers implements AutoCloseable {
    final ConcurrentLinkedQueue<TxScenario.Commit> commits = new ConcurrentLinkedQueue<>();
    final AtomicLong refused = new AtomicLong();
    private final ArcusClient client;
    private final SessionFactory factory;
    private final long seed;

    Writers(Provider provider, String access, InetSocketAddress address, String jdbcUrl,
        String prefix, long seed) {
      this.seed = seed;
      this.client = provider.sustainable() ? TxScenario.client(address) : null;
      this.factory = sessionFactory(provider, access, jdbcUrl,
          client == null ? null : store(client), prefix, options.nearMillis());
    }

    void run(long startAtMillis, long endAtMillis) throws InterruptedException {
      while (System.currentTimeMillis() < startAtMillis) {
        Thread.sleep(Math.max(1, Math.min(20, startAtMillis - System.currentTimeMillis())));
      }
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < options.writers(); w++) {
        long writerSeed = seed * 1_000 + 500 + w;
        threads.add(new Thread(() -> write(endAtMillis, writerSeed), "hibernate-writer-" + w));
      }
      threads.forEach(Thread::start);
      for (Thread thread : threads) {
        thread.join();
      }
    }

    private void write(long endAtMillis, long writerSeed) {
      int[] ids = NearScenario.zipfSequence(options.entities(), options.zipf(), 1 << 16,
          writerSeed);
      SplittableRandom random = new SplittableRandom(writerSeed);
      int i = 0;
      while (System.currentTimeMillis() < endAtMillis) {
        long id = ids[i++ & ((1 << 16) - 1)];
        long delay = 5 + random.nextInt(16);
        try (Session session = factory.openSession()) {
          Transaction tx = session.beginTransaction();
          try {
            LabItem item = session.find(LabItem.class, id);
            item.payload(Long.toString(random.nextLong(), 36));
            session.flush();
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(delay));
            tx.commit();
            long returned = System.nanoTime();
            commits.add(new TxScenario.Commit((int) id, item.version(), returned, returned));
          } catch (RuntimeException e) { // an optimistic lock failure, a fence not placed
            if (tx.isActive()) {
              tx.rollback();
            }
            refused.incrementAndGet();
          }
        }
      }
    }

    @Override
    public void close() {
      factory.close();
      if (client != null) {
        client.shutdown();
      }
    }
  }

  /**
   * {@code findMultiple} of {@value #MULTILOAD_IDS} ids of which {@value #MULTILOAD_CACHED} were
   * cached by a {@code findMultiple} of theirs: on that instance (a new session), and on another
   * instance of a fresh cache (its own near region or local cache empty), each in its own
   * namespace.
   */
  private Row multiload(Provider provider, boolean entryPoint, long seed,
      InetSocketAddress address, String jdbcUrl) throws SQLException {
    String config = entryPoint ? provider.label + " +SustainableHibernate" : provider.label;
    out.printf("[multiload %s, seed %d] ... ", config, seed);
    out.flush();
    table(jdbcUrl);
    List<Long> all = LongStream.range(0, MULTILOAD_IDS)
        .map(i -> (i * 97 + seed) % options.entities()).boxed().toList();
    List<Long> cached = all.subList(0, MULTILOAD_CACHED);
    Map<String, Double> figures = new LinkedHashMap<>();
    ArcusClient client = provider.sustainable() ? TxScenario.client(address) : null;
    try {
      for (boolean sameInstance : List.of(true, false)) {
        String prefix = "ml" + Long.toHexString(System.nanoTime() & 0xFFFFFFL) + "-";
        RoundTripStore store = client == null ? null : new RoundTripStore(store(client));
        try (SessionFactory a = multiloadFactory(provider, jdbcUrl, store, prefix);
            SessionFactory b = sameInstance ? null
                : multiloadFactory(provider, jdbcUrl, store, prefix)) {
          try (Session session = a.openSession()) {
            session.findMultiple(LabItem.class, cached);
          }
          SessionFactory measured = sameInstance ? a : b;
          // On another instance, a second findMultiple too: every id cached then.
          for (String where : sameInstance ? List.of("_same") : List.of("_other", "_again")) {
            Statistics statistics = measured.getStatistics();
            statistics.clear();
            if (store != null) {
              store.reset();
            }
            int found;
            try (Session session = measured.openSession()) {
              Supplier<List<LabItem>> find = () -> entryPoint
                  ? SustainableHibernate.findMultiple(session, LabItem.class, all)
                  : session.findMultiple(LabItem.class, all);
              found = (store == null ? find.get() : store.measure(find)).size();
            }
            if (found != MULTILOAD_IDS) {
              throw new IllegalStateException("findMultiple found " + found + " of "
                  + MULTILOAD_IDS);
            }
            figures.put("round_trips" + where, store == null ? 0.0 : store.roundTrips());
            figures.put("store_ops" + where, store == null ? 0.0 : store.operations());
            figures.put("store_reads" + where,
                store == null ? 0.0 : store.singleReads() + store.bulkReads());
            figures.put("sql" + where, (double) statistics.getPrepareStatementCount());
            figures.put("l2_hits" + where, (double) statistics.getSecondLevelCacheHitCount());
            figures.put("l2_puts" + where, (double) statistics.getSecondLevelCachePutCount());
          }
        }
      }
    } finally {
      if (client != null) {
        client.shutdown();
      }
    }
    Row row = new Row(config, seed, figures);
    out.printf(Locale.ROOT, "%.0f round trips, %.0f SQL (same instance); %.0f round trips, %.0f"
        + " SQL (another instance); %.0f round trips, %.0f SQL (again)%n",
        row.get("round_trips_same"), row.get("sql_same"), row.get("round_trips_other"),
        row.get("sql_other"), row.get("round_trips_again"), row.get("sql_again"));
    return row;
  }

  private SessionFactory multiloadFactory(Provider provider, String jdbcUrl, CacheStore store,
      String prefix) {
    // JCache: the other instance's local cache must be its own, so its own region names.
    String regions = provider == Provider.JCACHE ? prefix + System.nanoTime() + "-" : prefix;
    return sessionFactory(provider, "read-write", jdbcUrl, store, regions, options.nearMillis());
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1,
        java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Reporting

  /** One row per configuration, in first-run order: each figure's median over the seeds. */
  static List<Row> medians(List<Row> rows) {
    Map<String, List<Row>> groups = new LinkedHashMap<>();
    rows.forEach(r -> groups.computeIfAbsent(r.config(), c -> new ArrayList<>()).add(r));
    List<Row> medians = new ArrayList<>();
    for (List<Row> group : groups.values()) {
      Map<String, Double> figures = new LinkedHashMap<>();
      for (String figure : group.get(0).figures().keySet()) {
        figures.put(figure, Repeats.m(group, r -> r.get(figure)));
      }
      medians.add(new Row(group.get(0).config(), group.get(0).seed(), figures));
    }
    return medians;
  }

  private String report(String phase, List<Row> rows) {
    StringBuilder b = new StringBuilder();
    b.append(switch (phase) {
      case "reads" -> String.format(Locale.ROOT, "%nreads by id: %d reader JVMs x %d threads,"
          + " closed loop, %,d entities, Zipf %.2f; READ_WRITE; %d s measured after %d s%n",
          options.readers(), options.threads(), options.entities(), options.zipf(),
          options.seconds() - options.warm(), options.warm());
      case "churn" -> String.format(Locale.ROOT, "%nchurn: the same readers while %d writer"
          + " threads update entities (Zipf) in transactions (commit after 5-20 ms)%n",
          options.writers());
      case "hang" -> String.format(Locale.ROOT, "%nhang: the same readers (READ_WRITE) while"
          + " memcached is stopped (SIGSTOP) for %d s, from 1 s after the warm-up; hung_*: the"
          + " reads that began while it was; none: no second-level cache, the baseline%n",
          options.hang());
      default -> String.format(Locale.ROOT, "%nfindMultiple of %d ids, %d cached (READ_WRITE)%n",
          MULTILOAD_IDS, MULTILOAD_CACHED);
    });
    List<String> header = new ArrayList<>(List.of("config"));
    header.addAll(rows.get(0).figures().keySet());
    List<List<String>> cells = new ArrayList<>();
    for (Row row : rows) {
      List<String> line = new ArrayList<>(List.of(row.config()));
      row.figures().values().forEach(v -> line.add(format(v)));
      cells.add(line);
    }
    b.append(Scenarios.table(header, cells));
    if (phase.equals("churn")) {
      b.append("""
          stale_after_commit: reads that began after a commit() of a newer version of their
          entity had returned and returned an older version; older_than_bound: the same, more
          than bound_ms after (goal 0 for sustainable); stale_entities: after quiescence, the
          entities a reader's second-level cache held in an older version than the row, summed
          over the readers (goal 0 for sustainable); refused_writes: transactions rolled back
          (optimistic lock failures, fences not placed).
          """);
    }
    return b.toString();
  }

  private static String format(double v) {
    return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v)
        : String.format(Locale.ROOT, "%.3f", v);
  }

  /** Reads and SQL statements per second per provider, from the reads phase. */
  static CategoryChart chart(List<Row> reads) {
    CategoryChart chart = new CategoryChartBuilder().width(1000).height(460)
        .title("Entity reads by id, two JVMs: reads and SQL statements per second")
        .xAxisTitle("second-level cache").yAxisTitle("per second").build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
    chart.getStyler().setYAxisMin(0.0);
    chart.getStyler().setYAxisDecimalPattern("#,##0");
    chart.getStyler().setLabelsVisible(true);
    chart.getStyler().setLabelsFontColorAutomaticEnabled(false);
    chart.getStyler().setLabelsFontColor(java.awt.Color.BLACK);
    List<String> configs = reads.stream().map(Row::config).toList();
    chart.addSeries("reads/s", configs, reads.stream().map(r -> r.get("reads_per_s")).toList());
    chart.addSeries("SQL statements/s", configs,
        reads.stream().map(r -> r.get("sql_per_s")).toList());
    return chart;
  }
}
