package io.sustainablecache.hibernate;

import io.sustainablecache.CacheObserver;
import io.sustainablecache.CacheSettings;
import io.sustainablecache.CacheStats;
import io.sustainablecache.KeyPolicy;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.spi.CacheStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.hibernate.boot.registry.classloading.spi.ClassLoaderService;
import org.hibernate.boot.spi.SessionFactoryOptions;
import org.hibernate.cache.CacheException;
import org.hibernate.cache.cfg.spi.DomainDataRegionBuildingContext;
import org.hibernate.cache.cfg.spi.DomainDataRegionConfig;
import org.hibernate.cache.spi.AbstractRegionFactory;
import org.hibernate.cache.spi.CacheTransactionSynchronization;
import org.hibernate.cache.spi.DomainDataRegion;
import org.hibernate.cache.spi.QueryResultsRegion;
import org.hibernate.cache.spi.TimestampsRegion;
import org.hibernate.cache.spi.access.AccessType;
import org.hibernate.cache.spi.support.QueryResultsRegionTemplate;
import org.hibernate.cache.spi.support.TimestampsRegionTemplate;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hibernate's second-level cache over a {@link CacheStore} (ARCUS or memcached): one {@link
 * SustainableCache} per region. Select it with {@code
 * hibernate.cache.region.factory_class=sustainable} (or this class's name) and give it a store
 * with {@value #STORE}.
 *
 * <h2>Settings</h2>
 * <table>
 *   <caption>Hibernate properties</caption>
 *   <tr><th>property</th><th>value</th><th>default</th></tr>
 *   <tr><td>{@value #STORE}</td><td>a {@link CacheStore} instance (Spring passes its bean), a
 *       {@code Supplier<CacheStore>} instance, or the name of a class implementing {@code
 *       Supplier<CacheStore>} with a public no-argument constructor. A supplier this factory
 *       created and that implements {@link AutoCloseable} is closed when the session factory
 *       closes; a store or supplier passed in is the caller's to close.</td><td>required</td></tr>
 *   <tr><td>{@value #NAMESPACE_PREFIX}</td><td>put before each region's name to make its
 *       namespace (the prefix of its keys)</td><td>none</td></tr>
 *   <tr><td>{@value #SETTINGS}</td><td>a {@link CacheSettings} spec for every region, e.g.
 *       {@code ttl=10m, near-cache=10000:1s}</td><td>{@value #DEFAULT_SETTINGS}</td></tr>
 *   <tr><td>{@value #REGION_PREFIX}{@code <region name>.settings}</td><td>a spec for one region,
 *       over {@value #SETTINGS}. A region is emptied (a bulk update or delete, {@code
 *       Cache.evictAll}) on every store by the core's default, a new generation of its
 *       namespace ({@code invalidate-all-bound=1s}; {@code 0} turns it off)</td><td>none</td></tr>
 *   <tr><td>{@value #ENTRY_KEYS}</td><td>secret keys, base64, that sign every entry (the first
 *       signs, the others are accepted during a rotation); every instance of a namespace needs
 *       the same. No message shows a key</td><td>none: entries carry a checksum only</td></tr>
 *   <tr><td>{@value #METER_REGISTRY}</td><td>a Micrometer {@code MeterRegistry} instance: each
 *       region's meters, tagged {@code cache=<region name>} and {@code cache.manager=hibernate},
 *       removed when the session factory closes (needs {@code
 *       sustainable-cache-micrometer})</td><td>none</td></tr>
 *   <tr><td>{@value #OBSERVER}</td><td>a {@link CacheObserver} instance that every region's
 *       cache tells of its slow steps, for tracing. Hibernate runs the loads itself, so a
 *       region's steps are the write fences of {@code READ_WRITE} updates and deletes (placed,
 *       marked before the commit, released), each with its time and outcome. Micrometer:
 *       {@code SustainableCacheObservations.observer(observationRegistry)} of {@code
 *       sustainable-cache-micrometer} (Spring Boot passes its {@code CacheObserver}
 *       bean)</td><td>none</td></tr>
 * </table>
 *
 * <p>Access types: {@code READ_ONLY}, {@code NONSTRICT_READ_WRITE} and {@code READ_WRITE} (the
 * default), whose soft locks are {@linkplain SustainableCache#fence write fences} on the store;
 * {@code TRANSACTIONAL} is not supported and fails the session factory's start. Entity,
 * collection, natural-id, query-results and timestamps regions; the timestamps region is never
 * near-cached. See {@code docs/manual.md}, "Hibernate's second-level cache".
 *
 * <p>Thread-safe; Hibernate starts and stops it once per session factory.
 */
public final class SustainableCacheRegionFactory extends AbstractRegionFactory {

  /** The short name registered with Hibernate for {@code hibernate.cache.region.factory_class}. */
  public static final String SHORT_NAME = "sustainable";
  /** The property that gives the store: a {@link CacheStore}, or a supplier of one. */
  public static final String STORE = "hibernate.cache.sustainable.store";
  /** The property whose value is put before each region's name to make its namespace. */
  public static final String NAMESPACE_PREFIX = "hibernate.cache.sustainable.namespace-prefix";
  /** The property with the {@link CacheSettings} spec of every region. */
  public static final String SETTINGS = "hibernate.cache.sustainable.settings";
  /** The prefix of one region's properties: {@code <prefix><region name>.settings}. */
  public static final String REGION_PREFIX = "hibernate.cache.sustainable.region.";
  /**
   * The property that gives a Micrometer {@code MeterRegistry} instance to bind each region's
   * meters to (tags {@code cache=<region name>}, {@code cache.manager=hibernate}); needs {@code
   * sustainable-cache-micrometer}.
   */
  public static final String METER_REGISTRY = "hibernate.cache.sustainable.meter-registry";
  /**
   * The property with the secret keys that sign every region's entries (HMAC-SHA256): base64,
   * separated by commas or white space, each at least 16 bytes; the first signs, the others are
   * still accepted on reads (during a rotation). See {@link
   * io.sustainablecache.SustainableCacheBuilder#entryKey}.
   */
  public static final String ENTRY_KEYS = "hibernate.cache.sustainable.entry-keys";
  /**
   * The property that gives a {@link CacheObserver} instance to every region's cache, for
   * tracing (see {@link io.sustainablecache.SustainableCacheBuilder#observer}).
   */
  public static final String OBSERVER = "hibernate.cache.sustainable.observer";
  /** The settings under {@value #SETTINGS}. */
  public static final String DEFAULT_SETTINGS = "ttl=10m, max-clock-skew=2s";
  private static final Logger LOG = LoggerFactory.getLogger(SustainableCacheRegionFactory.class);

  private final Map<String, SustainableCache<Object>> caches = new ConcurrentHashMap<>();
  private volatile CacheStore store;
  private volatile AutoCloseable ownedSupplier;
  private volatile String namespacePrefix;
  private volatile CacheSettings settings;
  private volatile Map<String, Object> configValues;
  private volatile ClassLoader classLoader;
  private volatile RegionMeters meters;
  /** {@value #OBSERVER}; {@code null}: none. */
  private volatile CacheObserver observer;
  /** The entry keys, the signing key first; empty for none. */
  private volatile List<byte[]> entryKeys;

  /** Created by Hibernate, from the class name or {@value #SHORT_NAME}. */
  public SustainableCacheRegionFactory() {}

  @Override
  protected void prepareForUse(SessionFactoryOptions options, Map<String, Object> values) {
    ClassLoader context = Thread.currentThread().getContextClassLoader();
    this.classLoader = context != null ? context : getClass().getClassLoader();
    this.configValues = new HashMap<>(values); // Map.copyOf would refuse a null value
    this.namespacePrefix = String.valueOf(values.getOrDefault(NAMESPACE_PREFIX, ""));
    this.settings = spec(SETTINGS, values.get(SETTINGS))
        .withDefaults(CacheSettings.parse(DEFAULT_SETTINGS));
    this.store = resolveStore(values.get(STORE),
        options.getServiceRegistry().requireService(ClassLoaderService.class));
    this.entryKeys = entryKeys(values.get(ENTRY_KEYS), store);
    Object registry = values.get(METER_REGISTRY);
    this.meters = registry == null ? null : RegionMeters.of(registry);
    this.observer = observer(values.get(OBSERVER));
  }

  /** The observer of {@value #OBSERVER}: an instance, or none. */
  static CacheObserver observer(Object setting) {
    if (setting == null || setting instanceof CacheObserver) {
      return (CacheObserver) setting;
    }
    throw new CacheException(OBSERVER + " must be an io.sustainablecache.CacheObserver instance"
        + " (with Micrometer: SustainableCacheObservations.observer(observationRegistry)), not a "
        + setting.getClass().getName());
  }

  /**
   * The keys of {@value #ENTRY_KEYS}, decoded and checked by the core's rules now, not at the
   * first region; no message shows a key.
   */
  static List<byte[]> entryKeys(Object setting, CacheStore store) {
    String text = setting == null ? "" : setting.toString().trim();
    if (text.isEmpty()) {
      return List.of();
    }
    List<byte[]> keys = new ArrayList<>();
    for (String encoded : text.split("[,\\s]+")) {
      try {
        keys.add(Base64.getDecoder().decode(encoded));
      } catch (IllegalArgumentException e) {
        throw new CacheException(ENTRY_KEYS + ": key " + (keys.size() + 1) + " is not base64 (the"
            + " value is a secret and is not shown)");
      }
    }
    try {
      signed(SustainableCache.builder(store), keys);
    } catch (IllegalArgumentException e) {
      throw new CacheException(ENTRY_KEYS + ": " + e.getMessage(), e);
    }
    return List.copyOf(keys);
  }

  private static <V> SustainableCacheBuilder<V> signed(SustainableCacheBuilder<V> builder,
      List<byte[]> keys) {
    return keys.isEmpty() ? builder : builder.entryKey(keys.get(0),
        keys.subList(1, keys.size()).toArray(new byte[0][]));
  }

  private CacheStore resolveStore(Object setting, ClassLoaderService classes) {
    if (setting instanceof CacheStore given) {
      return given;
    }
    Object supplier = setting;
    if (setting instanceof String className && !className.isBlank()) {
      try {
        supplier = classes.classForName(className.trim()).getConstructor().newInstance();
      } catch (ReflectiveOperationException | RuntimeException e) {
        throw new CacheException(STORE + ": cannot create " + className + " with a public"
            + " no-argument constructor", e);
      }
      if (supplier instanceof AutoCloseable closeable) {
        ownedSupplier = closeable;
      }
    }
    if (supplier instanceof Supplier<?> s) {
      Object supplied = s.get();
      if (supplied instanceof CacheStore given) {
        return given;
      }
      throw new CacheException(STORE + ": " + supplier.getClass().getName()
          + " supplied " + (supplied == null ? "null" : supplied.getClass().getName())
          + ", not a io.sustainablecache.spi.CacheStore");
    }
    throw new CacheException(setting == null
        ? "sustainable-cache needs a store: set " + STORE + " to a CacheStore instance (e.g."
            + " SpymemcachedStore.of(client), ArcusStore.of(client)) or to the name of a class"
            + " implementing java.util.function.Supplier<CacheStore>"
        : STORE + " must be a CacheStore, a Supplier<CacheStore> or the name of a class"
            + " implementing Supplier<CacheStore>: " + setting.getClass().getName());
  }

  private static CacheSettings spec(String property, Object value) {
    if (value == null || String.valueOf(value).isBlank()) {
      return CacheSettings.empty();
    }
    try {
      return CacheSettings.parse(String.valueOf(value));
    } catch (IllegalArgumentException e) {
      throw new CacheException(property + ": " + e.getMessage(), e);
    }
  }

  @Override
  protected void releaseFromUse() {
    RegionMeters bound = meters;
    meters = null;
    if (bound != null) {
      bound.removeAll();
    }
    caches.values().forEach(SustainableCache::close);
    caches.clear();
    AutoCloseable owned = ownedSupplier;
    ownedSupplier = null;
    if (owned != null) {
      try {
        owned.close();
      } catch (Exception e) {
        LOG.warn("closing the store supplier {} failed", owned, e);
      }
    }
  }

  @Override
  public AccessType getDefaultAccessType() {
    return AccessType.READ_WRITE;
  }

  @Override
  public boolean isMinimalPutsEnabledByDefault() {
    return false; // every put from a load reads the key first anyway
  }

  /** Wall-clock milliseconds: the session's transaction start that {@link SustainableCache#putLoaded} takes. */
  @Override
  public long nextTimestamp() {
    return System.currentTimeMillis();
  }

  /**
   * The session's caching timestamp with a ticker reading beside it ({@link SessionReadStart}),
   * which {@code putFromLoad} hands to the cache.
   */
  @Override
  public CacheTransactionSynchronization createTransactionContext(
      SharedSessionContractImplementor session) {
    return new SessionReadStart(this);
  }

  /** One minute, in {@link #nextTimestamp()}'s unit. */
  @Override
  public long getTimeout() {
    return 60_000;
  }

  @Override
  public DomainDataRegion buildDomainDataRegion(DomainDataRegionConfig config,
      DomainDataRegionBuildingContext context) {
    verifyStarted();
    return new DomainRegion(config, this, context, cache(config.getRegionName(),
        codec(context.getSessionFactory()), false));
  }

  /** A region's settings: its own spec over every region's, over the defaults. */
  private CacheSettings regionSettings(String name) {
    return spec(REGION_PREFIX + name + ".settings",
        configValues.get(REGION_PREFIX + name + ".settings")).withDefaults(settings);
  }

  private SustainableCache<Object> cache(String regionName, EntryCodec codec, boolean farOnly) {
    return caches.computeIfAbsent(regionName, name -> {
      CacheSettings merged = regionSettings(name);
      CacheSettings region = farOnly ? withoutNearCache(merged) : merged;
      SustainableCache<Object> cache;
      try {
        SustainableCacheBuilder<Object> builder = signed(SustainableCache.builder(store),
            entryKeys)
            .namespace(StoreKeys.namespace(namespacePrefix, name))
            .settings(region)
            .keyPolicy(KeyPolicy.HASH)
            .codec(codec);
        CacheObserver traced = observer;
        cache = (traced == null ? builder : builder.observer(traced)).build();
      } catch (IllegalArgumentException | IllegalStateException e) {
        throw new CacheException("region " + name + ": " + e.getMessage(), e);
      }
      RegionMeters bound = meters;
      if (bound != null) {
        bound.bind(name, cache);
      }
      return cache;
    });
  }

  @Override
  public QueryResultsRegion buildQueryResultsRegion(String regionName,
      SessionFactoryImplementor sessionFactory) {
    verifyStarted();
    return new QueryResultsRegionTemplate(regionName, this, new QueryResultsStorage(
        cache(regionName, codec(sessionFactory), false)));
  }

  /** The timestamps region: never near-cached, whatever its settings say. */
  @Override
  public TimestampsRegion buildTimestampsRegion(String regionName,
      SessionFactoryImplementor sessionFactory) {
    verifyStarted();
    SustainableCache<Object> cache = cache(regionName, codec(sessionFactory), true);
    return new TimestampsRegionTemplate(regionName, this, new TimestampsStorage(cache,
        this::nextTimestamp, regionSettings(regionName).maxClockSkew().orElseThrow().toMillis()));
  }

  private EntryCodec codec(SessionFactoryImplementor factory) {
    return new EntryCodec(MappingFingerprints.of(factory), classLoader);
  }

  /** Settings without the near cache's: its size and bound, and its copy-on-read. */
  private static CacheSettings withoutNearCache(CacheSettings settings) {
    return settings.without("near-cache").without("near-cache-copy");
  }

  /**
   * The library's counters of one region.
   *
   * @param regionName the region's name as Hibernate reports it (with its prefix, if any)
   * @return the region's counters, or empty if there is no such region
   * @throws NullPointerException if {@code regionName} is {@code null}
   */
  public Optional<CacheStats> stats(String regionName) {
    SustainableCache<Object> cache = caches.get(regionName);
    return cache == null ? Optional.empty() : Optional.of(cache.stats());
  }

  /**
   * The names of the regions built so far.
   *
   * @return a sorted snapshot, never {@code null}
   */
  public Set<String> regionNames() {
    return new TreeSet<>(caches.keySet());
  }
}
