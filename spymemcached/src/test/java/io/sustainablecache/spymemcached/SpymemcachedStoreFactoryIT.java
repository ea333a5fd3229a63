package io.sustainablecache.spymemcached;

import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.sustainablecache.memcached.AdapterSettings;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testkit.CacheStoreFactoryContract;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The factory contract for {@link SpymemcachedStoreFactory}, against a real memcached. */
class SpymemcachedStoreFactoryIT extends CacheStoreFactoryContract {

  @Override
  protected CacheStoreFactory factory() {
    return new SpymemcachedStoreFactory();
  }

  @Override
  protected Duration connectPatience() {
    return AdapterSettings.CONNECT_PATIENCE;
  }

  /**
   * Issue 23: ARCUS's settings are the ARCUS adapter's options now; given to this adapter they
   * are refused, saying whose they are (as the ZooKeeper settings were before).
   */
  @Test
  void arcusOptions_areRefused_sayingWhoseTheyAre() {
    CacheStoreFactory.Settings settings = CacheStoreFactory.Settings.builder()
        .option("arcus.zookeeper", "zk:2181").option("arcus.service-code", "test").build();

    assertThatIllegalArgumentException().isThrownBy(() -> factory().open(settings))
        .withMessageContaining("spymemcached takes no options, was given [arcus.service-code,"
            + " arcus.zookeeper]")
        .withMessageContaining("sustainable-cache-arcus");
  }
}
