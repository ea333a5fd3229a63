package io.sustainablecache.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.CacheSettings;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.InMemoryStore;
import java.io.File;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.springframework.cache.Cache;

/**
 * spring-tx is an optional dependency: without it on the class path the manager builds, its
 * caches write at once, and it says it is not transaction-aware.
 */
final class WithoutSpringTxTest {

  @Test
  void withoutSpringTx_theManagerIsNotTransactionAware_andItsCachesWriteAtOnce() throws Exception {
    List<URL> urls = new ArrayList<>();
    String classPath = System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path"));
    for (String entry : classPath.split(File.pathSeparator)) {
      if (!new File(entry).getName().startsWith("spring-tx-")) {
        urls.add(url(entry));
      }
    }
    try (URLClassLoader withoutTx = new URLClassLoader(urls.toArray(URL[]::new),
        ClassLoader.getPlatformClassLoader())) {
      assertThatThrownBy(() -> withoutTx.loadClass(
          "org.springframework.transaction.support.TransactionSynchronizationManager"))
          .isInstanceOf(ClassNotFoundException.class);
      @SuppressWarnings("unchecked")
      Supplier<String> scenario = (Supplier<String>) withoutTx.loadClass(Scenario.class.getName())
          .getDeclaredConstructor().newInstance();
      assertThat(scenario.get()).isEqualTo("transaction-aware: false, put: v, evicted: null");
    }
  }

  private static URL url(String entry) {
    try {
      return new File(entry).toURI().toURL();
    } catch (MalformedURLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Runs in the class loader without spring-tx. */
  public static final class Scenario implements Supplier<String> {
    @Override
    public String get() {
      try (SustainableCacheManager manager = SustainableCacheManager.builder(InMemoryStore.create())
          .defaults(CacheSpec.builder()
              .settings(CacheSettings.parse("ttl=1m"))
              .codec(ValueCodec.utf8(), String.class).build())
          .build()) {
        Cache cache = manager.getCache("titles");
        cache.put("k", "v");
        String put = cache.get("k", String.class);
        cache.evict("k");
        return "transaction-aware: " + manager.isTransactionAware() + ", put: " + put
            + ", evicted: " + cache.get("k", String.class);
      }
    }
  }
}
