package io.sustainablecache.spring.boot.autoconfigure;

import io.micrometer.core.instrument.Tag;
import io.micrometer.observation.ObservationRegistry;
import io.sustainablecache.CacheObserver;
import io.sustainablecache.CacheSettings;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.hibernate.SustainableCacheRegionFactory;
import io.sustainablecache.micrometer.SustainableCacheObservations;
import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.spring.CacheNamesValidator;
import io.sustainablecache.spring.CacheSpec;
import io.sustainablecache.spring.SustainableCacheManager;
import io.sustainablecache.spring.boot.autoconfigure.SustainableCacheSettings.Codec;
import java.io.Serializable;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.cache.metrics.CacheMetricsRegistrar;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.hibernate.autoconfigure.HibernatePropertiesCustomizer;
import org.springframework.cache.CacheManager;
import org.springframework.cache.interceptor.CacheAspectSupport;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Auto-configures a {@link SustainableCacheManager} as the application's {@link CacheManager}.
 *
 * <ul>
 *   <li>Active when caching is enabled ({@code @EnableCaching}), no {@link CacheManager} bean is
 *       defined (a user's manager always wins: this backs off) and {@code
 *       sustainable-cache.enabled} is not {@code false}. Ordered before Spring Boot's {@code
 *       CacheAutoConfiguration}, which then backs off in turn. Spring Boot's {@code
 *       spring.cache.type} is honoured: when it names one of Boot's providers ({@code none},
 *       {@code simple}, {@code caffeine}, ...), this backs off and Boot's provider is used.</li>
 *   <li>The store: a user's {@link CacheStore} bean, or else one created by the adapter on the
 *       class path ({@link CacheStoreFactory}: {@code sustainable-cache-arcus} or {@code
 *       sustainable-cache-spymemcached}) from {@code sustainable-cache.addresses} or {@code
 *       sustainable-cache.arcus.*}; its client is shut down with the context, after its queued
 *       operations were sent and answered (at most {@code sustainable-cache.shutdown-timeout},
 *       5 s by default).</li>
 *   <li>Caches: from {@link SustainableCacheProperties}, then every {@link
 *       SustainableCacheManagerCustomizer}. Caches listed in the properties are created at
 *       start-up, and so are the caches the caching annotations name ({@link
 *       CacheNamesValidator}): a cache without a value codec or TTL fails the start with a message
 *       naming the property to set.</li>
 *   <li>Metrics (Micrometer, {@code sustainable-cache-micrometer} and {@code spring-boot-cache} on
 *       the class path): a {@code CacheMeterBinderProvider} so that Spring Boot binds {@code
 *       SustainableCacheMetrics} to the caches that exist at start-up, and a {@link
 *       CacheCreatedListener} that binds caches created later, with the same {@code cache} and
 *       {@code cache.manager} tags.</li>
 *   <li>Tracing ({@code sustainable-cache-micrometer} on the class path and an {@code
 *       ObservationRegistry} bean, which Spring Boot's Actuator defines): a {@link CacheObserver}
 *       that every cache of the manager is built with ({@code
 *       SustainableCacheObservations}): observations of loads, refreshes, fleet leases and write
 *       fences. A {@link CacheObserver} bean of the application's own is used instead.</li>
 *   <li>Hibernate's second-level cache ({@code sustainable-cache-hibernate} and Spring Boot's
 *       Hibernate support on the class path): {@link HibernatePropertiesCustomizer}s that give
 *       the store bean (and, with Micrometer, the meter registry) to the provider, so that {@code
 *       spring.jpa.properties.hibernate.cache.region.factory_class=sustainable} is all a service
 *       sets.</li>
 * </ul>
 */
@AutoConfiguration(beforeName = {
    "org.springframework.boot.cache.autoconfigure.CacheAutoConfiguration",
    "org.springframework.boot.cache.autoconfigure.metrics.CacheMetricsAutoConfiguration"},
    afterName = "org.springframework.boot.micrometer.observation.autoconfigure"
        + ".ObservationAutoConfiguration")
@ConditionalOnClass({CacheManager.class, SustainableCacheManager.class})
@ConditionalOnProperty(prefix = "sustainable-cache", name = "enabled", havingValue = "true",
    matchIfMissing = true)
@EnableConfigurationProperties(SustainableCacheProperties.class)
public final class SustainableCacheAutoConfiguration {

  /** The bean name of the auto-configured manager (Spring's default cache manager name). */
  public static final String CACHE_MANAGER_BEAN_NAME = "cacheManager";

  private static final Logger LOG = LoggerFactory.getLogger(SustainableCacheAutoConfiguration.class);

  /** Creates the configuration; Spring Boot does. */
  public SustainableCacheAutoConfiguration() {}

  /** The store, the manager and the start-up check of the caches the annotations use. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnBean(CacheAspectSupport.class)
  @ConditionalOnMissingBean(CacheManager.class)
  @Conditional(NoBootCacheType.class)
  static class ManagerConfiguration {

    /**
     * The client, closed with the context after the cache manager (which depends on it through
     * the store, and whose caches wait for their own writes as they close): its {@code close()}
     * drains the client's queues, at most {@code sustainable-cache.shutdown-timeout}, before it
     * shuts the client down, so that nothing a cache issued is dropped.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(CacheStore.class)
    CacheStoreFactory.OpenedStore sustainableCacheClient(SustainableCacheProperties properties) {
      if (properties.getAddresses().isEmpty() && properties.getArcus().getZookeeper() == null) {
        throw new IllegalStateException("sustainable-cache has no servers to connect to: set"
            + " sustainable-cache.addresses=host:port[,host:port] (memcached), or"
            + " sustainable-cache.arcus.zookeeper and sustainable-cache.arcus.service-code (an"
            + " ARCUS cluster), or define a CacheStore bean.");
      }
      CacheStoreFactory factory = CacheStoreFactory.find(properties.getClient(),
          SustainableCacheAutoConfiguration.class.getClassLoader());
      CacheStoreFactory.Settings.Builder settings = CacheStoreFactory.Settings.builder()
          .addresses(properties.getAddresses())
          .operationTimeout(properties.getOperationTimeout())
          .maxKeyLength(properties.getMaxKeyLength() == null ? 0 : properties.getMaxKeyLength());
      if (properties.getShutdownTimeout() != null) {
        settings.shutdownTimeout(properties.getShutdownTimeout());
      }
      properties.getArcus().options().forEach(settings::option);
      CacheStoreFactory.OpenedStore opened = factory.open(settings.build());
      LOG.info("sustainable-cache store: {}", opened.description());
      return opened;
    }

    @Bean
    @ConditionalOnMissingBean(CacheStore.class)
    CacheStore sustainableCacheStore(CacheStoreFactory.OpenedStore sustainableCacheClient) {
      return sustainableCacheClient.store();
    }

    @Bean(name = CACHE_MANAGER_BEAN_NAME, destroyMethod = "close")
    SustainableCacheManager cacheManager(SustainableCacheProperties properties, CacheStore store,
        ObjectProvider<SustainableCacheManagerCustomizer> customizers,
        ObjectProvider<JsonCodecFactory> json, ObjectProvider<CacheCreatedListener> listeners,
        ObjectProvider<CacheObserver> observer, BeanFactory beanFactory) {
      Specs specs = new Specs(json.getIfAvailable(), beanFactory);
      CacheSpec defaults = withEntryKeys(specs.spec("(defaults)", properties, null, null),
          properties.getEntryKeys(), store);
      CacheObserver traced = observer.getIfUnique();
      SustainableCacheManager.Builder builder = SustainableCacheManager.builder(store)
          .defaults(traced == null ? defaults : customized(defaults, b -> b.observer(traced)))
          .namespacePrefix(properties.getNamespacePrefix() == null ? ""
              : properties.getNamespacePrefix())
          .dynamic(properties.isDynamic())
          .allowNullValues(properties.isAllowNullValues())
          .transactionAware(properties.isTransactionAware());
      for (Map.Entry<String, SustainableCacheProperties.Cache> e
          : properties.getCaches().entrySet()) {
        builder.cache(e.getKey(), specs.spec(e.getKey(), e.getValue(), properties,
            e.getValue().getNamespace()));
      }
      customizers.orderedStream().forEach(c -> c.customize(builder));
      SustainableCacheManager manager = builder.build();
      listeners.orderedStream().forEach(l -> manager.onCacheCreated(l::cacheCreated));
      return manager;
    }

    /**
     * The defaults with {@code sustainable-cache.entry-keys}, decoded and checked now (a dynamic
     * cache is built on first use, too late for a bad key to fail the start): every cache signs
     * its entries with the first and accepts the others. No message shows a key.
     */
    static CacheSpec withEntryKeys(CacheSpec defaults, List<String> encoded, CacheStore store) {
      if (encoded == null || encoded.isEmpty()) {
        return defaults;
      }
      byte[][] keys = new byte[encoded.size()][];
      for (int i = 0; i < keys.length; i++) {
        String key = encoded.get(i);
        try {
          keys[i] = Base64.getDecoder().decode(key == null ? "" : key.trim());
        } catch (IllegalArgumentException e) {
          throw new IllegalStateException("sustainable-cache.entry-keys[" + i + "]: not base64"
              + " (the value is a secret and is not shown)");
        }
      }
      byte[] current = keys[0];
      byte[][] previous = Arrays.copyOfRange(keys, 1, keys.length);
      try {
        SustainableCache.builder(store).entryKey(current, previous); // the core's checks, once
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException("sustainable-cache.entry-keys: " + e.getMessage(), e);
      }
      return customized(defaults, b -> b.entryKey(current, previous));
    }

    /** The defaults with {@code more} run on every cache's builder after their customizer. */
    static CacheSpec customized(CacheSpec defaults, Consumer<SustainableCacheBuilder<?>> more) {
      return defaults.toBuilder().customizer(defaults.customizer().map(c -> c.andThen(more))
          .orElse(more)).build();
    }

    @Bean
    static CacheNamesValidator sustainableCacheNamesValidator(
        ObjectProvider<SustainableCacheManager> cacheManager) {
      return new LazyValidator(cacheManager).validator();
    }
  }

  /** Matches unless {@code spring.cache.type} picks one of Spring Boot's own cache providers. */
  static final class NoBootCacheType extends SpringBootCondition {
    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context,
        AnnotatedTypeMetadata metadata) {
      String type = context.getEnvironment().getProperty("spring.cache.type");
      return type == null || type.isBlank()
          ? ConditionOutcome.match("spring.cache.type is not set")
          : ConditionOutcome.noMatch("spring.cache.type=" + type + " picks Spring Boot's provider");
    }
  }

  /**
   * Keeps the validator's bean method static (it is a {@code SmartInitializingSingleton} and
   * should not force the configuration's early creation) while the manager is resolved late.
   */
  private record LazyValidator(ObjectProvider<SustainableCacheManager> manager) {
    CacheNamesValidator validator() {
      return new CacheNamesValidator(manager.getObject(), CACHE_MANAGER_BEAN_NAME);
    }
  }

  /** The JSON codecs, where {@code sustainable-cache-jackson} is on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"io.sustainablecache.jackson.JacksonCodec",
      "tools.jackson.databind.json.JsonMapper"})
  static class JsonConfiguration {
    @Bean
    @ConditionalOnMissingBean(JsonCodecFactory.class)
    JsonCodecFactory sustainableCacheJsonCodecFactory() {
      return type -> io.sustainablecache.jackson.JacksonCodec.of(type);
    }
  }

  /** Spring Boot's cache metrics for every cache, including caches created later. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"io.micrometer.core.instrument.MeterRegistry",
      "io.sustainablecache.micrometer.SustainableCacheMetrics",
      "org.springframework.boot.cache.metrics.CacheMeterBinderProvider"})
  static class MetricsConfiguration {

    @Bean
    @ConditionalOnMissingBean(SustainableCacheMeterBinderProvider.class)
    SustainableCacheMeterBinderProvider sustainableCacheMeterBinderProvider() {
      return new SustainableCacheMeterBinderProvider();
    }

    /**
     * Binds caches created after start-up. Spring Boot binds only the caches that exist when its
     * registrar starts, and asks applications to bind later ones through the registrar.
     */
    @Bean
    CacheCreatedListener sustainableCacheMetricsBinder(
        ObjectProvider<CacheMetricsRegistrar> registrar) {
      Tag manager = Tag.of("cache.manager", managerTagValue(CACHE_MANAGER_BEAN_NAME));
      return cache -> {
        CacheMetricsRegistrar r = registrar.getIfAvailable();
        if (r != null) {
          r.bindCacheToRegistry(cache, manager);
        }
      };
    }

    /** Spring Boot's tag value: the bean name without a trailing "cacheManager", if longer. */
    static String managerTagValue(String beanName) {
      String suffix = "cacheManager";
      if (beanName.length() > suffix.length()
          && beanName.toLowerCase(java.util.Locale.ROOT).endsWith(suffix.toLowerCase(
              java.util.Locale.ROOT))) {
        return beanName.substring(0, beanName.length() - suffix.length());
      }
      return beanName;
    }
  }

  /**
   * Observations of every cache's slow steps, when {@code sustainable-cache-micrometer} is on the
   * class path and the application has an {@code ObservationRegistry}.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"io.micrometer.observation.ObservationRegistry",
      "io.sustainablecache.micrometer.SustainableCacheObservations"})
  static class ObservationConfiguration {

    @Bean
    @ConditionalOnBean(type = "io.micrometer.observation.ObservationRegistry")
    @ConditionalOnMissingBean(CacheObserver.class)
    CacheObserver sustainableCacheObserver(ObservationRegistry registry) {
      return SustainableCacheObservations.observer(registry);
    }
  }

  /**
   * Hibernate's second-level cache, when {@code sustainable-cache-hibernate} and Spring Boot's
   * Hibernate support are on the class path: the store bean (the one this auto-configuration
   * opened, or the user's) becomes the provider's {@value SustainableCacheRegionFactory#STORE},
   * unless the JPA properties already set one; so does the {@link CacheObserver} bean (the
   * regions' write fences are then traced), as its {@value SustainableCacheRegionFactory#OBSERVER};
   * with Micrometer, the application's registry becomes its {@value
   * SustainableCacheRegionFactory#METER_REGISTRY}. The provider itself is
   * chosen by the user ({@code
   * spring.jpa.properties.hibernate.cache.region.factory_class=sustainable}); without that
   * setting the store is handed over and not used.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"io.sustainablecache.hibernate.SustainableCacheRegionFactory",
      "org.hibernate.cache.spi.RegionFactory",
      "org.springframework.boot.hibernate.autoconfigure.HibernatePropertiesCustomizer"})
  static class HibernateConfiguration {

    @Bean
    HibernatePropertiesCustomizer sustainableCacheHibernateStore(ObjectProvider<CacheStore> store,
        ObjectProvider<CacheObserver> observer, SustainableCacheProperties sustainable) {
      return properties -> {
        if (!properties.containsKey(SustainableCacheRegionFactory.STORE)) {
          store.ifUnique(s -> properties.put(SustainableCacheRegionFactory.STORE, s));
        }
        if (!properties.containsKey(SustainableCacheRegionFactory.OBSERVER)) {
          observer.ifUnique(o -> properties.put(SustainableCacheRegionFactory.OBSERVER, o));
        }
        if (!sustainable.getEntryKeys().isEmpty()) { // the regions sign as the caches do
          properties.putIfAbsent(SustainableCacheRegionFactory.ENTRY_KEYS,
              String.join(",", sustainable.getEntryKeys()));
        }
      };
    }

    /**
     * Each region's meters ({@code cache.gets{cache=<region>,cache.manager=hibernate}}, ...) in
     * the application's {@code MeterRegistry}, unless the JPA properties already name one.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"io.micrometer.core.instrument.MeterRegistry",
        "io.sustainablecache.micrometer.SustainableCacheMetrics"})
    static class HibernateMetricsConfiguration {

      @Bean
      HibernatePropertiesCustomizer sustainableCacheHibernateMeters(
          ObjectProvider<io.micrometer.core.instrument.MeterRegistry> registry) {
        return properties -> {
          if (!properties.containsKey(SustainableCacheRegionFactory.METER_REGISTRY)) {
            registry.ifUnique(r -> properties.put(SustainableCacheRegionFactory.METER_REGISTRY,
                r));
          }
        };
      }
    }
  }

  /** Turns property settings into {@link CacheSpec}s; a cache's settings over the defaults. */
  static final class Specs {
    private final JsonCodecFactory json;
    private final BeanFactory beans;

    Specs(JsonCodecFactory json, BeanFactory beans) {
      this.json = json;
      this.beans = beans;
    }

    /**
     * The spec of one settings block. With {@code defaults} non-null, the codec settings that the
     * block leaves unset come from them (the other settings are merged by {@link
     * CacheSpec#withDefaults} in the manager).
     */
    CacheSpec spec(String cache, SustainableCacheSettings s, SustainableCacheSettings defaults,
        String namespace) {
      String prefix = defaults == null ? "sustainable-cache." : "sustainable-cache.caches." + cache
          + ".";
      CacheSettings settings;
      try {
        settings = CacheSettings.from(settingsByKey(s.getSettings()));
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException(prefix + "settings: " + e.getMessage(), e);
      }
      CacheSpec.Builder b = CacheSpec.builder().settings(settings).namespace(namespace);
      codec(cache, s, defaults, b);
      return b.build();
    }

    /**
     * The bound settings with every {@code '.'} of a key read as a {@code '_'}: an environment
     * variable such as {@code SUSTAINABLECACHE_SETTINGS_NEAR_CACHE} binds as the key {@code
     * near.cache} (Spring Boot reads its {@code '_'} as {@code '.'}, and a map keeps the rest of
     * the name as its key), which {@link CacheSettings#from} then matches ignoring case, {@code
     * '-'} and {@code '_'}, as it does {@code near-cache} from properties or YAML. No setting's
     * key has a dot, so nothing else changes; a setting given in two spellings (say {@code
     * near-cache} in YAML and {@code ..._NEAR_CACHE} in the environment) is refused as given
     * twice, as {@code near-cache} and {@code ..._NEARCACHE} always were.
     */
    static Map<String, String> settingsByKey(Map<String, String> bound) {
      Map<String, String> byKey = new LinkedHashMap<>();
      bound.forEach((key, value) -> byKey.put(key.replace('.', '_'), value));
      return byKey;
    }

    private void codec(String cache, SustainableCacheSettings s, SustainableCacheSettings defaults,
        CacheSpec.Builder b) {
      boolean ownCodec = s.getCodecBean() != null || s.getCodec() != null
          || s.getValueType() != null || s.getAllowList() != null;
      String prefix = defaults == null ? "sustainable-cache." : "sustainable-cache.caches." + cache
          + ".";
      String codecBean = s.getCodecBean() != null ? s.getCodecBean()
          : (!ownCodec && defaults != null ? defaults.getCodecBean() : null);
      if (codecBean != null) {
        try {
          b.codec(beans.getBean(codecBean, ValueCodec.class));
        } catch (NoSuchBeanDefinitionException e) {
          throw new IllegalStateException("cache '" + cache + "': " + prefix + "codec-bean names '"
              + codecBean + "', but there is no ValueCodec bean of that name", e);
        }
        return;
      }
      Codec kind = s.getCodec();
      Class<?> type = s.getValueType();
      String allowList = s.getAllowList();
      if (defaults != null) {
        kind = kind != null ? kind : defaults.getCodec();
        type = type != null ? type : defaults.getValueType();
        allowList = allowList != null ? allowList : defaults.getAllowList();
      }
      if (kind == null) {
        if (type == null) {
          return; // no codec: the manager reports it for the caches that need one
        }
        kind = type == String.class ? Codec.UTF8 : type == byte[].class ? Codec.BYTES : Codec.JSON;
      }
      switch (kind) {
        case UTF8:
          b.codec(ValueCodec.utf8(), String.class);
          return;
        case BYTES:
          b.codec(ValueCodec.bytes(), byte[].class);
          return;
        case JAVA_SERIALIZATION:
          typed(b, javaSerialization(cache, prefix, type, allowList), type);
          return;
        default:
          if (type == null) {
            throw new IllegalStateException("cache '" + cache + "': codec json needs a value type ("
                + prefix + "value-type=com.example.Book)");
          }
          if (json == null) {
            throw new IllegalStateException("cache '" + cache + "' stores " + type.getName()
                + " as JSON, which needs io.sustainablecache:sustainable-cache-jackson on the"
                + " class path (the starter brings it) or a JsonCodecFactory bean");
          }
          typed(b, json.codecFor(type), type);
      }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void typed(CacheSpec.Builder b, ValueCodec<?> codec, Class<?> type) {
      b.codec((ValueCodec) codec, (Class) type);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static ValueCodec<?> javaSerialization(String cache, String prefix, Class<?> type,
        String allowList) {
      if (type == null || !Serializable.class.isAssignableFrom(type)) {
        throw new IllegalStateException("cache '" + cache + "': codec java-serialization needs a"
            + " Serializable value type (" + prefix + "value-type), got "
            + (type == null ? "none" : type.getName()));
      }
      if (allowList == null || allowList.isBlank()) {
        throw new IllegalStateException("cache '" + cache + "': codec java-serialization needs"
            + " an allow-list of the classes values may contain (" + prefix + "allow-list="
            + type.getName() + ";java.util.ArrayList;java.lang.String...), so that bytes planted"
            + " in the cache cannot instantiate other classes");
      }
      return ValueCodec.javaSerialization((Class) type, allowList);
    }
  }
}
