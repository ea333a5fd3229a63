package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.spi.StoreException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

final class RateLimitedLogTest {

  @Test
  void warnLineNamesTypesOnly_neverMessagesThatMayHoldKeys() {
    StoreException error = new StoreException("memcached gets of user:4711 timed out",
        new TimeoutException("user:4711"));

    String types = RateLimitedLog.types(error);

    assertThat(types).isEqualTo("StoreException <- TimeoutException").doesNotContain("4711");
  }

  @Test
  void causeChainIsBounded() {
    Throwable deep = new IllegalStateException("0");
    for (int i = 1; i < 10; i++) {
      deep = new RuntimeException(Integer.toString(i), deep);
    }
    assertThat(RateLimitedLog.types(deep).split(" <- ")).hasSize(5);
  }
}
