package io.sustainablecache.arcus;

import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.sustainablecache.memcached.AdapterSettings;
import io.sustainablecache.spi.CacheStoreFactory;
import io.sustainablecache.testkit.CacheStoreFactoryContract;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The factory contract for {@link ArcusStoreFactory}, against a real memcached. */
class ArcusStoreFactoryIT extends CacheStoreFactoryContract {

  @Override
  protected CacheStoreFactory factory() {
    return new ArcusStoreFactory();
  }

  @Override
  protected Duration connectPatience() {
    return AdapterSettings.CONNECT_PATIENCE;
  }

  /**
   * Issue 23: the ARCUS settings left the neutral SPI for options of this adapter; each is
   * checked when the store is opened, and a wrong one named.
   */
  @Test
  void itsOptions_areCheckedWhenOpened_namingTheWrongOne() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> open(ArcusStoreFactory.PREFIX_FLUSH, "yes"))
        .withMessageContaining("option arcus.prefix-flush of the ARCUS adapter must be true or"
            + " false, was \"yes\"");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> open(ArcusStoreFactory.SERVICE_CODE, "test"))
        .withMessageContaining("arcus.service-code").withMessageContaining("arcus.zookeeper");
    assertThatIllegalArgumentException().isThrownBy(() -> open(ArcusStoreFactory.ZOOKEEPER, " "))
        .withMessageContaining("arcus.zookeeper").withMessageContaining("blank");
    assertThatIllegalArgumentException().isThrownBy(() -> open("arcus.zookeper", "zk:2181"))
        .withMessageContaining("unknown option \"arcus.zookeper\"")
        .withMessageContaining("arcus.zookeeper, arcus.service-code, arcus.prefix-flush");
  }

  private void open(String key, String value) {
    InetSocketAddress server = MemcachedServer.shared().address();
    factory().open(CacheStoreFactory.Settings.builder()
        .addresses(List.of(server.getHostString() + ":" + server.getPort()))
        .option(key, value).build()).close();
  }
}
