package io.sustainablecache.spring;

import static java.util.Objects.requireNonNull;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.cache.interceptor.CacheOperation;
import org.springframework.cache.interceptor.CacheOperationSource;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Fails the application's start when a caching annotation names a cache that a {@link
 * SustainableCacheManager} cannot create (no value codec, no TTL, not configured, an invalid or
 * shared namespace), instead of failing its first request. Register it as a bean next to the
 * manager; once every singleton exists it asks each {@link CacheOperationSource} (the one {@code
 * @EnableCaching} registers reads {@code @Cacheable}, {@code @CachePut}, {@code @CacheEvict},
 * {@code @Caching} and {@code @CacheConfig}) for the operations of every bean's methods, and calls
 * {@link SustainableCacheManager#validate} with the cache names they use, which also creates those
 * caches. Operations that name another cache manager or a cache resolver are skipped.
 *
 * <p>Not thread-safe; Spring calls it once, on the thread that refreshes the context.
 */
public final class CacheNamesValidator implements SmartInitializingSingleton, BeanFactoryAware {

  private final SustainableCacheManager manager;
  private final String managerBeanName;
  private ListableBeanFactory beanFactory;

  /**
   * Creates the validator.
   *
   * @param manager the manager to validate against
   * @param managerBeanName its bean name: operations naming this {@code cacheManager}, or none,
   *     are checked
   */
  public CacheNamesValidator(SustainableCacheManager manager, String managerBeanName) {
    this.manager = requireNonNull(manager, "manager");
    this.managerBeanName = requireNonNull(managerBeanName, "managerBeanName");
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
    if (!(beanFactory instanceof ListableBeanFactory listable)) {
      throw new IllegalStateException("CacheNamesValidator needs a ListableBeanFactory");
    }
    this.beanFactory = listable;
  }

  @Override
  public void afterSingletonsInstantiated() {
    manager.validate(cacheNamesInUse());
  }

  /**
   * The cache names the beans' caching annotations use with this manager, each with the methods
   * that use it.
   *
   * @return names in a stable order, each with {@code Class.method} uses
   */
  public Map<String, Collection<String>> cacheNamesInUse() {
    Map<String, Collection<String>> uses = new LinkedHashMap<>();
    if (beanFactory == null) {
      return uses;
    }
    Collection<CacheOperationSource> sources =
        beanFactory.getBeansOfType(CacheOperationSource.class, false, false).values();
    if (sources.isEmpty()) {
      return uses;
    }
    Set<Class<?>> seen = new LinkedHashSet<>();
    for (String beanName : beanFactory.getBeanDefinitionNames()) {
      Class<?> type;
      try {
        type = beanFactory.getType(beanName, false);
      } catch (RuntimeException e) {
        continue; // not resolvable without creating it: not ours to judge
      }
      if (type == null) {
        continue;
      }
      Class<?> userClass = ClassUtils.getUserClass(type);
      if (!seen.add(userClass)) {
        continue;
      }
      for (CacheOperationSource source : sources) {
        if (!source.isCandidateClass(userClass)) {
          continue;
        }
        for (Method method : ReflectionUtils.getUniqueDeclaredMethods(userClass,
            ReflectionUtils.USER_DECLARED_METHODS)) {
          Collection<CacheOperation> ops = source.getCacheOperations(method, userClass);
          if (ops == null) {
            continue;
          }
          for (CacheOperation op : ops) {
            if (!op.getCacheResolver().isEmpty()) {
              continue;
            }
            if (!op.getCacheManager().isEmpty() && !op.getCacheManager().equals(managerBeanName)) {
              continue;
            }
            for (String name : op.getCacheNames()) {
              uses.computeIfAbsent(name, n -> new ArrayList<>())
                  .add(userClass.getSimpleName() + "." + method.getName());
            }
          }
        }
      }
    }
    for (Map.Entry<String, Collection<String>> e : uses.entrySet()) {
      e.setValue(List.copyOf(new LinkedHashSet<>(e.getValue())));
    }
    return uses;
  }
}
