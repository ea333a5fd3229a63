package io.sustainablecache.lab;

import io.sustainablecache.AsyncBulkLoader;
import io.sustainablecache.AsyncLoader;
import io.sustainablecache.CacheStats;
import io.sustainablecache.RefreshPolicy;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.internal.Envelope;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreItem;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.random.RandomGenerator;

/**
 * One simulated app instance's caching strategy. {@link #get} returns when the request has its
 * value, and says how it got it.
 */
interface LabPolicy extends AutoCloseable {

  /** How a request was answered. */
  enum Outcome {
    /** From the cache, without waiting for a load. */
    HIT,
    /** No usable value: the request waited for a load (its own or a shared one). */
    MISS,
    /** PER's early recomputation on the request thread: a value existed, but it waited. */
    REFRESH
  }

  /** The strategies the lab compares. */
  enum Kind {
    /** Plain TTL demand-fill as most services write it: no lock, exptime = TTL. */
    NONE("none"),
    /** Demand-fill with per-key single-flight in the JVM: the library with RefreshPolicy.none(). */
    LOCK("lock"),
    /**
     * XFetch exactly as seed 000 ran it: delta = measured load time, beta 1, recomputed inline on
     * the request thread, no lock, server exptime = TTL (so the one-second tick bites).
     */
    PER("PER"),
    /** The library's default: SUS in the background, grace period, per-key dedup, CAS. */
    SUS("SUS");

    final String label;

    Kind(String label) {
      this.label = label;
    }

    static Kind parse(String name) {
      for (Kind kind : values()) {
        if (kind.label.equalsIgnoreCase(name.trim())) {
          return kind;
        }
      }
      throw new IllegalArgumentException("unknown policy '" + name
          + "'; expected one of none, lock, PER, SUS");
    }

    @Override
    public String toString() {
      return label;
    }
  }

  CompletableFuture<Outcome> get(String key);

  /** Background refreshes the instance's executor rejected; none without an executor. */
  default long rejected() {
    return 0;
  }

  /** The library's counters; empty for the lab's own policies. */
  default CacheStats stats() {
    return CacheStats.empty();
  }

  /** Loads {@code keys} with one bulk read and one bulk load (the library only). */
  default CompletableFuture<?> preload(Collection<String> keys) {
    throw new UnsupportedOperationException("only the library loads in bulk");
  }

  @Override
  default void close() {}

  /** What a policy instance needs from its run. */
  record Context(Timeline timeline, CacheStore store, SimulatedDatabase db, String namespace,
      Duration ttl, RandomGenerator random, SimExecutor simExecutor, int refreshThreads,
      int refreshQueue, Boolean lease, RunConfig.Tweaks tweaks) {

    String storeKey(String key) {
      return namespace + ":" + key;
    }

    int ttlSeconds() {
      return Math.toIntExact(ttl.toSeconds());
    }
  }

  static LabPolicy create(Kind kind, Context context) {
    return switch (kind) {
      case NONE -> new PlainTtl(context);
      case PER -> new InlinePer(context);
      case LOCK -> new Library(context, RefreshPolicy.none());
      case SUS -> new Library(context, RefreshPolicy.sustainable());
    };
  }

  /** Plain demand-fill: get; on a miss query the database and set with exptime = TTL. */
  final class PlainTtl implements LabPolicy {
    private final Context ctx;

    PlainTtl(Context ctx) {
      this.ctx = ctx;
    }

    @Override
    public CompletableFuture<Outcome> get(String key) {
      String storeKey = ctx.storeKey(key);
      if (read(ctx.store(), storeKey).isPresent()) {
        return CompletableFuture.completedFuture(Outcome.HIT);
      }
      return ctx.db().query(key).thenApply(value -> {
        if (value != null) { // plain demand-fill code does not cache "no row"
          write(ctx.store(), storeKey, value.getBytes(StandardCharsets.UTF_8), ctx.ttlSeconds());
        }
        return Outcome.MISS;
      });
    }
  }

  /** Seed 000's PER, using the library's own XFetch decision code. */
  final class InlinePer implements LabPolicy {
    private final Context ctx;
    private final RefreshPolicy xfetch = RefreshPolicy.xfetch(1.0);

    InlinePer(Context ctx) {
      this.ctx = ctx;
    }

    @Override
    public CompletableFuture<Outcome> get(String key) {
      String storeKey = ctx.storeKey(key);
      Optional<StoreItem> item = read(ctx.store(), storeKey);
      if (item.isPresent() && Envelope.isValid(item.get().value())) {
        byte[] bytes = item.get().value();
        long now = ctx.timeline().millis();
        if (!xfetch.shouldRefresh(now, Envelope.fetchedAt(bytes), Envelope.expiresAt(bytes),
            Envelope.loadMillis(bytes), ctx.random())) {
          return CompletableFuture.completedFuture(Outcome.HIT);
        }
        return load(key, storeKey, Outcome.REFRESH);
      }
      return load(key, storeKey, Outcome.MISS);
    }

    private CompletableFuture<Outcome> load(String key, String storeKey, Outcome outcome) {
      long start = ctx.timeline().millis();
      return ctx.db().query(key).thenApply(value -> {
        if (value == null) {
          return outcome;
        }
        long end = ctx.timeline().millis();
        byte[] bytes = Envelope.encode(end, end + ctx.ttl().toMillis(), end - start,
            value.getBytes(StandardCharsets.UTF_8));
        write(ctx.store(), storeKey, bytes, ctx.ttlSeconds());
        return outcome;
      });
    }
  }

  /**
   * The library itself, through {@link SustainableCache#findAsync} in virtual time and {@link
   * SustainableCache#find} on the request's thread in real time (a blocking loader, as a JDBC
   * query is, must not run on the client's I/O thread, where an asynchronous loader runs). A key
   * without a value is an empty answer, not an error. A request is a hit if its answer is the
   * value its own store read found, whichever thread completes it; anything else waited for a
   * load (its own, one it joined, or another instance's under the fleet lease).
   */
  final class Library implements LabPolicy {
    private final SustainableCache<String> cache;
    private final boolean sync;
    private final AsyncLoader<String> loader;
    private final AsyncBulkLoader<String> bulkLoader;
    private final io.sustainablecache.Loader<String> syncLoader;
    private final io.sustainablecache.BulkLoader<String> syncBulkLoader;

    Library(Context ctx, RefreshPolicy policy) {
      SustainableCacheBuilder<String> builder = SustainableCache.builder(ctx.store())
          .namespace(ctx.namespace()).ttl(ctx.ttl()).refreshPolicy(policy)
          .codec(ValueCodec.utf8()).clock(ctx.timeline()).ticker(ctx.timeline().ticker())
          .random(ctx.random())
          .scheduler(ctx.timeline().scheduler());
      if (ctx.lease() != null) {
        builder.fleetLease(ctx.lease());
      }
      if (ctx.tweaks().noValueTtl() != null) {
        builder.noValueTtl(ctx.tweaks().noValueTtl());
      }
      if (ctx.tweaks().ttlJitter() > 0) {
        builder.ttlJitter(ctx.tweaks().ttlJitter());
      }
      SimExecutor sim = ctx.simExecutor();
      if (sim != null) {
        builder.refreshExecutor(sim);
      } else {
        builder.refreshThreads(ctx.refreshThreads()).refreshQueueCapacity(ctx.refreshQueue());
      }
      this.cache = builder.build();
      this.sync = !ctx.timeline().isVirtual();
      // A load outside a request's scope is a background refresh (the refresh executor's).
      this.syncLoader = key -> join(ctx.db().query(key, !CountingStore.inRequest()));
      this.syncBulkLoader = keys -> join(ctx.db().queryAll(keys, !CountingStore.inRequest()));
      // In virtual time a refresh is a load inside a task of the simulated refresh executor.
      this.loader = key -> {
        CompletableFuture<String> query = ctx.db().query(key,
            sim == null ? !CountingStore.inRequest() : sim.inTask());
        return sim == null ? query : sim.track(query);
      };
      this.bulkLoader = keys -> {
        CompletableFuture<Map<String, String>> query = ctx.db().queryAll(keys,
            sim == null ? !CountingStore.inRequest() : sim.inTask());
        return sim == null ? query : sim.track(query);
      };
    }

    @Override
    public CompletableFuture<Outcome> get(String key) {
      CompletableFuture<Optional<String>> value;
      CountingStore.Request request = CountingStore.request();
      try {
        value = sync ? CompletableFuture.completedFuture(cache.find(key, syncLoader))
            : cache.findAsync(key, loader);
      } catch (RuntimeException e) {
        value = CompletableFuture.failedFuture(e);
      } finally {
        request.close();
      }
      return value.thenApply(v -> request.answeredFromRead(v) ? Outcome.HIT : Outcome.MISS);
    }

    @Override
    public CompletableFuture<?> preload(Collection<String> keys) {
      return sync ? CompletableFuture.completedFuture(cache.getAll(keys, syncBulkLoader))
          : cache.getAllAsync(keys, bulkLoader);
    }

    /** The result of a real-time query (already complete), its failure rethrown as it is. */
    private static <T> T join(CompletableFuture<T> query) throws Exception {
      try {
        return query.join();
      } catch (java.util.concurrent.CompletionException e) {
        if (e.getCause() instanceof Exception cause) {
          throw cause;
        }
        throw e;
      }
    }

    @Override
    public long rejected() {
      return cache.stats().count("refresh_rejected");
    }

    @Override
    public CacheStats stats() {
      return cache.stats();
    }

    @Override
    public void close() {
      cache.close();
    }
  }

  /** A plain blocking read, as demand-fill code is usually written; a failure is a miss. */
  private static Optional<StoreItem> read(CacheStore store, String key) {
    try {
      return store.gets(key).join();
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  /** A fire-and-forget write; a failed write is a lost fill, as in any demand-fill code. */
  private static void write(CacheStore store, String key, byte[] value, int exptime) {
    store.set(key, value, exptime);
  }
}
