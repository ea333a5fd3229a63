package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class CacheConfigTest {

  @Test
  void aComponentNotSet_failsTheBuild_namingIt() {
    assertThatThrownBy(() -> CacheConfig.builder().ttl(Duration.ofSeconds(1)).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("CacheConfig.store was not set");
  }
}
