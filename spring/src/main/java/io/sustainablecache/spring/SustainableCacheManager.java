package io.sustainablecache.spring;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.BulkLoader;
import io.sustainablecache.KeyPolicy;
import io.sustainablecache.Namespaces;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.springframework.cache.Cache;
import org.springframework.cache.CacheManager;
import org.springframework.util.ClassUtils;

/**
 * A Spring {@link CacheManager} that creates one {@link SustainableSpringCache} (a {@link
 * SustainableCache} over a shared {@link CacheStore}) per cache name.
 *
 * <p><b>Use {@code @Cacheable(sync = true)}</b>: only then is the annotated method the cache's
 * loader, which lets the cache refresh entries ahead of expiry (see {@link
 * SustainableSpringCache}).
 *
 * <h2>Which caches exist</h2>
 * The caches named in {@link Builder#cache} are created by {@link Builder#build()}, so their
 * mistakes (a missing codec or TTL, an invalid namespace) fail at start-up. Other names are
 * created on first use from the {@link Builder#defaults default spec} if {@link
 * Builder#dynamic dynamic} (the default), and otherwise are unknown ({@link #getCache} returns
 * {@code null}). A cache needs a TTL and a value codec, from its own spec or the default spec:
 * there is no default codec, because Spring caches hold arbitrary objects and the safe way to
 * store them depends on their type. {@link #validate} (which {@link CacheNamesValidator} calls at
 * start-up with the names the caching annotations use) reports every cache that could not be
 * created, so that a missing codec fails the application's start, not its first request.
 *
 * <h2>Namespaces</h2>
 * Each cache has its own namespace (key prefix): its spec's, or the {@link
 * Builder#namespacePrefix prefix} followed by the cache name, made valid by {@link
 * Namespaces#derive} (a name with characters outside {@code [A-Za-z0-9_.+-]}, or too long, is
 * sanitized and gets a hash suffix, so two names never share a namespace). Two caches that would
 * share a namespace all the same (one configured to another's) are refused, naming both.
 *
 * <h2>Clearing</h2>
 * {@link SustainableSpringCache#clear()} and {@code @CacheEvict(allEntries = true)} are the
 * core's {@link SustainableCache#invalidateAll}, which by default works on ARCUS and plain
 * memcached alike, as a new generation of the namespace: this instance sees it when the call
 * returns, the others within the cache's {@code invalidate-all-bound} (1 s). A spec with {@code
 * invalidate-all-bound=0} turns the generation off (see {@link
 * SustainableCacheBuilder#invalidateAllBound}).
 *
 * <h2>Transactions</h2>
 * By default (and with spring-tx on the class path) the caches are transaction-aware: {@code
 * evict}, {@code put} and {@code clear} inside a Spring-managed, non-read-only transaction fence
 * their key at once and complete after the commit or rollback (see {@link
 * SustainableSpringCache}, "Inside database transactions"). {@link Builder#transactionAware
 * transactionAware(false)} makes them act at once, as outside transactions.
 *
 * <p>Thread-safe. {@link #close()} closes every cache (stopping their refresh executors) but not
 * the store.
 */
public final class SustainableCacheManager implements CacheManager, AutoCloseable {

  /** Whether spring-tx is on the class path: checked once; without it no cache is transaction-aware. */
  private static final boolean SPRING_TX = ClassUtils.isPresent(
      "org.springframework.transaction.support.TransactionSynchronizationManager",
      SustainableCacheManager.class.getClassLoader());

  private final CacheStore store;
  private final CacheSpec defaults;
  private final Map<String, CacheSpec> specs;
  private final boolean dynamic;
  private final String namespacePrefix;
  private final KeyEncoder keyEncoder;
  private final boolean allowNullValues;
  private final boolean transactionAware;
  private final Map<String, KeyedLoader<?>> bulkLoaders;
  private final ConcurrentHashMap<String, SustainableSpringCache> caches = new ConcurrentHashMap<>();
  private final Map<String, String> namespaces = new ConcurrentHashMap<>(); // namespace -> cache
  private final List<String> names = new CopyOnWriteArrayList<>(); // in creation order
  private final List<Consumer<? super SustainableSpringCache>> listeners =
      new CopyOnWriteArrayList<>();
  private final Object createLock = new Object();
  private volatile boolean closed;

  private SustainableCacheManager(Builder b) {
    this.store = b.store;
    this.defaults = b.defaults;
    this.specs = Collections.unmodifiableMap(new LinkedHashMap<>(b.specs));
    this.dynamic = b.dynamic;
    this.namespacePrefix = b.namespacePrefix;
    this.keyEncoder = b.keyEncoder;
    this.allowNullValues = b.allowNullValues;
    this.transactionAware = b.transactionAware && SPRING_TX;
    this.bulkLoaders = Map.copyOf(b.bulkLoaders);
  }

  /**
   * Starts building a manager over a store.
   *
   * @param store the store every cache uses; the manager does not close it
   * @return a new builder, not thread-safe
   * @throws NullPointerException if {@code store} is {@code null}
   */
  public static Builder builder(CacheStore store) {
    return new Builder(store);
  }

  /**
   * Returns the cache of that name, creating it on first use if it is configured or the manager
   * is dynamic. Listeners registered with {@link #onCacheCreated} are told about a new cache
   * after it is created, on the calling thread.
   *
   * @param name the cache name; never {@code null}
   * @return the cache, or {@code null} if the manager is not dynamic and has no such cache
   * @throws IllegalStateException if the manager is closed and the cache does not exist yet, or
   *     if the cache cannot be built: it would have no TTL or no value codec, shares its
   *     namespace with another cache, or its settings are invalid; the message names the cache
   *     and what to configure, and the cause is the core's exception, if any
   */
  @Override
  public Cache getCache(String name) {
    requireNonNull(name, "name");
    SustainableSpringCache cache = caches.get(name);
    if (cache != null) {
      return cache;
    }
    if (!dynamic && !specs.containsKey(name)) {
      return null;
    }
    SustainableSpringCache created;
    synchronized (createLock) {
      cache = caches.get(name);
      if (cache != null) {
        return cache;
      }
      if (closed) {
        throw new IllegalStateException("the cache manager is closed; cache '" + name
            + "' cannot be created");
      }
      created = create(name);
      caches.put(name, created);
      names.add(name);
    }
    for (Consumer<? super SustainableSpringCache> listener : listeners) {
      listener.accept(created);
    }
    return created;
  }

  /**
   * The names of the caches created so far, in the order they were created (configured caches
   * are created by {@link Builder#build()}, in the order they were configured).
   *
   * @return an immutable snapshot
   */
  @Override
  public Collection<String> getCacheNames() {
    return List.copyOf(names);
  }

  /**
   * Registers a listener told about every cache created from now on (not about caches created
   * before), for example to bind its metrics. It runs on the thread that created the cache, after
   * the cache is visible to {@link #getCache}; an exception it throws reaches that thread.
   *
   * @param listener the listener; never {@code null}
   */
  public void onCacheCreated(Consumer<? super SustainableSpringCache> listener) {
    listeners.add(requireNonNull(listener, "listener"));
  }

  /**
   * Creates the named caches now, and reports every one that cannot be created.
   *
   * @param namesAndUses cache names, each with where it is used (for the message), e.g. {@code
   *     "BookService.findBook"}
   * @throws IllegalStateException listing every cache that is unknown (manager not dynamic) or
   *     cannot be created, with the reason and where it is used
   */
  public void validate(Map<String, ? extends Collection<String>> namesAndUses) {
    List<String> problems = new ArrayList<>();
    for (Map.Entry<String, ? extends Collection<String>> e : namesAndUses.entrySet()) {
      String name = e.getKey();
      String uses = e.getValue().isEmpty() ? "" : " (used by " + String.join(", ", e.getValue())
          + ")";
      try {
        if (getCache(name) == null) {
          problems.add("cache '" + name + "'" + uses + " is not configured, and this manager"
              + " creates only configured caches");
        }
      } catch (RuntimeException ex) {
        problems.add(ex.getMessage() + uses);
      }
    }
    if (!problems.isEmpty()) {
      throw new IllegalStateException("SustainableCacheManager cannot create "
          + (problems.size() == 1 ? "a cache" : problems.size() + " caches") + ":\n  - "
          + String.join("\n  - ", problems));
    }
  }

  /**
   * The spec a cache is (or would be) built from: its own merged with the defaults.
   *
   * @param name the cache name
   * @return the effective spec, before the namespace is derived
   */
  public CacheSpec specOf(String name) {
    return specs.getOrDefault(requireNonNull(name, "name"), CacheSpec.empty()).withDefaults(defaults);
  }

  /**
   * Whether this manager's caches defer writes inside transactions (see {@link
   * SustainableSpringCache}, "Inside database transactions"): the builder's {@link
   * Builder#transactionAware} setting, and spring-tx on the class path.
   *
   * @return whether {@code evict}, {@code put} and {@code clear} inside a transaction are fenced
   *     and completed after it
   */
  public boolean isTransactionAware() {
    return transactionAware;
  }

  /**
   * The store every cache uses.
   *
   * @return the store
   */
  public CacheStore store() {
    return store;
  }

  /**
   * Closes every cache (their refresh executors stop). The store is not closed. Idempotent; {@link #getCache} fails for new names afterwards.
   */
  @Override
  public void close() {
    List<SustainableSpringCache> toClose;
    synchronized (createLock) {
      closed = true;
      toClose = new ArrayList<>(caches.values());
    }
    for (SustainableSpringCache cache : toClose) {
      cache.getNativeCache().close();
    }
  }

  private SustainableSpringCache create(String name) {
    CacheSpec spec = specOf(name);
    if (spec.settings().ttl().isEmpty()) {
      throw new IllegalStateException("cache '" + name + "' has no TTL: set one for it or a"
          + " default (CacheSettings' ttl; Spring Boot: sustainable-cache.settings.ttl or"
          + " sustainable-cache.caches." + name + ".settings.ttl)");
    }
    if (spec.codec().isEmpty()) {
      throw new IllegalStateException("cache '" + name + "' has no value codec. Spring caches"
          + " hold arbitrary objects, so each cache needs to be told how to store its values:"
          + " a value type stored as JSON (Spring Boot: sustainable-cache.caches." + name
          + ".value-type=com.example.Book), Java serialization with an allow-list"
          + " (sustainable-cache.caches." + name + ".codec=java-serialization plus value-type and"
          + " allow-list), a ValueCodec bean (sustainable-cache.caches." + name
          + ".codec-bean=beanName), or a default for every cache (sustainable-cache.value-type /"
          + " codec / codec-bean); without Spring Boot, CacheSpec.codec(...)");
    }
    String namespace = spec.namespace().orElseGet(() -> derivedNamespace(name));
    String owner = namespaces.putIfAbsent(namespace, name);
    if (owner != null && !owner.equals(name)) {
      throw new IllegalStateException("caches '" + owner + "' and '" + name + "' would share the"
          + " namespace '" + namespace + "' (and so their entries): give one of them its own"
          + " namespace (sustainable-cache.caches." + name + ".namespace)");
    }
    try {
      KeyedLoader<?> loader = bulkLoaders.get(name);
      if (loader != null) {
        loader.checkDecodable(keyEncoder);
      }
      SustainableCache<Object> cache = build(spec, namespace, loader);
      Class<?> valueType = spec.valueType().orElse(null);
      boolean near = spec.settings().hasNearCache();
      return new SustainableSpringCache(name, cache, keyEncoder, valueType, allowNullValues,
          near, transactionAware, loader);
    } catch (RuntimeException e) {
      namespaces.remove(namespace, name);
      throw new IllegalStateException("cache '" + name + "' could not be built from " + spec
          + ": " + e.getMessage(), e);
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private SustainableCache<Object> build(CacheSpec spec, String namespace,
      KeyedLoader<?> loader) {
    SustainableCacheBuilder<Object> b = SustainableCache.builder(store)
        .codec((ValueCodec<Object>) spec.codec().get());
    b.namespace(namespace).settings(spec.settings()).keyPolicy(KeyPolicy.HASH);
    spec.customizer().ifPresent(c -> c.accept((SustainableCacheBuilder) b));
    return loader == null ? b.build() : b.build(loader.encoded(keyEncoder));
  }

  /**
   * A bulk loader registered for a cache, with the type of its ids: the cache's bulk loader
   * decodes the keys it is given into ids ({@link KeyEncoder#decode}), calls it, and encodes the
   * ids of its answer again.
   */
  record KeyedLoader<K>(Class<K> keyType, BulkCacheLoader<K, ?> loader) {

    /** Fails now, at start-up, if the encoder cannot decode ids of this type at all. */
    void checkDecodable(KeyEncoder encoder) {
      try {
        encoder.decode("", keyType);
      } catch (IllegalArgumentException expected) {
        // "" is no key's encoding: the encoder decodes this type
      }
    }

    BulkLoader<Object> encoded(KeyEncoder encoder) {
      return keys -> {
        Map<K, String> encodedById = new LinkedHashMap<>(keys.size() * 2);
        for (String key : keys) {
          encodedById.put(encoder.decode(key, keyType), key);
        }
        return SustainableSpringCache.load(loader, encodedById);
      };
    }
  }

  /**
   * The namespace of a cache without one configured: {@link Namespaces#derive} of the prefix and
   * the name.
   *
   * @param name the cache name
   * @return a namespace the core accepts
   */
  String derivedNamespace(String name) {
    return Namespaces.derive(namespacePrefix, name);
  }

  @Override
  public String toString() {
    return "SustainableCacheManager[caches=" + caches.keySet() + ", store=" + store + "]";
  }

  /** Builds a {@link SustainableCacheManager}. Not thread-safe. */
  public static final class Builder {
    private final CacheStore store;
    private CacheSpec defaults = CacheSpec.empty();
    private final Map<String, CacheSpec> specs = new LinkedHashMap<>();
    private boolean dynamic = true;
    private String namespacePrefix = "";
    private KeyEncoder keyEncoder = KeyEncoder.typeTagged();
    private boolean allowNullValues = true;
    private boolean transactionAware = true;
    private final Map<String, KeyedLoader<?>> bulkLoaders = new LinkedHashMap<>();

    private Builder(CacheStore store) {
      this.store = requireNonNull(store, "store");
    }

    /**
     * The settings every cache starts from.
     *
     * @param defaults the default spec; never {@code null}
     * @return this builder
     */
    public Builder defaults(CacheSpec defaults) {
      this.defaults = requireNonNull(defaults, "defaults");
      return this;
    }

    /**
     * Configures a cache, created by {@link #build()}. A second call for a name replaces the first.
     *
     * @param name the cache name; never {@code null}
     * @param spec its settings, over the defaults; never {@code null}
     * @return this builder
     */
    public Builder cache(String name, CacheSpec spec) {
      specs.put(requireNonNull(name, "name"), requireNonNull(spec, "spec"));
      return this;
    }

    /**
     * Makes a cache coalesce its misses: its {@code @Cacheable(sync = true)} methods ({@code
     * get(key, Callable)}, {@code retrieve(key, Supplier)}) are answered by a loading cache
     * ({@link io.sustainablecache.SustainableCacheBuilder#build(BulkLoader)}) that loads with
     * {@code loader}, and concurrent misses of different ids, from any thread, and the cache's
     * background refreshes, become few calls of it (the cache's {@code coalesce} setting bounds
     * a call). A miss of an idle cache calls the loader at once, on the caller's thread. The
     * annotated method is then not called for keys of {@code keyType} (its body stays the
     * single-id query for callers outside the cache); keys of other types (and reads inside a
     * transaction that changed the key) still load with it. The loader receives the ids, decoded
     * from the cache's string keys by the manager's {@link KeyEncoder#decode} ({@link
     * KeyEncoder#typeTagged()}: scalar ids, a method's single parameter or its {@code key}
     * expression); an id it leaves out is cached as "no value" (a {@code null} result). The
     * cache is created by {@link #build()} over its spec or the defaults. A second call for a
     * name replaces the first.
     *
     * <pre>{@code
     * @Bean
     * SustainableCacheManagerCustomizer bookLoader(BookRepository repository) {
     *   return manager -> manager.bulkLoader("books", Long.class, repository::findAllByIdAsMap);
     * }
     * }</pre>
     *
     * @param name the cache name
     * @param keyType the type of the ids, which the key encoder must decode
     * @param loader the query for many ids; must be thread-safe
     * @param <K> the type of the ids
     * @return this builder
     * @throws NullPointerException if an argument is {@code null}
     */
    public <K> Builder bulkLoader(String name, Class<K> keyType, BulkCacheLoader<K, ?> loader) {
      requireNonNull(name, "name");
      bulkLoaders.put(name, new KeyedLoader<>(requireNonNull(keyType, "keyType"),
          requireNonNull(loader, "loader")));
      specs.putIfAbsent(name, CacheSpec.empty());
      return this;
    }

    /**
     * Configures caches that use the defaults only, created by {@link #build()}.
     *
     * @param names the cache names
     * @return this builder
     */
    public Builder cacheNames(Collection<String> names) {
      for (String name : names) {
        specs.putIfAbsent(requireNonNull(name, "name"), CacheSpec.empty());
      }
      return this;
    }

    /**
     * Whether caches that were not configured are created on first use from the defaults.
     * Default: {@code true}.
     *
     * @param dynamic {@code false} to know only the configured caches
     * @return this builder
     */
    public Builder dynamic(boolean dynamic) {
      this.dynamic = dynamic;
      return this;
    }

    /**
     * Put before each derived namespace, e.g. {@code "orders."} to keep several services apart
     * on one memcached.
     *
     * @param prefix the prefix, possibly empty; sanitized with the name
     * @return this builder
     */
    public Builder namespacePrefix(String prefix) {
      this.namespacePrefix = requireNonNull(prefix, "prefix");
      return this;
    }

    /**
     * Whether the caches hold {@code null} values, Spring's {@code allowNullValues} convention
     * (as {@code ConcurrentMapCacheManager} and {@code CaffeineCacheManager}). A {@code null} is
     * cached as "no value" for the cache's no-value TTL ({@link
     * io.sustainablecache.SustainableCache#putNoValue}) and read back as a {@code ValueWrapper}
     * holding {@code null}; so a plain {@code @Cacheable} method that returns {@code null} runs
     * once per no-value TTL, not on every call. Without, {@code put(key, null)} and a {@code null}
     * from a {@code sync} loader fail with {@link IllegalArgumentException}, as in Spring's own
     * caches. Default: {@code true}.
     *
     * @param allowNullValues whether {@code null} values are cached
     * @return this builder
     */
    public Builder allowNullValues(boolean allowNullValues) {
      this.allowNullValues = allowNullValues;
      return this;
    }

    /**
     * Whether writes inside a Spring-managed transaction are fenced at once and completed after
     * it (see {@link SustainableSpringCache}, "Inside database transactions"): then a read that
     * loads the old row between the change and the commit cannot leave it cached, on any
     * instance. Off, {@code evict}, {@code put} and {@code clear} act at once in transactions
     * too, as outside them. Takes effect only with spring-tx on the class path (without it there
     * are no Spring transactions, and this setting is ignored). Default: {@code true}.
     *
     * @param transactionAware {@code false} to write at once inside transactions
     * @return this builder
     */
    public Builder transactionAware(boolean transactionAware) {
      this.transactionAware = transactionAware;
      return this;
    }

    /**
     * How Spring's keys become string keys. Default: {@link KeyEncoder#typeTagged()}.
     *
     * @param encoder the encoder; must be injective
     * @return this builder
     */
    public Builder keyEncoder(KeyEncoder encoder) {
      this.keyEncoder = requireNonNull(encoder, "encoder");
      return this;
    }

    /**
     * Builds the manager and creates every configured cache.
     *
     * @return the manager
     * @throws IllegalStateException listing every configured cache that cannot be created
     */
    public SustainableCacheManager build() {
      SustainableCacheManager manager = new SustainableCacheManager(this);
      Map<String, Set<String>> configured = new LinkedHashMap<>();
      for (String name : specs.keySet()) {
        configured.put(name, Set.of());
      }
      try {
        manager.validate(configured);
      } catch (RuntimeException e) {
        manager.close();
        throw e;
      }
      return manager;
    }
  }
}
